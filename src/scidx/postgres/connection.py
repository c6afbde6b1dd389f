"""Connecting to PostgreSQL: DSNs, table names and the errors every command maps to exit codes.

The DSN is a libpq connection string (``host=... dbname=...``) or URL
(``postgresql://user@host/db``); an empty DSN leaves everything to libpq's environment
(``PGHOST``, ``PGDATABASE``, ``PGSERVICE``, ``PGPASSFILE``...). A password is never printed,
logged or stored: error messages name the host, port, database and user only, and libpq's own
reason text is scrubbed of the password in case a server echoes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scidx.errors import ConfigError, DatabaseError

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "DEFAULT_SCHEMA",
    "DEFAULT_TABLE",
    "DatabaseError",
    "TableNames",
    "connect",
    "describe_dsn",
]

DEFAULT_TABLE = "scidx_chunks"
DEFAULT_SCHEMA = "public"

# Lower-case SQL identifiers only, so names never need quoting in the SQL users paste (and the
# longest derived name, "<table>__load_embedding_hnsw", stays within PostgreSQL's 63 bytes).
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,39}")


@dataclass(frozen=True)
class TableNames:
    """The tables one export writes: chunks, postings, terms and the stamp (metadata) table.

    Attributes:
        schema: The PostgreSQL schema (``public`` by default).
        table: The chunks table; the others are ``<table>_postings``, ``<table>_terms`` and
            ``<table>_meta``.
    """

    schema: str = DEFAULT_SCHEMA
    table: str = DEFAULT_TABLE

    def __post_init__(self) -> None:
        for what, value in (("--table", self.table), ("--schema", self.schema)):
            if not isinstance(value, str) or not _NAME.fullmatch(value):
                raise ConfigError(
                    f"{what} {value!r} is not a plain SQL name: use 1-40 lower-case letters, "
                    "digits and underscores, starting with a letter or underscore"
                )

    @property
    def postings(self) -> str:
        """Name of the postings table (term id, chunk row, term frequency, length)."""
        return f"{self.table}_postings"

    @property
    def terms(self) -> str:
        """Name of the term table (term hash -> term id, document frequency)."""
        return f"{self.table}_terms"

    @property
    def meta(self) -> str:
        """Name of the stamp table (provider stamp, tokenizer, BM25 parameters, hash)."""
        return f"{self.table}_meta"

    @property
    def qualified(self) -> str:
        """``schema.table``, for messages."""
        return f"{self.schema}.{self.table}"


def _conninfo(dsn: str) -> dict[str, Any]:
    from psycopg.conninfo import conninfo_to_dict

    try:
        return dict(conninfo_to_dict(dsn))
    except Exception:
        # libpq's parse error quotes the DSN around the fault, which may be the password.
        raise ConfigError(
            "--postgres: the DSN is not a valid libpq connection string; use key=value pairs "
            "(host=... dbname=... user=...) or a postgresql://user@host:port/dbname URL, and "
            "pass the password through PGPASSWORD, ~/.pgpass or a service file"
        ) from None


def describe_dsn(dsn: str) -> str:
    """A password-free description of where ``dsn`` points: database, host, port and user.

    Values libpq would take from the environment are shown as ``(default)``.
    """
    import os

    info = _conninfo(dsn)
    host = info.get("host") or os.environ.get("PGHOST") or "(default host)"
    port = info.get("port") or os.environ.get("PGPORT")
    db = info.get("dbname") or os.environ.get("PGDATABASE") or info.get("service") or "(default)"
    user = info.get("user") or os.environ.get("PGUSER")
    where = f"database {db!r} on {host}" + (f" port {port}" if port else "")
    return where + (f" as user {user!r}" if user else "")


def _scrub(text: str, dsn: str) -> str:
    import os

    secrets = [os.environ.get("PGPASSWORD") or ""]
    try:
        secrets.append(str(_conninfo(dsn).get("password") or ""))
    except ConfigError:
        pass
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def _reason(exc: BaseException, dsn: str) -> str:
    """Libpq's reason for a failed connection, on one line, without the password."""
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = lines[0] if lines else type(exc).__name__
    # "connection failed: connection to server at "h", port 1 failed: Connection refused"
    reason = first.rsplit(" failed: ", 1)[-1] if " failed: " in first else first
    reason = re.sub(r"^(FATAL|ERROR):\s+", "", reason)
    return _scrub(reason, dsn)


def database_error(exc: BaseException, dsn: str, doing: str) -> DatabaseError:
    """Turn a psycopg error into a :class:`DatabaseError` naming the target (no password)."""
    return DatabaseError(f"PostgreSQL {describe_dsn(dsn)}: {doing} failed: {_reason(exc, dsn)}")


def connect(dsn: str, *, application: str = "scidx") -> psycopg.Connection[Any]:
    """Open a connection with pgvector's types registered when the extension exists.

    Args:
        dsn: A libpq DSN or URL; ``""`` uses libpq's environment variables only.
        application: ``application_name`` reported to the server (``pg_stat_activity``).

    Returns:
        An open connection (not in autocommit mode).

    Raises:
        ConfigError: The DSN cannot be parsed.
        DatabaseError: The server is unreachable or refused the connection.
    """
    try:
        import psycopg
    except ImportError:
        raise ConfigError(
            "PostgreSQL support needs psycopg and pgvector: pip install 'toolup-rag[postgres]'"
        ) from None
    info = _conninfo(dsn)
    options: dict[str, Any] = {"application_name": application}
    if "connect_timeout" not in info:
        options["connect_timeout"] = 10  # an unroutable host fails in seconds, not minutes
    try:
        return psycopg.connect(dsn, **options)
    except psycopg.Error as exc:
        raise database_error(exc, dsn, "connecting") from None
