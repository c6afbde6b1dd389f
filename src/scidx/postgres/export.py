"""Export a loaded index to PostgreSQL + pgvector (``toolup-rag export INDEX --postgres DSN``).

Contract:

* **One transaction.** Everything an export writes (chunks, terms, the stamp table) commits
  at once or not at all: readers see the previous export until the commit, and a killed or
  failed export leaves it intact. Concurrent exports of the same table are serialised by an
  advisory lock.
* **Only its own tables.** Each table the exporter creates carries a marker (its ``COMMENT``);
  before any ``DROP`` or ``RENAME`` every table of the export's names is checked, and a table
  that another export or an application owns is refused (exit 1) naming it. A damaged stamp
  table of an export is rebuilt by a full export.
* **Full export** (no table yet, or one written for another embedding model, tokenizer, BM25
  parameters, vector encoding or schema version): the rows go into fresh tables with binary
  ``COPY`` (postings in term order), the indexes (postings primary key, HNSW, hash indexes on
  ``id`` and ``source``) are built after the load, and the new tables replace the old ones
  just before the commit; a ``VACUUM ANALYZE`` after the commit sets the visibility map, so
  keyword queries read the postings by index-only scans.
* **Incremental export** (same layout): rows are compared by ``row_hash`` (xxh3 of everything
  stored for the chunk); new chunks are inserted, changed ones updated and removed ones deleted,
  unchanged rows are not touched. Term rows whose document frequency changed are rewritten.
  When N or avgdl changed, every stored BM25 impact did: the postings table is rewritten from
  the file (a fresh table swapped in before the commit); otherwise only the changed chunks'
  postings are replaced and the impacts of the terms whose df moved recomputed in SQL.
  An index whose content hash equals the exported one is up to date: nothing is written.
* **Keyword parity.** The term frequencies and impacts are the file's, read through the
  library with the reader's checks before anything is written (:mod:`scidx.postgres.postings`;
  a corrupt keyword array is exit 4), so PostgreSQL ranks exactly as the file does.
* **Refused rows are named.** A row the database refuses (a value it cannot store) fails the
  export with the chunk's id and source and the column, not just the server's message.
"""

from __future__ import annotations

import json
import re
import struct
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import xxhash

from scidx.errors import CorruptIndexError, DatabaseError
from scidx.postgres.connection import TableNames, connect, database_error, describe_dsn
from scidx.postgres.postings import FilePostings, Postings, file_postings, rows_postings
from scidx.postgres.schema import (
    HNSW_MAX_DIMENSIONS,
    HNSW_MAX_HALF_DIMENSIONS,
    ROLES,
    SCHEMA_VERSION,
    chunk_columns,
    create_chunks_sql,
    create_side_tables_sql,
    marker,
    ownership_problem,
    read_meta,
    vector_type,
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
        hnsw: Whether the table has an HNSW index (``vector`` up to 2,000 dimensions,
            ``halfvec`` up to 4,000).
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
    metas: list[str]
    urls: list[str | None]
    hashes: npt.NDArray[np.int64]


def _read_rows(index: Index, vec: _Vectors, doc_len: npt.NDArray[np.int64]) -> _Rows:
    n = len(index)
    metas = {
        source: json.dumps(value, sort_keys=True)
        for source, value in index.source_metadata().items()
    }
    out = _Rows([], [], [], [], [], [], [], [], np.zeros(n, dtype=np.int64))
    hashes = out.hashes
    for i in range(n):
        hit = index.chunk(i, snippet_chars=1)
        meta = metas.get(hit.source, "{}")
        out.ids.append(hit.id)
        out.sources.append(hit.source)
        out.anchors.append(hit.anchor)
        out.heading_paths.append(list(hit.heading_path))
        out.titles.append(hit.title)
        out.texts.append(hit.text)
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
        for value in vec.values(i):
            h.update(value.data if isinstance(value, _Packed) else struct.pack("<f", value))
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
            "type": vector_type(index.vector_store.encoding),
            "dimensions": dims,
            "encoding": index.vector_store.encoding,
        },
    }


# ---------------------------------------------------------------------------------------------
# Binary COPY values
# ---------------------------------------------------------------------------------------------


class _Packed:
    """A value already in its type's binary wire format (dumped as is)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _PackedVector(_Packed):
    """``vector``: int16 dimensions, int16 unused, float4 values (big-endian)."""


class _PackedHalf(_Packed):
    """``halfvec``: int16 dimensions, int16 unused, float2 values (big-endian)."""


class _PackedBits(_Packed):
    """``bit``: int32 bit length, then the bits, most significant first."""


def _vector_bytes(vec: npt.NDArray[np.float32]) -> bytes:
    return struct.pack(">HH", vec.shape[0], 0) + vec.astype(">f4").tobytes()


def _half_bytes(codes: npt.NDArray[np.int8]) -> bytes:
    # int8 codes (-127..127) are whole numbers below 2048: float16 holds them exactly.
    return struct.pack(">HH", codes.shape[0], 0) + codes.astype(">f2").tobytes()


def _bit_bytes(bits: npt.NDArray[np.uint8]) -> bytes:
    # np.packbits order (first dimension in the high bit) is PostgreSQL's bit order.
    return struct.pack(">i", bits.shape[0] * 8) + bits.tobytes()


def _copy_types(cur: psycopg.Cursor[Any], columns: Sequence[tuple[str, str, str]]) -> list[Any]:
    """COPY types of the chunk columns, with pass-through dumpers for the packed values.

    Vectors are encoded with numpy in one call per row instead of one Python object per value;
    psycopg picks COPY dumpers by type oid, so they are registered on this cursor only.
    """
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    row = cur.execute(
        "SELECT 'vector'::regtype::oid, 'halfvec'::regtype::oid, 'bit'::regtype::oid"
    ).fetchone()
    assert row is not None
    oids = {"vector": int(row[0]), "halfvec": int(row[1]), "bit": int(row[2])}

    class PackedDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: _Packed) -> bytes:
            return obj.data

    for kind, cls in (("vector", _PackedVector), ("halfvec", _PackedHalf), ("bit", _PackedBits)):
        dumper = type(f"Packed_{kind}", (PackedDumper,), {"oid": oids[kind]})
        cur.adapters.register_dumper(cls, dumper)
    return [oids.get(t, t) for _, _, t in columns]


def _casefold_key(title: str, path: Sequence[str]) -> str:
    # The file's heading filter matches `needle.casefold() in f"{title}\n{heading}".casefold()`.
    return f"{title}\n{chr(10).join(path)}".casefold()


@dataclass(frozen=True)
class _Vectors:
    """What the vector columns hold, per encoding (see :mod:`scidx.postgres.schema`)."""

    encoding: str
    floats: npt.NDArray[np.float32] | None  # float32 indexes
    codes: npt.NDArray[np.int8] | None  # int8 and binary
    scale: npt.NDArray[np.float32] | None
    bits: npt.NDArray[np.uint8] | None  # binary

    def values(self, i: int) -> list[Any]:
        if self.floats is not None:
            return [_PackedVector(_vector_bytes(np.asarray(self.floats[i], dtype=np.float32)))]
        assert self.codes is not None and self.scale is not None
        out: list[Any] = [_PackedHalf(_half_bytes(self.codes[i])), float(self.scale[i])]
        if self.bits is not None:
            out.append(_PackedBits(_bit_bytes(self.bits[i])))
        return out


def _vectors_of(index: Index) -> _Vectors:
    store: Any = index.vector_store
    if store.encoding == "float32":
        return _Vectors("float32", np.asarray(index.vectors, dtype=np.float32), None, None, None)
    bits = np.asarray(store.bits) if store.encoding == "binary" else None
    return _Vectors(store.encoding, None, np.asarray(store.codes), np.asarray(store.scale), bits)


def _copy_rows(
    conn: psycopg.Connection[Any],
    target: Any,
    changes: _Changes,
    columns: list[Any],
    freeze: bool = False,
) -> None:
    """Binary ``COPY`` the rows ``changes.write`` into ``target`` (a composed table name).

    ``freeze``: the table was created in this transaction: rows are written frozen and their
    pages all-visible, so index-only scans need no heap visits and no ``VACUUM``.
    """
    from psycopg import sql
    from psycopg.types.json import Jsonb

    rows = changes.rows
    vec = changes.vectors
    doc_len = changes.fp.doc_len
    cols = sql.SQL(", ").join(sql.Identifier(name) for name, _, _ in columns)
    options = sql.SQL(", FREEZE" if freeze else "")
    stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY{})").format(target, cols, options)

    def raw(text: str) -> str:
        return text

    write = changes.write.tolist()
    with conn.cursor() as cur:
        types = _copy_types(cur, columns)
        try:
            with cur.copy(stmt) as copy:
                copy.set_types(types)
                for i in write:
                    copy.write_row(
                        (
                            int(changes.docs[i]),
                            rows.ids[i],
                            rows.sources[i],
                            rows.anchors[i],
                            rows.heading_paths[i],
                            rows.titles[i],
                            rows.texts[i],
                            Jsonb(rows.metas[i], dumps=raw),
                            rows.urls[i],
                            *vec.values(i),
                            int(doc_len[i]),
                            _casefold_key(rows.titles[i], rows.heading_paths[i]),
                            int(rows.hashes[i]),
                        )
                    )
        except Exception as exc:
            refused = _refused_row(exc, changes, write)
            if refused is not None:
                raise refused from None
            raise


_COPY_LINE = re.compile(r"COPY \S+, line (\d+)(?:, column (\w+))?")


def _refused_row(exc: BaseException, changes: _Changes, write: list[int]) -> DatabaseError | None:
    """The chunk (id and source) of a row the server refused during ``COPY``, if it says which."""
    import psycopg

    if not isinstance(exc, psycopg.Error) or exc.diag.context is None:
        return None
    found = _COPY_LINE.search(exc.diag.context)
    if found is None or not 0 < int(found.group(1)) <= len(write):
        return None
    i = write[int(found.group(1)) - 1]
    column = f" its `{found.group(2)}` value" if found.group(2) else " it"
    reason = (exc.diag.message_primary or str(exc)).strip()
    return DatabaseError(
        f"PostgreSQL {describe_dsn(changes.dsn)}: the export failed: chunk "
        f"{changes.rows.ids[i]!r} (source {changes.rows.sources[i]!r}) was refused:{column} "
        f"cannot be stored ({reason}). Fix that page (or re-pack it with this scidx, which "
        "cleans such values) and export again; nothing was written."
    )


_POSTING = np.dtype(
    [
        ("n", ">i2"),
        ("l1", ">i4"),
        ("term", ">i4"),
        ("l2", ">i4"),
        ("doc", ">i4"),
        ("l3", ">i4"),
        ("tf", ">f8"),
        ("l4", ">i4"),
        ("dl", ">i4"),
        ("l5", ">i4"),
        ("impact", ">f4"),
    ]
)
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
_COPY_BLOCK = 1 << 18  # postings per write: a 10 MB buffer


def _copy_postings(
    conn: psycopg.Connection[Any], target: Any, changes: _Changes, freeze: bool = False
) -> int:
    """Binary ``COPY`` of the written rows' postings, built by numpy without a Python row loop.

    ``freeze`` as for :func:`_copy_rows`.
    """
    from psycopg import sql

    p = changes.postings
    total = int(p.term.shape[0])
    stmt = sql.SQL("COPY {} (term_id, doc, tf, dl, impact) FROM STDIN (FORMAT BINARY{})").format(
        target, sql.SQL(", FREEZE" if freeze else "")
    )
    with conn.cursor() as cur, cur.copy(stmt) as copy:
        copy.write(_COPY_HEADER)
        for start in range(0, total, _COPY_BLOCK):
            stop = min(start + _COPY_BLOCK, total)
            rows = p.row[start:stop]
            block = np.empty(stop - start, dtype=_POSTING)
            block["n"] = 5
            block["l1"] = block["l2"] = block["l4"] = block["l5"] = 4
            block["l3"] = 8
            block["term"] = changes.term_ids[p.term[start:stop]]
            block["doc"] = changes.docs[rows]
            block["tf"] = p.tf[start:stop]
            block["dl"] = changes.fp.doc_len[rows]
            block["impact"] = p.impact[start:stop]  # the file's own, as a query sums them
            copy.write(block.tobytes())
        copy.write(b"\xff\xff")
    return total


# ---------------------------------------------------------------------------------------------
# The export
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Changes:
    """The chunk rows to write, their postings, and every term's and row's id in the table."""

    index: Index
    dsn: str
    rows: _Rows
    vectors: _Vectors
    fp: FilePostings
    write: npt.NDArray[np.int64]  # file rows, ascending
    postings: Postings  # of the written rows
    term_ids: npt.NDArray[np.int64]  # per term of the file (its sorted term hashes)
    docs: npt.NDArray[np.int64]  # per file row: its `doc` number in the table


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
        table: The chunks table (the postings, term and stamp tables are named after it).
        schema: The PostgreSQL schema.
        progress: Called with a stage name as each stage starts.

    Returns:
        What was written (see :class:`ExportReport`).

    Raises:
        ConfigError: Invalid table/schema name or DSN, or a table of the export's names that
            this exporter did not write (another export's, an application's).
        CorruptIndexError: The index's keyword arrays do not match its text.
        DatabaseError: PostgreSQL is unreachable, refused the connection, a statement or a row
            (named by chunk id and source), or has no pgvector extension.
    """
    import psycopg

    names = TableNames(schema=schema, table=table)
    started = time.perf_counter()
    report = ExportReport(table=names.qualified, chunks=len(index))
    stage = _Stages(report, progress, started)
    vec = _vectors_of(index)
    dims = int(index.vector_store.shape[1])
    layout = _layout(index, dims)
    content_hash = _content_hash(index)
    limit = HNSW_MAX_DIMENSIONS if vec.encoding == "float32" else HNSW_MAX_HALF_DIMENSIONS
    report.hnsw = dims <= limit
    conn = connect(dsn, application="scidx export")
    doing = "the export"
    try:
        with conn:
            stage("connect")
            doing = "creating the pgvector extension"
            _lock_and_extension(conn, names)
            doing = "reading the existing export"
            ownership_problem(conn, names, _load_names(names))
            try:
                old = read_meta(conn, names)
            except CorruptIndexError:
                old, report.reason = None, "damaged stamp table"
            if old is not None and old.get("contentHash") == content_hash:
                return _up_to_date(conn, report, stage, started)
            incremental, reason = _incremental(old, layout)
            # A reason set above ("damaged stamp table") is kept: it is why there is no `old`.
            report.reason = report.reason or reason
            stage("prepare")
            fp = file_postings(index)
            rows = _read_rows(index, vec, fp.doc_len)
            file_terms = fp.term_hash.view(np.int64)
            known: dict[int, tuple[int, int, float, float]] = {}
            current: dict[str, tuple[int, int]] = {}
            if incremental:
                doing = "reading the existing rows"
                known, current = _read_existing(conn, names)
            term_ids = _assign_term_ids(file_terms, {h: t for h, (t, *_) in known.items()})
            write, removed = _plan_writes(rows, current, incremental, report)
            docs = _assign_docs(rows, current)
            stage("postings")
            postings = rows_postings(fp, write)
            changes = _Changes(index, dsn, rows, vec, fp, write, postings, term_ids, docs)
            if incremental:
                doing = "writing the changed rows"
                gone = [current[cid][0] for cid in removed]
                gone += [current[rows.ids[i]][0] for i in write.tolist() if rows.ids[i] in current]
                _export_incremental(conn, names, changes, gone, known, old, report)
            else:
                report.full = True
                doing = "loading the tables"
                _write_full(conn, names, changes, dims, stage)
                report.terms_written = int(file_terms.shape[0])
                report.deleted = 0
            stage("commit")
            doing = "writing the stamp table"
            values = _stamp(index, layout, len(rows.ids), content_hash)
            _write_meta(conn, names, values, old if incremental else None)
            doing = "committing"
        stage("vacuum")
        _vacuum(dsn, names)
        stage("")
    except psycopg.Error as exc:
        raise database_error(exc, dsn, doing) from None
    finally:
        conn.close()
    report.seconds = time.perf_counter() - started
    return report


def _lock_and_extension(conn: Any, names: TableNames) -> None:
    """Serialise exports to one table (a transaction lock) and make sure pgvector is there."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (names.qualified,))
    if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def _up_to_date(
    conn: Any, report: ExportReport, stage: Callable[[str], None], started: float
) -> ExportReport:
    """The report of an export with nothing to write (the table holds this very index)."""
    report.up_to_date = True
    report.unchanged = report.chunks
    conn.rollback()  # nothing to write: not even the lock is committed
    stage("")
    report.seconds = time.perf_counter() - started
    return report


def _incremental(old: Mapping[str, Any] | None, layout: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether an earlier export can be updated in place, and if not, why not ("": it can)."""
    if old is None:
        return False, "new table"
    changed = [k for k in _LAYOUT_KEYS if old.get(k) != layout[k]]
    return (True, "") if not changed else (False, f"different {', '.join(changed)}")


def _load_names(names: TableNames) -> tuple[str, ...]:
    """The load tables of a full export (created, filled and renamed in its transaction)."""
    return tuple(f"{names.table}__load{suffix}" for suffix, _ in ROLES)


def _vacuum(dsn: str, names: TableNames) -> None:
    """``VACUUM`` the postings after the commit, so keyword queries scan the index only.

    Best effort: the export has committed; a role that may not vacuum leaves the visibility
    map to autovacuum (queries are then correct, only slower until it runs).
    """
    import psycopg
    from psycopg import sql

    with connect(dsn, application="scidx export") as conn:
        conn.autocommit = True
        for name in (names.postings, names.table):
            try:
                conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(_ident(names.schema, name)))
            except psycopg.Error:
                return


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
) -> tuple[dict[int, tuple[int, int, float, float]], dict[str, tuple[int, int]]]:
    """The exported terms (hash -> (id, df, idf, max impact)) and chunks (id -> (doc, row hash))."""
    from psycopg import sql

    known: dict[int, tuple[int, int, float, float]] = {}
    current: dict[str, tuple[int, int]] = {}
    # max_impact as float8: the float4's exact value, as numpy's float32 gives it.
    for h, tid, d, w, m in conn.execute(
        sql.SQL("SELECT term_hash, term_id, df, idf, max_impact::float8 FROM {}").format(
            _ident(names.schema, names.terms)
        )
    ):
        known[int(h)] = (int(tid), int(d), float(w), float(m))
    for cid, doc, rh in conn.execute(
        sql.SQL("SELECT id, doc, row_hash FROM {}").format(_ident(names.schema, names.table))
    ):
        current[str(cid)] = (int(doc), int(rh))
    return known, current


def _assign_docs(rows: _Rows, current: dict[str, tuple[int, int]]) -> npt.NDArray[np.int64]:
    """Each file row's ``doc`` number: kept for chunks already in the table, new ones after."""
    n = len(rows.ids)
    if not current:
        return np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    next_doc = max(d for d, _ in current.values()) + 1
    for i, cid in enumerate(rows.ids):
        found = current.get(cid)
        if found is None:
            out[i] = next_doc
            next_doc += 1
        else:
            out[i] = found[0]
    return out


def _plan_writes(
    rows: _Rows, current: dict[str, tuple[int, int]], incremental: bool, report: ExportReport
) -> tuple[npt.NDArray[np.int64], list[str]]:
    """The rows to write and the chunk ids to delete; counts them into ``report``.

    An incremental export writes only rows whose hash differs from ``current`` (the table's);
    a full one writes every row.
    """
    n = len(rows.ids)
    hashes = rows.hashes.tolist()
    write_list = (
        [i for i in range(n) if (current.get(rows.ids[i]) or (0, None))[1] != hashes[i]]
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


def _fusion(index: Index) -> dict[str, Any]:
    return dict(index._live().corpus.fusion)  # noqa: SLF001 - the index's validated fusion


def _stamp(index: Index, layout: dict[str, Any], n: int, content_hash: str) -> dict[str, Any]:
    """The stamp table's values: the layout, plus what a reader of the table needs."""
    values = dict(layout)
    values.update(
        {
            "stats": {"chunks": n, "avgdl": _avgdl(index)},
            "contentHash": content_hash,
            "urlTemplate": index.meta.get("urlTemplate"),
            "fusion": _fusion(index),
            "generator": str(index.header.generator),
        }
    )
    return values


def _mark(conn: psycopg.Connection[Any], schema: str, name: str, export: str, role: str) -> None:
    from psycopg import sql

    conn.execute(
        sql.SQL("COMMENT ON TABLE {} IS {}").format(
            _ident(schema, name), sql.Literal(marker(export, role))
        )
    )


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
    for name in _load_names(names):
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(_ident(s, name)))
    encoding = changes.vectors.encoding
    conn.execute(create_chunks_sql(s, load, dims, encoding))
    # Rows up to a page stay inline and uncompressed: a query reads `embedding` once per
    # candidate, and decompressing or fetching it from the TOAST table costs more than the
    # pages saved.
    conn.execute(sql.SQL("ALTER TABLE {} SET (toast_tuple_target = 8160)").format(_ident(s, load)))
    for stmt in create_side_tables_sql(s, load):
        conn.execute(stmt)
    # The markers say "this export's": they travel with the tables through the renames below.
    for suffix, role in ROLES:
        _mark(conn, s, load + suffix, names.table, role)
    stage("copy")
    _copy_rows(conn, _ident(s, load), changes, chunk_columns(encoding), freeze=True)
    _copy_postings(conn, _ident(s, f"{load}_postings"), changes, freeze=True)
    _copy_terms(conn, _ident(s, f"{load}_terms"), changes)
    stage("index")
    _build_indexes(conn, s, load, dims, encoding)
    stage("swap")
    # Checked again under the lock, just before anything is dropped.
    ownership_problem(conn, names, _load_names(names))
    t = names.table
    for suffix, _ in ROLES:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(_ident(s, t + suffix)))
    for suffix, _ in ROLES:
        conn.execute(
            sql.SQL("ALTER TABLE {} RENAME TO {}").format(
                _ident(s, load + suffix), sql.Identifier(t + suffix)
            )
        )
    for index_suffix in _INDEX_SUFFIXES:
        conn.execute(
            sql.SQL("ALTER INDEX IF EXISTS {} RENAME TO {}").format(
                _ident(s, load + index_suffix), sql.Identifier(t + index_suffix)
            )
        )


#: Every index a full export builds, by suffix of the chunks table's name.
_INDEX_SUFFIXES = (
    "_pkey",
    "_id",
    "_source",
    "_embedding_hnsw",
    "_bits_hnsw",
    "_postings_pkey",
    "_terms_pkey",
    "_terms_term_id_key",
    "_meta_pkey",
)


def _build_indexes(
    conn: psycopg.Connection[Any], s: str, load: str, dims: int, encoding: str
) -> None:
    """The indexes of freshly loaded tables (one sort or graph build each, after the load)."""
    from psycopg import sql

    # HNSW builds much faster when its graph fits in maintenance_work_mem.
    conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
    # Term order, then rows: the keyword query reads each query term's run of this index.
    conn.execute(
        sql.SQL("ALTER TABLE {} ADD PRIMARY KEY (term_id, doc) INCLUDE (impact)").format(
            _ident(s, f"{load}_postings")
        )
    )
    # Hash indexes: ids and sources of any length (a btree entry must fit 2,704 bytes).
    for col in ("id", "source"):
        conn.execute(
            sql.SQL("CREATE INDEX {} ON {} USING hash ({})").format(
                sql.Identifier(f"{load}_{col}"), _ident(s, load), sql.Identifier(col)
            )
        )
    ops = "vector_cosine_ops" if encoding == "float32" else "halfvec_cosine_ops"
    limit = HNSW_MAX_DIMENSIONS if encoding == "float32" else HNSW_MAX_HALF_DIMENSIONS
    if dims <= limit:
        conn.execute(
            sql.SQL("CREATE INDEX {} ON {} USING hnsw (embedding {})").format(
                sql.Identifier(f"{load}_embedding_hnsw"), _ident(s, load), sql.SQL(ops)
            )
        )
    if encoding == "binary":
        conn.execute(
            sql.SQL("CREATE INDEX {} ON {} USING hnsw (bits bit_hamming_ops)").format(
                sql.Identifier(f"{load}_bits_hnsw"), _ident(s, load)
            )
        )
    for name in (load, f"{load}_postings", f"{load}_terms"):
        conn.execute(sql.SQL("ANALYZE {}").format(_ident(s, name)))


def _idf(fp: FilePostings) -> npt.NDArray[np.float64]:
    # The packer's idf as the file stores it (bm25.idf_values), bit for bit.
    return fp.idf


def _max_impacts(fp: FilePostings) -> npt.NDArray[np.float32]:
    """Each term's largest posting impact (0 for a term without postings).

    After an export the table's impacts are the file's (bit for bit), so this is also the
    table's maximum: the keyword query's exact cut relies on it being an upper bound.
    """
    out = np.zeros(fp.df.shape[0], dtype=np.float32)
    has = fp.df > 0
    if fp.weight.shape[0]:
        starts = (np.cumsum(fp.df) - fp.df)[has]
        out[has] = np.maximum.reduceat(fp.weight, starts)
    return out


def _term_rows(
    fp: FilePostings, term_ids: npt.NDArray[np.int64]
) -> list[tuple[int, int, int, float, float]]:
    """(term hash, term id, df, idf, largest impact) per term of the file."""
    return list(
        zip(
            fp.term_hash.view(np.int64).tolist(),
            term_ids.tolist(),
            fp.df.tolist(),
            _idf(fp).tolist(),
            _max_impacts(fp).tolist(),
            strict=True,
        )
    )


def _copy_terms(conn: psycopg.Connection[Any], target: Any, changes: _Changes) -> None:
    from psycopg import sql

    fp = changes.fp
    with (
        conn.cursor() as cur,
        cur.copy(
            sql.SQL(
                "COPY {} (term_hash, term_id, df, idf, max_impact) FROM STDIN (FORMAT BINARY)"
            ).format(target)
        ) as copy,
    ):
        copy.set_types(["int8", "int4", "int4", "float8", "float4"])
        for row in _term_rows(fp, changes.term_ids):
            copy.write_row(row)


def _write_incremental(
    conn: psycopg.Connection[Any],
    names: TableNames,
    changes: _Changes,
    gone: list[int],
    postings: bool = True,
) -> None:
    """Delete removed and changed chunks (rows and postings), then insert the new versions.

    ``postings``: write the postings too (``False``: the caller rewrites the whole table).
    """
    from psycopg import sql

    target = _ident(names.schema, names.table)
    posts = _ident(names.schema, names.postings)
    if gone:
        conn.execute(sql.SQL("DELETE FROM {} WHERE doc = ANY(%s)").format(target), (gone,))
        if postings:
            conn.execute(sql.SQL("DELETE FROM {} WHERE doc = ANY(%s)").format(posts), (gone,))
    if not changes.write.shape[0]:
        return
    _copy_rows(conn, target, changes, chunk_columns(changes.vectors.encoding))
    if postings:
        _copy_postings(conn, posts, changes)


def _export_incremental(
    conn: psycopg.Connection[Any],
    names: TableNames,
    changes: _Changes,
    gone: list[int],
    known: dict[int, tuple[int, int, float, float]],
    old: Mapping[str, Any] | None,
    report: ExportReport,
) -> None:
    """Write an incremental export: changed chunk rows, their postings, the moved terms.

    When N or avgdl moved (any added, removed or resized chunk), every posting's impact
    changed (with page evidence, any change can move the impacts of a page's other chunks):
    the postings table is then rewritten whole from the file (one ``COPY FREEZE``
    into a fresh table and one index build, swapped in before the commit) instead of updating
    every row in place, which wrote a new version of each row and of its index entry (twice
    the time of the whole incremental export at 5k chunks). Otherwise only the changed chunks'
    postings are replaced and the impacts of the terms whose df moved recomputed in SQL.
    """
    stats = {"chunks": len(changes.rows.ids), "avgdl": _avgdl(changes.index)}
    # With page evidence (meta.bm25.pageWeight) a chunk's impacts depend on its page's other
    # chunks and on the page count, which the SQL refresh does not know: rewrite them all.
    paged = changes.index._live().corpus.bm25.page_stats() is not None  # noqa: SLF001
    moved = old is None or old.get("stats") != stats or paged
    _write_incremental(conn, names, changes, gone, postings=not moved)
    if moved:
        every = np.arange(len(changes.rows.ids), dtype=np.int64)
        all_postings = rows_postings(changes.fp, every)
        _rebuild_postings(conn, names, replace(changes, write=every, postings=all_postings))
    changed, report.terms_written, report.terms_deleted = _write_terms_incremental(
        conn, names, changes.fp.term_hash.view(np.int64), changes.term_ids, changes.fp, known
    )
    if not moved:
        _refresh_impacts(conn, names, changes.fp, changed)


def _rebuild_postings(conn: psycopg.Connection[Any], names: TableNames, changes: _Changes) -> None:
    """Replace the postings table by a fresh one holding ``changes.postings`` (all of them)."""
    from psycopg import sql

    s = names.schema
    load = f"{names.table}__load"
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(_ident(s, f"{load}_postings")))
    conn.execute(create_side_tables_sql(s, load)[0])
    _mark(conn, s, f"{load}_postings", names.table, "postings")
    _copy_postings(conn, _ident(s, f"{load}_postings"), changes, freeze=True)
    conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
    conn.execute(
        sql.SQL("ALTER TABLE {} ADD PRIMARY KEY (term_id, doc) INCLUDE (impact)").format(
            _ident(s, f"{load}_postings")
        )
    )
    conn.execute(sql.SQL("ANALYZE {}").format(_ident(s, f"{load}_postings")))
    # Checked again just before the old table is dropped (as a full export does).
    ownership_problem(conn, names, _load_names(names))
    conn.execute(sql.SQL("DROP TABLE {}").format(_ident(s, names.postings)))
    conn.execute(
        sql.SQL("ALTER TABLE {} RENAME TO {}").format(
            _ident(s, f"{load}_postings"), sql.Identifier(names.postings)
        )
    )
    conn.execute(
        sql.SQL("ALTER INDEX {} RENAME TO {}").format(
            _ident(s, f"{load}_postings_pkey"), sql.Identifier(f"{names.postings}_pkey")
        )
    )


def _write_terms_incremental(
    conn: psycopg.Connection[Any],
    names: TableNames,
    file_terms: npt.NDArray[np.int64],
    term_ids: npt.NDArray[np.int64],
    fp: FilePostings,
    known: dict[int, tuple[int, int, float, float]],
) -> tuple[list[int], int, int]:
    """Upsert term rows whose df, idf or largest impact changed, delete terms no chunk has.

    Returns:
        The term ids of the rows whose df or idf changed (their postings' impacts must be
        recomputed), how many rows were upserted and how many terms were deleted.

    Every idf changes when the chunk count does, so adding or removing chunks rewrites the term
    table (one small row per term); editing chunks rewrites only the terms whose df moved.
    """
    from psycopg import sql

    target = _ident(names.schema, names.terms)
    changed = [row for row in _term_rows(fp, term_ids) if known.get(row[0]) != row[1:]]
    moved = [row[1] for row in changed if (known.get(row[0]) or (0, 0, 0.0))[1:3] != row[2:4]]
    in_file = set(file_terms.tolist())
    gone = [h for h in known if h not in in_file]
    if gone:
        conn.execute(sql.SQL("DELETE FROM {} WHERE term_hash = ANY(%s)").format(target), (gone,))
    if changed:
        conn.execute(
            "CREATE TEMP TABLE scidx_export_terms (term_hash int8, term_id int4, df int4, "
            "idf float8, max_impact float4) ON COMMIT DROP"
        )
        with (
            conn.cursor() as cur,
            cur.copy("COPY scidx_export_terms FROM STDIN (FORMAT BINARY)") as copy,
        ):
            copy.set_types(["int8", "int4", "int4", "float8", "float4"])
            for row in changed:
                copy.write_row(row)
        conn.execute(
            sql.SQL(
                "INSERT INTO {} (term_hash, term_id, df, idf, max_impact) SELECT term_hash, "
                "term_id, df, idf, max_impact FROM scidx_export_terms ON CONFLICT (term_hash) "
                "DO UPDATE SET df = EXCLUDED.df, idf = EXCLUDED.idf, "
                "max_impact = EXCLUDED.max_impact"
            ).format(target)
        )
    return moved, len(changed), len(gone)


def _refresh_impacts(
    conn: psycopg.Connection[Any], names: TableNames, fp: FilePostings, terms: list[int] | None
) -> None:
    """Recompute ``impact`` from ``tf`` and ``dl`` where the corpus statistics moved it.

    ``terms``: the terms whose idf changed (``None``: N or avgdl changed, so every posting's
    impact did). The file's formula operation for operation in float8, rounded to float4 as
    the packer rounds it (:func:`scidx.index.bm25.bm25_impacts`), so the sums stay the
    file's scores bit for bit.
    """
    from psycopg import sql

    if terms is not None and not terms:
        return
    conn.execute(
        sql.SQL(
            "UPDATE {} p SET impact = ((t.idf * p.tf * (%(k1)s + 1)) / (p.tf + %(k1)s * "
            "((1 - %(b)s) + %(b)s * p.dl::float8 / %(avgdl)s)))::real FROM {} t "
            "WHERE t.term_id = p.term_id{}"
        ).format(
            _ident(names.schema, names.postings),
            _ident(names.schema, names.terms),
            sql.SQL("" if terms is None else " AND p.term_id = ANY(%(terms)s::int4[])"),
        ),
        {"k1": float(fp.k1), "b": float(fp.b), "avgdl": float(fp.avgdl), "terms": terms},
    )


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
