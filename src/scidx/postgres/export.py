"""Export a loaded index to PostgreSQL + pgvector (``toolup-rag export INDEX --postgres DSN``).

Contract:

* **One transaction.** Everything an export writes (chunks, terms, the stamp table) commits
  at once or not at all: readers see the previous export until the commit, and a killed or
  failed export leaves it intact. Concurrent exports of the same table are serialised by an
  advisory lock.
* **Full export** (no table yet, or one written for another embedding model, tokenizer, BM25
  parameters or schema version): the rows go into fresh tables with binary ``COPY``; the HNSW
  index (``vector_cosine_ops``) and the GIN index on ``terms`` are built after the load, and the
  new tables replace the old ones just before the commit.
* **Incremental export** (same layout): rows are compared by ``row_hash`` (xxh3 of everything
  stored for the chunk); new chunks are inserted, changed ones updated and removed ones deleted,
  unchanged rows are not touched. Term rows whose document frequency changed are rewritten.
  An index whose content hash equals the exported one is up to date: nothing is written.
* **Keyword parity.** Term frequencies are recomputed from the stored text with the index's own
  tokenizer and checked against the file's BM25 impacts bit for bit before anything is written
  (a mismatch is a corrupt index, exit 4), so PostgreSQL ranks exactly as the file does.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import xxhash

from scidx.errors import CorruptIndexError
from scidx.index.bm25 import hash_fields
from scidx.postgres.connection import TableNames, connect, database_error
from scidx.postgres.schema import (
    CHUNK_COLUMNS,
    COPY_TYPES,
    HNSW_MAX_DIMENSIONS,
    SCHEMA_VERSION,
    TERM_DIMENSIONS,
    create_chunks_sql,
    create_side_tables_sql,
    read_meta,
)

if TYPE_CHECKING:
    import psycopg

    from scidx.index.index import Index

__all__ = ["ExportReport", "export_index"]

Progress = Callable[[str], None]

#: Meta keys that fix the table layout: a difference means a full export.
_LAYOUT_KEYS = ("schema", "stamp", "tokenizer", "bm25", "vector")


@dataclass
class ExportReport:
    """What one export did.

    Attributes:
        table: ``schema.table``.
        chunks: Chunks in the index (and in the table afterwards).
        inserted: Chunk rows inserted.
        updated: Chunk rows rewritten because their content changed.
        deleted: Chunk rows deleted (chunks no longer in the index).
        unchanged: Chunk rows left untouched.
        terms_written: Term rows inserted or updated.
        terms_deleted: Term rows deleted (terms no chunk uses any more).
        full: The tables were (re)built from scratch.
        up_to_date: The table already held this index: nothing was written.
        reason: Why a full export was needed ("" for incremental ones).
        hnsw: Whether the table has an HNSW index (not above 2000 dimensions).
        seconds: Wall time of the export.
        stages: Seconds per stage (``prepare``, ``copy``, ``index``, ``commit``...).
    """

    table: str
    chunks: int
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    terms_written: int = 0
    terms_deleted: int = 0
    full: bool = False
    up_to_date: bool = False
    reason: str = ""
    hnsw: bool = True
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)

    @property
    def rows_written(self) -> int:
        """Chunk rows inserted, updated or deleted."""
        return self.inserted + self.updated + self.deleted

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data with camelCase keys."""
        return {
            "table": self.table,
            "chunks": self.chunks,
            "inserted": self.inserted,
            "updated": self.updated,
            "deleted": self.deleted,
            "unchanged": self.unchanged,
            "rowsWritten": self.rows_written,
            "termsWritten": self.terms_written,
            "termsDeleted": self.terms_deleted,
            "full": self.full,
            "upToDate": self.up_to_date,
            "reason": self.reason,
            "hnsw": self.hnsw,
            "seconds": round(self.seconds, 3),
            "stages": {k: round(v, 3) for k, v in self.stages.items()},
        }


# ---------------------------------------------------------------------------------------------
# Reading the index
# ---------------------------------------------------------------------------------------------


@dataclass
class _Rows:
    """Everything stored per chunk, in the index's row (chunk-id) order."""

    ids: list[str]
    sources: list[str]
    anchors: list[str]
    heading_paths: list[list[str]]
    titles: list[str]
    texts: list[str]
    bm25_texts: list[str]  # what the packer's BM25 read: the clean text when the index has one
    metas: list[str]
    urls: list[str | None]
    hashes: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]


def _corpus(index: Index) -> Any:
    # The arrays behind the public API; the export reads them the way the searcher does.
    return index._live().corpus  # noqa: SLF001 - same package family, read-only use


def _bm25_bodies(index: Index) -> Any:
    """The texts the packer's BM25 read: ``chunk.plain`` (code markers removed) if stored."""
    return _corpus(index).chunk_plain


def _heading_field(title: str, path: Sequence[str]) -> str:
    # The packer's BM25 heading field: the title, then the headings that are not the title.
    parts = [title] if title else []
    parts += [h for h in path if h != title]
    return "\n".join(parts)


def _read_rows(index: Index, vectors: npt.NDArray[np.float32]) -> _Rows:
    c = _corpus(index)
    n = int(c.n)
    doc_len = np.asarray(c.bm25.doc_len)
    meta_cache: dict[int, str] = {}
    out = _Rows([], [], [], [], [], [], [], [], [], np.zeros(n, dtype=np.int64), vectors)
    plain = _bm25_bodies(index)
    hashes = out.hashes
    for i in range(n):
        hit = index.chunk(i, snippet_chars=1)
        s = int(c.chunk_source[i])
        meta = meta_cache.get(s)
        if meta is None:
            raw = c.source_meta[s]
            try:
                value = json.loads(raw) if raw else {}
            except ValueError:
                raise CorruptIndexError(
                    f"{index.source}: `source.meta` row {s} is not JSON. The file is truncated "
                    "or corrupt; rebuild it with `toolup-rag pack-docs`."
                ) from None
            meta = json.dumps(value if isinstance(value, dict) else {}, sort_keys=True)
            meta_cache[s] = meta
        out.ids.append(hit.id)
        out.sources.append(hit.source)
        out.anchors.append(hit.anchor)
        out.heading_paths.append(list(hit.heading_path))
        out.titles.append(hit.title)
        out.texts.append(hit.text)
        body = hit.text if plain is None else plain[i].replace("\x02", "").replace("\x03", "")
        out.bm25_texts.append(body)
        out.metas.append(meta)
        out.urls.append(hit.url)
        h = xxhash.xxh3_64()
        for part in (
            hit.id,
            hit.source,
            hit.anchor,
            "\x1f".join(hit.heading_path),
            hit.title,
            hit.text,
            meta,
            "" if hit.url is None else "u" + hit.url,
            str(int(doc_len[i])),
        ):
            data = part.encode("utf-8", "surrogatepass")
            h.update(len(data).to_bytes(8, "little"))  # length-prefixed: no ambiguous joins
            h.update(data)
        h.update(vectors[i].tobytes())
        packed = h.intdigest()
        hashes[i] = np.uint64(packed).view(np.int64)
    return out


def _content_hash(index: Index) -> str:
    """A hash of everything the export stores: the index's array checksums and its meta."""
    h = xxhash.xxh3_128()
    h.update(f"scidx-postgres-{SCHEMA_VERSION}\n".encode())
    for name in sorted(index.header.arrays):
        h.update(f"{name}={index.header.arrays[name].xxh3}\n".encode())
    h.update(json.dumps(index.meta, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _avgdl(index: Index) -> float:
    bm: dict[str, Any] = dict(index.meta.get("bm25") or {})
    return float(bm["avgdl"])


def _layout(index: Index, dims: int) -> dict[str, Any]:
    bm = index.meta.get("bm25") or {}
    weights = bm.get("fieldWeights") or {}
    return {
        "schema": SCHEMA_VERSION,
        "stamp": index.stamp,
        "tokenizer": bm.get("tokenizer"),
        "bm25": {
            "k1": float(bm.get("k1", 0.0)),
            "b": float(bm.get("b", 0.0)),
            "headingWeight": float(weights.get("heading", 0.0)),
        },
        "vector": {
            "type": "vector",
            "dimensions": dims,
            "encoding": index.vector_store.encoding,
        },
    }


# ---------------------------------------------------------------------------------------------
# Term frequencies, checked against the file
# ---------------------------------------------------------------------------------------------


@dataclass
class _TermFreqs:
    """Per written row: term indexes (into the file's sorted term hashes) and frequencies."""

    ptr: npt.NDArray[np.int64]  # CSR over the written rows
    term: npt.NDArray[np.int64]
    tf: npt.NDArray[np.float64]


@dataclass(frozen=True)
class _Changes:
    """The chunk rows to write: which rows, their term frequencies, and every term's id."""

    index: Index
    rows: _Rows
    write: npt.NDArray[np.int64]  # row numbers, in order
    freqs: _TermFreqs  # per written row
    term_ids: npt.NDArray[np.int64]  # per term of the file (its sorted term hashes)


_HASH_JOB = 2048  # chunks per tokenising job in the worker processes


def _hash_all(
    heads: list[str] | None, bodies: list[str]
) -> tuple[list[npt.NDArray[np.uint64]], list[npt.NDArray[np.uint64]]]:
    """:func:`hash_fields` over all rows, in the packer's worker processes for large exports."""
    from scidx.pack.workers import Pool

    pool = Pool.start(None, sum(len(b) for b in bodies))
    jobs = [
        (heads[i : i + _HASH_JOB] if heads is not None else None, bodies[i : i + _HASH_JOB])
        for i in range(0, len(bodies), _HASH_JOB)
    ]
    hh: list[npt.NDArray[np.uint64]] = []
    bh: list[npt.NDArray[np.uint64]] = []
    try:
        for h, b in pool.map(hash_fields, jobs):
            hh.extend(h)
            bh.extend(b)
    finally:
        pool.close()
    return hh, bh


def _term_freqs(index: Index, rows: _Rows, write: npt.NDArray[np.int64]) -> _TermFreqs:
    """Tokenise the rows to write and check the result against the file's BM25 arrays."""
    c = _corpus(index)
    bm = c.bm25
    meta = index.meta.get("bm25") or {}
    hw = float((meta.get("fieldWeights") or {}).get("heading", 0.0))
    k1, b, avgdl = float(meta["k1"]), float(meta["b"]), float(meta["avgdl"])
    n = int(c.n)
    term_hash = np.asarray(bm.term_hash)
    v = int(term_hash.shape[0])
    m = int(write.shape[0])
    heads = [_heading_field(rows.titles[i], rows.heading_paths[i]) for i in write.tolist()]
    bodies = [rows.bm25_texts[i] for i in write.tolist()]
    hh, bh = _hash_all(heads if hw else None, bodies)
    parts = [p for pair in zip(hh, bh, strict=True) for p in pair]
    lengths = np.fromiter((p.shape[0] for p in parts), dtype=np.int64, count=len(parts))
    hashes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    local = np.repeat(np.repeat(np.arange(m, dtype=np.int64), 2), lengths)
    weight = np.repeat(np.tile(np.array([hw, 1.0]), m), lengths)
    tidx = np.searchsorted(term_hash, hashes).astype(np.int64)
    inside = tidx < v
    ok = np.zeros(hashes.shape[0], dtype=bool)
    ok[inside] = term_hash[tidx[inside]] == hashes[inside]

    def corrupt(what: str) -> CorruptIndexError:
        return CorruptIndexError(
            f"{index.source}: {what}; the index's BM25 arrays do not match its chunk text "
            "(a corrupt file, or one packed by a different scidx). Rebuild it with "
            "`toolup-rag pack-docs`."
        )

    if not bool(ok.all()):
        row = rows.ids[int(write[int(local[np.flatnonzero(~ok)[0]])])]
        raise corrupt(f"chunk {row!r} has a term the keyword index does not list")
    key = local * max(v, 1) + tidx
    ukey, inverse = np.unique(key, return_inverse=True)
    tf = np.asarray(
        np.bincount(inverse.reshape(-1), weights=weight, minlength=ukey.shape[0]), dtype=np.float64
    )
    post_local = ukey // max(v, 1)
    post_term = ukey % max(v, 1)
    dl = np.rint(np.bincount(local, weights=weight, minlength=m)) if m else np.zeros(0)
    file_dl = np.asarray(bm.doc_len)[write].astype(np.float64)
    if not np.array_equal(dl, file_dl):
        bad = int(np.flatnonzero(dl != file_dl)[0])
        raise corrupt(f"chunk {rows.ids[int(write[bad])]!r} has a different document length")

    # The file's postings of the written rows, in the same (row, term) order.
    ptr = np.asarray(bm.term_ptr).astype(np.int64)
    df_count = np.diff(ptr)
    f_term = np.repeat(np.arange(v, dtype=np.int64), df_count)
    f_doc = np.asarray(bm.post_doc).astype(np.int64)
    local_of = np.full(n, -1, dtype=np.int64)
    local_of[write] = np.arange(m, dtype=np.int64)
    sel = local_of[f_doc] >= 0
    f_key = local_of[f_doc[sel]] * max(v, 1) + f_term[sel]
    order = np.argsort(f_key, kind="stable")
    f_key = f_key[order]
    f_weight = np.asarray(bm.post_weight)[sel][order]
    if not np.array_equal(f_key, ukey):
        raise corrupt("the postings of some chunks differ from their tokenised text")
    # The file's impact formula, operation for operation (scidx.index.bm25), so equality is exact.
    df = df_count.astype(np.float64)
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    dl_post = file_dl[post_local]
    norm = k1 * (1.0 - b + b * dl_post / avgdl)
    impact = (idf[post_term] * tf * (k1 + 1.0) / (tf + norm)).astype(np.float32)
    if not np.array_equal(impact, f_weight):
        raise corrupt("the stored BM25 impacts differ from those of the chunk text")
    row_ptr = np.zeros(m + 1, dtype=np.int64)
    row_ptr[1:] = np.cumsum(np.bincount(post_local, minlength=m))
    return _TermFreqs(row_ptr, post_term, tf)


# ---------------------------------------------------------------------------------------------
# Binary COPY values
# ---------------------------------------------------------------------------------------------


class _PackedVector:
    """A ``vector`` value already in pgvector's binary wire format."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _PackedSparse(_PackedVector):
    """A ``sparsevec`` value already in pgvector's binary wire format."""


def _vector_bytes(vec: npt.NDArray[np.float32]) -> bytes:
    # pgvector's vector_recv: int16 dimensions, int16 unused, float4 values (big-endian).
    return struct.pack(">HH", vec.shape[0], 0) + vec.astype(">f4").tobytes()


def _sparse_bytes(ids: npt.NDArray[np.int64], values: npt.NDArray[np.float64]) -> bytes:
    # pgvector's sparsevec_recv: int32 dimensions, int32 nnz, int32 unused, int32 0-based
    # indices ascending, float4 values (big-endian). Term ids are 1-based (as in the text form).
    return (
        struct.pack(">iii", TERM_DIMENSIONS, ids.shape[0], 0)
        + (ids - 1).astype(">i4").tobytes()
        + values.astype(">f4").tobytes()
    )


def _copy_types(cur: psycopg.Cursor[Any]) -> list[int | str]:
    """COPY types of the chunk columns, with pass-through dumpers for the pgvector types.

    The vectors are encoded with numpy in one call per row instead of one Python object per
    value; psycopg picks COPY dumpers by type oid, so they are registered on this cursor only.
    """
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    row = cur.execute("SELECT 'vector'::regtype::oid, 'sparsevec'::regtype::oid").fetchone()
    assert row is not None
    oids = {"vector": int(row[0]), "sparsevec": int(row[1])}

    class PackedDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: _PackedVector) -> bytes:
            return obj.data

    for kind, cls in (("vector", _PackedVector), ("sparsevec", _PackedSparse)):
        dumper = type(f"Packed_{kind}", (PackedDumper,), {"oid": oids[kind]})
        cur.adapters.register_dumper(cls, dumper)
    return [oids.get(t, t) for t in COPY_TYPES]


def _casefold_key(title: str, path: Sequence[str]) -> str:
    # The file's heading filter matches `needle.casefold() in f"{title}\n{heading}".casefold()`.
    return f"{title}\n{chr(10).join(path)}".casefold()


def _copy_rows(conn: psycopg.Connection[Any], target: Any, changes: _Changes) -> None:
    """Binary ``COPY`` the rows ``changes.write`` into ``target`` (a composed table name)."""
    rows, freqs = changes.rows, changes.freqs
    vectors = rows.vectors
    from psycopg import sql
    from psycopg.types.json import Jsonb

    c = _corpus(changes.index)
    doc_len = np.asarray(c.bm25.doc_len)
    cols = sql.SQL(", ").join(sql.Identifier(name) for name, _ in CHUNK_COLUMNS)
    stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(target, cols)

    def raw(text: str) -> str:
        return text

    with conn.cursor() as cur:
        types = _copy_types(cur)
        with cur.copy(stmt) as copy:
            copy.set_types(types)
            for j, i in enumerate(changes.write.tolist()):
                lo, hi = int(freqs.ptr[j]), int(freqs.ptr[j + 1])
                ids = changes.term_ids[freqs.term[lo:hi]]
                order = np.argsort(ids, kind="stable")
                ids = ids[order]
                tf = freqs.tf[lo:hi][order]
                copy.write_row(
                    (
                        rows.ids[i],
                        rows.sources[i],
                        rows.anchors[i],
                        rows.heading_paths[i],
                        rows.titles[i],
                        rows.texts[i],
                        Jsonb(rows.metas[i], dumps=raw),
                        rows.urls[i],
                        _PackedVector(_vector_bytes(np.asarray(vectors[i], dtype=np.float32))),
                        int(doc_len[i]),
                        ids.astype(np.int32).tolist(),
                        _PackedSparse(_sparse_bytes(ids, tf)),
                        _casefold_key(rows.titles[i], rows.heading_paths[i]),
                        int(rows.hashes[i]),
                    )
                )


# ---------------------------------------------------------------------------------------------
# The export
# ---------------------------------------------------------------------------------------------


def _ident(*parts: str) -> Any:
    from psycopg import sql

    return sql.Identifier(*parts)


def _assign_term_ids(
    file_hashes: npt.NDArray[np.int64], known: dict[int, int]
) -> npt.NDArray[np.int64]:
    """Term ids for the file's terms: kept where known, new ones after the largest in use."""
    out = np.zeros(file_hashes.shape[0], dtype=np.int64)
    next_id = max(known.values(), default=0) + 1
    for i, h in enumerate(file_hashes.tolist()):
        tid = known.get(h)
        if tid is None:
            tid = next_id
            next_id += 1
        out[i] = tid
    return out


def export_index(
    index: Index,
    dsn: str,
    *,
    table: str = "scidx_chunks",
    schema: str = "public",
    progress: Progress | None = None,
) -> ExportReport:
    """Export ``index`` to PostgreSQL; incremental when the table holds an earlier export.

    Args:
        index: The loaded index.
        dsn: libpq DSN or URL (``""``: libpq environment variables).
        table: The chunks table (the term and stamp tables are named after it).
        schema: The PostgreSQL schema.
        progress: Called with a stage name as each stage starts.

    Returns:
        What was written (see :class:`ExportReport`).

    Raises:
        ConfigError: Invalid table/schema name or DSN.
        CorruptIndexError: The index's keyword arrays do not match its text.
        DatabaseError: PostgreSQL is unreachable, refused the connection or a statement, or
            has no pgvector extension.
    """
    import psycopg

    names = TableNames(schema=schema, table=table)
    started = time.perf_counter()
    report = ExportReport(table=names.qualified, chunks=len(index))
    stage = _Stages(report, progress, started)
    c = _corpus(index)
    # int8 and binary indexes are exported decoded (their int8 rows, which the file rescores
    # with), so PostgreSQL's cosines are the file's scores up to float rounding.
    vectors = np.asarray(index.vectors, dtype=np.float32)
    dims = int(vectors.shape[1])
    layout = _layout(index, dims)
    content_hash = _content_hash(index)
    report.hnsw = dims <= HNSW_MAX_DIMENSIONS
    conn = connect(dsn, application="scidx export")
    doing = "the export"
    try:
        with conn:
            stage("connect")
            doing = "creating the pgvector extension"
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (names.qualified,))
            if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            doing = "reading the existing export"
            old = read_meta(conn, names)
            if old is not None and old.get("contentHash") == content_hash:
                report.up_to_date = True
                report.unchanged = report.chunks
                conn.rollback()  # nothing to write: not even the lock is committed
                stage("")
                report.seconds = time.perf_counter() - started
                return report
            incremental = old is not None and all(old.get(k) == layout[k] for k in _LAYOUT_KEYS)
            if old is None:
                report.reason = "new table"
            elif not incremental:
                changed = [k for k in _LAYOUT_KEYS if old.get(k) != layout[k]]
                report.reason = f"different {', '.join(changed)}"
            stage("prepare")
            rows = _read_rows(index, vectors)
            n = len(rows.ids)
            file_terms = np.asarray(c.bm25.term_hash).view(np.int64)
            df = np.diff(np.asarray(c.bm25.term_ptr).astype(np.int64)).astype(np.int64)
            known: dict[int, tuple[int, int]] = {}
            current: dict[str, int] = {}
            if incremental:
                doing = "reading the existing rows"
                known, current = _read_existing(conn, names)
            term_ids = _assign_term_ids(file_terms, {h: t for h, (t, _) in known.items()})
            write, removed = _plan_writes(rows, current, incremental, report)
            stage("tokenize")
            changes = _Changes(index, rows, write, _term_freqs(index, rows, write), term_ids)
            if incremental:
                doing = "writing the changed rows"
                _write_incremental(conn, names, changes, removed)
                report.terms_written, report.terms_deleted = _write_terms_incremental(
                    conn, names, file_terms, term_ids, df, known
                )
            else:
                report.full = True
                doing = "loading the tables"
                _write_full(conn, names, changes, dims, stage)
                report.terms_written = int(file_terms.shape[0])
                report.deleted = 0
            stage("commit")
            doing = "writing the stamp table"
            values = _stamp(index, layout, n, content_hash)
            _write_meta(conn, names, values, old if incremental else None)
            doing = "committing"
        stage("")
    except psycopg.Error as exc:
        raise database_error(exc, dsn, doing) from None
    finally:
        conn.close()
    report.seconds = time.perf_counter() - started
    return report


class _Stages:
    """Adds each stage's seconds to ``report.stages``; tells ``progress`` as a stage starts.

    Called with the next stage's name, or ``""`` to end the last one.
    """

    def __init__(self, report: ExportReport, progress: Progress | None, started: float) -> None:
        self.report = report
        self.progress = progress
        self.current = ""
        self.since = started

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        if self.current:
            stages = self.report.stages
            stages[self.current] = stages.get(self.current, 0.0) + now - self.since
        self.current, self.since = name, now
        if name and self.progress is not None:
            self.progress(name)


def _read_existing(
    conn: psycopg.Connection[Any], names: TableNames
) -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """The exported terms (hash -> (term id, df)) and chunks (id -> row hash)."""
    from psycopg import sql

    known: dict[int, tuple[int, int]] = {}
    current: dict[str, int] = {}
    for h, tid, d in conn.execute(
        sql.SQL("SELECT term_hash, term_id, df FROM {}").format(_ident(names.schema, names.terms))
    ):
        known[int(h)] = (int(tid), int(d))
    for cid, rh in conn.execute(
        sql.SQL("SELECT id, row_hash FROM {}").format(_ident(names.schema, names.table))
    ):
        current[str(cid)] = int(rh)
    return known, current


def _plan_writes(
    rows: _Rows, current: dict[str, int], incremental: bool, report: ExportReport
) -> tuple[npt.NDArray[np.int64], list[str]]:
    """The rows to write and the chunk ids to delete; counts them into ``report``.

    An incremental export writes only rows whose hash differs from ``current`` (the table's);
    a full one writes every row.
    """
    n = len(rows.ids)
    hashes = rows.hashes.tolist()
    write_list = (
        [i for i in range(n) if current.get(rows.ids[i]) != hashes[i]]
        if incremental
        else list(range(n))
    )
    new_ids = set(rows.ids)
    removed = [cid for cid in current if cid not in new_ids]
    report.inserted = sum(1 for i in write_list if rows.ids[i] not in current)
    report.updated = len(write_list) - report.inserted
    report.deleted = len(removed)
    report.unchanged = n - len(write_list)
    return np.asarray(write_list, dtype=np.int64), removed


def _stamp(index: Index, layout: dict[str, Any], n: int, content_hash: str) -> dict[str, Any]:
    """The stamp table's values: the layout, plus what a reader of the table needs."""
    values = dict(layout)
    values.update(
        {
            "stats": {"chunks": n, "avgdl": _avgdl(index)},
            "contentHash": content_hash,
            "urlTemplate": index.meta.get("urlTemplate"),
            "fusion": dict(_corpus(index).fusion),
            "generator": str(index.header.generator),
        }
    )
    return values


def _write_full(
    conn: psycopg.Connection[Any],
    names: TableNames,
    changes: _Changes,
    dims: int,
    stage: Callable[[str], None],
) -> None:
    """Load fresh tables, index them, then put them in place of the old ones."""
    from psycopg import sql

    s = names.schema
    load = f"{names.table}__load"
    for name in (load, f"{load}_terms", f"{load}_meta"):
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(_ident(s, name)))
    conn.execute(create_chunks_sql(s, load, dims))
    # Rows up to a page stay inline and uncompressed: every query reads `tf` once per query
    # term and `embedding` once per candidate, and decompressing or fetching them from the
    # TOAST table each time costs more than the pages saved.
    conn.execute(sql.SQL("ALTER TABLE {} SET (toast_tuple_target = 8160)").format(_ident(s, load)))
    for stmt in create_side_tables_sql(s, load):
        conn.execute(stmt)
    stage("copy")
    _copy_rows(conn, _ident(s, load), changes)
    c = _corpus(changes.index)
    file_terms = np.asarray(c.bm25.term_hash).view(np.int64)
    df = np.diff(np.asarray(c.bm25.term_ptr).astype(np.int64))
    with (
        conn.cursor() as cur,
        cur.copy(
            sql.SQL("COPY {} (term_hash, term_id, df) FROM STDIN (FORMAT BINARY)").format(
                _ident(s, f"{load}_terms")
            )
        ) as copy,
    ):
        copy.set_types(["int8", "int4", "int4"])
        for h, t, d in zip(
            file_terms.tolist(), changes.term_ids.tolist(), df.tolist(), strict=True
        ):
            copy.write_row((h, t, d))
    stage("index")
    # Indexes after the load (one sort/graph build instead of per-row maintenance); HNSW
    # builds much faster when its graph fits in maintenance_work_mem.
    conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
    conn.execute(
        sql.SQL("CREATE INDEX {} ON {} USING gin (terms)").format(
            sql.Identifier(f"{load}_terms_gin"), _ident(s, load)
        )
    )
    if dims <= HNSW_MAX_DIMENSIONS:
        conn.execute(
            sql.SQL("CREATE INDEX {} ON {} USING hnsw (embedding vector_cosine_ops)").format(
                sql.Identifier(f"{load}_embedding_hnsw"), _ident(s, load)
            )
        )
    conn.execute(
        sql.SQL("CREATE INDEX {} ON {} (source)").format(
            sql.Identifier(f"{load}_source"), _ident(s, load)
        )
    )
    stage("swap")
    t = names.table
    for old in (t, names.terms, names.meta):
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(_ident(s, old)))
    renames = [
        (load, t),
        (f"{load}_terms", names.terms),
        (f"{load}_meta", names.meta),
    ]
    for src, dst in renames:
        conn.execute(
            sql.SQL("ALTER TABLE {} RENAME TO {}").format(_ident(s, src), sql.Identifier(dst))
        )
    for src, dst in (
        (f"{load}_pkey", f"{t}_pkey"),
        (f"{load}_terms_pkey", f"{names.terms}_pkey"),
        (f"{load}_terms_term_id_key", f"{names.terms}_term_id_key"),
        (f"{load}_meta_pkey", f"{names.meta}_pkey"),
    ):
        conn.execute(
            sql.SQL("ALTER INDEX IF EXISTS {} RENAME TO {}").format(
                _ident(s, src), sql.Identifier(dst)
            )
        )
    for suffix in ("terms_gin", "embedding_hnsw", "source"):
        conn.execute(
            sql.SQL("ALTER INDEX IF EXISTS {} RENAME TO {}").format(
                _ident(s, f"{load}_{suffix}"), sql.Identifier(f"{t}_{suffix}")
            )
        )


def _write_incremental(
    conn: psycopg.Connection[Any], names: TableNames, changes: _Changes, removed: list[str]
) -> None:
    """Delete removed chunks and upsert changed ones through a temporary table."""
    from psycopg import sql

    target = _ident(names.schema, names.table)
    if removed:
        conn.execute(sql.SQL("DELETE FROM {} WHERE id = ANY(%s)").format(target), (removed,))
    if not changes.write.shape[0]:
        return
    conn.execute(
        sql.SQL("CREATE TEMP TABLE scidx_export_rows (LIKE {}) ON COMMIT DROP").format(target)
    )
    _copy_rows(conn, sql.Identifier("scidx_export_rows"), changes)
    cols = [name for name, _ in CHUNK_COLUMNS]
    conn.execute(
        sql.SQL(
            "INSERT INTO {} ({}) SELECT {} FROM scidx_export_rows ON CONFLICT (id) DO UPDATE SET {}"
        ).format(
            target,
            sql.SQL(", ").join(map(sql.Identifier, cols)),
            sql.SQL(", ").join(map(sql.Identifier, cols)),
            sql.SQL(", ").join(
                sql.SQL("{} = EXCLUDED.{}").format(sql.Identifier(col), sql.Identifier(col))
                for col in cols[1:]
            ),
        )
    )


def _write_terms_incremental(
    conn: psycopg.Connection[Any],
    names: TableNames,
    file_terms: npt.NDArray[np.int64],
    term_ids: npt.NDArray[np.int64],
    df: npt.NDArray[np.int64],
    known: dict[int, tuple[int, int]],
) -> tuple[int, int]:
    """Upsert term rows whose df changed, delete terms no chunk has; returns the counts."""
    from psycopg import sql

    target = _ident(names.schema, names.terms)
    changed = [
        (h, t, d)
        for h, t, d in zip(file_terms.tolist(), term_ids.tolist(), df.tolist(), strict=True)
        if known.get(h) != (t, d)
    ]
    in_file = set(file_terms.tolist())
    gone = [h for h in known if h not in in_file]
    if gone:
        conn.execute(sql.SQL("DELETE FROM {} WHERE term_hash = ANY(%s)").format(target), (gone,))
    if changed:
        conn.execute(
            "CREATE TEMP TABLE scidx_export_terms (term_hash int8, term_id int4, df int4) "
            "ON COMMIT DROP"
        )
        with (
            conn.cursor() as cur,
            cur.copy("COPY scidx_export_terms FROM STDIN (FORMAT BINARY)") as copy,
        ):
            copy.set_types(["int8", "int4", "int4"])
            for row in changed:
                copy.write_row(row)
        conn.execute(
            sql.SQL(
                "INSERT INTO {} (term_hash, term_id, df) SELECT term_hash, term_id, df "
                "FROM scidx_export_terms ON CONFLICT (term_hash) DO UPDATE SET df = EXCLUDED.df"
            ).format(target)
        )
    return len(changed), len(gone)


def _write_meta(
    conn: psycopg.Connection[Any],
    names: TableNames,
    values: dict[str, Any],
    old: dict[str, Any] | None,
) -> None:
    from psycopg import sql
    from psycopg.types.json import Jsonb

    target = _ident(names.schema, names.meta)
    for key, value in values.items():
        if old is not None and old.get(key) == value:
            continue
        conn.execute(
            sql.SQL(
                "INSERT INTO {} (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
            ).format(target),
            (key, Jsonb(value)),
        )
