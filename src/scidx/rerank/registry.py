"""Rerankers by name: the built-ins and those plugins register.

A reranker provider is a module (or any object) with one factory,
``from_options(model, **options)`` → a :class:`~scidx.index.rerank.Reranker` (``model`` is a
folder, file or model id, or ``None`` for the provider's default). Built-ins (``cross-encoder``,
``http``) are found by name without scanning installed packages; any other name is looked up
once in the ``scidx.rerankers`` entry-point group (``name = "module"``), exactly as embedding
providers are (:mod:`scidx.embed.registry`).

:func:`load_reranker` wraps whatever the factory returns in a
:class:`~scidx.rerank.base.CachedReranker`: one score cache keyed by the reranker's stamp, and
one error contract (:class:`~scidx.errors.RerankError` for failures, ``ConfigError`` for bad
settings or unknown names) for built-ins and plugins alike.
"""

from __future__ import annotations

import importlib
import re
import threading
from typing import Any

from scidx.errors import ConfigError, RerankError, ScidxError
from scidx.rerank.base import DEFAULT_CACHE_SIZE, CachedReranker

__all__ = ["BUILTIN_RERANKERS", "ENTRY_POINT_GROUP", "load_reranker", "reranker_names"]

#: Entry-point group through which a package registers a reranker (``name = "module"``).
ENTRY_POINT_GROUP = "scidx.rerankers"

#: Built-in reranker name → module.
BUILTIN_RERANKERS = {
    "cross-encoder": "scidx.rerank.cross_encoder",
    "http": "scidx.rerank.http",
}

_NAME = re.compile(r"[a-z][a-z0-9_\-]{0,63}")
_lock = threading.Lock()
_plugins: dict[str, Any] | None = None


def _plugin_rerankers() -> dict[str, Any]:
    global _plugins
    with _lock:
        if _plugins is None:
            from importlib.metadata import entry_points

            _plugins = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
        return _plugins


def reranker_names() -> list[str]:
    """Every reranker name: the built-ins first, then installed plugins (sorted)."""
    plugins = sorted(n for n in _plugin_rerankers() if n not in BUILTIN_RERANKERS)
    return [*BUILTIN_RERANKERS, *plugins]


def _provider(name: str) -> Any:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(
            f"{name!r} is not a reranker name; use one of {', '.join(reranker_names())}"
        )
    module = BUILTIN_RERANKERS.get(name)
    if module is not None:
        return importlib.import_module(module)
    entry = _plugin_rerankers().get(name)
    if entry is None:
        raise ConfigError(
            f"no reranker named {name!r} is installed; use one of "
            f"{', '.join(reranker_names())} (plugins register in the {ENTRY_POINT_GROUP!r} "
            "entry-point group)"
        )
    try:
        return entry.load()
    except Exception as exc:  # a plugin that fails while importing: report it, do not crash
        raise RerankError(
            f"the {name!r} reranker plugin ({entry.value}) failed to import: "
            f"{type(exc).__name__}: {exc}"
        ) from None


def load_reranker(
    name: str,
    model: str | None = None,
    *,
    cache_size: int = DEFAULT_CACHE_SIZE,
    **options: Any,
) -> CachedReranker:
    """The reranker registered as ``name``, made with ``model`` and ``options``, cached.

    Nothing heavy is imported or loaded here beyond the provider module: built-in models load
    on the first :meth:`rerank` call.

    Raises:
        ConfigError: Unknown name, or settings the provider refuses.
        RerankError: A plugin failed to import or to build its reranker.
    """
    factory = getattr(_provider(name), "from_options", None)
    if not callable(factory):
        raise RerankError(f"the {name!r} reranker has no from_options(model, **options) factory")
    try:
        reranker = factory(model, **options)
    except ScidxError:
        raise
    except TypeError as exc:  # an option the provider does not take
        raise ConfigError(f"reranker {name!r}: {exc}") from None
    except Exception as exc:
        raise RerankError(
            f"the {name!r} reranker could not be made: {type(exc).__name__}: {exc}"
        ) from None
    if not callable(getattr(reranker, "rerank", None)):
        raise RerankError(f"the {name!r} reranker's from_options returned no reranker")
    return CachedReranker(reranker, cache_size=cache_size)
