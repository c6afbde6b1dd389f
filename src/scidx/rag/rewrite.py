"""The query-rewrite stage: turn the user's question into what retrieval should search for.

Contract:

* A rewriter is a callable ``rewriter(question) -> Rewrite | str | (query, text_query)`` or an
  object with ``rewrite(question)`` returning the same; ``name`` labels it in traces. The result
  is the **semantic query** (embedded for the vector leg, judged by a reranker) and optionally
  a separate **lexical query** (``text_query``: what the keyword leg searches; ``None`` keeps
  the request's own). :func:`checked_rewrite` normalises and bounds the result.
* :class:`~scidx.rag.pipeline.Pipeline` runs it first, as the ``query_rewrite`` stage (its
  latency in the trace and progress events); the prompt still shows the user's question, and
  the trace still hashes it. Stages come in the order query_rewrite → embedding → retrieval →
  fusion → reranking → context (filters are applied inside retrieval).
* Named rewriters (the built-in ``llm`` one, a chat model, and plugins registered in the
  :data:`ENTRY_POINT_GROUP` entry-point group) are in :mod:`scidx.rag.rewriters`. Off by
  default.
* Failures: a plugin's own exception becomes a :class:`~scidx.errors.QueryRewriteError` naming
  it (exit 2), a chat failure a :class:`~scidx.errors.ChatError`; never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scidx.errors import ConfigError, QueryRewriteError, ScidxError

__all__ = [
    "ENTRY_POINT_GROUP",
    "MAX_REWRITE_CHARS",
    "STAGE_QUERY_REWRITE",
    "Rewrite",
    "checked_rewrite",
    "rewriter_name",
]

#: The progress stage name of query rewriting.
STAGE_QUERY_REWRITE = "query_rewrite"

#: Entry-point group through which a package registers a query rewriter.
ENTRY_POINT_GROUP = "scidx.query_rewriters"

#: The longest rewritten query kept (a chatty model must not turn a query into an essay).
MAX_REWRITE_CHARS = 1000


@dataclass(frozen=True)
class Rewrite:
    """What retrieval searches for.

    Attributes:
        query: The semantic query (embedded; what a reranker judges).
        text_query: The keyword leg's text, or ``None`` to keep the request's.
    """

    query: str
    text_query: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (camelCase keys)."""
        return {"query": self.query, "textQuery": self.text_query}


def rewriter_name(rewriter: object) -> str:
    """A rewriter's name for traces: its ``name``, else its type or function name."""
    name = getattr(rewriter, "name", None)
    if isinstance(name, str) and name:
        return name
    return str(getattr(rewriter, "__name__", type(rewriter).__name__))


def _clean(value: object, what: str, name: str) -> str:
    if not isinstance(value, str):
        raise QueryRewriteError(
            f"query rewriter {name!r} returned {type(value).__name__} for the {what}; it must "
            "return a str, a (query, text_query) pair or a Rewrite"
        )
    text = " ".join(value.split())
    return text[:MAX_REWRITE_CHARS]


def checked_rewrite(rewriter: object, question: str) -> Rewrite:
    """Run ``rewriter`` on ``question`` and normalise what it returns.

    Whitespace is collapsed, each query cut to :data:`MAX_REWRITE_CHARS`; an empty semantic
    query falls back to the question (a rewrite must never make retrieval find nothing).

    Raises:
        QueryRewriteError: The rewriter failed or returned something unusable.
        ScidxError: A scidx error from the rewriter (e.g. a chat failure), as raised.
    """
    name = rewriter_name(rewriter)
    method = getattr(rewriter, "rewrite", None)
    call: Callable[[str], object] | None = method if callable(method) else None
    if call is None and callable(rewriter):
        call = rewriter
    if call is None:
        raise ConfigError(
            f"query rewriter {name!r} is neither callable nor has a rewrite(question) method"
        )
    try:
        result = call(question)
    except ScidxError:
        raise
    except Exception as exc:  # a plugin's own failure: reported, never a traceback
        raise QueryRewriteError(
            f"query rewriter {name!r} failed: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}"
        ) from exc
    query: object
    lexical: object
    if isinstance(result, Rewrite):
        query, lexical = result.query, result.text_query
    elif isinstance(result, tuple) and len(result) == 2:
        query, lexical = result
    else:
        query, lexical = result, None
    semantic = _clean(query, "semantic query", name) or " ".join(question.split())
    text = None if lexical is None else _clean(lexical, "lexical query", name)
    return Rewrite(semantic, text)
