"""Export an index to PostgreSQL + pgvector and search it there (the ``postgres`` extra).

* :func:`~scidx.postgres.export.export_index` writes (or incrementally updates) a chunks table,
  its term table and its stamp table in one transaction (``toolup-rag export``).
* :class:`~scidx.postgres.retriever.PostgresRetriever` implements the pipeline's
  :class:`~scidx.index.retrieval.Retriever` protocol over that table, with the file's keyword
  ranking, vector search through an HNSW index, and the file's hybrid fusion.

See ``docs/postgres.md`` for the schema, SQL to paste and scaling notes.
"""

from __future__ import annotations

from scidx.postgres.connection import DatabaseError, TableNames
from scidx.postgres.export import ExportReport, export_index
from scidx.postgres.retriever import PostgresRetriever

__all__ = ["DatabaseError", "ExportReport", "PostgresRetriever", "TableNames", "export_index"]
