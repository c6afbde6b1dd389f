"""``GET /search``: the JSON search API (the hits of ``toolup-rag search --json``).

``GET /search?q=&k=&mode=&source=&heading=&group=&index=`` answers::

    {"query": "...", "mode": "hybrid", "k": 10, "group": null,
     "hits": [{"id", "score", "source", "anchor", "headingPath", "title", "text", "snippet",
               "url", ..., "index": "docs"}]}

Each hit has the fields of ``toolup-rag search --json`` plus ``index``, the name of the index it
came from. With several indexes and no ``index=``, each is searched and the lists are merged by
reciprocal-rank fusion (scores of different indexes are not on one scale); each hit keeps its own
index's ``score``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from scidx.errors import ScidxError
from scidx.index.index import Index
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
from scidx.web.store import IndexSet, ServedIndex

__all__ = ["GROUPS", "NATIVE_GROUP", "make_search_endpoint"]

PARAMS = ("q", "k", "mode", "source", "heading", "group", "index")
GROUPS = ("none", "section", "page")
RRF_K = 60

# Whether this scidx's Index.search groups results itself (the `group=` option). Without it the
# app collapses results here: one hit per section, or per page with its other sections listed.
NATIVE_GROUP = "group" in inspect.signature(Index.search).parameters


def _run_one(
    entry: ServedIndex, query: str, k: int, options: dict[str, Any], group: str | None
) -> list[dict[str, Any]]:
    with entry.lease() as idx:
        if group is None or NATIVE_GROUP:
            extra: dict[str, Any] = {"group": group} if NATIVE_GROUP else {}
            hits = idx.search(query, k=k, **options, **extra)
            rows = [hit.to_dict() for hit in hits]
        else:
            # Enough raw chunks that collapsing them still fills k results in most cases.
            hits = idx.search(query, k=min(k * 5, len(idx) or 1), **options)
            rows = _collapse([hit.to_dict() for hit in hits], group)[:k]
    for row in rows:
        row["index"] = entry.name
    return rows


def _collapse(rows: list[dict[str, Any]], group: str) -> list[dict[str, Any]]:
    """Best hit per section (``section``) or per page with its other sections (``page``)."""
    out: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["source"], row["anchor"] if group == "section" else "")
        first = seen.get(key)
        if first is None:
            seen[key] = row
            if group == "page":
                row["sections"] = []
            out.append(row)
        elif group == "page" and all(s["anchor"] != row["anchor"] for s in first["sections"]):
            if row["anchor"] != first["anchor"]:
                first["sections"].append(
                    {
                        key: row[key]
                        for key in ("id", "score", "anchor", "headingPath", "snippet", "url")
                    }
                )
    return out


def _fuse(lists: list[list[dict[str, Any]]], k: int) -> list[dict[str, Any]]:
    """Reciprocal-rank fusion of per-index lists; ties by index order, then rank."""
    scored: list[tuple[float, int, int, dict[str, Any]]] = []
    for position, rows in enumerate(lists):
        for rank, row in enumerate(rows):
            scored.append((1.0 / (RRF_K + rank + 1), position, rank, row))
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    return [row for *_, row in scored[:k]]


def make_search_endpoint(
    indexes: IndexSet, settings: WebSettings, slots: SearchSlots
) -> Callable[[Request], Any]:
    """The ``GET /search`` handler over ``indexes``."""

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
        options: dict[str, Any] = {"mode": mode}
        for name in ("source", "heading"):
            if params.get(name):
                options[name] = check_text(params[name], name, settings.max_query_chars)
        group: str | None = params.get("group") or None
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

        def run() -> list[dict[str, Any]]:
            lists = []
            for entry in entries:
                try:
                    lists.append(_run_one(entry, query, k, options, group))
                except ScidxError as exc:
                    raise from_scidx_error(exc) from None
            return lists[0] if len(lists) == 1 else _fuse(lists, k)

        hits = await slots.run(run)
        return json_response({"query": query, "mode": mode, "k": k, "group": group, "hits": hits})

    return search_endpoint
