"""The PostgreSQL schema of an exported index (version :data:`SCHEMA_VERSION`).

Three tables per export, named after ``--table`` (default ``scidx_chunks``)::

    <table>          one row per chunk
      id            text COLLATE "C" PRIMARY KEY   chunk id; "C" = the file's code-point order
      source        text COLLATE "C"               source path as packed
      anchor        text                           heading anchor ("" before the first heading)
      heading_path  text[]                         ancestor headings, outermost first
      title         text                           document title
      text          text                           the chunk's Markdown body
      metadata      jsonb                          the source's front matter
      url           text                           link from the index's urlTemplate, or NULL
      embedding     vector(D)                      the index's (L2-normalised) vector
      doc_len       int4                           BM25 document length (field-weighted)
      terms         int4[]                         term ids of the chunk (GIN: candidate lookup)
      tf            sparsevec(1000000000)          field-weighted term frequency by term id
      heading_key   text                           casefolded title + headings (heading filter)
      row_hash      int8                           xxh3 of the row's content (incremental export)

    <table>_terms    term_hash int8 PRIMARY KEY (xxh3_64 of the term, as in the file),
                     term_id int4 UNIQUE (the sparsevec index, 1-based), df int4
    <table>_meta     key text PRIMARY KEY, value jsonb: schema, stamp (provider stamp),
                     tokenizer, bm25 (k1, b, headingWeight), vector (type, dimensions),
                     stats (chunks, avgdl), contentHash, urlTemplate, generator

Why term frequencies and not BM25 impacts: an impact depends on the corpus (N, df, avgdl), so
any edit would change every stored row; term frequencies change only with their chunk, so an
incremental export rewrites only the edited chunks, and queries apply the same formula as the
file (:mod:`scidx.index.bm25`) with the current N, df and avgdl.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from scidx.postgres.connection import TableNames

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

__all__ = [
    "CHUNK_COLUMNS",
    "HNSW_MAX_DIMENSIONS",
    "SCHEMA_VERSION",
    "TERM_DIMENSIONS",
    "create_chunks_sql",
    "read_meta",
]

SCHEMA_VERSION = 1

#: The declared dimension of ``tf`` (pgvector's maximum): term ids only grow, never wrap.
TERM_DIMENSIONS = 1_000_000_000

#: pgvector's HNSW limit for ``vector`` columns; wider embeddings are searched exactly.
HNSW_MAX_DIMENSIONS = 2000

CHUNK_COLUMNS = (
    ("id", 'text COLLATE "C" PRIMARY KEY'),
    ("source", 'text COLLATE "C" NOT NULL'),
    ("anchor", "text NOT NULL"),
    ("heading_path", "text[] NOT NULL"),
    ("title", "text NOT NULL"),
    ("text", "text NOT NULL"),
    ("metadata", "jsonb NOT NULL"),
    ("url", "text"),
    ("embedding", "vector({dims}) NOT NULL"),
    ("doc_len", "int4 NOT NULL"),
    ("terms", "int4[] NOT NULL"),
    ("tf", f"sparsevec({TERM_DIMENSIONS}) NOT NULL"),
    ("heading_key", "text NOT NULL"),
    ("row_hash", "int8 NOT NULL"),
)

#: COPY types of :data:`CHUNK_COLUMNS`, in order.
COPY_TYPES = (
    "text",
    "text",
    "text",
    "text[]",
    "text",
    "text",
    "jsonb",
    "text",
    "vector",
    "int4",
    "int4[]",
    "sparsevec",
    "text",
    "int8",
)


def create_chunks_sql(schema: str, table: str, dims: int) -> sql.Composed:
    """``CREATE TABLE`` for a chunks table (without its secondary indexes)."""
    from psycopg import sql

    cols = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(name), sql.SQL(kind.format(dims=int(dims))))
        for name, kind in CHUNK_COLUMNS
    )
    return sql.SQL("CREATE TABLE {}.{} ({})").format(
        sql.Identifier(schema), sql.Identifier(table), cols
    )


def create_side_tables_sql(schema: str, table: str) -> list[sql.Composed]:
    """``CREATE TABLE`` for the term and meta tables of chunks table ``table``."""
    from psycopg import sql

    s = sql.Identifier(schema)
    return [
        sql.SQL(
            "CREATE TABLE {}.{} (term_hash int8 PRIMARY KEY, term_id int4 NOT NULL UNIQUE, "
            "df int4 NOT NULL)"
        ).format(s, sql.Identifier(f"{table}_terms")),
        sql.SQL("CREATE TABLE {}.{} (key text PRIMARY KEY, value jsonb NOT NULL)").format(
            s, sql.Identifier(f"{table}_meta")
        ),
    ]


def table_exists(conn: psycopg.Connection[Any], schema: str, table: str) -> bool:
    """Whether ``schema.table`` exists (and is visible to this role)."""
    row = conn.execute(
        "SELECT to_regclass(format('%%I.%%I', %s::text, %s::text)) IS NOT NULL", (schema, table)
    ).fetchone()
    return bool(row and row[0])


def read_meta(conn: psycopg.Connection[Any], names: TableNames) -> dict[str, Any] | None:
    """The stamp table as a dict, or None when the export's tables do not exist."""
    from psycopg import sql

    if not (
        table_exists(conn, names.schema, names.meta)
        and table_exists(conn, names.schema, names.table)
        and table_exists(conn, names.schema, names.terms)
    ):
        return None
    rows = conn.execute(
        sql.SQL("SELECT key, value::text FROM {}.{}").format(
            sql.Identifier(names.schema), sql.Identifier(names.meta)
        )
    ).fetchall()
    return {str(k): json.loads(v) for k, v in rows}
