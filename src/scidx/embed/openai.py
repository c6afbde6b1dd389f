"""The OpenAI embeddings provider (and any OpenAI-compatible ``/v1/embeddings`` server).

Contract:

* Input: texts to embed (the packer passes only cache misses). Output: ``(positions, vectors)``
  per finished request from :meth:`OpenAIEmbedder.embed_iter`, float32, L2-normalised, placed
  by each response item's ``index`` field, so the result does not depend on arrival order.
* Requests are batched by count (``batch_size``) and by a conservative token estimate
  (:func:`estimate_tokens`, UTF-8 bytes / 3, no tokenizer dependency), and run ``concurrency``
  at a time. Inputs over the model's token limit are truncated *in the request only*, with a
  warning naming the input.
* Faults are handled here, not by the SDK (``max_retries=0``), so behaviour is defined: 429
  honours ``Retry-After``; 5xx, 408, timeouts and connection errors back off exponentially with
  full jitter; other 4xx fail at once. Invalid responses (count, indices, dimensions, non-finite
  values, malformed JSON) fail at once. Every failure is a :class:`~scidx.errors.ProviderError`
  that says what failed and how to resume.
* HTTP goes through :func:`scidx.http.sdk_http_client`: ``timeout`` bounds one attempt from
  connecting to the reply's last byte (a server that drips cannot hold a batch past
  ``timeout`` x (``max_retries`` + 1) plus backoff), redirects are never followed and the
  client talks only to its base URL's origin, and replies are bounded in size and nesting.
* The API key comes from ``OPENAI_API_KEY`` (or an explicit argument for library callers). It is
  read only when a request is about to be made (:meth:`OpenAIEmbedder.check_ready`) and never
  appears in a message, log record, ``repr`` or exception chain.

This is a build-time module. ``scidx.index.search`` imports it lazily, only to embed a query for an
index built with OpenAI (:func:`query_embedder_from_stamp`).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import math
import os
import random
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import openai

from scidx.embed.base import Embedder, Vectors
from scidx.embed.openai_models import DEFAULT_MODEL, MODELS, ModelInfo
from scidx.embed.retry import retry_after
from scidx.errors import ConfigError, MissingAPIKeyError, ProviderError
from scidx.http import MAX_REPLY_BYTES, ReplyError, loads_json, redirect_message, sdk_http_client
from scidx.redact import display_url, redact

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "ModelInfo",
    "OpenAIEmbedder",
    "estimate_tokens",
    "from_config",
    "query_embedder_from_stamp",
]

logger = logging.getLogger(__name__)

# Unknown models (vLLM, Ollama, LM Studio ...) are often BERT-sized; 512 tokens is the common
# floor, so truncating there avoids server-side 400s. Override with ``max_input_tokens``.
UNKNOWN_MODEL_MAX_INPUT_TOKENS = 512

# The API's own cap is 300k tokens summed over a request. Our estimate is conservative for
# prose, but a pathological input can still tokenize denser than it, hence the 2x margin.
DEFAULT_MAX_TOKENS_PER_REQUEST = 150_000

# Byte-level BPE never yields fewer than one byte per token, so ``bytes`` bounds the true token
# count from above. English averages ~4 bytes per token; 3 keeps a margin for code and markup.
BYTES_PER_TOKEN = 3

#: The SDK's own default base URL, pinned here so the HTTP client knows its one origin.
DEFAULT_BASE_URL = "https://api.openai.com/v1"

# A float printed as JSON takes at most ~25 bytes; a reply of `batch_size` vectors fits in
# 32 bytes a component plus room for the envelope.
_BYTES_PER_COMPONENT = 32

_STATUS_NAMES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    409: "Conflict",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}

_TOKEN_LIMIT_PATTERN = re.compile(r"token|context length|too long|maximum input", re.IGNORECASE)


def estimate_tokens(text: str) -> int:
    """A conservative token count for ``text``: ``ceil(len(utf8 bytes) / 3)``, at least 1.

    Args:
        text: Any text.

    Returns:
        The estimate; it over-counts ordinary prose by about a third, which keeps batches under
        the API's per-request cap and dry-run costs on the safe side.
    """
    return max(1, -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN))


def _truncate_utf8(text: str, max_bytes: int) -> str:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes without splitting a character."""
    return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")


def _preview(text: str, limit: int = 60) -> str:
    """A short, single-line quotation of ``text`` to name an input in messages."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


class _Secret:
    """Holds a key so that ``repr``/``vars`` of the embedder never show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "<redacted>"


@dataclass(frozen=True)
class _Batch:
    number: int  # 1-based, for messages
    positions: list[int]
    inputs: list[str]  # what is sent (possibly truncated)
    originals: list[str]  # for the strict re-truncation fallback


@dataclass(frozen=True)
class _Failure:
    """One failed attempt, described without holding on to the SDK exception."""

    what: str  # e.g. "HTTP 500 Internal Server Error", "timeout", "invalid response"
    detail: str
    retryable: bool
    retry_after: float | None = None
    token_limit: bool = False


class _Cancelled(Exception):
    """Internal: the run was cancelled before this batch finished."""


class OpenAIEmbedder(Embedder):
    """Embeds texts through the OpenAI embeddings API (or a compatible server).

    Args:
        model: Model id, e.g. ``text-embedding-3-small`` (default) or ``-3-large``.
        dimensions: Output length. Sent to the API for models that support shortening
            (``text-embedding-3-*``); for other models it must match what the server returns.
            Defaults to the model's native length; required for models scidx does not know.
        base_url: API base URL (Azure, vLLM, Ollama, LM Studio ...). Defaults to
            ``OPENAI_BASE_URL``, then the SDK's default.
        api_key: For library callers only; otherwise ``OPENAI_API_KEY`` is read when needed.
            Never logged, shown or written anywhere.
        batch_size: Maximum inputs per request.
        concurrency: Maximum requests in flight.
        timeout: Seconds one request may take, from connecting to the reply's last byte.
        max_retries: Retries per batch after the first attempt (429, 5xx, 408, timeouts,
            connection errors).
        max_tokens_per_request: Cap on the estimated tokens of one request.
        max_input_tokens: Per-input limit; defaults to the model's (512 for unknown models).
        backoff_base: First backoff ceiling in seconds; doubles each retry (full jitter).
        backoff_max: Largest backoff ceiling in seconds.
        max_retry_after: Cap on a server's ``Retry-After``, in seconds.
        on_warning: Called with each warning message (truncation), in addition to ``logging``;
            usually from the calling thread, but from a worker thread for the rare resend
            after a server-side token-limit rejection.
        query_cache_size: How many query vectors :meth:`embed_query` keeps in memory.

    Raises:
        ConfigError: An argument is out of range, or ``dimensions`` is missing for an unknown
            model or not allowed for a known one.

    Example:
        >>> emb = OpenAIEmbedder("text-embedding-3-small", 256)  # doctest: +SKIP
        >>> emb.check_ready()  # raises MissingAPIKeyError when OPENAI_API_KEY is unset
        >>> vectors = emb.embed(["What is a path parameter?"])
    """

    provider_id = "openai"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        dimensions: int | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 128,
        concurrency: int = 4,
        timeout: float = 60.0,
        max_retries: int = 6,
        max_tokens_per_request: int = DEFAULT_MAX_TOKENS_PER_REQUEST,
        max_input_tokens: int | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        max_retry_after: float = 60.0,
        on_warning: Callable[[str], None] | None = None,
        query_cache_size: int = 256,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f'"model" must be a non-empty string, got {model!r}')
        info = MODELS.get(model)
        shortening = info.supports_dimensions if info else model.startswith("text-embedding-3-")
        if dimensions is None:
            if info is None:
                raise ConfigError(
                    f"model {model!r} is not one scidx knows the vector length of; set "
                    '"dimensions" in staticcorpus.json to the length the server returns'
                )
            dimensions = info.native_dimensions
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
            raise ConfigError(f'"dimensions" must be a positive integer, got {dimensions!r}')
        if info is not None and dimensions > info.native_dimensions:
            raise ConfigError(
                f"{model} returns at most {info.native_dimensions} dimensions, got "
                f'"dimensions": {dimensions}'
            )
        if info is not None and not shortening and dimensions != info.native_dimensions:
            raise ConfigError(
                f'{model} cannot shorten its vectors; set "dimensions": {info.native_dimensions} '
                "(only text-embedding-3-* models support shortening)"
            )
        for name, value, low in (
            ("batch_size", batch_size, 1),
            ("concurrency", concurrency, 1),
            ("max_retries", max_retries, 0),
            ("max_tokens_per_request", max_tokens_per_request, 1),
            ("query_cache_size", query_cache_size, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f'"{name}" must be an integer >= {low}, got {value!r}')
        for name, fvalue in (
            ("timeout", timeout),
            ("backoff_base", backoff_base),
            ("backoff_max", backoff_max),
            ("max_retry_after", max_retry_after),
        ):
            if not isinstance(fvalue, (int, float)) or not math.isfinite(fvalue) or fvalue < 0:
                raise ConfigError(f'"{name}" must be a non-negative number, got {fvalue!r}')
        if timeout <= 0:
            raise ConfigError(f'"timeout" must be positive, got {timeout!r}')

        self.model_id = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.max_tokens_per_request = max_tokens_per_request
        default_limit = info.max_input_tokens if info else UNKNOWN_MODEL_MAX_INPUT_TOKENS
        self.max_input_tokens = max_input_tokens if max_input_tokens else default_limit
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.max_retry_after = float(max_retry_after)
        self.on_warning = on_warning
        # Set by the packer: names an input (its chunk id) in warnings instead of a position.
        self.describe_input: Callable[[str], str | None] | None = None
        self._base_url = base_url
        self._send_dimensions = shortening
        self._max_reply = max(
            MAX_REPLY_BYTES, batch_size * dimensions * _BYTES_PER_COMPONENT + (1 << 20)
        )
        self._usd_per_million = info.usd_per_million_tokens if info else None
        self._explicit_key = _Secret(api_key) if api_key else None
        self._key: _Secret | None = None  # the key the client was made with, for scrubbing
        self._client: openai.OpenAI | None = None
        self._client_lock = threading.Lock()
        self._rng = random.Random()
        self._query_cache: OrderedDict[str, Vectors] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._query_lock = threading.Lock()

    @classmethod
    def from_config(cls, config: object, **options: Any) -> OpenAIEmbedder:
        """Same as the module-level :func:`from_config`."""
        return from_config(config, **options)

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbedder(model={self.model_id!r}, dimensions={self.dimensions}, "
            f"base_url={display_url(self.base_url) if self.base_url else None!r}, "
            f"batch_size={self.batch_size}, "
            f"concurrency={self.concurrency}, timeout={self.timeout})"
        )

    # -- configuration ----------------------------------------------------------------------

    @property
    def base_url(self) -> str | None:
        """The base URL in use: the argument, else ``OPENAI_BASE_URL``, else None (SDK default)."""
        return self._base_url or os.environ.get("OPENAI_BASE_URL") or None

    def _resolve_key(self) -> str | None:
        if self._explicit_key is not None:
            return self._explicit_key.reveal()
        return os.environ.get("OPENAI_API_KEY") or None

    def check_ready(self, pending: int | None = None) -> None:
        """Fail fast, before any work, if requests cannot be made (no API key).

        The packer calls this only when there are cache misses: a fully cached pack needs no
        key and makes no request.

        Args:
            pending: How many texts need embedding, to mention in the message.

        Raises:
            MissingAPIKeyError: ``OPENAI_API_KEY`` is not set (and no key was passed).
        """
        self._require_key(pending)

    def _require_key(self, pending: int | None = None) -> str:
        key = self._resolve_key()
        if key is not None:
            return key
        needed = f"{pending} chunks need embeddings that are not cached, and " if pending else ""
        raise MissingAPIKeyError(
            f'"embeddingProvider": "openai" needs an API key: {needed}OPENAI_API_KEY is not set. '
            "Fix: export OPENAI_API_KEY=... (read from the environment only, never written "
            'anywhere), or use "embeddingProvider": "hashing" in staticcorpus.json for an '
            "offline index. A server that needs no key (Ollama, LM Studio) still needs a "
            "placeholder value."
        )

    def _get_client(self, pending: int | None = None) -> openai.OpenAI:
        key = self._require_key(pending)
        with self._client_lock:
            if self._client is None or self._key is None or self._key.reveal() != key:
                # max_retries=0: the retry policy is ours, so it is the same for every SDK version.
                base = self.base_url or DEFAULT_BASE_URL
                self._client = openai.OpenAI(
                    api_key=key,
                    base_url=base,
                    max_retries=0,
                    timeout=self.timeout,
                    http_client=sdk_http_client(base, self.timeout, max_bytes=self._max_reply),
                )
                self._key = _Secret(key)
            return self._client

    def close(self) -> None:
        """Close the HTTP connection pool (idempotent); a later request opens a new one."""
        with self._client_lock:
            client, self._client, self._key = self._client, None, None
        if client is not None:
            client.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _scrub(self, text: str) -> str:
        """Remove the API key (and anything key-shaped) from text we are about to repeat."""
        secrets = [s.reveal() for s in (self._key, self._explicit_key) if s is not None]
        return redact(text, [*secrets, os.environ.get("OPENAI_API_KEY")])

    def _warn(self, message: str) -> None:
        logger.warning("%s", message)
        if self.on_warning is not None:
            self.on_warning(message)

    # -- planning ---------------------------------------------------------------------------

    def _prepare(self, position: int, text: str, *, warn: bool = True) -> tuple[str, int]:
        """The text to send for one input and its estimated tokens (truncating if needed)."""
        # The API rejects empty strings; a single space embeds as "nothing" deterministically.
        sent = text if text else " "
        tokens = estimate_tokens(sent)
        if tokens > self.max_input_tokens:
            sent = _truncate_utf8(sent, self.max_input_tokens * BYTES_PER_TOKEN)
            if warn:
                label = self.describe_input(text) if self.describe_input is not None else None
                what = f"chunk {label}" if label else f"input {position} ({_preview(text)})"
                self._warn(
                    f"{what} is about {tokens} tokens, over the "
                    f"{self.max_input_tokens}-token limit of {self.model_id}; only its first "
                    f"{len(sent)} characters are sent for embedding (the stored text stays whole)"
                )
            tokens = self.max_input_tokens
        return sent, tokens

    def _plan(self, texts: Sequence[str], *, warn: bool = True) -> list[_Batch]:
        batches: list[_Batch] = []
        positions: list[int] = []
        inputs: list[str] = []
        budget = 0
        for position, text in enumerate(texts):
            sent, tokens = self._prepare(position, text, warn=warn)
            if positions and (
                len(positions) >= self.batch_size or budget + tokens > self.max_tokens_per_request
            ):
                batches.append(
                    _Batch(len(batches) + 1, positions, inputs, [texts[i] for i in positions])
                )
                positions, inputs, budget = [], [], 0
            positions.append(position)
            inputs.append(sent)
            budget += tokens
        if positions:
            batches.append(
                _Batch(len(batches) + 1, positions, inputs, [texts[i] for i in positions])
            )
        return batches

    def estimate(self, texts: Sequence[str]) -> dict[str, Any]:
        """What embedding ``texts`` would cost, for ``--dry-run``; sends nothing, needs no key.

        Args:
            texts: The texts that would be sent (the cache misses).

        Returns:
            ``{"chunks": n, "requests": r, "tokens": t, "cost_usd": c}``; ``tokens`` is the
            conservative estimate after truncation, ``cost_usd`` is None for models without a
            known price.
        """
        tokens = 0
        for text in texts:
            sent = text if text else " "
            tokens += min(estimate_tokens(sent), self.max_input_tokens)
        # Plan silently: a dry run reports totals, it does not warn per chunk.
        requests = len(self._plan(texts, warn=False))
        cost = None
        if self._usd_per_million is not None:
            cost = round(tokens / 1_000_000 * self._usd_per_million, 6)
        return {"chunks": len(texts), "requests": requests, "tokens": tokens, "cost_usd": cost}

    # -- one request ------------------------------------------------------------------------

    def _retry_after(self, headers: Mapping[str, str]) -> float | None:
        """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), capped."""
        return retry_after(headers, self.max_retry_after)

    def _server_message(self, body: object) -> str:
        if isinstance(body, Mapping):
            inner = body.get("error", body)
            if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
                return self._scrub(str(inner["message"]))[:500]
        if isinstance(body, str):
            return self._scrub(body)[:500]
        return ""

    def _attempt(self, client: openai.OpenAI, inputs: list[str]) -> Vectors | _Failure:
        """Send one request; return the vectors or a description of what went wrong."""
        try:
            raw = client.embeddings.with_raw_response.create(
                model=self.model_id,
                input=inputs,
                dimensions=self.dimensions if self._send_dimensions else openai.omit,
                encoding_format="float",
            )
            content = raw.content
        except openai.APIStatusError as exc:
            status = exc.status_code
            name = _STATUS_NAMES.get(status, "")
            message = self._server_message(exc.body)
            if 300 <= status < 400:
                location = exc.response.headers.get("location")
                return _Failure(redirect_message(status, location), "", retryable=False)
            return _Failure(
                what=f"HTTP {status} {name}".rstrip(),
                detail=message,
                retryable=status == 429 or status == 408 or status >= 500,
                retry_after=self._retry_after(exc.response.headers),
                token_limit=status == 400 and bool(_TOKEN_LIMIT_PATTERN.search(message)),
            )
        except openai.APITimeoutError:
            return _Failure("timeout", f"no complete reply within {self.timeout:g} s", True)
        except openai.APIConnectionError as exc:
            cause = exc.__cause__
            if getattr(cause, "refused", False):
                return _Failure("invalid response", self._scrub(str(cause))[:300], False)
            detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
            return _Failure("connection error", self._scrub(detail)[:300], True)
        return self._parse(content, len(inputs))

    def _parse(self, content: bytes, expected: int) -> Vectors | _Failure:
        """Validate a 200 response body and return its vectors in input order."""

        def bad(detail: str) -> _Failure:
            return _Failure("invalid response", detail, retryable=False)

        try:
            payload = loads_json(content, max_bytes=self._max_reply)
        except ReplyError as exc:
            return bad(str(exc))
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            return bad('the body has no "data" list')
        if len(data) != expected:
            return bad(f"{len(data)} embeddings for {expected} inputs")
        out = np.empty((expected, self.dimensions), dtype=np.float64)
        seen = [False] * expected
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            if isinstance(index, bool) or not isinstance(index, int):
                return bad(f'an item has no integer "index" ({_preview(str(item), 40)})')
            if not 0 <= index < expected:
                return bad(f"index {index} is out of range for {expected} inputs")
            if seen[index]:
                return bad(f"index {index} appears twice")
            seen[index] = True
            vector = item.get("embedding")
            if not isinstance(vector, list):
                return bad(
                    f"embedding {index} is not a list of floats "
                    '(the server must honour encoding_format "float")'
                )
            if len(vector) != self.dimensions:
                return bad(
                    f"embedding {index} has {len(vector)} dimensions, expected {self.dimensions} "
                    f'(check "dimensions" and "model" in staticcorpus.json)'
                )
            try:
                out[index] = np.asarray(vector, dtype=np.float64)
            except (TypeError, ValueError):
                return bad(f"embedding {index} contains non-numeric values")
        finite = np.isfinite(out).all(axis=1)
        if not finite.all():
            return bad(f"embedding {int(np.argmin(finite))} contains NaN or infinite values")
        # Normalise in float64, then round once to float32: stable across arrival orders.
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(out / norms, dtype=np.float32)

    # -- one batch, with retries ------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        """Full-jitter exponential backoff: uniform in [0, min(max, base * 2**(attempt-1))]."""
        ceiling = min(self.backoff_max, self.backoff_base * (2 ** (attempt - 1)))
        return self._rng.uniform(0.0, ceiling)

    def _run_batch(
        self, client: openai.OpenAI, batch: _Batch, total: int, cancel: threading.Event
    ) -> Vectors:
        inputs = batch.inputs
        strict = False
        attempt = 0
        while True:
            if cancel.is_set():
                raise _Cancelled
            attempt += 1
            outcome = self._attempt(client, inputs)
            if not isinstance(outcome, _Failure):
                return outcome
            if outcome.token_limit and not strict:
                # Our estimate was too optimistic for this text; a byte can never be less than
                # a token, so cutting each input to max_input_tokens bytes is certain to fit.
                strict_inputs = [
                    _truncate_utf8(t if t else " ", self.max_input_tokens) for t in batch.originals
                ]
                if strict_inputs != inputs:
                    strict = True
                    inputs = strict_inputs
                    self._warn(
                        f"batch {batch.number} of {total} was rejected as too long "
                        f"({outcome.detail}); resending with every input cut to "
                        f"{self.max_input_tokens} bytes"
                    )
                    continue
            if not outcome.retryable or attempt > self.max_retries:
                # Stop the other workers from starting (or retrying) anything: the run has
                # failed, and a rerun resends only what is missing.
                cancel.set()
                # Raised here, outside any ``except``, so no SDK exception (whose text holds
                # the raw response body) is chained to it.
                raise ProviderError(self._describe(batch, total, outcome, attempt))
            delay = (
                outcome.retry_after if outcome.retry_after is not None else self._backoff(attempt)
            )
            logger.info(
                "OpenAI batch %d of %d: %s%s; retry %d of %d in %.2f s",
                batch.number,
                total,
                outcome.what,
                f" ({outcome.detail})" if outcome.detail else "",
                attempt,
                self.max_retries,
                delay,
            )
            if cancel.wait(delay):
                raise _Cancelled

    def _describe(self, batch: _Batch, total: int, failure: _Failure, attempts: int) -> str:
        first, last = batch.positions[0], batch.positions[-1]
        where = display_url(self.base_url) if self.base_url else "the OpenAI API"
        tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
        detail = f": {failure.detail}" if failure.detail else ""
        hint = ""
        if failure.what.startswith("HTTP 401"):
            hint = " Check that OPENAI_API_KEY holds a valid key for this server."
        elif failure.what.startswith("HTTP 403") or failure.what.startswith("HTTP 404"):
            hint = (
                ' Check "model" and "baseUrl" in staticcorpus.json (an OpenAI-compatible baseUrl'
                " usually ends in /v1) and what the key may access."
            )
        elif failure.token_limit:
            hint = ' Lower "batchSize" or the chunk size.'
        return (
            f"OpenAI embeddings failed: {failure.what} from {where} for batch {batch.number} of "
            f"{total} (inputs {first}-{last}, model {self.model_id}) after {tries}{detail}.{hint}"
        )

    # -- the Embedder interface -------------------------------------------------------------

    def languages(self) -> tuple[str, ...]:
        """OpenAI's embedding models are multilingual (issue 42)."""
        return ("*",)

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (any number; split into requests as needed) and return them in order.

        Raises:
            MissingAPIKeyError: No API key.
            ProviderError: A request failed for good or returned an invalid response.
        """
        return self.embed(texts)

    def embed_iter(self, texts: Sequence[str]) -> Iterator[tuple[list[int], Vectors]]:
        """Yield ``(positions, vectors)`` for each request as soon as it completes.

        Requests run concurrently (at most ``concurrency`` at a time), so batches arrive in any
        order; every position is yielded exactly once on success. When a batch fails for good,
        no further request is started, the requests in flight are allowed to finish (and their
        batches are yielded, so a caching consumer keeps them), and then :class:`ProviderError`
        is raised saying how many inputs are still missing.

        On ``KeyboardInterrupt`` (or when the consumer stops iterating) pending requests are
        cancelled at once and retries stop; a request already on the wire is abandoned and its
        worker thread exits when it returns (within ``timeout``).

        Raises:
            MissingAPIKeyError: No API key (raised before any request).
            ProviderError: See above.
        """
        if not texts:
            return
        client = self._get_client(len(texts))
        batches = self._plan(texts)
        total = len(batches)
        cancel = threading.Event()
        executor = cf.ThreadPoolExecutor(
            max_workers=min(self.concurrency, total), thread_name_prefix="scidx-openai"
        )
        futures = {
            executor.submit(self._run_batch, client, batch, total, cancel): batch
            for batch in batches
        }
        pending = set(futures)
        delivered = 0
        failure: BaseException | None = None
        clean = False
        try:
            while pending:
                # A timeout keeps the main thread responsive to Ctrl-C on every platform.
                done, pending = cf.wait(pending, timeout=0.2, return_when=cf.FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: futures[f].number):
                    if future.cancelled():
                        continue
                    error = future.exception()
                    if error is None:
                        batch = futures[future]
                        delivered += len(batch.positions)
                        yield batch.positions, future.result()
                    elif not isinstance(error, _Cancelled) and failure is None:
                        failure = error
                        cancel.set()
                        for other in pending:
                            other.cancel()
            clean = True
        finally:
            if clean:
                executor.shutdown(wait=True)
            else:
                cancel.set()
                executor.shutdown(wait=False, cancel_futures=True)
        if failure is not None:
            if not isinstance(failure, ProviderError):
                raise failure
            missing = len(texts) - delivered
            raise ProviderError(
                f"{failure} {delivered} of {len(texts)} inputs were embedded. To resume, rerun "
                f"the same command: finished batches are cached and only the missing {missing} "
                "chunks will be sent."
            )

    # -- queries ----------------------------------------------------------------------------

    def embed_query(self, text: str) -> Vectors:
        """Embed one search query, with a small in-memory LRU cache.

        Args:
            text: The query.

        Returns:
            A float32 vector of length ``dimensions`` with unit norm.

        Raises:
            MissingAPIKeyError: No API key.
            ProviderError: The request failed.
        """
        with self._query_lock:
            hit = self._query_cache.get(text)
            if hit is not None:
                self._query_cache.move_to_end(text)
                return hit
        vector: Vectors = self.embed([text])[0]
        vector.setflags(write=False)
        if self._query_cache_size:
            with self._query_lock:
                self._query_cache[text] = vector
                self._query_cache.move_to_end(text)
                while len(self._query_cache) > self._query_cache_size:
                    self._query_cache.popitem(last=False)
        return vector


def from_config(config: object, **options: Any) -> OpenAIEmbedder:
    """Build the embedder from a scidx ``Config`` (read by attribute, so any object works).

    Reads ``model``, ``dimensions``, ``base_url``, ``batch_size``, ``concurrency`` and
    ``timeout``; attributes that are missing or None keep the embedder's defaults.

    Args:
        config: The configuration.
        **options: Further :class:`OpenAIEmbedder` keyword arguments (e.g. ``on_warning``).

    Returns:
        The embedder (no key is read and no request is made yet).

    Raises:
        ConfigError: A setting is out of range.
    """
    kwargs: dict[str, Any] = {}
    for name in ("dimensions", "base_url", "batch_size", "concurrency", "timeout"):
        value = getattr(config, name, None)
        if value is not None:
            kwargs[name] = value
    kwargs.update(options)
    # ``Config.model_id`` resolves an absent "model" to the provider default.
    model = getattr(config, "model_id", None) or getattr(config, "model", None) or DEFAULT_MODEL
    return OpenAIEmbedder(model, **kwargs)


_QUERY_EMBEDDERS: dict[tuple[object, ...], OpenAIEmbedder] = {}
_QUERY_EMBEDDERS_LOCK = threading.Lock()


def query_embedder_from_stamp(stamp: Mapping[str, object], **options: Any) -> OpenAIEmbedder:
    """The embedder that embeds queries for an index whose provider stamp is ``stamp``.

    The same model and dimensions as the index are used, so query and chunk vectors are
    comparable. Embedders are reused across calls with the same stamp and options, so their
    query LRU cache persists for the life of the process.

    Args:
        stamp: The index header's ``provider`` map (``provider``, ``model``, ``dimensions``,
            ``normalization``).
        **options: Further :class:`OpenAIEmbedder` keyword arguments (``base_url``,
            ``timeout`` ...).

    Returns:
        The embedder; call :meth:`OpenAIEmbedder.embed_query`.

    Raises:
        ConfigError: The stamp is not an OpenAI stamp or is incomplete.
    """
    provider = stamp.get("provider")
    model = stamp.get("model")
    dims = stamp.get("dimensions")
    norm = stamp.get("normalization", "l2")
    if provider != "openai" or not isinstance(model, str) or not isinstance(dims, int):
        raise ConfigError(
            f"the index's provider stamp {dict(stamp)!r} is not an OpenAI stamp with a model "
            "and integer dimensions"
        )
    if norm != "l2":
        raise ConfigError(f"the index's vectors use normalization {norm!r}; scidx only makes 'l2'")
    # A local-model location means nothing to a hosted model (scidx.load passes it to any
    # provider when the caller sets it).
    options.pop("model_dir", None)
    # A query is one small request that a person waits for: retry briefly, not for minutes.
    options.setdefault("max_retries", 2)
    options.setdefault("timeout", 20.0)
    try:
        key: tuple[object, ...] | None = (model, dims, tuple(sorted(options.items())))
        hash(key)
    except TypeError:
        key = None
    if "api_key" in options:
        key = None  # never keep an explicit key alive in a module-level dict
    if key is None:
        return OpenAIEmbedder(model, dims, **options)
    with _QUERY_EMBEDDERS_LOCK:
        embedder = _QUERY_EMBEDDERS.get(key)
        if embedder is None:
            embedder = _QUERY_EMBEDDERS[key] = OpenAIEmbedder(model, dims, **options)
        return embedder
