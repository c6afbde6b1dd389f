"""The progress callback type shared by the pack stages."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "noop_progress"]


#: ``progress(stage, done, total)``; stages: read, chunk, distinct (distinct texts of all the
#: chunks, reported once: the rest are duplicates, embedded once), cached (distinct texts found in
#: the cache or the previous index), embed (distinct texts embedded by the provider of those
#: not cached), index, write. The pack summary reports the same counts.
Progress = Callable[[str, int, int], None]


def noop_progress(stage: str, done: int, total: int) -> None:
    """A progress callback that ignores every report."""
    return None
