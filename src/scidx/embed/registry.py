"""Embedding providers by name: the built-ins and those plugins register.

A provider is a module (or any object) with two factories:

* ``from_config(config)`` → an :class:`~scidx.embed.base.Embedder` for packing, from a
  validated ``staticcorpus.json`` (read by attribute: ``model``, ``dimensions``,
  ``provider_options``, ``root``...);
* ``query_embedder_from_stamp(stamp, **options)`` → an Embedder able to embed queries for an
  index whose header carries ``stamp`` (its ``stamp()`` must equal the index's).

Built-in providers (``hashing``, ``openai``, ``local``, ``static``) are found by name without
scanning installed packages; any other name is looked up once in the ``scidx.embedders`` entry-point
group, where a package registers ``name = "module"`` (see docs/providers.md).

Providers are imported by name, on first use: the runtime never imports a provider (or its
dependencies, such as ``openai``) that the index at hand does not need.
"""

from __future__ import annotations

import importlib
import re
import threading
from typing import Any

__all__ = [
    "BUILTIN_PROVIDERS",
    "ENTRY_POINT_GROUP",
    "is_provider",
    "provider_names",
    "resolve_provider",
]

#: Entry-point group through which a package registers a provider (``name = "module"``).
ENTRY_POINT_GROUP = "scidx.embedders"

#: Built-in provider name → module.
BUILTIN_PROVIDERS = {
    "hashing": "scidx.embed.hashing",
    "openai": "scidx.embed.openai",
    "local": "scidx.embed.local",
    "static": "scidx.embed.static",
}

_NAME = re.compile(r"[a-z][a-z0-9_\-]{0,63}")
_lock = threading.Lock()
_plugins: dict[str, Any] | None = None


def _plugin_providers() -> dict[str, Any]:
    global _plugins
    with _lock:
        if _plugins is None:
            from importlib.metadata import entry_points

            _plugins = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
        return _plugins


def resolve_provider(name: object) -> Any:
    """Return the provider registered as ``name``, imported.

    Raises:
        LookupError: ``name`` is not a valid provider name or no provider has it.
        ImportError: The provider (or a package it needs) cannot be imported.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise LookupError(f"{name!r} is not a provider name")
    module = BUILTIN_PROVIDERS.get(name)
    if module is not None:
        return importlib.import_module(module)
    entry = _plugin_providers().get(name)
    if entry is None:
        raise LookupError(f"no embedding provider named {name!r} is installed")
    try:
        return entry.load()
    except ImportError:
        raise
    except Exception as exc:  # a plugin that fails while importing: report it, do not crash
        raise ImportError(
            f"the {name!r} provider plugin ({entry.value}) failed to import: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def provider_names() -> list[str]:
    """The names of every provider: the built-ins first, then installed plugins (sorted)."""
    plugins = sorted(n for n in _plugin_providers() if n not in BUILTIN_PROVIDERS)
    return [*BUILTIN_PROVIDERS, *plugins]


def is_provider(name: object) -> bool:
    """Whether ``name`` is a built-in provider or one an installed plugin registers."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return False
    return name in BUILTIN_PROVIDERS or name in _plugin_providers()
