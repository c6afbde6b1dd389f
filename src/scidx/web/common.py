"""What every endpoint shares: settings, the JSON error object, strict input parsing.

Every error the app answers is one JSON shape, OpenAI's (so the ``openai`` SDK raises its typed
errors, and the JSON API and the vector-store API read alike)::

    {"error": {"message": "...", "type": "invalid_request_error", "param": "k", "code": "..."}}

``message`` is the text the CLI prints after ``error:`` for the same mistake (both come from
:class:`~scidx.errors.QueryError`); a traceback is never sent.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import unquote_to_bytes

import anyio
import anyio.to_thread
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from scidx.errors import ConfigError, QueryEmbeddingError, QueryError, ScidxError
from scidx.web.snapshot import DEFAULT_MEMORY_MAX, check_load_mode

__all__ = [
    "ApiError",
    "SearchSlots",
    "WebSettings",
    "check_text",
    "error_response",
    "from_scidx_error",
    "json_response",
    "query_params",
    "read_json",
]

MODES = ("hybrid", "keyword", "vector")
logger = logging.getLogger("scidx.web")
DEFAULT_FILTER_CANDIDATES = 1_000
"""Best-ranked chunks a filtered vector-store search examines (:class:`WebSettings`)."""
T = TypeVar("T")


@dataclass(frozen=True)
class WebSettings:
    """Limits and options of a served app.

    Attributes:
        max_k: Most hits one request may ask for (``k``, ``max_num_results``).
        default_k: ``k`` when a ``/search`` request gives none.
        default_mode: Search mode when a request gives none, and of the vector-store API.
        max_body_bytes: Largest request body accepted (413 above).
        max_query_chars: Longest query text accepted.
        token_env: The environment variable holding the bearer token; unset or empty means no
            authentication. The token is read once, when the app is made.
        cors_origins: Origins allowed to call the API from a browser (``"*"`` for any).
        reload_interval: Seconds between checks for replaced index files; 0 turns reloading
            off.
        verify: Check every checksum when loading or reloading an index file.
        search_threads: Searches running at once; more requests wait their turn. Searching is
            CPU-bound, so running more than the machine has cores only makes every request
            slower (measured by ``benchmarks/bench_serve.py``); 0 means one per core.
        embed_threads: Query embeddings (hybrid and vector requests) running at once, on
            threads of their own: a slow embedding provider never holds a search slot, so
            keyword searches go on (see :mod:`scidx.web.semantic`).
        embed_wait: Seconds a hybrid or vector request waits for its query embedding; then
            ``503 query_embedding_timeout`` (the page falls back to keyword results).
        load_mode: How index files are held (``auto``, ``memory``, ``copy``, ``map``; see
            :mod:`scidx.web.snapshot`): every mode but ``map`` survives in-place rewrites.
        memory_max: ``auto`` reads files up to this many bytes into memory, copies larger ones.
        filter_candidates: How many best-ranked chunks a vector-store search with ``filters``
            examines (the bound on its work; fewer results come back when fewer pass).
        allowed_hosts: The ``Host`` header values answered (see :mod:`scidx.web.hosts`);
            ``None`` (the default for an app mounted in a site) checks nothing.
            ``toolup-rag serve`` always sets it.
    """

    max_k: int = 50
    default_k: int = 10
    default_mode: str = "hybrid"
    max_body_bytes: int = 64 * 1024
    max_query_chars: int = 2000
    token_env: str | None = "SCIDX_SERVE_TOKEN"
    cors_origins: tuple[str, ...] = field(default_factory=tuple)
    reload_interval: float = 0.0
    verify: bool = True
    search_threads: int = 0
    embed_threads: int = 8
    embed_wait: float = 10.0
    load_mode: str = "auto"
    memory_max: int = DEFAULT_MEMORY_MAX
    filter_candidates: int = DEFAULT_FILTER_CANDIDATES
    allowed_hosts: tuple[str, ...] | None = None

    def validate(self) -> None:
        """Raise :class:`~scidx.errors.ConfigError` for a setting out of range."""
        if not 1 <= self.max_k <= 10_000:
            raise ConfigError(f"max_k must be in 1..10000, got {self.max_k}")
        if not 1 <= self.default_k <= self.max_k:
            raise ConfigError(f"default_k must be in 1..max_k ({self.max_k}), got {self.default_k}")
        if self.default_mode not in MODES:
            raise ConfigError(f"default_mode must be one of {', '.join(MODES)}")
        if self.max_body_bytes < 256:
            raise ConfigError(f"max_body_bytes must be at least 256, got {self.max_body_bytes}")
        if self.max_query_chars < 1:
            raise ConfigError(f"max_query_chars must be positive, got {self.max_query_chars}")
        if not math.isfinite(self.reload_interval) or self.reload_interval < 0:
            raise ConfigError(f"reload_interval must be >= 0 seconds, got {self.reload_interval}")
        if not 0 <= self.search_threads <= 256:
            raise ConfigError(f"search_threads must be in 0..256, got {self.search_threads}")
        if not 1 <= self.embed_threads <= 256:
            raise ConfigError(f"embed_threads must be in 1..256, got {self.embed_threads}")
        if not math.isfinite(self.embed_wait) or not 0 < self.embed_wait <= 3600:
            raise ConfigError(f"embed_wait must be in (0, 3600] seconds, got {self.embed_wait}")
        check_load_mode(self.load_mode, self.memory_max)
        if not 1 <= self.filter_candidates <= 1_000_000:
            raise ConfigError(
                f"filter_candidates must be in 1..1000000, got {self.filter_candidates}"
            )


class SearchSlots:
    """Runs blocking searches on worker threads, at most ``threads`` at once.

    The limiter is made on first use, inside the server's event loop (anyio needs one).
    """

    def __init__(self, threads: int) -> None:
        self.threads = threads or os.cpu_count() or 1
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, func: Callable[[], T]) -> T:
        """``func()`` on a worker thread once a slot is free."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.threads)
        return await anyio.to_thread.run_sync(func, limiter=self._limiter)


class ApiError(Exception):
    """An error answered as the OpenAI-style JSON error object.

    Args:
        status: The HTTP status.
        message: What is wrong and how to fix it.
        param: The offending parameter or field, if one.
        code: A short machine-readable code.
        type: OpenAI's error ``type``.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        type: str = "invalid_request_error",  # noqa: A002 (OpenAI's field name)
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.type = type


def json_response(
    data: Any, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    """``data`` as compact UTF-8 JSON (escaped ASCII if the text holds a lone surrogate)."""
    try:
        body = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        raw = body.encode("utf-8")
    except UnicodeEncodeError:
        raw = json.dumps(data, allow_nan=False, separators=(",", ":")).encode("ascii")
    return Response(raw, status_code=status, headers=headers, media_type="application/json")


def error_response(exc: ApiError, headers: Mapping[str, str] | None = None) -> Response:
    """The JSON error object for ``exc``."""
    body = {
        "error": {"message": exc.message, "type": exc.type, "param": exc.param, "code": exc.code}
    }
    return json_response(body, exc.status, headers)


def from_scidx_error(exc: ScidxError, param: str | None = None) -> ApiError:
    """Map a library error to its HTTP answer.

    * :class:`QueryEmbeddingError` → 503: the server cannot embed queries for this index (the
      provider is missing or failed), not the client's fault; ``mode=keyword`` still works.
      The visitor gets a fixed message; the details (paths, the fix) go to the server log;
    * :class:`QueryError` → 400;
    * anything else (a corrupt array met while searching) → 500 naming the error class only:
      such messages name the index file's server path, so the details go to the server log.
    """
    if isinstance(exc, QueryEmbeddingError):
        # The library's message names server paths and Python calls (model_dir=...): it is for
        # the operator's log; a visitor learns what still works.
        logger.warning("cannot embed a query: %s", exc)
        return ApiError(
            503,
            "vector and hybrid search are not available for this index on this server (its "
            'query embeddings cannot be computed here); search with mode="keyword"',
            param=param,
            code="query_embedding_error",
            type="server_error",
        )
    if isinstance(exc, QueryError):
        return ApiError(400, str(exc), param=param, code="query_error")
    logger.error("search failed: %s", exc)
    return ApiError(
        500,
        f"the index could not be searched ({type(exc).__name__}); the server log has the details",
        code=type(exc).__name__,
        type="server_error",
    )


_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")


def check_text(value: str, param: str, limit: int) -> str:
    """Refuse text a search cannot take: NUL, lone surrogates, more than ``limit`` characters."""
    bad = _BAD_CHARS.search(value)
    if bad:
        what = "a NUL character" if bad.group() == "\x00" else "a lone surrogate (invalid Unicode)"
        raise ApiError(
            400,
            f"{param} contains {what} at position {bad.start()}; send plain UTF-8 text",
            param=param,
            code="invalid_text",
        )
    if len(value) > limit:
        raise ApiError(
            400,
            f"{param} is {len(value)} characters long; the limit is {limit}",
            param=param,
            code="too_long",
        )
    return value


def query_params(request: Request, allowed: tuple[str, ...]) -> dict[str, str]:
    """The query string as a dict, strictly.

    Refuses bytes that are not UTF-8 (instead of replacing them), a parameter given twice and a
    parameter not in ``allowed`` (a typo like ``?kk=3`` should not be silently ignored).
    """
    raw = request.scope.get("query_string", b"")
    if len(raw) > 16 * 1024:
        raise ApiError(400, "the query string is longer than 16 KiB", code="too_long")
    pairs: list[tuple[str, str]] = []
    try:
        for part in raw.split(b"&"):
            if not part:
                continue
            key, _, value = part.partition(b"=")
            pairs.append(
                (
                    unquote_to_bytes(key.replace(b"+", b" ")).decode("utf-8"),
                    unquote_to_bytes(value.replace(b"+", b" ")).decode("utf-8"),
                )
            )
    except UnicodeDecodeError:
        raise ApiError(
            400,
            "the query string is not valid UTF-8; percent-encode UTF-8 text",
            code="invalid_text",
        ) from None
    params: dict[str, str] = {}
    for key, value in pairs:
        if key not in allowed:
            raise ApiError(
                400,
                f"unknown parameter {key!r}; this endpoint takes {', '.join(allowed)}",
                param=key,
                code="unknown_parameter",
            )
        if key in params:
            raise ApiError(400, f"parameter {key!r} is given twice", param=key, code="duplicate")
        params[key] = value
    return params


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request body as a JSON object, at most ``limit`` bytes.

    Raises:
        ApiError: 413 when too large (by ``Content-Length`` or by counting, for chunked bodies),
            400 when not UTF-8 JSON or not an object.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise ApiError(400, "Content-Length is not a number", code="invalid_body")
        if int(declared) > limit:
            raise ApiError(
                413, f"the request body is larger than {limit} bytes", code="body_too_large"
            )
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ApiError(
                    413, f"the request body is larger than {limit} bytes", code="body_too_large"
                )
            chunks.append(chunk)
    except ClientDisconnect:
        # Gone before the whole body came (or cut at the read deadline): nobody reads this.
        raise ApiError(400, "the connection closed before the whole body arrived") from None
    raw = b"".join(chunks)
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise ApiError(400, "the request body is not UTF-8", code="invalid_json") from None
    except RecursionError:
        raise ApiError(400, "the request body is nested too deeply", code="invalid_json") from None
    except ValueError as exc:
        raise ApiError(
            400, f"the request body is not valid JSON ({exc})", code="invalid_json"
        ) from None
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object", code="invalid_json")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def check_fields(data: Mapping[str, Any], allowed: tuple[str, ...], where: str = "") -> None:
    """Refuse a field not in ``allowed`` (OpenAI answers unknown fields with a 400 too)."""
    for key in data:
        if key not in allowed:
            raise ApiError(
                400,
                f"Unrecognized request argument supplied: {where}{key}",
                param=f"{where}{key}",
                code="unknown_parameter",
            )


def int_param(value: Any, param: str, low: int, high: int) -> int:
    """An integer in ``low..high`` (booleans and floats refused), else a 400 naming the range."""
    if isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(r"[+-]?\d{1,12}", text):
            raise ApiError(
                400,
                f"{param} must be an integer, got {value[:40]!r}",
                param=param,
                code="invalid_int",
            )
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(400, f"{param} must be an integer", param=param, code="invalid_int")
    if not low <= value <= high:
        raise ApiError(
            400,
            f"{param} must be between {low} and {high}, got {value}",
            param=param,
            code="out_of_range",
        )
    return value
