"""The ASGI application: :func:`create_app` over one or more indexes.

Routes (relative to where the app is mounted):

================================================  ==============================================
``GET /``                                          the search page (HTML, no external resources)
``GET /static/search.js``, ``/static/search.css``  its script and style (package data)
``GET /healthz``                                   ``{"status": "ok", "indexes": [...]}``
``GET /search``                                    JSON hits (:mod:`scidx.web.search_api`)
``GET /v1/vector_stores[/{id}]``                   OpenAI vector stores (:mod:`.openai_api`)
``POST /v1/vector_stores/{id}/search``             OpenAI vector-store search
``POST /v1/embeddings``                            query embeddings of local providers
anything else under ``/v1`` that writes            405, OpenAI error object
================================================  ==============================================

With a bearer token configured (``WebSettings.token_env`` names the environment variable),
``/search`` and ``/v1`` need ``Authorization: Bearer <token>``; the page, its assets and
``/healthz`` hold no index data and stay public. The token is compared by SHA-256 digest with
:func:`hmac.compare_digest`, so neither its content nor its length shows in the timing.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import html
import json
import logging
import os
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scidx.index.index import Index
from scidx.web.common import (
    ApiError,
    SearchSlots,
    WebSettings,
    error_response,
    json_response,
)
from scidx.web.hosts import HostCheck
from scidx.web.openai_api import OpenAIRoutes
from scidx.web.search_api import make_search_endpoint
from scidx.web.semantic import EmbedSlots
from scidx.web.store import IndexSet

__all__ = ["create_app"]

logger = logging.getLogger("scidx.web")

Handler = Callable[[Request], Awaitable[Response]]

_STATIC = {
    "search.js": "text/javascript; charset=utf-8",
    "search.css": "text/css; charset=utf-8",
}
_PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'self'; form-action 'self'"
)


def _asset(name: str) -> bytes:
    return resources.files("scidx.web").joinpath("static").joinpath(name).read_bytes()


class _SecurityHeaders:
    """Adds ``X-Content-Type-Options: nosniff`` to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-content-type-options", b"nosniff"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _front_matter_reader() -> Callable[[Index, str], Mapping[str, Any]]:
    """``(index, source) -> front matter``, cached per loaded index (dropped with it)."""
    cache: weakref.WeakKeyDictionary[Index, dict[str, Mapping[str, Any]]] = (
        weakref.WeakKeyDictionary()
    )

    def read(idx: Index, source: str) -> Mapping[str, Any]:
        table = cache.get(idx)
        if table is None:
            table = dict(idx.source_metadata())
            cache[idx] = table
        return table.get(source, {})

    return read


def create_app(
    indexes: Mapping[str, str | os.PathLike[str] | Index]
    | Sequence[str | os.PathLike[str] | Index | tuple[str, str | os.PathLike[str] | Index]]
    | IndexSet,
    settings: WebSettings | None = None,
    *,
    title: str = "Search",
    locale: str | None = None,
) -> Starlette:
    """Make the ASGI app serving ``indexes``; mount it in FastAPI/Starlette or run it alone.

    Args:
        indexes: ``{name: path or Index}``, a list of paths / indexes / ``(name, item)`` pairs
            (names default to the file name without ``.scidx``), or an :class:`IndexSet`.
            Paths are loaded now (and reloaded when replaced, if ``settings.reload_interval``
            is set); a loaded :class:`~scidx.Index` is served as is and never closed here.
        settings: Limits, auth, CORS and reloading; defaults are safe for a public site.
        title: The search page's heading.
        locale: The search page's UI language (``zh``, ``de``, ...); default: the first
            index's ``meta.locale`` or language (:mod:`scidx.index.locales`).

    Returns:
        The Starlette application. ``app.state.indexes`` is the :class:`IndexSet`.

    Raises:
        ConfigError: Bad settings, no index, or two indexes with one name.
        IndexFormatError: An index file is not a valid ``.scidx`` (the message names it).
        OSError: An index file cannot be read.

    Example:
        >>> from scidx.web import create_app  # doctest: +SKIP
        >>> app = create_app({"docs": "site/docs.scidx"})  # doctest: +SKIP
        >>> # uvicorn.run(app)  or  parent_app.mount("/search-ui", app)
    """
    settings = settings or WebSettings()
    settings.validate()
    owned = not isinstance(indexes, IndexSet)
    store = _index_set(indexes, settings)
    protected = _bearer_guard(settings)
    slots = SearchSlots(settings.search_threads)
    embeds = EmbedSlots(settings.embed_threads, settings.embed_wait)
    openai = OpenAIRoutes(store, settings, _front_matter_reader(), slots, embeds)
    page, static = _page_handlers(store, title, locale)

    async def healthz(request: Request) -> Response:
        return json_response(
            {"status": "ok", "indexes": [{"name": e.name, "chunks": len(e.index)} for e in store]}
        )

    write = ["POST", "PUT", "PATCH", "DELETE"]
    read_only = protected(openai.read_only)
    routes = [
        Route("/", page, methods=["GET"]),
        Route("/static/{name}", static, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route(
            "/search",
            protected(make_search_endpoint(store, settings, slots, embeds)),
            methods=["GET"],
        ),
        Route("/v1/vector_stores", protected(openai.list_stores), methods=["GET"]),
        Route("/v1/vector_stores", read_only, methods=write),
        Route("/v1/vector_stores/{store_id}", protected(openai.get_store), methods=["GET"]),
        Route("/v1/vector_stores/{store_id}", read_only, methods=write),
        Route("/v1/vector_stores/{store_id}/search", protected(openai.search), methods=["POST"]),
        Route("/v1/embeddings", protected(openai.embeddings), methods=["POST"]),
        Route("/v1/vector_stores/{store_id}/{rest:path}", read_only, methods=write),
        Route("/v1/files", read_only, methods=write),
        Route("/v1/files/{rest:path}", read_only, methods=write),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if owned:
                store.close()

    app = Starlette(
        routes=routes,
        middleware=_middleware(settings),
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
        lifespan=lifespan,
    )
    app.state.indexes = store
    if settings.reload_interval > 0:
        store.watch(settings.reload_interval)
    return app


def _index_set(indexes: Any, settings: WebSettings) -> IndexSet:
    """``indexes`` itself when it is an :class:`IndexSet`, else one loaded with ``settings``."""
    if isinstance(indexes, IndexSet):
        return indexes
    return IndexSet(
        indexes,
        verify=settings.verify,
        load_mode=settings.load_mode,
        memory_max=settings.memory_max,
    )


def _bearer_guard(settings: WebSettings) -> Callable[[Handler], Handler]:
    """A decorator requiring the bearer token, or a no-op when none is configured."""
    token = os.environ.get(settings.token_env, "") if settings.token_env else ""
    # Only the digest is kept: the token never sits in the app's state, reprs or logs.
    digest = hashlib.sha256(token.encode("utf-8")).digest() if token else None

    def protected(handler: Handler) -> Handler:
        if digest is None:
            return handler

        async def check(request: Request) -> Response:
            header = request.headers.get("authorization", "")
            scheme, _, given = header.partition(" ")
            # Digests of equal length: the comparison time tells nothing about the token.
            ok = hmac.compare_digest(
                hashlib.sha256(given.strip().encode("utf-8", "surrogateescape")).digest(), digest
            )
            if scheme.lower() != "bearer" or not ok:
                raise ApiError(
                    401,
                    "Incorrect or missing API key: send `Authorization: Bearer <token>` with the "
                    f"token from the server's ${settings.token_env}",
                    code="invalid_api_key",
                )
            return await handler(request)

        return check

    return protected


def _page_handlers(
    store: IndexSet, title: str, locale: str | None = None
) -> tuple[Handler, Handler]:
    """The search page and its static assets (read once from the package)."""
    from scidx.index.locales import localize_page, page_locale

    names_json = json.dumps(store.names)
    first = next(iter(store), None)
    meta = first.index.meta if first is not None else {}
    page_template = localize_page(_asset("index.html").decode("utf-8"), page_locale(meta, locale))
    assets = {name: _asset(name) for name in _STATIC}

    async def page(request: Request) -> Response:
        # No strict parameter check here: links to a docs page often carry tracking parameters,
        # and the page reads only ?q= and ?index= itself.
        root = request.scope.get("root_path", "")
        path = request.scope.get("path", "")
        # The page's relative URLs (assets, `search`) need the mount point with a trailing /.
        base = (path if path.endswith("/") else path + "/") if path.startswith(root) else "/"
        body = (
            page_template.replace("{{BASE}}", html.escape(base, quote=True))
            .replace("{{TITLE}}", html.escape(title, quote=True))
            .replace("{{INDEXES}}", html.escape(names_json, quote=True))
        )
        return Response(
            body,
            media_type="text/html; charset=utf-8",
            headers={"Content-Security-Policy": _PAGE_CSP, "Cache-Control": "no-cache"},
        )

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in assets:  # a fixed set of names: nothing is looked up on disk
            raise ApiError(404, f"no static file {name[:80]!r}", code="not_found")
        return Response(
            assets[name], media_type=_STATIC[name], headers={"Cache-Control": "no-cache"}
        )

    return page, static


def _middleware(settings: WebSettings) -> list[Middleware]:
    middleware = [Middleware(_SecurityHeaders)]
    if settings.allowed_hosts is not None:
        # Outermost after the security headers: a foreign Host gets no further.
        middleware.append(Middleware(HostCheck, allowed=settings.allowed_hosts))
    if settings.cors_origins:
        # Before the routes, so that preflight requests (which carry no token) are answered.
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(settings.cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=["*"],
                max_age=600,
            ),
        )
    return middleware


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return error_response(exc, headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 (no route, wrong method) as the JSON error object."""
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    if status == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    elif status == 404:
        message = f"no such endpoint: {request.url.path}; see / for the search page"
    else:
        message = str(exc.detail)
    code = {404: "not_found", 405: "method_not_allowed"}.get(status)
    return error_response(ApiError(status, message, code=code), exc.headers)


async def _internal_error(request: Request, exc: Exception) -> Response:
    """A bug: logged with its traceback on the server, a plain JSON 500 to the client."""
    logger.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(
        ApiError(500, "internal server error; the server log has the details", type="server_error")
    )
