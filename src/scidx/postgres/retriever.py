"""Search an exported index in PostgreSQL with the file's ranking: :class:`PostgresRetriever`.

Contract (the same as :mod:`scidx.index.search`, computed in SQL; statements in
:mod:`scidx.postgres.queries`):

* **keyword**: BM25 with the index's tokenizer and parameters over the query terms' postings
  only, top ``k`` cut in the database; scores and order equal the file's bit for bit.
* **Evidence** (vector and hybrid; the file's rule): only chunks a query term matches, or whose
  cosine with the query vector (hybrid: the feedback-expanded one) reaches the index's
  ``fusion.vectorFloor``, are returned. The hashing provider records no floor, so its vectors
  only reorder keyword matches, and nonsense (``xyzzyplugh``) finds nothing in any mode.
* **vector**: cosine similarity over the chunks with evidence: every keyword match, scored
  exactly, plus (with a floor) the nearest vectors through the HNSW index that clear it
  (approximate; ``exact=True`` scans). int8 and binary exports store the int8 codes in
  ``halfvec`` and score rows exactly as the file does (codes times scale); a binary export is
  ranked like an int8 one, as the file ranks a text query (its ``bits`` serve query vectors).
* **hybrid**: the file's max-normalised weighted sum with Rocchio feedback from the best
  keyword hits (the index's ``meta.fusion``), both legs and the fusion in one statement; a
  chunk without evidence fuses to 0 and is not returned.
* Filters (``source`` glob or prefix, ``heading`` substring, ``metadata`` equality) are SQL
  conditions applied before the ``LIMIT``; ``min_score`` drops matches after it, as
  :class:`~scidx.index.retrieval.IndexRetriever` does. Ties are broken by chunk id in code-point
  order (``COLLATE "C"``).
* **One round trip, one snapshot.** Each retrieval is one read-only ``SELECT`` in autocommit
  mode: it sees one snapshot, so an export committing meanwhile is seen entirely or not at all,
  and it runs unchanged on a hot standby.
* **Reconnects once.** A statement that fails because the connection broke (backend
  terminated, server restarted, failover) is retried once on a new connection: every statement
  is a read-only ``SELECT``, so a retry cannot apply anything twice.
* **Time limit.** ``timeout`` seconds per statement (default 30): the server cancels a statement
  that runs longer (``statement_timeout``), and a server that stops answering at all (a stopped
  backend, a dead network) is abandoned by the client one second later. Both raise
  :class:`~scidx.errors.DatabaseError` (exit 8) saying the timeout fired; the next retrieval
  connects again.
"""

from __future__ import annotations

import fnmatch
import os
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError, DatabaseError, InputError, QueryError
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
from scidx.postgres.connection import TableNames, connect, database_error, describe_dsn
from scidx.postgres.queries import Statements
from scidx.postgres.schema import SCHEMA_VERSION, read_meta

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresRetriever"]

_Vec = npt.NDArray[np.float32]


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
        ef_search: HNSW candidate list size (``hnsw.ef_search``, raised to ``k + 8`` when ``k``
            is larger). Higher: better recall, slower queries (``docs/postgres.md`` measures).
        timeout: Seconds a statement may take (``statement_timeout``; the client gives up one
            second later if the server does not answer at all); ``None``: no limit.
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
        ef_search: int = 100,
        timeout: float | None = 30.0,
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
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            raise QueryError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = None if timeout is None else float(timeout)
        self._dsn = dsn
        self._lock = threading.Lock()
        self._sources: tuple[str, list[str]] | None = None
        self._settings: dict[str, str] = {}
        self._conn = self._connect()
        try:
            meta = read_meta(self._conn, self.names)
            if meta is None:
                raise InputError(
                    f"PostgreSQL table {self.names.qualified} (with its _postings, _terms and "
                    "_meta tables) does not exist; write it with `toolup-rag export INDEX "
                    f"--postgres DSN --table {table}`"
                )
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
        self.encoding = str(vector.get("encoding") or "float32")
        self._statements = Statements(self.names.schema, self.names.table, self.encoding)
        # The index's hybrid fusion settings (per provider; meta.fusion), as the file uses them.
        fusion = {**DEFAULT_FUSION, **(meta.get("fusion") or {})}
        self._alpha = float(fusion["alpha"])
        self._prf_docs = int(fusion["prfDocs"])
        self._prf_beta = float(fusion["prfBeta"])
        floor = fusion.get("vectorFloor")
        if floor is not None and (
            isinstance(floor, bool) or not isinstance(floor, (int, float)) or not -1 <= floor <= 1
        ):
            self._conn.close()
            raise CorruptIndexError(
                f"PostgreSQL table {self.names.qualified}: the stamp table's `fusion` row has "
                f"vectorFloor {floor!r}, not null or a number in [-1, 1]; export the index again"
            )
        # The evidence rule's floor (None: a chunk without a query term is never a hit).
        self._floor = None if floor is None else float(floor)
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

    def _connect(self) -> psycopg.Connection[Any]:
        """A connection in autocommit mode (each retrieval is one statement, one snapshot)."""
        import psycopg
        from pgvector.psycopg import register_vector

        conn = connect(self._dsn, application="scidx query")
        try:
            conn.autocommit = True
            # Planned with each query's own terms: psycopg's automatic server-side prepare
            # switches to a generic plan that cannot see how many postings the terms have
            # (5-6x slower on SciFact).
            conn.prepare_threshold = None
            register_vector(conn)
        except psycopg.Error as exc:
            conn.close()
            raise database_error(exc, self._dsn, "connecting") from None
        self._settings = {}
        return conn

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
        # Vector mode takes its evidence terms from the query itself, as the file's search does
        # (even with ``text_query=""``); the other modes from the keyword leg's text.
        words = request.query if mode == "vector" else lexical
        terms = query_terms(words.strip()) if words.strip() else []
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
        """The inputs of :meth:`sql`'s statement for ``query`` (psql variables of the same names).

        Returns:
            ``{"hashes": "{...}", "q": "[...]", "floor": ...}``: the distinct query terms'
            hashes as an ``int8[]`` literal, the normalised query embedding as a ``vector``
            literal (``None`` when the query has no vector evidence) and the index's evidence
            floor (``fusion.vectorFloor``; ``None``, psql ``NULL``: no floor).
        """
        hashes = [int(np.uint64(term_hash(t)).view(np.int64)) for t in query_terms(query)]
        vec = self.embed(query) if query.strip() else None
        return {
            "hashes": "{" + ",".join(map(str, hashes)) + "}",
            "q": None if vec is None else "[" + ",".join(repr(float(x)) for x in vec) + "]",
            "floor": self._floor,
        }

    def sql(self, mode: str = "hybrid") -> str:
        """The statement this retriever runs for ``mode`` (no filters), to paste into psql.

        Its inputs are psql variables: ``:'hashes'`` and ``:'q'`` (:meth:`sql_parameters`),
        ``:k``, and for hybrid ``:alpha``, ``:prf``, ``:beta`` and ``:floor`` (the index's
        fusion: see ``meta``'s ``fusion`` row; ``\\set floor NULL`` for none). One common table
        expression per line.
        """
        if mode not in ("keyword", "hybrid"):
            raise QueryError(f"sql() covers the keyword and hybrid modes, not {mode!r}")
        return self._statements.psql(mode)

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
        """Run the request's one statement; reconnect and retry once if the connection broke."""
        import psycopg

        with self._lock:
            for attempt in (1, 2):
                try:
                    if self._conn.closed:
                        self._conn = self._connect()
                    return self._select(self._conn, request, mode, terms, qvec, alpha, full)
                except psycopg.errors.QueryCanceled:
                    raise self._timed_out() from None
                except psycopg.OperationalError as exc:
                    broken = self._conn.closed or self._conn.broken
                    self._conn.close()
                    if getattr(self, "_fired", False):
                        self._fired = False
                        raise self._timed_out() from None
                    if not broken or attempt == 2:
                        raise database_error(exc, self._dsn, "the query") from None
                except psycopg.Error as exc:
                    raise database_error(exc, self._dsn, "the query") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _timed_out(self) -> DatabaseError:
        return DatabaseError(
            f"PostgreSQL {describe_dsn(self._dsn)}: the query did not finish within the "
            f"{self.timeout:g} s timeout; raise it (PostgresRetriever(timeout=...), "
            "SCIDX_PG_TIMEOUT for the CLI) or check the server's load"
        )

    def _set(self, conn: psycopg.Connection[Any], name: str, value: str) -> None:
        """Set a session setting, once per connection and value (no round trip otherwise)."""
        if self._settings.get(name) != value:
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
            self._settings[name] = value

    def _execute(
        self, conn: psycopg.Connection[Any], statement: str, params: dict[str, Any]
    ) -> list[tuple[Any, ...]]:
        """Execute under the time limit: the server's, and the client's a second later."""
        from psycopg import sql

        if self.timeout is None:
            self._set(conn, "statement_timeout", "0")
            return conn.execute(sql.SQL(statement), params, binary=True).fetchall()
        self._set(conn, "statement_timeout", str(max(1, round(self.timeout * 1000))))
        timer = threading.Timer(self.timeout + 1.0, self._abandon, (conn,))
        timer.daemon = True
        timer.start()
        try:
            return conn.execute(sql.SQL(statement), params, binary=True).fetchall()
        finally:
            timer.cancel()

    def _abandon(self, conn: psycopg.Connection[Any]) -> None:
        """Unblock a statement the server never answers: shut the connection's socket down."""
        import socket

        self._fired = True
        try:
            fd = conn.pgconn.socket
            with socket.socket(fileno=os.dup(fd)) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

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
        k = int(request.k)
        hashes = [int(np.uint64(term_hash(t)).view(np.int64)) for t in terms]
        params: dict[str, Any] = {"k": k, "hashes": hashes, "alpha": alpha}
        where = self._filters(conn, request, params).as_string(conn)
        ef = max(self.ef_search, k + 8)
        self._set(conn, "enable_indexscan", "off" if self.exact else "on")
        # These statements run in milliseconds: JIT compilation (a server built with LLVM
        # compiles any plan costed above jit_above_cost, as large exports' hybrid plans are)
        # costs tens to hundreds of milliseconds and never pays back here.
        self._set(conn, "jit", "off")
        # pgvector >= 0.8: keep scanning the graph until enough rows pass the filters.
        self._set(conn, "hnsw.iterative_scan", "strict_order" if where != "TRUE" else "off")
        cols = ", c.source, c.anchor, c.heading_path, c.title, c.text, c.url" if full else ""
        st = self._statements
        if mode == "keyword" or (mode == "hybrid" and qvec is None):
            if not hashes:
                return []
            self._set(conn, "hnsw.ef_search", str(ef))
            statement = st.keyword(where, cols, fused=mode == "hybrid")
        elif qvec is None:
            return []
        elif mode == "vector":
            # A text query, so the evidence rule applies and the file scores every candidate
            # exactly, a binary index too (its Hamming pre-ranking is for query vectors only).
            params.update({"q": qvec, "lim": k + 8, "floor": self._floor})
            self._set(conn, "hnsw.ef_search", str(ef))
            statement = st.vector(where, cols)
        else:
            self._set(conn, "hnsw.ef_search", str(ef))
            params.update(
                {"q": qvec, "prf": self._prf_docs, "beta": self._prf_beta, "floor": self._floor}
            )
            statement = st.hybrid(where, cols)
        return [self._fix(r) for r in self._execute(conn, statement, params)]

    @staticmethod
    def _fix(row: tuple[Any, ...]) -> tuple[Any, ...]:
        # float4 arrives as a Python float of the same value; keep it a float32 value exactly.
        out = list(row)
        out[1] = float(np.float32(out[1]))
        if len(out) > 4 and out[4] is None:
            out[4] = []
        return tuple(out)
