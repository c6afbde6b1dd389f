"""The PostgreSQL schema of an exported index (version :data:`SCHEMA_VERSION`).

Four tables per export, named after ``--table`` (default ``scidx_chunks``)::

    <table>           one row per chunk
      doc           int4 PRIMARY KEY               row number the postings refer to
      id            text COLLATE "C"  (hash index) chunk id; "C" = the file's code-point order
      source        text COLLATE "C"  (hash index) source path as packed
      anchor        text                           heading anchor ("" before the first heading)
      heading_path  text[]                         ancestor headings, outermost first
      title         text                           document title
      text          text                           the chunk's Markdown body
      metadata      jsonb                          the source's front matter
      url           text                           link from the index's urlTemplate, or NULL
      embedding     vector(D)  (float32 indexes)   the L2-normalised vector (HNSW, cosine)
                    halfvec(D) (int8, binary)      the int8 codes, exactly (HNSW, cosine)
      scale         float4     (int8, binary)      the row's scale: its vector = scale * codes
      bits          bit(B)     (binary indexes)    the file's SimHash sign bits (HNSW, Hamming)
      doc_len       int4                           BM25 document length (field-weighted)
      heading_key   text                           casefolded title + headings (heading filter)
      row_hash      int8                           xxh3 of the row's content (incremental export)

    <table>_postings  term_id int4, doc int4, tf float8, dl int4, impact float4;
                      PRIMARY KEY (term_id, doc) INCLUDE (impact), rows in term order
    <table>_terms     term_hash int8 PRIMARY KEY (xxh3_64 of the term, as in the file),
                      term_id int4 UNIQUE, df int4, idf float8 (numpy's log1p, as the
                      packer computes it: SQL has no log1p, and ln(1 + x) differs in the last
                      bits), max_impact float4 (the term's largest posting impact: the
                      bound of the keyword query's exact cut, scidx.postgres.queries)
    <table>_meta      key text PRIMARY KEY, value jsonb: schema, stamp (provider stamp),
                      tokenizer, bm25 (k1, b, headingWeight), vector (type, dimensions),
                      stats (chunks, avgdl), contentHash, urlTemplate, fusion, generator

Every table carries a marker (its ``COMMENT``: ``scidx export <table>: <role>``) written when
the exporter creates it; the exporter drops or renames only tables whose marker names the
export being written (:func:`ownership_problem`).

No btree indexes any text a user controls (ids, sources): a btree entry must fit a third of a
page (2,704 bytes), and a packer accepts longer ids. Lookups by id or source use hash indexes,
which store a 4-byte hash whatever the key's length.

Why both term frequencies and BM25 impacts: a keyword query sums ``impact``, the file's float32
impact of the posting bit for bit (read from the primary key alone, an index-only scan; applying
the BM25 formula per posting in SQL cost ~10x more at 100k chunks). An impact depends on the
corpus (N, df, avgdl): an incremental export that moves N or avgdl rewrites the postings table
from the file (every impact changed); one that moves only some terms' df recomputes their
impacts in SQL from ``tf`` and ``dl`` with the file's formula. The chunk rows and vectors are
written only for the edited chunks.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from scidx.errors import ConfigError, CorruptIndexError
from scidx.postgres.connection import TableNames

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

__all__ = [
    "CHUNK_COLUMNS",
    "HNSW_MAX_DIMENSIONS",
    "SCHEMA_VERSION",
    "chunk_columns",
    "create_chunks_sql",
    "marker",
    "ownership_problem",
    "read_meta",
]

SCHEMA_VERSION = 4

#: pgvector's HNSW limits: ``vector`` 2,000 dimensions, ``halfvec`` 4,000, ``bit`` 64,000.
HNSW_MAX_DIMENSIONS = 2000
HNSW_MAX_HALF_DIMENSIONS = 4000

#: Column name, SQL type (``{vtype}``/``{dims}``/``{bits}`` filled in) and COPY type.
CHUNK_COLUMNS = (
    ("doc", "int4 PRIMARY KEY", "int4"),
    ("id", 'text COLLATE "C" NOT NULL', "text"),
    ("source", 'text COLLATE "C" NOT NULL', "text"),
    ("anchor", "text NOT NULL", "text"),
    ("heading_path", "text[] NOT NULL", "text[]"),
    ("title", "text NOT NULL", "text"),
    ("text", "text NOT NULL", "text"),
    ("metadata", "jsonb NOT NULL", "jsonb"),
    ("url", "text", "text"),
    ("embedding", "{vtype}({dims}) NOT NULL", "{vtype}"),
    ("scale", "float4 NOT NULL", "float4"),
    ("bits", "bit({bits}) NOT NULL", "bit"),
    ("doc_len", "int4 NOT NULL", "int4"),
    ("heading_key", "text NOT NULL", "text"),
    ("row_hash", "int8 NOT NULL", "int8"),
)

#: The roles of an export's tables, by name suffix (the chunks table has none).
ROLES = (("", "chunks"), ("_postings", "postings"), ("_terms", "terms"), ("_meta", "meta"))


def vector_type(encoding: str) -> str:
    """The pgvector column type for an index's vector encoding: compact codes in ``halfvec``."""
    return "vector" if encoding == "float32" else "halfvec"


def chunk_columns(encoding: str) -> list[tuple[str, str, str]]:
    """:data:`CHUNK_COLUMNS` for an encoding (``bits`` only for binary indexes)."""
    vtype = vector_type(encoding)
    return [
        (name, kind, copy.format(vtype=vtype))
        for name, kind, copy in CHUNK_COLUMNS
        if (name != "bits" or encoding == "binary") and (name != "scale" or encoding != "float32")
    ]


def create_chunks_sql(schema: str, table: str, dims: int, encoding: str) -> sql.Composed:
    """``CREATE TABLE`` for a chunks table (without its secondary indexes)."""
    from psycopg import sql

    vtype = vector_type(encoding)
    bits = 64 * -(-int(dims) // 64)  # the file's row width: whole 64-bit words
    cols = sql.SQL(", ").join(
        sql.SQL("{} {}").format(
            sql.Identifier(name), sql.SQL(kind.format(vtype=vtype, dims=int(dims), bits=bits))
        )
        for name, kind, _ in chunk_columns(encoding)
    )
    return sql.SQL("CREATE TABLE {}.{} ({})").format(
        sql.Identifier(schema), sql.Identifier(table), cols
    )


def create_side_tables_sql(schema: str, table: str) -> list[sql.Composed]:
    """``CREATE TABLE`` for the postings, term and meta tables of chunks table ``table``."""
    from psycopg import sql

    s = sql.Identifier(schema)
    return [
        # No primary key yet: it is built after the load (one sort instead of per-row inserts).
        sql.SQL(
            "CREATE TABLE {}.{} (term_id int4 NOT NULL, doc int4 NOT NULL, tf float8 NOT NULL, "
            "dl int4 NOT NULL, impact float4 NOT NULL)"
        ).format(s, sql.Identifier(f"{table}_postings")),
        sql.SQL(
            "CREATE TABLE {}.{} (term_hash int8 PRIMARY KEY, term_id int4 NOT NULL UNIQUE, "
            "df int4 NOT NULL, idf float8 NOT NULL, max_impact float4 NOT NULL)"
        ).format(s, sql.Identifier(f"{table}_terms")),
        sql.SQL("CREATE TABLE {}.{} (key text PRIMARY KEY, value jsonb NOT NULL)").format(
            s, sql.Identifier(f"{table}_meta")
        ),
    ]


def marker(table: str, role: str) -> str:
    """The ``COMMENT`` the exporter puts on each table it creates for export ``table``."""
    return f"scidx export {table}: {role}"


def table_exists(conn: psycopg.Connection[Any], schema: str, table: str) -> bool:
    """Whether ``schema.table`` exists (and is visible to this role)."""
    row = conn.execute(
        "SELECT to_regclass(format('%%I.%%I', %s::text, %s::text)) IS NOT NULL", (schema, table)
    ).fetchone()
    return bool(row and row[0])


def _comment(conn: psycopg.Connection[Any], schema: str, table: str) -> tuple[bool, str | None]:
    row = conn.execute(
        "SELECT c.oid IS NOT NULL, obj_description(c.oid, 'pg_class') FROM (SELECT "
        "to_regclass(format('%%I.%%I', %s::text, %s::text)) AS oid) AS c",
        (schema, table),
    ).fetchone()
    return (bool(row[0]), row[1]) if row else (False, None)


def ownership_problem(
    conn: psycopg.Connection[Any], names: TableNames, extra: tuple[str, ...] = ()
) -> None:
    """Refuse to touch any table of this export's names that this export did not write.

    Checks ``<table>``, its ``_postings``/``_terms``/``_meta`` tables and ``extra`` names (the
    load tables): each must be absent or carry this export's marker.

    Raises:
        ConfigError: A table exists that another export or an application owns (exit 1).
    """
    expected = {names.table + suffix: role for suffix, role in ROLES}
    for name in extra:
        expected[name] = "load"
    legacy: bool | None = None
    for name, role in expected.items():
        exists, comment = _comment(conn, names.schema, name)
        if not exists or comment == marker(names.table, role):
            continue
        if role == "load" and (comment or "").startswith(marker(names.table, "")):
            continue  # this export's load table (a load table keeps its final table's marker)
        if comment is None and role in ("chunks", "terms", "meta"):
            if legacy is None:
                legacy = _legacy_export(conn, names)
            if legacy:
                continue
        where = f"{names.schema}.{name}"
        if comment and comment.startswith("scidx export "):
            owner, _, other_role = comment[len("scidx export ") :].partition(": ")
            raise ConfigError(
                f"--table {names.table}: table {where} belongs to the export "
                f"{names.schema}.{owner} (its {other_role} table); exporting here would replace "
                "it. Choose another --table name."
            )
        raise ConfigError(
            f"--table {names.table}: table {where} exists and was not written by `toolup-rag "
            "export`; scidx never drops or replaces a table it did not create. Choose another "
            f"--table name, or drop {where} yourself if it is an old export."
        )


def _legacy_export(conn: psycopg.Connection[Any], names: TableNames) -> bool:
    """Whether the export's tables are a schema-1 export (written before tables had markers)."""
    from psycopg import errors, sql

    if not all(table_exists(conn, names.schema, names.table + s) for s in ("", "_terms")):
        return False
    if not table_exists(conn, names.schema, names.meta):
        return False
    try:
        with conn.transaction():
            row = conn.execute(
                sql.SQL("SELECT value::text FROM {}.{} WHERE key = 'schema'").format(
                    sql.Identifier(names.schema), sql.Identifier(names.meta)
                )
            ).fetchone()
    except errors.Error:
        return False
    return row is not None and row[0] == "1"


def read_meta(conn: psycopg.Connection[Any], names: TableNames) -> dict[str, Any] | None:
    """The stamp table as a dict, or None when the export's tables do not exist.

    Raises:
        CorruptIndexError: The stamp table exists but cannot be read as one (damaged): the
            message says to export again, which rebuilds it.
    """
    from psycopg import errors, sql

    if not all(table_exists(conn, names.schema, names.table + s) for s, _ in ROLES):
        return None
    try:
        with conn.transaction():  # a savepoint: a damaged table must not abort the caller's
            rows = conn.execute(
                sql.SQL("SELECT key::text, value::text FROM {}.{}").format(
                    sql.Identifier(names.schema), sql.Identifier(names.meta)
                )
            ).fetchall()
        return {str(k): json.loads(v) for k, v in rows}
    except (errors.UndefinedColumn, errors.CannotCoerce, ValueError):
        raise damaged(names) from None


def damaged(names: TableNames) -> CorruptIndexError:
    """The error for an export whose stamp table is missing keys or columns."""
    return CorruptIndexError(
        f"PostgreSQL table {names.schema}.{names.meta} (the stamp table of export "
        f"{names.qualified}) is damaged; run `toolup-rag export INDEX --postgres DSN --table "
        f"{names.table}` again, which rebuilds the export's tables"
    )
