"""``GET /search``: the JSON search API (the hits of ``toolup-rag search --json``).

``GET /search?q=&k=&mode=&source=&heading=&group=&version=&index=&fuzzy=&prefix=`` answers::

    {"query": "...", "mode": "hybrid", "k": 10, "group": "section",
     "hits": [{"id", "score", "source", "anchor", "headingPath", "title", "text", "snippet",
               "url", ..., "index": "docs"}],
     "corrections": [{"word": "telport", "shown": "teleport", "kind": "typo", ...}]}

``fuzzy`` (typo tolerance, default on) and ``prefix`` (search as you type: the last word of a
query not ending in a space also matches the words it starts; default off, the page sends
``prefix=1``) take ``1``/``0``/``true``/``false``; ``corrections`` is present only when a word
was corrected or completed (``Hit.corrections``).

Each hit has the fields of ``toolup-rag search --json`` plus ``index``, the name of the index it
came from. With several indexes and no ``index=``, each is searched and the lists are merged by
reciprocal-rank fusion (scores of different indexes are not on one scale); each hit keeps its own
index's ``score``. ``version`` searches one docs version of a versioned index (``*``: all;
absent: the version the site publishes at its root); each hit of a versioned page has
``version``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from scidx.errors import ScidxError
from scidx.fusion import rrf_fuse
from scidx.index.grouping import GROUPS as INDEX_GROUPS
from scidx.web.common import (
    MODES,
    ApiError,
    SearchSlots,
    WebSettings,
    check_text,
    from_scidx_error,
    int_param,
    json_response,
    query_params,
)
from scidx.web.semantic import EmbedSlots, query_vectors
from scidx.web.store import IndexSet, ServedIndex

__all__ = ["GROUPS", "make_search_endpoint"]

PARAMS = ("q", "k", "mode", "source", "heading", "group", "version", "index", "fuzzy", "prefix")
#: ``fuzzy=`` and ``prefix=`` (typo tolerance, search as you type): these values, else a 400.
_FLAGS = {"1": True, "true": True, "0": False, "false": False}
#: The ``group=`` values: the index's groupings, or ``none`` for raw chunks.
GROUPS = ("none", *INDEX_GROUPS)


def _run_one(
    entry: ServedIndex, query: str, k: int, options: dict[str, Any], group: str | None
) -> list[dict[str, Any]]:
    with entry.lease() as idx:
        rows = [hit.to_dict() for hit in idx.search(query, k=k, group=group, **options)]
    for row in rows:
        row["index"] = entry.name
    return rows


def _flags(params: dict[str, str]) -> dict[str, bool]:
    """``fuzzy=`` and ``prefix=`` as given, else a 400 naming the parameter."""
    out: dict[str, bool] = {}
    for name in ("fuzzy", "prefix"):
        if name in params:
            flag = _FLAGS.get(params[name].strip().lower())
            if flag is None:
                raise ApiError(
                    400,
                    f"{name} must be 1, 0, true or false, got {params[name][:40]!r}",
                    param=name,
                    code="query_error",
                )
            out[name] = flag
    return out


def make_search_endpoint(
    indexes: IndexSet,
    settings: WebSettings,
    slots: SearchSlots,
    embeds: EmbedSlots | None = None,
) -> Callable[[Request], Any]:
    """The ``GET /search`` handler over ``indexes``.

    A hybrid or vector request embeds its query in ``embeds`` first (see
    :mod:`scidx.web.semantic`), then searches in ``slots``.
    """
    embeds = embeds or EmbedSlots(settings.embed_threads, settings.embed_wait)

    async def search_endpoint(request: Request) -> Response:
        params = query_params(request, PARAMS)
        query = check_text(params.get("q", ""), "q", settings.max_query_chars)
        k = int_param(params.get("k", settings.default_k), "k", 1, settings.max_k)
        mode = params.get("mode", settings.default_mode)
        if mode not in MODES:
            raise ApiError(
                400,
                f"mode must be one of {', '.join(MODES)}, got {mode[:40]!r}",
                param="mode",
                code="query_error",
            )
        options: dict[str, Any] = {"mode": mode, **_flags(params)}
        for name in ("source", "heading", "version"):
            if params.get(name):
                options[name] = check_text(params[name], name, settings.max_query_chars)
        # One result per section by default, as `toolup-rag search` and Index.search give them:
        # two parts of one section are one answer to a reader. `group=none` lists raw chunks.
        group: str | None = params.get("group") or "section"
        if group is not None and group not in GROUPS:
            raise ApiError(
                400,
                f"group must be one of {', '.join(GROUPS)}, got {group[:40]!r}",
                param="group",
                code="query_error",
            )
        if group == "none":
            group = None
        if params.get("index"):
            entry = indexes.get(params["index"])
            if entry is None:
                raise ApiError(
                    404,
                    f"no index named {params['index'][:80]!r}; this server has "
                    f"{', '.join(indexes.names)}",
                    param="index",
                    code="not_found",
                )
            entries = [entry]
        else:
            entries = list(indexes)

        vectors = await query_vectors(embeds, entries, query, mode)

        def run() -> list[dict[str, Any]]:
            lists = []
            for entry in entries:
                vector = vectors.get(entry.name)
                extra = options if vector is None else {**options, "query_vector": vector}
                try:
                    lists.append(_run_one(entry, query, k, extra, group))
                except ScidxError as exc:
                    raise from_scidx_error(exc) from None
            return lists[0] if len(lists) == 1 else [row for _, row in rrf_fuse(lists)[:k]]

        hits = await slots.run(run)
        body: dict[str, Any] = {"query": query, "mode": mode, "k": k, "group": group, "hits": hits}
        if hits and hits[0].get("corrections"):
            body["corrections"] = hits[0]["corrections"]  # what was corrected or completed
        return json_response(body)

    return search_endpoint
