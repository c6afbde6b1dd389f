"""Search an exported index in PostgreSQL with the file's ranking: :class:`PostgresRetriever`.

Contract (the same as :mod:`scidx.index.search`, computed in SQL):

* **keyword**: BM25 with the index's tokenizer and parameters. Candidates come from the GIN
  index on ``terms``; each candidate's score is the file's formula, operation for operation, in
  float8 (``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``, each impact rounded to
  float4, summed in query-term order, rounded to float4), with ``tf`` read from the ``tf``
  sparsevec by inner product with the term's one-hot vector, and ``idf`` computed here from the
  stored document frequencies with numpy's ``log1p``, as the packer does. Scores and order
  therefore equal the file's.
* **vector**: cosine similarity ``-(embedding <#> q)`` (vectors are normalised), candidates by
  ``ORDER BY embedding <=> q`` through the HNSW index (approximate; ``exact=True`` scans).
* **hybrid**: the file's max-normalised weighted sum with Rocchio feedback from the best
  keyword hits (the index's ``meta.fusion``: ``alpha``, ``prfDocs``, ``prfBeta``); the
  candidates are every keyword match plus the ``k`` nearest vectors, which contains the exact
  top ``k`` (a chunk without a query term scores ``alpha * cos / max_cos``, so it can only be in
  the top ``k`` if it is among the ``k`` nearest). Two statements: every keyword score (for the
  normaliser and the feedback vector), then one fused statement.
* Filters (``source`` glob or prefix, ``heading`` substring, ``metadata`` equality) are SQL
  conditions applied before the ``LIMIT``; ``min_score`` drops matches after it, as
  :class:`~scidx.index.retrieval.IndexRetriever` does. Ties are broken by chunk id in code-point
  order (``COLLATE "C"``).
* Each retrieval runs in one read-only REPEATABLE READ transaction, so an export committing
  meanwhile is seen entirely or not at all.
"""

from __future__ import annotations

import fnmatch
import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError, InputError, QueryError
from scidx.fusion import DEFAULT_FUSION
from scidx.index.bm25 import query_terms, term_hash
from scidx.index.query import QueryEncoder
from scidx.index.retrieval import (
    STAGE_EMBEDDING,
    STAGE_FUSION,
    STAGE_RETRIEVAL,
    Match,
    RetrievalRequest,
    StageEvent,
)
from scidx.postgres.connection import TableNames, connect, database_error
from scidx.postgres.schema import SCHEMA_VERSION, TERM_DIMENSIONS, read_meta

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresRetriever"]

_Vec = npt.NDArray[np.float32]


@dataclass(frozen=True)
class _Keyword:
    """The query's terms that the table has: term ids, idf weights, and the BM25 constants."""

    ids: list[int]
    idf: list[float]
    k1: float
    b: float
    avgdl: float


def _meta_str(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class PostgresRetriever:
    """A :class:`~scidx.index.retrieval.Retriever` over a table written by ``toolup-rag export``.

    Args:
        dsn: libpq DSN or URL (``""``: libpq environment variables).
        table: The chunks table.
        schema: Its schema.
        name: A name for matches and traces (default ``schema.table``).
        alpha: Hybrid weight of the vector leg; ``None``: the exported index's (``fusion``).
        snippet_chars: Length of each match's ``snippet``.
        exact: Rank vectors exactly (sequential scan) instead of through the HNSW index.
        ef_search: HNSW candidate list size (``hnsw.ef_search``; pgvector's default 40, raised
            to ``k + 8`` when ``k`` is larger). Higher: better recall, slower queries.
        query_embedder: An embedder with the table's provider stamp; default: made from the
            stamp table as a ``.scidx`` index would.
        embedder_options: Options for a provider's ``query_embedder_from_stamp``.

    Raises:
        DatabaseError: PostgreSQL is unreachable or refused the connection (exit code 8).
        InputError: The table does not exist (no export yet).
        CorruptIndexError: The table was written by another schema version or is damaged.

    Example:
        >>> r = PostgresRetriever("host=/tmp dbname=docs")  # doctest: +SKIP
        >>> r.retrieve(RetrievalRequest("configure the cache", k=3))  # doctest: +SKIP
    """

    def __init__(
        self,
        dsn: str,
        *,
        table: str = "scidx_chunks",
        schema: str = "public",
        name: str | None = None,
        alpha: float | None = None,
        snippet_chars: int = 240,
        exact: bool = False,
        ef_search: int = 40,
        query_embedder: Any | None = None,
        embedder_options: Mapping[str, Any] | None = None,
    ) -> None:
        import psycopg

        self.names = TableNames(schema=schema, table=table)
        self.name = name if name is not None else self.names.qualified
        self.alpha = alpha
        self.snippet_chars = snippet_chars
        self.exact = exact
        self.ef_search = int(ef_search)
        self._dsn = dsn
        self._lock = threading.Lock()
        self._sources: tuple[str, list[str]] | None = None
        self._conn = connect(dsn, application="scidx query")
        try:
            meta = read_meta(self._conn, self.names)
            self._conn.rollback()
            if meta is None:
                raise InputError(
                    f"PostgreSQL table {self.names.qualified} (with its _terms and _meta tables) "
                    "does not exist; write it with `toolup-rag export INDEX --postgres DSN "
                    f"--table {table}`"
                )
            from pgvector.psycopg import register_vector

            register_vector(self._conn)
            self._conn.rollback()
        except psycopg.Error as exc:
            self._conn.close()
            raise database_error(exc, dsn, "reading the stamp table") from None
        except BaseException:
            self._conn.close()
            raise
        if meta.get("schema") != SCHEMA_VERSION:
            self._conn.close()
            raise CorruptIndexError(
                f"PostgreSQL table {self.names.qualified} was written with schema version "
                f"{meta.get('schema')!r}; this scidx reads version {SCHEMA_VERSION}. Export the "
                "index again with this scidx."
            )
        self.meta = meta
        stamp = meta.get("stamp")
        vector = meta.get("vector")
        if not isinstance(stamp, dict) or not isinstance(vector, dict):
            self._conn.close()
            raise CorruptIndexError(
                f"PostgreSQL table {self.names.qualified}: the stamp table has no provider stamp;"
                " export the index again"
            )
        self.stamp: dict[str, Any] = dict(stamp)
        self.dimensions = int(vector.get("dimensions") or 0)
        bm = meta.get("bm25") or {}
        # The index's hybrid fusion settings (per provider; meta.fusion), as the file uses them.
        fusion = {**DEFAULT_FUSION, **(meta.get("fusion") or {})}
        self._alpha = float(fusion["alpha"])
        self._prf_docs = int(fusion["prfDocs"])
        self._prf_beta = float(fusion["prfBeta"])
        self._k1 = float(bm.get("k1", 1.2))
        self._b = float(bm.get("b", 0.75))
        # The file's query embedder, chosen from the stamp by the same code.
        self._encoder = QueryEncoder(
            f"PostgreSQL table {self.names.qualified}",
            self.stamp,
            self.dimensions,
            query_embedder=query_embedder,
            embedder_options=embedder_options,
        )

    # -- lifecycle ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> PostgresRetriever:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresRetriever({self.name!r})"

    # -- SQL pieces -----------------------------------------------------------------------------

    def _t(self, which: str = "") -> Any:
        from psycopg import sql

        table = {"": self.names.table, "terms": self.names.terms, "meta": self.names.meta}[which]
        return sql.Identifier(self.names.schema, table)

    def _keyword_terms(self, conn: psycopg.Connection[Any], terms: Sequence[str]) -> _Keyword:
        """Look up the query terms and the corpus statistics in this snapshot."""
        from psycopg import sql

        hashes = [int(np.uint64(term_hash(t)).view(np.int64)) for t in terms]
        row = conn.execute(
            sql.SQL(
                "SELECT (SELECT value::text FROM {} WHERE key = 'stats'), "
                "array_agg(term_hash), array_agg(term_id), array_agg(df) "
                "FROM {} WHERE term_hash = ANY(%s)"
            ).format(self._t("meta"), self._t("terms")),
            (hashes,),
        ).fetchone()
        if row is None or row[0] is None:
            raise CorruptIndexError(
                f"PostgreSQL table {self.names.qualified}: the stamp table has no statistics; "
                "export the index again"
            )
        stats = json.loads(row[0])
        n = int(stats["chunks"])
        by_hash: dict[int, tuple[int, int]] = {}
        if row[1] is not None:
            for h, tid, d in zip(row[1], row[2], row[3], strict=True):
                by_hash[int(h)] = (int(tid), int(d))
        ids: list[int] = []
        dfs: list[int] = []
        for h in hashes:  # query-term order, as the file sums
            found = by_hash.get(h)
            if found is not None and found[1] > 0 and found[0] not in ids:
                ids.append(found[0])
                dfs.append(found[1])
        df = np.asarray(dfs, dtype=np.float64)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        return _Keyword(ids, idf.tolist(), self._k1, self._b, float(stats["avgdl"]))

    def _keyword_sql(self, kw: _Keyword, where: Any, params: dict[str, Any]) -> Any:
        """``SELECT id, score`` over the keyword candidates matching ``where``."""
        from pgvector import SparseVector
        from psycopg import sql

        params.update(
            {
                "kw_ids": kw.ids,
                "kw_k1": kw.k1,
                "kw_omb": 1.0 - kw.b,
                "kw_b": kw.b,
                "kw_avgdl": kw.avgdl,
                "kw_k1p1": kw.k1 + 1.0,
            }
        )
        cols = []
        impacts = []
        for j, (tid, w) in enumerate(zip(kw.ids, kw.idf, strict=True)):
            params[f"kw_q{j}"] = SparseVector({tid - 1: 1.0}, TERM_DIMENSIONS)
            params[f"kw_w{j}"] = w
            cols.append(sql.SQL(f"-(tf <#> %(kw_q{j})s) AS f{j}"))
            impacts.append(
                sql.SQL(
                    f"CASE WHEN f{j} > 0 THEN ((%(kw_w{j})s * f{j} * %(kw_k1p1)s) / (f{j} + nrm))"
                    "::real::float8 ELSE 0 END"
                )
            )
        # OFFSET 0 keeps the planner from inlining the subquery, which would compute each
        # inner product once per use instead of once per row.
        return sql.SQL(
            "SELECT id, ({sum})::real AS score FROM (SELECT id, "
            "%(kw_k1)s * (%(kw_omb)s + %(kw_b)s * doc_len::float8 / %(kw_avgdl)s) AS nrm, {cols} "
            "FROM {t} WHERE terms && %(kw_ids)s::int4[] AND {where} OFFSET 0) AS kx"
        ).format(
            sum=sql.SQL(" + ").join(impacts),
            cols=sql.SQL(", ").join(cols),
            t=self._t(),
            where=where,
        )

    def _source_list(self, conn: psycopg.Connection[Any]) -> list[str]:
        # Globs use fnmatch's rules exactly, so they are matched here against the distinct
        # sources (cached per export) and the result goes into SQL as `source = ANY(...)`.
        from psycopg import sql

        row = conn.execute(
            sql.SQL("SELECT value::text FROM {} WHERE key = 'contentHash'").format(self._t("meta"))
        ).fetchone()
        stamp = str(row[0]) if row else ""
        cached = self._sources
        if cached is not None and cached[0] == stamp:
            return cached[1]
        sources = [
            str(s)
            for (s,) in conn.execute(sql.SQL("SELECT DISTINCT source FROM {}").format(self._t()))
        ]
        self._sources = (stamp, sources)
        return sources

    def _filters(
        self,
        conn: psycopg.Connection[Any],
        request: RetrievalRequest,
        params: dict[str, Any],
    ) -> Any:
        """The SQL condition for the request's filters (``TRUE`` without any)."""
        from psycopg import sql

        parts: list[Any] = []
        source, heading, metadata = request.source, request.heading, request.metadata
        if source is not None:
            if not isinstance(source, str) or not source:
                raise QueryError(
                    f"the source filter must be a non-empty glob or path prefix: {source!r}"
                )
            if any(ch in source for ch in "*?["):
                params["f_sources"] = [
                    s for s in self._source_list(conn) if fnmatch.fnmatchcase(s, source)
                ]
                parts.append(sql.SQL("source = ANY(%(f_sources)s::text[])"))
            else:
                params["f_prefix"] = source
                parts.append(sql.SQL("starts_with(source, %(f_prefix)s)"))
        if heading is not None:
            if not isinstance(heading, str) or not heading:
                raise QueryError(f"the heading filter must be a non-empty string, got {heading!r}")
            params["f_heading"] = heading.casefold()
            parts.append(sql.SQL("strpos(heading_key, %(f_heading)s) > 0"))
        if metadata is not None:
            if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
                raise QueryError(
                    f"the metadata filter must map front-matter field names to values: {metadata!r}"
                )
            for j, (key, value) in enumerate(sorted(metadata.items())):
                params[f"f_mk{j}"] = key
                params[f"f_mv{j}"] = _meta_str(value)
                parts.append(sql.SQL(f"metadata ->> %(f_mk{j})s = %(f_mv{j})s"))
        return sql.SQL(" AND ").join(parts) if parts else sql.SQL("TRUE")

    # -- query embedding ------------------------------------------------------------------------

    def embed(self, text: str) -> _Vec | None:
        """The normalised query vector (None for a query with no vector evidence)."""
        return self._encoder.embed_normalised(text)

    # -- retrieval ------------------------------------------------------------------------------

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        """Return the best matches for ``request``, best first (see the module contract).

        Raises:
            QueryError: An invalid request (bad ``k``, mode, filter).
            QueryEmbeddingError: The query cannot be embedded with the table's provider.
            DatabaseError: PostgreSQL failed or refused a statement.
        """
        request.validate()
        legs = request.legs()
        if legs is None:
            return []
        mode, lexical = legs
        alpha = self._alpha if self.alpha is None else float(self.alpha)
        terms = query_terms(lexical.strip()) if lexical.strip() else []
        qvec: _Vec | None = None
        if mode != "keyword" and request.query.strip():
            t0 = time.perf_counter()
            qvec = self.embed(request.query)
            request.report(StageEvent(STAGE_EMBEDDING, time.perf_counter() - t0, None, self.name))
        t0 = time.perf_counter()
        rows = self._run(request, mode, terms, qvec, alpha)
        took = time.perf_counter() - t0
        stage = STAGE_FUSION if mode == "hybrid" else STAGE_RETRIEVAL
        request.report(StageEvent(STAGE_RETRIEVAL, took, len(rows), self.name))
        if stage == STAGE_FUSION:
            request.report(StageEvent(STAGE_FUSION, 0.0, len(rows), self.name))
        out = []
        for cid, score, source, anchor, path, title, text, url in rows:
            if request.min_score is not None and score < request.min_score:
                continue
            out.append(
                Match(
                    id=cid,
                    score=score,
                    source=source,
                    anchor=anchor,
                    heading_path=list(path),
                    title=title,
                    text=text,
                    url=url,
                    query_terms=tuple(terms),
                    snippet_chars=self.snippet_chars,
                    retriever=self.name,
                )
            )
        return out

    def rank(
        self, query: str, *, k: int = 10, mode: str = "hybrid", **filters: Any
    ) -> list[tuple[str, float]]:
        """Chunk ids and scores only, in result order (like :meth:`scidx.Index.rank`)."""
        request = RetrievalRequest(query, k=k, mode=mode, **filters)
        request.validate()
        terms = query_terms(query.strip()) if query.strip() else []
        qvec = self.embed(query) if mode != "keyword" and query.strip() else None
        alpha = self._alpha if self.alpha is None else float(self.alpha)
        return [(r[0], r[1]) for r in self._run(request, mode, terms, qvec, alpha, full=False)]

    def sql_parameters(self, query: str) -> dict[str, Any]:
        """The inputs of the hand-written SQL in ``docs/postgres.md`` for ``query``.

        Returns:
            ``{"hashes": "{...}", "qvec": "[...]"}``: the distinct query terms' hashes as an
            ``int8[]`` literal and the normalised query embedding as a ``vector`` literal
            (``None`` when the query has no vector evidence).
        """
        hashes = [int(np.uint64(term_hash(t)).view(np.int64)) for t in query_terms(query)]
        vec = self.embed(query) if query.strip() else None
        return {
            "hashes": "{" + ",".join(map(str, hashes)) + "}",
            "qvec": None if vec is None else "[" + ",".join(repr(float(x)) for x in vec) + "]",
        }

    def chunk_keys(self) -> list[tuple[str, str, str]]:
        """``(id, source, anchor)`` of every chunk (for eval fixtures' relevance checks)."""
        import psycopg
        from psycopg import sql

        with self._lock:
            try:
                with self._conn.transaction():
                    rows = self._conn.execute(
                        sql.SQL("SELECT id, source, anchor FROM {} ORDER BY id").format(self._t())
                    ).fetchall()
            except psycopg.Error as exc:
                raise database_error(exc, self._dsn, "reading the chunk ids") from None
        return [(str(a), str(b), str(c)) for a, b, c in rows]

    def _run(
        self,
        request: RetrievalRequest,
        mode: str,
        terms: list[str],
        qvec: _Vec | None,
        alpha: float,
        *,
        full: bool = True,
    ) -> list[tuple[Any, ...]]:
        import psycopg

        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                try:
                    rows = self._select(conn, request, mode, terms, qvec, alpha, full)
                finally:
                    conn.rollback()
            except psycopg.Error as exc:
                raise database_error(exc, self._dsn, "the query") from None
        return rows

    def _select(
        self,
        conn: psycopg.Connection[Any],
        request: RetrievalRequest,
        mode: str,
        terms: list[str],
        qvec: _Vec | None,
        alpha: float,
        full: bool,
    ) -> list[tuple[Any, ...]]:
        from psycopg import sql

        k = int(request.k)
        params: dict[str, Any] = {"k": k}
        where = self._filters(conn, request, params)
        kw = self._keyword_terms(conn, terms) if terms else None
        if kw is not None and not kw.ids:
            kw = None
        if self.exact:
            conn.execute("SELECT set_config('enable_indexscan', 'off', true)")
        else:
            ef = str(max(self.ef_search, k + 8))
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (ef,))
            if where.as_string(conn) != "TRUE":
                # pgvector >= 0.8: keep scanning the graph until enough rows pass the filters.
                conn.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
        cols = sql.SQL(
            ", c.source, c.anchor, c.heading_path, c.title, c.text, c.url" if full else ""
        )
        if mode == "keyword" or (mode == "hybrid" and qvec is None):
            if kw is None:
                return []
            inner = self._keyword_sql(kw, where, params)
            if mode == "keyword":
                score = sql.SQL("kw.score")
            else:
                kw_max = self._keyword_max(conn, kw)
                if not kw_max > 0:
                    return []
                params["oma"], params["kw_max"] = 1.0 - alpha, kw_max
                score = sql.SQL("(%(oma)s * kw.score::float8 / %(kw_max)s)::real")
            stmt = sql.SQL(
                "SELECT c.id, best.score{cols} FROM (SELECT id, {score} AS score FROM ({inner}) "
                "AS kw ORDER BY 2 DESC, id LIMIT %(k)s) AS best JOIN {t} AS c USING (id) "
                "ORDER BY best.score DESC, c.id"
            ).format(score=score, cols=cols, inner=inner, t=self._t())
            return [self._fix(r) for r in conn.execute(stmt, params, binary=True)]
        if qvec is None:
            return []
        if mode == "vector":
            params["q"] = qvec
            params["lim"] = k + 8  # room for ties at the cut, ordered by id below
            stmt = sql.SQL(
                "SELECT c.id, (-(c.embedding <#> %(q)s))::real AS score{cols} FROM ("
                "SELECT id, embedding FROM {t} WHERE {where} ORDER BY embedding <=> %(q)s "
                "LIMIT %(lim)s) AS v JOIN {t} AS c USING (id)"
            ).format(cols=cols, t=self._t(), where=where)
            rows = [self._fix(r) for r in conn.execute(stmt, params, binary=True)]
            rows.sort(key=lambda r: (-r[1], r[0]))
            return rows[:k]
        # hybrid. Statement 1 scores every keyword match once (unfiltered: the file normalises
        # by the best score of all chunks and takes its feedback from the best hits of all);
        # the feedback vector is computed here exactly as the file does; statement 2 fuses.
        kw_ids: list[str] = []
        kw_scores: list[float] = []
        q = qvec
        if kw is not None:
            for cid, score in conn.execute(
                self._keyword_sql(kw, sql.SQL("TRUE"), params), params, binary=True
            ):
                kw_ids.append(str(cid))
                kw_scores.append(float(np.float32(score)))
        kw_max = max(kw_scores, default=0.0)
        if kw_ids:
            best = sorted(range(len(kw_ids)), key=lambda i: (-kw_scores[i], kw_ids[i]))[
                : self._prf_docs
            ]
            top_ids = [kw_ids[i] for i in best]
            found = dict(
                conn.execute(
                    sql.SQL("SELECT id, embedding FROM {} WHERE id = ANY(%s::text[])").format(
                        self._t()
                    ),
                    (top_ids,),
                    binary=True,
                ).fetchall()
            )
            q = _expand(
                qvec, [kw_scores[i] for i in best], [found[i] for i in top_ids], self._prf_beta
            )
        params.update(
            {
                "q": q,
                "alpha": alpha,
                "oma": 1.0 - alpha,
                "kw_max": kw_max,
                "kw_id": kw_ids,
                "kw_score": kw_scores,
            }
        )
        filtered = where.as_string(conn) != "TRUE"
        kw_cand = (
            sql.SQL("SELECT kw.id FROM kw JOIN {t} AS c USING (id) WHERE {where}").format(
                t=self._t(), where=where
            )
            if filtered
            else sql.SQL("SELECT id FROM kw")
        )
        stmt = sql.SQL(
            "WITH kw AS MATERIALIZED ("
            "SELECT * FROM unnest(%(kw_id)s::text[], %(kw_score)s::real[]) AS u(id, score)), "
            "vmax AS (SELECT greatest(-(embedding <#> %(q)s), 0) AS v FROM {t} "
            "ORDER BY embedding <=> %(q)s LIMIT 1), "
            "near AS (SELECT id FROM {t} WHERE {where} ORDER BY embedding <=> %(q)s LIMIT %(k)s), "
            "cand AS ({kw_cand} UNION SELECT id FROM near), "
            # Materialised steps: each inner product and each fused score computed once.
            # LATERAL: one primary-key lookup per candidate, never a scan of the whole table.
            "scored AS MATERIALIZED (SELECT cand.id, greatest(-(c.embedding <#> %(q)s), 0) "
            "AS cos, kw.score AS kws FROM cand CROSS JOIN LATERAL (SELECT embedding FROM {t} "
            "WHERE {t}.id = cand.id) AS c LEFT JOIN kw USING (id)), "
            "fused AS MATERIALIZED (SELECT id, (CASE WHEN vmax.v > 0 THEN cos * (%(alpha)s / "
            "vmax.v) ELSE 0 END + coalesce(%(oma)s * kws::float8 / nullif(%(kw_max)s, 0), 0)"
            ")::real AS score FROM scored CROSS JOIN vmax), "
            "best AS (SELECT id, score FROM fused WHERE score > 0 ORDER BY score DESC, id "
            "LIMIT %(k)s) "
            "SELECT c.id, best.score{cols} FROM best JOIN {t} AS c USING (id) "
            "ORDER BY best.score DESC, c.id"
        ).format(t=self._t(), where=where, kw_cand=kw_cand, cols=cols)
        return [self._fix(r) for r in conn.execute(stmt, params, binary=True)]

    def _keyword_max(self, conn: psycopg.Connection[Any], kw: _Keyword) -> float:
        from psycopg import sql

        params: dict[str, Any] = {}
        row = conn.execute(
            sql.SQL("SELECT max(score) FROM ({}) AS kw").format(
                self._keyword_sql(kw, sql.SQL("TRUE"), params)
            ),
            params,
            binary=True,
        ).fetchone()
        return float(np.float32(row[0])) if row and row[0] is not None else 0.0

    @staticmethod
    def _fix(row: tuple[Any, ...]) -> tuple[Any, ...]:
        # float4 arrives as a Python float of the same value; keep it a float32 value exactly.
        out = list(row)
        out[1] = float(np.float32(out[1]))
        if len(out) > 4 and out[4] is None:
            out[4] = []
        return tuple(out)


def _expand(qvec: _Vec, scores: list[float], vectors: list[Any], beta: float) -> _Vec:
    """Rocchio feedback as in the file: q + beta * BM25-weighted mean of the top hits' vectors."""
    weights = np.asarray(scores, dtype=np.float32).astype(np.float64)
    total = float(weights.sum())
    if not weights.shape[0] or not total > 0:
        return qvec
    mat = np.asarray([_floats(v) for v in vectors], dtype=np.float32)
    centroid = weights @ mat.astype(np.float64) / total
    expanded = qvec.astype(np.float64) + beta * centroid
    norm = float(np.linalg.norm(expanded))
    if not norm > 0:
        return qvec
    return (expanded / norm).astype(np.float32)


def _floats(value: Any) -> npt.NDArray[np.float32]:
    """A ``vector`` value as loaded by pgvector (a ``Vector`` in binary mode) as float32."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy is not None else value, dtype=np.float32)
