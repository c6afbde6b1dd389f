"""The ``http`` reranker: a hosted or self-hosted ``/rerank`` API (Cohere, Jina, Voyage, TEI).

Contract:

* **APIs** (``api`` option) and what is sent, as each vendor documents it:

  ==========  ==============================  ==============================================
  ``api``     ``POST`` (default base URL)     request → response
  ==========  ==============================  ==============================================
  cohere      ``{base}/v2/rerank``            ``{model, query, documents, top_n}`` →
              (``https://api.cohere.com``)    ``{results: [{index, relevance_score}]}``
  jina        ``{base}/rerank``               ``{model, query, documents, top_n,
              (``https://api.jina.ai/v1``)    return_documents: false}`` → ``{results: [...]}``
  voyage      ``{base}/rerank``               ``{model, query, documents, top_k,
              (``https://api.voyageai.com/    truncation: true}`` →
              v1``)                           ``{data: [{index, relevance_score}]}``
  tei         ``{base}/rerank`` (no default:  ``{query, texts, truncate: true}`` →
              a Hugging Face TEI server)      ``[{index, score}]``
  ==========  ==============================  ==============================================

  Every candidate is sent in one request and every one must come back (each index once);
  anything else is a :class:`~scidx.errors.RerankError`.
* **Key** — from the environment only: ``key_env`` (default ``COHERE_API_KEY``,
  ``JINA_API_KEY``, ``VOYAGE_API_KEY``; ``TEI_API_KEY`` is optional), sent as
  ``Authorization: Bearer``. It is never stored elsewhere, shown in a repr, or let into an error
  message (server text is scrubbed of it).
* **Retries** — as the OpenAI embedding provider: HTTP 429, 408 and 5xx, timeouts and
  connection errors are retried up to ``max_retries`` times with full-jitter exponential backoff
  (``backoff_base`` doubling up to ``backoff_max``), waiting at least what ``Retry-After`` /
  ``retry-after-ms`` asks (capped at ``max_retry_after``); other 4xx fail at once.
* **Deadline and replies** — ``timeout`` bounds the whole exchange of one attempt (connect,
  send, status, headers, body), not one socket read, so one call ends within
  ``timeout`` x (``max_retries`` + 1) plus backoff. Redirects are never followed (the key stays
  with ``base_url``'s origin); replies over 16 MB, nested deeper than
  :data:`~scidx.http.MAX_JSON_DEPTH` or breaking HTTP are :class:`~scidx.errors.RerankError`.
  All of it is :mod:`scidx.http`, shared with the OpenAI clients.
* Only the standard library is used (:mod:`scidx.http`): no vendor SDK is needed at run time.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scidx.embed.retry import retry_after
from scidx.errors import ConfigError, RerankError
from scidx.http import HttpFailure, ReplyError, loads_json, redirect_message, send
from scidx.index.hits import Hit
from scidx.index.rerank import passage

__all__ = ["APIS", "PROVIDER_ID", "HttpReranker", "from_options"]

PROVIDER_ID = "http"


@dataclass(frozen=True)
class _Api:
    path: str
    base_url: str | None
    key_env: str
    key_required: bool
    needs_model: bool


APIS: Mapping[str, _Api] = {
    "cohere": _Api("/v2/rerank", "https://api.cohere.com", "COHERE_API_KEY", True, True),
    "jina": _Api("/rerank", "https://api.jina.ai/v1", "JINA_API_KEY", True, True),
    "voyage": _Api("/rerank", "https://api.voyageai.com/v1", "VOYAGE_API_KEY", True, True),
    "tei": _Api("/rerank", None, "TEI_API_KEY", False, False),
}

_MAX_BODY = 16 << 20  # a rerank answer for a few hundred candidates is a few KB


@dataclass(frozen=True)
class _Failure:
    what: str
    retryable: bool
    retry_after: float | None = None


class HttpReranker:
    """Reranks through a ``/rerank`` HTTP API (see the module docstring).

    Args:
        api: ``cohere``, ``jina``, ``voyage`` or ``tei``.
        model: The model id (required except for ``tei``, which serves one model).
        base_url: The API base URL (default per API; required for ``tei``).
        key_env: The environment variable holding the API key.
        timeout: Seconds one attempt may take, from connecting to the last byte of the reply.
        max_retries: Retries after the first attempt.
        backoff_base: First backoff ceiling in seconds (doubles each retry).
        backoff_max: Largest backoff ceiling in seconds.
        max_retry_after: Cap on a server's ``Retry-After``, in seconds.

    Raises:
        ConfigError: Unknown ``api``, a missing model or base URL, a bad number.
    """

    provider_id = PROVIDER_ID

    def __init__(
        self,
        api: str,
        model: str | None = None,
        *,
        base_url: str | None = None,
        key_env: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        max_retry_after: float = 60.0,
    ) -> None:
        spec = APIS.get(api)
        if spec is None:
            raise ConfigError(f"unknown rerank api {api!r}; use one of {', '.join(APIS)}")
        if spec.needs_model and not model:
            raise ConfigError(
                f"the {api} rerank api needs a model (e.g. --rerank-model rerank-v3.5 for "
                "cohere, jina-reranker-v2-base-multilingual, rerank-2.5 for voyage)"
            )
        base = base_url or spec.base_url
        if not base or not base.startswith(("http://", "https://")):
            raise ConfigError(
                f"the {api} rerank api needs a base URL starting with http:// or https:// "
                f"(got {base!r}); pass --rerank-option base_url=http://host:port"
            )
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        for label, value in (
            ("timeout", timeout),
            ("backoff_base", backoff_base),
            ("backoff_max", backoff_max),
            ("max_retry_after", max_retry_after),
        ):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not (math.isfinite(value) and value >= 0 and (label != "timeout" or value > 0))
            ):
                raise ConfigError(f"{label} must be a finite number >= 0, got {value!r}")
        self.api = api
        self.model = model or ""
        self.url = base.rstrip("/") + spec.path
        self.key_env = key_env or spec.key_env
        self._key_required = spec.key_required
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.max_retry_after = float(max_retry_after)
        self.name = f"{PROVIDER_ID}:{api}" + (f":{model}" if model else "")
        self.requests = 0

    def __repr__(self) -> str:
        return f"HttpReranker(api={self.api!r}, model={self.model!r}, url={self.url!r})"

    def stamp(self) -> Mapping[str, object]:
        """``provider``, ``api``, ``model`` and ``url``: what decides the scores."""
        return {"provider": PROVIDER_ID, "api": self.api, "model": self.model, "url": self.url}

    # -- one request ------------------------------------------------------------------------

    def _key(self) -> str:
        key = os.environ.get(self.key_env, "").strip()
        if not key and self._key_required:
            raise RerankError(
                f"the {self.api} rerank api needs an API key: set the {self.key_env} environment "
                "variable (keys are read from the environment only)"
            )
        return key

    def body(self, query: str, documents: Sequence[str]) -> dict[str, Any]:
        """The JSON request body for ``api``."""
        if self.api == "tei":
            return {"query": query, "texts": list(documents), "truncate": True}
        body: dict[str, Any] = {"model": self.model, "query": query, "documents": list(documents)}
        if self.api == "voyage":
            body.update(top_k=len(documents), truncation=True)
        else:
            body["top_n"] = len(documents)
        if self.api == "jina":
            body["return_documents"] = False
        return body

    def _retry_after(self, headers: Any) -> float | None:
        """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), capped."""
        return retry_after(headers, self.max_retry_after)

    def _scrub(self, text: str, key: str) -> str:
        return text.replace(key, "<redacted>") if key else text

    def _attempt(self, data: bytes, key: str) -> bytes | _Failure:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        try:
            reply = send(
                "POST",
                self.url,
                body=data,
                headers=headers,
                timeout=self.timeout,
                max_bytes=_MAX_BODY,
            )
        except HttpFailure as exc:
            return _Failure(self._scrub(exc.what, key), retryable=exc.retryable)
        status = reply.status
        if 300 <= status < 400:
            return _Failure(
                redirect_message(status, reply.headers.get("Location")), retryable=False
            )
        if not 200 <= status < 300:
            detail = reply.body[:2000].decode("utf-8", "replace")
            detail = " ".join(self._scrub(detail, key).split())[:300]
            return _Failure(
                f"HTTP {status} {reply.reason}".rstrip() + (f": {detail}" if detail else ""),
                retryable=status in (408, 429) or status >= 500,
                retry_after=self._retry_after(reply.headers),
            )
        return reply.body

    def _parse(self, content: bytes, count: int) -> list[float]:
        def bad(detail: str) -> RerankError:
            return RerankError(f"{self.name} at {self.url}: invalid response: {detail}")

        try:
            payload = loads_json(content, max_bytes=_MAX_BODY)
        except ReplyError as exc:
            raise bad(str(exc)) from None
        if self.api == "tei":
            items, field = payload, "score"
        else:
            items = (
                payload.get("data" if self.api == "voyage" else "results")
                if isinstance(payload, dict)
                else None
            )
            field = "relevance_score"
        if not isinstance(items, list):
            raise bad(f"no result list ({type(payload).__name__} without the expected key)")
        scores: list[float | None] = [None] * count
        for item in items:
            index = item.get("index") if isinstance(item, dict) else None
            score = item.get(field) if isinstance(item, dict) else None
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
                raise bad(f"a result has index {index!r}; expected 0..{count - 1}")
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise bad(f"result {index} has no numeric {field!r}")
            if scores[index] is not None:
                raise bad(f"index {index} is returned twice")
            scores[index] = float(score)
        missing = [i for i, s in enumerate(scores) if s is None]
        if missing:
            raise bad(f"{len(missing)} of {count} candidates have no score (first: {missing[0]})")
        return [s for s in scores if s is not None]

    def score_documents(self, query: str, documents: Sequence[str]) -> list[float]:
        """Scores of ``documents`` for ``query``, in order (one request, with retries)."""
        if not documents:
            return []
        key = self._key()
        data = json.dumps(self.body(query, documents), ensure_ascii=False).encode("utf-8")
        failure: _Failure | None = None
        for attempt in range(self.max_retries + 1):
            if failure is not None:
                ceiling = min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1))
                wait = random.uniform(0.0, ceiling)
                if failure.retry_after is not None:
                    wait = max(wait, failure.retry_after)
                time.sleep(wait)
            self.requests += 1
            result = self._attempt(data, key)
            if isinstance(result, bytes):
                return self._parse(result, len(documents))
            failure = result
            if not failure.retryable:
                break
        assert failure is not None
        tries = f" after {self.max_retries + 1} attempts" if failure.retryable else ""
        raise RerankError(f"{self.name} at {self.url} failed{tries}: {failure.what}")

    def rerank(self, query: str, candidates: Sequence[Hit]) -> list[float]:
        """Scores of ``candidates`` (see :func:`~scidx.index.rerank.passage`)."""
        return self.score_documents(query, [passage(hit) for hit in candidates])


def from_options(model: str | None, **options: Any) -> HttpReranker:
    """The registry factory: ``api`` (required), ``base_url``, ``key_env`` and numbers.

    The numbers are ``timeout``, ``max_retries``, ``backoff_base``, ``backoff_max`` and
    ``max_retry_after``; strings (from the CLI) are converted.
    """
    api = options.pop("api", None)
    if not api:
        raise ConfigError(
            "the http reranker needs an api: --rerank-option api=cohere|jina|voyage|tei"
        )
    for key, kind in (
        ("timeout", float),
        ("max_retries", int),
        ("backoff_base", float),
        ("backoff_max", float),
        ("max_retry_after", float),
    ):
        value = options.get(key)
        if isinstance(value, str):
            try:
                options[key] = kind(value)
            except ValueError:
                raise ConfigError(f"http reranker {key} must be a number, got {value!r}") from None
    return HttpReranker(str(api), model, **options)
