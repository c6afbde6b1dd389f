"""Named query rewriters: the built-in ``llm`` one (a chat model) and installed plugins.

:func:`load_rewriter` finds a rewriter by name: ``llm`` is :class:`LLMRewriter`, which asks a
chat model through :func:`scidx.rag.chat.complete` (the key from ``OPENAI_API_KEY`` only) for
the semantic and the lexical query; any other name is looked up in the
``scidx.query_rewriters`` entry-point group, whose module has ``from_options(model, **options)``.
The stage itself (what a rewriter returns, how the pipeline runs it) is :mod:`scidx.rag.rewrite`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from scidx.errors import ConfigError, QueryRewriteError, ScidxError
from scidx.rag.chat import DEFAULT_CHAT_MODEL, complete
from scidx.rag.rewrite import ENTRY_POINT_GROUP, Rewrite

__all__ = ["DEFAULT_INSTRUCTION", "LLMRewriter", "load_rewriter"]

#: What the built-in LLM rewriter asks the chat model for.
DEFAULT_INSTRUCTION = (
    "You rewrite a user's question about a product's documentation into search queries. "
    'Answer with one JSON object and nothing else: {"query": "...", "keywords": "..."}. '
    '"query" is the question restated as a clear, self-contained search query (expand '
    'abbreviations, drop greetings and filler); "keywords" is a few exact terms, names and '
    "identifiers a keyword search should match. Keep the user's language."
)


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class LLMRewriter:
    """Rewrites questions with a chat model (``OPENAI_API_KEY``; any OpenAI-compatible server).

    The model is asked for ``{"query": ..., "keywords": ...}``; ``keywords`` become the lexical
    query. A reply that is not such an object is used whole as the semantic query.

    Args:
        model: The chat model id.
        base_url: The API base URL (default ``OPENAI_BASE_URL``, else OpenAI's).
        instruction: The system message.
        timeout: Seconds one attempt may take, from connecting to the reply's last byte.
        max_retries: SDK retries on 429/5xx/connection errors.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        instruction: str = DEFAULT_INSTRUCTION,
        timeout: float = 30.0,
        max_retries: int = 2,
    ) -> None:
        self.model = model or DEFAULT_CHAT_MODEL
        self.base_url = base_url
        self.instruction = instruction
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.name = f"llm:{self.model}"

    def __repr__(self) -> str:
        return f"LLMRewriter(model={self.model!r})"

    def rewrite(self, question: str) -> Rewrite:
        """Ask the chat model for the semantic and the lexical query."""
        messages = [
            {"role": "system", "content": self.instruction},
            {"role": "user", "content": question},
        ]
        text, _, _ = complete(
            messages,
            model=self.model,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )
        return _parse_reply(text)


def _parse_reply(text: str) -> Rewrite:
    found = _JSON_OBJECT.search(text)
    data: object = None
    if found is not None:
        try:
            data = json.loads(found.group(0))
        except ValueError:
            data = None
    if isinstance(data, Mapping) and isinstance(data.get("query"), str):
        keywords = data.get("keywords")
        if isinstance(keywords, list):
            keywords = " ".join(str(k) for k in keywords)
        return Rewrite(str(data["query"]), keywords if isinstance(keywords, str) else None)
    return Rewrite(text)


def load_rewriter(name: str, model: str | None = None, **options: Any) -> Any:
    """The rewriter registered as ``name`` (``llm`` built in), made with ``model``/options.

    Raises:
        ConfigError: Unknown name or options.
        QueryRewriteError: A plugin failed to import or to build its rewriter.
    """
    if name == "llm":
        numbers = {"timeout": float, "max_retries": int}
        for key, kind in numbers.items():
            if isinstance(options.get(key), str):
                try:
                    options[key] = kind(options[key])
                except ValueError:
                    raise ConfigError(f"rewrite {key} must be a number: {options[key]!r}") from None
        try:
            return LLMRewriter(model, **options)
        except TypeError as exc:
            raise ConfigError(f"query rewriter 'llm': {exc}") from None
    from importlib.metadata import entry_points

    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    entry = found.get(name)
    if entry is None:
        names = ", ".join(["llm", *sorted(found)])
        raise ConfigError(
            f"no query rewriter named {name!r} is installed; use one of {names} (plugins "
            f"register in the {ENTRY_POINT_GROUP!r} entry-point group)"
        )
    try:
        factory = entry.load().from_options
        return factory(model, **options)
    except ScidxError:
        raise
    except Exception as exc:
        raise QueryRewriteError(
            f"the {name!r} query rewriter ({entry.value}) could not be loaded: "
            f"{type(exc).__name__}: {exc}"
        ) from None
