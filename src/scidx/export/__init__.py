"""Exporters: artefacts written from a packed index (llms.txt; PostgreSQL is scidx.postgres)."""
