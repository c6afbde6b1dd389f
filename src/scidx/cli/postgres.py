"""``toolup-rag export``: write an index to PostgreSQL + pgvector; the ``--postgres`` backend.

``export`` loads the index, then calls :func:`scidx.postgres.export.export_index`; the
pipeline commands (``query``, ``ask``, ``eval``, ``bench``) take ``--postgres DSN`` and
``--table`` through :func:`open_retriever` and :func:`bench_backend`. Exit codes:

====  =====================================================
0     exported, or already up to date (nothing written)
1     invalid arguments (DSN syntax, table name), missing index file or table
4     the index file is corrupt, or its keyword arrays do not match its text
8     PostgreSQL unreachable, refused the connection, a statement or a row (named by
      chunk id and source), no pgvector, or a query over ``SCIDX_PG_TIMEOUT`` seconds
====  =====================================================

Exit 1 also covers a ``--table`` whose tables (``<table>``, ``_postings``, ``_terms``,
``_meta``) exist but were not written by this export: another export's or an application's
tables are never dropped or replaced.

The DSN is a libpq connection string or URL; ``--postgres ''`` uses libpq's environment
(``PGHOST``, ``PGSERVICE``, ``PGPASSWORD``, ``~/.pgpass``...). The password is never printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scidx.cli.app import app
from scidx.cli.exits import fail, unreadable
from scidx.cli.output import echo
from scidx.errors import ConfigError, InputError, ScidxError

if TYPE_CHECKING:
    from scidx.index.index import Index
    from scidx.postgres.retriever import PostgresRetriever

__all__ = ["POSTGRES_OPT", "TABLE_OPT", "export_command", "open_retriever", "export_and_rank"]

POSTGRES_OPT = typer.Option(
    "--postgres",
    help="Use this PostgreSQL DSN/URL instead of an index file ('' = libpq environment).",
)
TABLE_OPT = typer.Option("--table", help="The chunks table written by `toolup-rag export`.")
SCHEMA_OPT = typer.Option("--schema", help="The PostgreSQL schema of the tables.")


def _timeout() -> float | None:
    """Seconds per statement from ``SCIDX_PG_TIMEOUT`` (default 30; ``0``: no limit)."""
    import os

    raw = os.environ.get("SCIDX_PG_TIMEOUT", "").strip()
    if not raw:
        return 30.0
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise ConfigError(
            f"SCIDX_PG_TIMEOUT={raw!r} is not a number of seconds; use e.g. 5, or 0 for no limit"
        )
    return value or None


def open_retriever(dsn: str, table: str, schema: str = "public") -> PostgresRetriever:
    """A :class:`~scidx.postgres.retriever.PostgresRetriever`; a clear error without the extra.

    The statement time limit comes from ``SCIDX_PG_TIMEOUT`` (seconds; default 30, 0 = none).
    """
    try:
        from scidx.postgres.retriever import PostgresRetriever
    except ImportError:
        raise InputError(
            "--postgres needs psycopg and pgvector: pip install 'toolup-rag[postgres]'"
        ) from None
    return PostgresRetriever(dsn, table=table, schema=schema, timeout=_timeout())


def export_and_rank(dsn: str, table: str) -> Any:
    """For ``bench --postgres``: export each packed index to ``table``, then rank through SQL.

    Returns a function ``backend(index) -> (rank, close)`` for
    :func:`scidx.evaluation.beir.run_bench`.
    """

    def backend(index: Index) -> Any:
        from scidx.postgres.export import export_index

        export_index(index, dsn, table=table)
        retriever = open_retriever(dsn, table)

        def rank(text: str, k: int, mode: str) -> list[tuple[str, float]]:
            return retriever.rank(text, k=k, mode=mode)

        return rank, retriever.close

    return backend


@app.command("export")
def export_command(
    index: Annotated[Path, typer.Argument(help="The .scidx index file.")],
    postgres: Annotated[str, typer.Option("--postgres", help="PostgreSQL DSN or URL.")],
    table: Annotated[str, TABLE_OPT] = "scidx_chunks",
    schema: Annotated[str, SCHEMA_OPT] = "public",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success.")] = (
        False
    ),
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Export an index to PostgreSQL + pgvector (incremental; twice writes nothing).

    Creates the chunks table (HNSW and keyword indexes) with its _terms and _meta tables, or
    updates only the changed rows, in one transaction. Exit codes: 0 done, 1 bad arguments,
    4 corrupt index, 8 PostgreSQL unreachable or refused.
    """
    from scidx.index.index import load

    try:
        try:
            from scidx.postgres.connection import TableNames
            from scidx.postgres.export import export_index
        except ImportError:
            raise InputError(
                "export needs psycopg and pgvector: pip install 'toolup-rag[postgres]'"
            ) from None
        TableNames(schema=schema, table=table)  # bad names fail before the index is read
        try:
            idx = load(index)
        except FileNotFoundError:
            raise InputError(
                f"index {index} does not exist; pack it with `toolup-rag pack-docs`"
            ) from None
        except OSError as exc:
            raise unreadable(index, exc) from None
        with idx:
            report = export_index(idx, postgres, table=table, schema=schema)
            windowed = "windows" in idx.meta
    except ScidxError as exc:
        fail(exc)
    if windowed and not quiet:
        echo(
            "note: window rows of long chunks are not exported (docs/postgres.md): PostgreSQL "
            "ranks a long chunk by its first window, the index by its best one",
            err=True,
        )
    if as_json:
        echo(json.dumps(report.to_dict(), indent=1))
        return
    if quiet:
        return
    if report.up_to_date:
        echo(f"{report.table} is up to date ({report.chunks} chunks); nothing written")
        return
    how = f"full export ({report.reason})" if report.full else "incremental export"
    echo(
        f"{report.table}: {how}: {report.inserted} inserted, {report.updated} updated, "
        f"{report.deleted} deleted, {report.unchanged} unchanged; {report.terms_written} term "
        f"rows written, {report.terms_deleted} deleted; {report.seconds:.1f} s"
    )
    if not report.hnsw:
        echo(
            "note: no HNSW index (pgvector indexes at most 2000 dimensions); vector queries "
            "scan the table exactly",
            err=True,
        )
