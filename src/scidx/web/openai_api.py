"""OpenAI's vector-store search API over the loaded indexes (read-only), and local embeddings.

Each loaded index is a vector store whose id is the index's name. Shapes follow OpenAI's
published API (as typed by the ``openai`` SDK), so ``client.vector_stores.search(...)`` works
unchanged against ``base_url="http://127.0.0.1:8000/v1"``:

* ``GET /v1/vector_stores`` (``limit``, ``order``, ``after``, ``before``) and
  ``GET /v1/vector_stores/{id}``: vector-store objects (``file_counts`` counts the source pages,
  ``usage_bytes`` is the file size, ``created_at`` the build time; ``metadata`` names the
  provider, model and chunk count);
* ``POST /v1/vector_stores/{id}/search``: ``query`` (a string, or a list whose items are joined
  into one query), ``max_num_results`` (1-50, or the server's ``max_k`` if lower),
  ``filters`` (comparison and compound filters over the result attributes),
  ``ranking_options.score_threshold`` (drops hits scoring below it) and ``ranker`` (accepted;
  the index's own ranking is always used), ``rewrite_query`` (accepted and ignored: queries are
  searched as written). Searches use the server's default mode (hybrid unless configured);
* ``POST /v1/embeddings`` for indexes whose provider embeds queries in this process
  (``hashing``, ``local``): ``model`` is a vector-store id or the provider's model name;
* anything that would write (create, modify, delete, files, batches) answers 405.

Result attributes (what ``filters`` compare against): ``source``, ``title``, ``heading``
(the heading path joined by " > "), ``anchor``, ``chunk_id``, ``url`` when the index has a URL
template, and the page's front-matter fields whose values are strings, numbers or booleans
(built-in names win over front-matter fields of the same name). A comparison on an attribute a
result does not have is false, ``ne`` and ``nin`` included. Front matter is stored as text, so a
number (or boolean) in a filter compares numerically with text that reads as one (``level: 2``
matches ``{"type": "gte", "key": "level", "value": 2}``); two strings compare as strings (so
ISO dates order correctly).
"""

from __future__ import annotations

import base64
import calendar
import math
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from starlette.requests import Request
from starlette.responses import Response

from scidx.errors import ScidxError
from scidx.index.index import Index
from scidx.web.common import (
    DEFAULT_FILTER_CANDIDATES,
    ApiError,
    SearchSlots,
    WebSettings,
    check_fields,
    check_text,
    from_scidx_error,
    int_param,
    json_response,
    query_params,
    read_json,
)
from scidx.web.semantic import EmbedSlots, query_vectors
from scidx.web.store import IndexSet, ServedIndex

__all__ = ["LOCAL_PROVIDERS", "OpenAIRoutes"]

# Providers whose query embeddings are computed in this process (no remote call, no key).
LOCAL_PROVIDERS = frozenset({"hashing", "local"})

SEARCH_FIELDS = ("query", "filters", "max_num_results", "ranking_options", "rewrite_query")
RANKERS = ("none", "auto", "default-2024-11-15")
COMPARISONS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin")
# Most filter terms in one request: each filter counts one, and so does each in/nin value.
MAX_FILTER_TERMS = 256
# Attributes that differ between the chunks of one page; the others are evaluated once a page.
CHUNK_ATTRIBUTES = frozenset({"heading", "anchor", "chunk_id", "url"})
MAX_FILTER_DEPTH = 8
MAX_QUERIES = 16
MAX_EMBED_INPUTS = 2048
OPENAI_MAX_RESULTS = 50
ATTRIBUTE_LIMIT = 16
ATTRIBUTE_CHARS = 512


def _epoch(built_utc: str) -> int:
    try:
        return calendar.timegm(time.strptime(built_utc, "%Y-%m-%dT%H:%M:%SZ"))
    except (TypeError, ValueError):
        return 0


def _not_found(store_id: str) -> ApiError:
    return ApiError(
        404,
        f"No vector store found with id {store_id[:80]!r}.",
        param="vector_store_id",
        code="not_found",
    )


def store_object(entry: ServedIndex) -> dict[str, Any]:
    """The OpenAI ``vector_store`` object describing one served index."""
    idx = entry.index
    header = idx.header
    created = _epoch(header.built_utc)
    counts = idx.meta.get("counts") or {}
    sources = counts.get("sources") if isinstance(counts, Mapping) else None
    pages = sources if isinstance(sources, int) and sources >= 0 else 0
    stamp = idx.stamp
    metadata = {
        "provider": str(stamp.get("provider", ""))[:ATTRIBUTE_CHARS],
        "model": str(stamp.get("model", ""))[:ATTRIBUTE_CHARS],
        "dimensions": str(stamp.get("dimensions", "")),
        "chunks": str(len(idx)),
        "generator": str(header.generator)[:ATTRIBUTE_CHARS],
    }
    return {
        "id": entry.name,
        "object": "vector_store",
        "created_at": created,
        "last_active_at": created,
        "name": entry.name,
        "usage_bytes": entry.size,
        "file_counts": {
            "in_progress": 0,
            "completed": pages,
            "failed": 0,
            "cancelled": 0,
            "total": pages,
        },
        "status": "completed",
        "expires_after": None,
        "expires_at": None,
        "metadata": metadata,
    }


# -- filters ---------------------------------------------------------------------------------


def check_filter(
    node: Any, where: str = "filters", depth: int = 0, budget: list[int] | None = None
) -> dict[str, Any]:
    """Validate an OpenAI ``ComparisonFilter`` / ``CompoundFilter`` tree; return it as is."""
    budget = budget if budget is not None else [MAX_FILTER_TERMS]
    budget[0] -= 1
    if isinstance(node, dict) and isinstance(node.get("value"), list):
        budget[0] -= len(node["value"])  # a value list costs what the same `or` of `eq` would
    if budget[0] < 0 or depth > MAX_FILTER_DEPTH:
        raise ApiError(
            400,
            f"{where}: at most {MAX_FILTER_TERMS} filter terms (each filter and each value of "
            f"an in/nin list counts one), nested at most {MAX_FILTER_DEPTH} deep",
            param=where,
            code="invalid_filter",
        )
    if not isinstance(node, dict):
        raise ApiError(400, f"{where} must be an object", param=where, code="invalid_filter")
    kind = node.get("type")
    if kind in ("and", "or"):
        check_fields(node, ("type", "filters"), f"{where}.")
        children = node.get("filters")
        if not isinstance(children, list) or not children:
            raise ApiError(
                400,
                f"{where}.filters must be a non-empty array of filters",
                param=f"{where}.filters",
                code="invalid_filter",
            )
        for i, child in enumerate(children):
            check_filter(child, f"{where}.filters[{i}]", depth + 1, budget)
        return node
    if kind not in COMPARISONS:
        raise ApiError(
            400,
            f"{where}.type must be one of {', '.join(COMPARISONS)}, and or or; got {kind!r}"[:300],
            param=f"{where}.type",
            code="invalid_filter",
        )
    check_fields(node, ("type", "key", "value"), f"{where}.")
    key = node.get("key")
    if not isinstance(key, str) or not key or len(key) > 64:
        raise ApiError(
            400,
            f"{where}.key must be a string of 1-64 characters",
            param=f"{where}.key",
            code="invalid_filter",
        )
    if "value" not in node:
        raise ApiError(
            400, f"{where}.value is required", param=f"{where}.value", code="invalid_filter"
        )
    value = node["value"]
    scalars = (str, int, float, bool)
    if kind in ("in", "nin"):
        ok = isinstance(value, list) and all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
        )
        what = "an array of strings or numbers"
    else:
        ok = isinstance(value, scalars)
        what = "a string, number or boolean"
    if not ok:
        raise ApiError(
            400, f"{where}.value must be {what}", param=f"{where}.value", code="invalid_filter"
        )
    if isinstance(value, str):
        check_text(value, f"{where}.value", ATTRIBUTE_CHARS)
    return node


_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    # Front matter is stored as text: "2" compares with the number 2.
    if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
        number = float(value)
        return number if math.isfinite(number) else None
    return None


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return _truth(a) is not None and _truth(a) == _truth(b)
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    na, nb = _number(a), _number(b)
    return na is not None and nb is not None and na == nb


def _truth(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def matches(node: Mapping[str, Any], attributes: Mapping[str, Any]) -> bool:
    """Whether ``attributes`` pass the (validated) filter ``node``."""
    kind = node["type"]
    if kind == "and":
        return all(matches(child, attributes) for child in node["filters"])
    if kind == "or":
        return any(matches(child, attributes) for child in node["filters"])
    key = node["key"]
    if key not in attributes:
        return False
    have, want = attributes[key], node["value"]
    if kind == "eq":
        return _equal(have, want)
    if kind == "ne":
        return not _equal(have, want)
    if kind == "in":
        return any(_equal(have, v) for v in want)
    if kind == "nin":
        return not any(_equal(have, v) for v in want)
    a: Any
    b: Any
    if isinstance(have, str) and isinstance(want, str):
        a, b = have, want
    else:
        a, b = _number(have), _number(want)
        if a is None or b is None:
            return False
    if kind == "gt":
        return bool(a > b)
    if kind == "gte":
        return bool(a >= b)
    if kind == "lt":
        return bool(a < b)
    return bool(a <= b)


def reduce_filter(node: Mapping[str, Any], page: Mapping[str, Any]) -> bool | Mapping[str, Any]:
    """``node`` with every comparison on a page-level attribute evaluated against ``page``.

    Returns True or False when the result no longer depends on the chunk, else the remaining
    tree (comparisons on :data:`CHUNK_ATTRIBUTES` only), so a page's front matter is compared
    once per page, not once per chunk.
    """
    kind: str = node["type"]
    if kind not in ("and", "or"):
        return node if node["key"] in CHUNK_ATTRIBUTES else matches(node, page)
    rest: list[bool | Mapping[str, Any]] = []
    for child in node["filters"]:
        part = reduce_filter(child, page)
        if part is True or part is False:
            if part is (kind == "or"):
                return part  # True decides an `or`, False an `and`
            continue
        rest.append(part)
    if not rest:
        return kind == "and"
    if len(rest) == 1:
        return rest[0]
    return {"type": kind, "filters": rest}


# -- search ----------------------------------------------------------------------------------


def _attributes(hit: Any, front_matter: Mapping[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for key, value in front_matter.items():
        if isinstance(value, (str, bool)) or (
            isinstance(value, (int, float)) and math.isfinite(float(value))
        ):
            attrs[str(key)] = value
    attrs.update(
        {
            "source": hit.source,
            "title": hit.title,
            "heading": " > ".join(hit.heading_path),
            "anchor": hit.anchor,
            "chunk_id": hit.id,
        }
    )
    if hit.url:
        attrs["url"] = hit.url
    return attrs


def _shown(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """At most 16 attributes (built-ins first), strings cut to 512 characters, as OpenAI does."""
    first = ("source", "title", "heading", "anchor", "chunk_id", "url")
    keys = [k for k in first if k in attrs] + sorted(k for k in attrs if k not in first)
    out: dict[str, Any] = {}
    for key in keys[:ATTRIBUTE_LIMIT]:
        value = attrs[key]
        out[key[:64]] = value[:ATTRIBUTE_CHARS] if isinstance(value, str) else value
    return out


def _result(hit: Any, score: float, attrs: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "file_id": hit.source,
        "filename": hit.source,
        "score": float(score),
        "attributes": _shown(attrs),
        "content": [{"type": "text", "text": hit.text}],
    }


def run_search(
    idx: Index,
    query: str,
    *,
    k: int,
    mode: str,
    threshold: float | None,
    filters: Mapping[str, Any] | None,
    front_matter: Callable[[Index, str], Mapping[str, Any]],
    candidates: int = DEFAULT_FILTER_CANDIDATES,
    query_vector: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """The search results for one vector-store request (on a leased index).

    With ``filters``, only the best ``candidates`` chunks are examined: fewer than ``k``
    results come back when fewer of them pass. ``query_vector``, if given, is the query's
    embedding (computed in the embedding slots).
    """
    vector: dict[str, Any] = {} if query_vector is None else {"query_vector": query_vector}
    if filters is None:
        hits = idx.search(query, k=k, mode=mode, min_score=threshold, **vector)
        return [
            _result(hit, hit.score, _attributes(hit, front_matter(idx, hit.source))) for hit in hits
        ]
    # Filters on arbitrary attributes cannot be pushed into the ranking: the best `candidates`
    # chunks are examined (a bound on each request's work, whatever the filter), their fields
    # read a page of hits at once, each page's attributes compared once.
    out: list[dict[str, Any]] = []
    limit = max(1, min(len(idx), candidates))
    pages: dict[str, bool | Mapping[str, Any]] = {}
    for hit in idx.search(query, k=limit, mode=mode, min_score=threshold, **vector):
        source = hit.source
        reduced = pages.get(source)
        if reduced is None:
            page = {
                key: value
                for key, value in _attributes(hit, front_matter(idx, source)).items()
                if key not in CHUNK_ATTRIBUTES
            }
            reduced = pages[source] = reduce_filter(filters, page)
        if reduced is False:
            continue
        attrs = _attributes(hit, front_matter(idx, source))
        if reduced is True or matches(reduced, attrs):
            out.append(_result(hit, hit.score, attrs))
            if len(out) == k:
                break
    return out


def _search_queries(body: Mapping[str, Any], limit: int) -> list[str]:
    """The search request's ``query``: one string or up to ``MAX_QUERIES``, not all blank.

    Raises:
        ApiError: 400, naming the offending ``query`` or ``query[i]``.
    """
    if "query" not in body:
        raise ApiError(400, "query is required", param="query", code="missing_required_parameter")
    raw = body["query"]
    queries = [raw] if isinstance(raw, str) else raw
    if (
        not isinstance(queries, list)
        or not queries
        or len(queries) > MAX_QUERIES
        or not all(isinstance(q, str) for q in queries)
    ):
        raise ApiError(
            400,
            f"query must be a string or an array of 1-{MAX_QUERIES} strings",
            param="query",
            code="invalid_type",
        )
    for i, q in enumerate(queries):
        check_text(q, "query" if isinstance(raw, str) else f"query[{i}]", limit)
    # The queries are searched as one text (joined by newlines), so that is checked too.
    text = "\n".join(queries)
    if not text.strip():
        raise ApiError(400, "query must not be empty", param="query", code="invalid_value")
    check_text(text, "query", limit)
    return queries


def _score_threshold(options: Any) -> float | None:
    """``ranking_options.score_threshold`` (None when absent), after checking the ranker.

    Raises:
        ApiError: 400 for a malformed ``ranking_options``, an unknown ranker or a threshold
            outside [0, 1].
    """
    if options is None:
        return None
    if not isinstance(options, dict):
        raise ApiError(400, "ranking_options must be an object", param="ranking_options")
    check_fields(options, ("ranker", "score_threshold"), "ranking_options.")
    ranker = options.get("ranker", "auto")
    if ranker not in RANKERS:
        raise ApiError(
            400,
            f"ranking_options.ranker must be one of {', '.join(RANKERS)}",
            param="ranking_options.ranker",
            code="invalid_value",
        )
    if "score_threshold" not in options:
        return None
    value = options["score_threshold"]
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0.0 <= float(value) <= 1.0
    ):
        raise ApiError(
            400,
            "ranking_options.score_threshold must be a number between 0 and 1",
            param="ranking_options.score_threshold",
            code="invalid_value",
        )
    return float(value)


class OpenAIRoutes:
    """The ``/v1`` handlers over ``indexes``.

    Args:
        indexes: The served indexes.
        settings: The app's limits.
        front_matter: ``(index, source path) -> front matter`` for result attributes.
        slots: Where searches run (shared with ``GET /search``).
        embeds: Where query embeddings run (shared with ``GET /search``; see
            :mod:`scidx.web.semantic`).
    """

    def __init__(
        self,
        indexes: IndexSet,
        settings: WebSettings,
        front_matter: Callable[[Index, str], Mapping[str, Any]],
        slots: SearchSlots,
        embeds: EmbedSlots | None = None,
    ) -> None:
        self.slots = slots
        self.embeds = embeds or EmbedSlots(settings.embed_threads, settings.embed_wait)
        self.indexes = indexes
        self.settings = settings
        self.front_matter = front_matter

    def _entry(self, request: Request) -> ServedIndex:
        store_id = request.path_params["store_id"]
        entry = self.indexes.get(store_id)
        if entry is None:
            raise _not_found(store_id)
        return entry

    async def list_stores(self, request: Request) -> Response:
        """``GET /v1/vector_stores``."""
        params = query_params(request, ("limit", "order", "after", "before"))
        limit = int_param(params.get("limit", 20), "limit", 1, 100)
        order = params.get("order", "desc")
        if order not in ("asc", "desc"):
            raise ApiError(400, "order must be asc or desc", param="order", code="invalid_value")
        stores = sorted(
            (store_object(e) for e in self.indexes), key=lambda s: (s["created_at"], s["id"])
        )
        if order == "desc":
            stores.reverse()
        ids = [s["id"] for s in stores]
        for cursor, cut in (("after", 1), ("before", 0)):
            if cursor in params:
                if params[cursor] not in ids:
                    raise _not_found(params[cursor])
                pos = ids.index(params[cursor])
                stores = stores[pos + 1 :] if cut else stores[:pos]
                ids = [s["id"] for s in stores]
        page = stores[:limit]
        return json_response(
            {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": len(stores) > limit,
            }
        )

    async def get_store(self, request: Request) -> Response:
        """``GET /v1/vector_stores/{id}``."""
        query_params(request, ())
        return json_response(store_object(self._entry(request)))

    async def search(self, request: Request) -> Response:
        """``POST /v1/vector_stores/{id}/search``."""
        entry = self._entry(request)
        body = await read_json(request, self.settings.max_body_bytes)
        check_fields(body, SEARCH_FIELDS)
        queries = _search_queries(body, self.settings.max_query_chars)
        text = "\n".join(queries)
        k = int_param(
            body.get("max_num_results", 10),
            "max_num_results",
            1,
            min(OPENAI_MAX_RESULTS, self.settings.max_k),
        )
        threshold = _score_threshold(body.get("ranking_options"))
        rewrite = body.get("rewrite_query", False)
        if not isinstance(rewrite, bool):
            raise ApiError(400, "rewrite_query must be a boolean", param="rewrite_query")
        filters = body.get("filters")
        if filters is not None:
            filters = check_filter(filters)
        mode = self.settings.default_mode
        vectors = await query_vectors(self.embeds, [entry], text, mode)

        def run() -> list[dict[str, Any]]:
            with entry.lease() as idx:
                try:
                    return run_search(
                        idx,
                        text,
                        k=k,
                        mode=mode,
                        threshold=threshold,
                        filters=filters,
                        front_matter=self.front_matter,
                        candidates=self.settings.filter_candidates,
                        query_vector=vectors.get(entry.name),
                    )
                except ScidxError as exc:
                    raise from_scidx_error(exc, "query") from None

        data = await self.slots.run(run)
        return json_response(
            {
                "object": "vector_store.search_results.page",
                "search_query": queries,
                "data": data,
                "has_more": False,
                "next_page": None,
            }
        )

    async def embeddings(self, request: Request) -> Response:
        """``POST /v1/embeddings`` with a local provider's query embedder."""
        body = await read_json(request, self.settings.max_body_bytes)
        check_fields(body, ("input", "model", "encoding_format", "dimensions", "user"))
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise ApiError(
                400, "model is required", param="model", code="missing_required_parameter"
            )
        entry = self._embedding_entry(model)
        raw = body.get("input")
        inputs = [raw] if isinstance(raw, str) else raw
        if not isinstance(inputs, list) or not inputs or len(inputs) > MAX_EMBED_INPUTS:
            raise ApiError(
                400,
                f"input must be a string or an array of 1-{MAX_EMBED_INPUTS} strings",
                param="input",
                code="invalid_type",
            )
        for i, item in enumerate(inputs):
            if not isinstance(item, str):
                raise ApiError(
                    400,
                    "input must hold strings; token arrays are not supported by this server",
                    param=f"input[{i}]",
                    code="invalid_type",
                )
            if not item:
                raise ApiError(
                    400, f"input[{i}] is empty", param=f"input[{i}]", code="invalid_value"
                )
            check_text(item, f"input[{i}]", self.settings.max_body_bytes)
        fmt = body.get("encoding_format", "float")
        if fmt not in ("float", "base64"):
            raise ApiError(
                400,
                "encoding_format must be float or base64",
                param="encoding_format",
                code="invalid_value",
            )
        dims = entry.index.vectors.shape[1]
        if "dimensions" in body:
            int_param(body["dimensions"], "dimensions", dims, dims)
        user = body.get("user")
        if user is not None and not isinstance(user, str):
            raise ApiError(400, "user must be a string", param="user", code="invalid_type")

        def run() -> list[Any]:
            with entry.lease() as idx:
                try:
                    return [idx.embed_query(text) for text in inputs]
                except ScidxError as exc:
                    raise from_scidx_error(exc, "input") from None

        vectors = await self.embeds.run(run)
        data = []
        for i, vec in enumerate(vectors):
            arr = np.asarray(vec, dtype="<f4").reshape(-1)
            embedding: Any
            if fmt == "base64":
                embedding = base64.b64encode(arr.tobytes()).decode("ascii")
            else:
                embedding = [float(x) for x in arr]
            data.append({"object": "embedding", "index": i, "embedding": embedding})
        tokens = sum(len(text.split()) for text in inputs)
        return json_response(
            {
                "object": "list",
                "data": data,
                "model": str(entry.index.stamp.get("model", model)),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    def _embedding_entry(self, model: str) -> ServedIndex:
        named = self.indexes.get(model)
        candidates = [named] if named is not None else []
        candidates += [e for e in self.indexes if e.index.stamp.get("model") == model]
        for entry in candidates:
            if entry.index.stamp.get("provider") in LOCAL_PROVIDERS:
                return entry
        local = [e.name for e in self.indexes if e.index.stamp.get("provider") in LOCAL_PROVIDERS]
        if candidates:
            hint = (
                f"the index's provider is {candidates[0].index.stamp.get('provider')!r}, which "
                "embeds remotely; this server embeds only with providers that run here "
                f"({', '.join(sorted(LOCAL_PROVIDERS))})"
            )
        else:
            hint = "use a vector-store id or its provider's model name"
        available = f"; models here: {', '.join(local)}" if local else ""
        raise ApiError(
            404,
            f"The model {model[:80]!r} does not exist or cannot embed here: {hint}{available}",
            param="model",
            code="model_not_found",
        )

    async def read_only(self, request: Request) -> Response:
        """Anything that would write: 405 with an OpenAI error object."""
        raise ApiError(
            405,
            f"{request.method} {request.url.path} is not supported: this server is read-only "
            "(each vector store is a loaded .scidx index; rebuild the index to change it)",
            code="method_not_allowed",
        )
