"""Sample package: search its own docs with the index packed into the wheel at build time."""

from __future__ import annotations

from functools import lru_cache

import scidx

__all__ = ["docs_index", "search_docs"]


@lru_cache(maxsize=1)
def docs_index() -> scidx.Index:
    """The packed docs index, opened once (memory-mapped, or read from a zip import)."""
    return scidx.load_resource("mypkg", "docs.scidx")


def search_docs(query: str, k: int = 3) -> list[str]:
    """Links of the ``k`` sections that best answer ``query``."""
    return [hit.url or f"{hit.source}#{hit.anchor}" for hit in docs_index().search(query, k=k)]
