"""Serve loaded indexes over HTTP: a search page, a JSON API and OpenAI's vector-store API.

:func:`create_app` makes a Starlette (ASGI) application over one or more ``.scidx`` indexes,
to run alone (``toolup-rag serve``, uvicorn) or mount in a FastAPI/Starlette site::

    from scidx.web import WebSettings, create_app

    search_app = create_app({"docs": "site/docs.scidx"}, WebSettings(reload_interval=1.0))
    site.mount("/search-ui", search_app)

Needs the ``serve`` extra (``pip install 'toolup-rag[serve]'``: Starlette, uvicorn). Everything is
read-only; see ``docs/serve.md`` for the endpoints, limits, authentication and reloading.
"""

from __future__ import annotations

from scidx.web.app import create_app
from scidx.web.common import ApiError, WebSettings
from scidx.web.store import IndexSet, ServedIndex, store_name

__all__ = ["ApiError", "IndexSet", "ServedIndex", "WebSettings", "create_app", "store_name"]
