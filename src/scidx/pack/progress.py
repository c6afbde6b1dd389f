"""The progress callback type shared by the pack stages."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "noop_progress"]


#: ``progress(stage, done, total)``; stages: read, chunk, cached (distinct chunk texts found in
#: the cache or the previous index), embed, index, write.
Progress = Callable[[str, int, int], None]


def noop_progress(stage: str, done: int, total: int) -> None:
    """A progress callback that ignores every report."""
    return None
