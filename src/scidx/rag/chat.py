"""Answer a question from the docs with an OpenAI chat model: retrieve, prompt, complete.

:func:`ask` runs a :class:`~scidx.rag.pipeline.Pipeline` (retrieval + cited prompt) and sends the
prompt to a chat-completions endpoint through the official ``openai`` SDK, imported only when a
request is made. The key comes from ``OPENAI_API_KEY`` only; the base URL from the argument,
else ``OPENAI_BASE_URL``, else the SDK's default. Provider failures become
:class:`ChatError` subclasses (exit code 2) whose messages never contain the key.

The SDK's HTTP goes through :func:`scidx.http.sdk_http_client`: ``timeout`` bounds each
attempt from connecting to the reply's last byte (so a call ends within ``timeout`` x
(``max_retries`` + 1) plus the SDK's backoff), redirects are not followed and the client talks
only to its base URL's origin, and replies over 16 MB or nested too deep are refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from scidx.errors import ChatError, ChatMissingKeyError, ChatProviderError, ConfigError
from scidx.http import redirect_message, sdk_http_client
from scidx.index.retrieval import RetrievalRequest
from scidx.rag.pipeline import Pipeline, Prepared, PromptOptions
from scidx.redact import display_url, redact

__all__ = [
    "DEFAULT_CHAT_MODEL",
    "Answer",
    "ChatError",
    "ChatMissingKeyError",
    "ChatProviderError",
    "ask",
    "complete",
]

DEFAULT_CHAT_MODEL = "gpt-4o-mini"

#: The SDK's own default base URL, pinned here so the HTTP client knows its one origin.
DEFAULT_BASE_URL = "https://api.openai.com/v1"

# A chat answer is a few KB; 16 MB leaves room for long answers and verbose servers.
_MAX_REPLY_BYTES = 16 << 20


@dataclass(frozen=True)
class Answer:
    """A model's answer with the retrieval behind it.

    Attributes:
        text: The model's answer.
        model: The model that answered (as reported by the server).
        prepared: Matches, prompt and trace.
        usage: Token counts reported by the server (may be empty).
    """

    text: str
    model: str
    prepared: Prepared
    usage: dict[str, int]

    def sources(self) -> list[str]:
        """``[n] link`` lines for the context blocks the model was shown."""
        return self.prepared.prompt.sources()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "answer": self.text,
            "model": self.model,
            "usage": self.usage,
            "sources": [
                {"number": b.number, "link": b.match.link, "id": b.match.id}
                for b in self.prepared.prompt.blocks
            ],
            "matches": [m.to_dict() for m in self.prepared.matches],
        }


def _scrub(text: str, key: str) -> str:
    return redact(text, [key])


def _status_message(status: int, where: str, detail: str, location: str | None = None) -> str:
    if 300 <= status < 400:
        return f"the chat provider at {where} answered {redirect_message(status, location)}"
    if status == 401:
        return (
            f"the chat provider at {where} rejected the API key (HTTP 401): {detail}; "
            "check OPENAI_API_KEY"
        )
    if status == 429:
        return (
            f"the chat provider at {where} is rate limiting or out of quota (HTTP 429): "
            f"{detail}; wait and retry, or check the account's limits and billing"
        )
    if status >= 500:
        return (
            f"the chat provider at {where} failed with HTTP {status}: {detail}; "
            "this is a server-side error, retry later"
        )
    if status == 404:
        return (
            f"the chat provider at {where} answered HTTP 404: {detail}; check --model and "
            "--base-url (an OpenAI-compatible base URL usually ends in /v1)"
        )
    return f"the chat provider at {where} answered HTTP {status}: {detail}"


def complete(
    messages: list[dict[str, str]],
    *,
    model: str = DEFAULT_CHAT_MODEL,
    base_url: str | None = None,
    timeout: float = 60.0,
    max_retries: int = 2,
    temperature: float | None = 0.0,
) -> tuple[str, str, dict[str, int]]:
    """Send ``messages`` to a chat-completions endpoint and return the reply.

    Args:
        messages: The chat messages (``role``/``content``).
        model: The chat model id.
        base_url: The API base URL; default ``OPENAI_BASE_URL``, else the SDK's.
        timeout: Seconds one attempt may take, from connecting to the reply's last byte.
        max_retries: SDK retries on 429/5xx/connection errors (it honours ``Retry-After``).
        temperature: Sampling temperature (0 for reproducible answers; None: server default).

    Returns:
        ``(answer, model that answered, usage)``.

    Raises:
        ChatMissingKeyError: ``OPENAI_API_KEY`` is not set (no request is made).
        ChatProviderError: The server answered with an error, no choice, or could not be
            reached. The message names the status, the URL and the fix, never the key.
    """
    key = os.environ.get("OPENAI_API_KEY", "").strip()
    if not key:
        raise ChatMissingKeyError(
            "OPENAI_API_KEY is not set; `ask` calls a chat model. Set it with "
            "`export OPENAI_API_KEY=...` (a local server that ignores keys still needs a "
            "placeholder such as `unused`), or use `toolup-rag query --show-prompt` to see the "
            "prompt without calling a model"
        )
    if not model:
        raise ConfigError("the chat model id is empty; pass --model, e.g. gpt-4o-mini")
    url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    where = display_url(url) if url else "api.openai.com"
    import openai  # the heavy SDK is imported only when a request is really made

    effective = url or DEFAULT_BASE_URL
    client = openai.OpenAI(
        api_key=key,
        base_url=effective,
        timeout=timeout,
        max_retries=max_retries,
        http_client=sdk_http_client(effective, timeout, max_bytes=_MAX_REPLY_BYTES),
    )
    kwargs: dict[str, Any] = {"model": model, "messages": messages}
    if temperature is not None:
        kwargs["temperature"] = temperature
    try:
        response = client.chat.completions.create(**kwargs)
    except openai.APIStatusError as exc:
        detail = _scrub(_error_detail(exc), key)
        location = exc.response.headers.get("location")
        raise ChatProviderError(_status_message(exc.status_code, where, detail, location)) from None
    except openai.APITimeoutError:
        raise ChatProviderError(
            f"the chat provider at {where} did not send a complete reply within {timeout:g} s "
            f"({max_retries + 1} attempts); retry, or raise --timeout"
        ) from None
    except openai.APIConnectionError as exc:
        if getattr(exc.__cause__, "refused", False):
            raise ChatProviderError(
                f"the chat provider at {where} sent a reply scidx refuses: "
                f"{_scrub(str(exc.__cause__), key)}; check --base-url points at an "
                "OpenAI-compatible chat-completions API"
            ) from None
        raise ChatProviderError(
            f"cannot reach the chat provider at {where}: {_scrub(str(exc.__cause__ or exc), key)}"
            "; check --base-url / OPENAI_BASE_URL and the network"
        ) from None
    except openai.OpenAIError as exc:
        raise ChatProviderError(
            f"the chat request to {where} failed: {_scrub(str(exc), key)}"
        ) from None
    except ValueError:  # the SDK lets a non-JSON 200 body through as a JSONDecodeError
        raise ChatProviderError(
            f"the chat provider at {where} returned a response that is not valid JSON; "
            "check --base-url points at an OpenAI-compatible chat-completions API"
        ) from None
    finally:
        client.close()
    choices = getattr(response, "choices", None) or []
    content = choices[0].message.content if choices else None
    if not isinstance(content, str):
        raise ChatProviderError(
            f"the chat provider at {where} returned no answer text (model {model!r}); "
            "check that the model is a chat model"
        )
    usage: dict[str, int] = {}
    raw_usage = getattr(response, "usage", None)
    for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = getattr(raw_usage, name, None)
        if isinstance(value, int):
            usage[name] = value
    return content.strip(), str(getattr(response, "model", None) or model), usage


def _error_detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])[:300]
    message = getattr(exc, "message", None) or str(exc)
    return str(message)[:300]


def ask(
    pipeline: Pipeline,
    question: str | RetrievalRequest,
    *,
    k: int = 5,
    mode: str = "hybrid",
    options: PromptOptions | None = None,
    model: str = DEFAULT_CHAT_MODEL,
    base_url: str | None = None,
    timeout: float = 60.0,
    max_retries: int = 2,
) -> Answer:
    """Retrieve context for ``question``, build the cited prompt and ask a chat model.

    Args:
        pipeline: Retrieval (and tracing) to use.
        question: The question, or a full :class:`~scidx.index.retrieval.RetrievalRequest`.
        k: Matches to retrieve.
        mode: Search mode.
        options: Prompt options (template, grounding, budgets).
        model: Chat model id.
        base_url: API base URL (default ``OPENAI_BASE_URL``, else api.openai.com).
        timeout: Seconds one attempt may take (see :func:`complete`).
        max_retries: SDK retries on 429/5xx/connection errors.

    Returns:
        The :class:`Answer`; print ``answer.text`` then ``answer.sources()``.

    Raises:
        ChatMissingKeyError: No key; checked before retrieval so nothing is wasted.
        ChatProviderError: The provider failed.
        QueryError: An invalid retrieval request.

    Example:
        >>> pipe = Pipeline(IndexRetriever(scidx.load("docs.scidx")))  # doctest: +SKIP
        >>> answer = ask(pipe, "How do I configure the cache?")  # doctest: +SKIP
    """
    if not os.environ.get("OPENAI_API_KEY", "").strip():
        complete([], model=model, base_url=base_url)  # raises ChatMissingKeyError
    prepared = pipeline.prepare(question, k=k, mode=mode, options=options)
    text, answered_by, usage = complete(
        prepared.prompt.messages(),
        model=model,
        base_url=base_url,
        timeout=timeout,
        max_retries=max_retries,
    )
    return Answer(text, answered_by, prepared, usage)
