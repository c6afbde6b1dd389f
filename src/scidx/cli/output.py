"""Progress reporters and small formatting helpers shared by the commands."""

from __future__ import annotations

import time
from typing import Any

import typer

from scidx.index.safety import terminal_safe

__all__ = ["PlainProgress", "RichProgress", "distinct_texts", "echo", "human_bytes", "link"]


def echo(message: str = "", *, err: bool = False) -> None:
    """Print a line for a human, with terminal controls from index or config text escaped.

    Every CLI line goes through here: index strings (snippets, titles, ids, generator, model)
    and error messages quoting them can hold ESC sequences, OSC 8 links or C1 controls, which
    would otherwise clear the screen or hide links even when the output is piped to a file.
    """
    typer.echo(terminal_safe(message), err=err)


class PlainProgress:
    """One line per finished stage, for logs (stderr is not a terminal)."""

    def __init__(self) -> None:
        self._last: str | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        """Report that ``stage`` has done ``done`` of ``total`` items."""
        if stage == "distinct":
            reuse = " (each embedded once, its vector reused)" if done < total else ""
            typer.echo(f"{total} chunks: {distinct_texts(done, total)}{reuse}", err=True)
        elif stage == "cached":
            typer.echo(f"cache hits: {done}/{total}", err=True)
        elif done == total and total > 0 and stage != self._last:
            self._last = stage
            typer.echo(f"{stage}: {done}/{total}", err=True)

    def close(self) -> None:
        """Nothing to clean up."""
        return None


class RichProgress:
    """Live progress bars on a terminal."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._progress = Progress(
            TextColumn("{task.description:<8}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._tasks: dict[str, Any] = {}
        self._last_update = 0.0
        self._progress.start()

    def __call__(self, stage: str, done: int, total: int) -> None:
        """Report that ``stage`` has done ``done`` of ``total`` items."""
        if stage == "distinct":  # a count, not a stage with a bar; the summary repeats it
            return
        if stage not in self._tasks:
            self._tasks[stage] = self._progress.add_task(stage, total=max(total, 1))
        # Updating per file costs more than the work on a big corpus: at most ~20 per second.
        now = time.monotonic()
        if done < total and now - self._last_update < 0.05:
            return
        self._last_update = now
        self._progress.update(self._tasks[stage], completed=done, total=max(total, 1))

    def close(self) -> None:
        """Remove the progress bars."""
        self._progress.stop()


def distinct_texts(distinct: int, chunks: int) -> str:
    """``680 distinct texts, 5 duplicates``: the same words in progress and summary."""
    return f"{distinct} distinct texts, {chunks - distinct} duplicates"


def human_bytes(n: int) -> str:
    """``n`` bytes as B, KiB, MiB or GiB with one decimal."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def link(row: dict[str, Any]) -> str:
    """The hit's URL, else ``source#anchor`` (just ``source`` for text before any heading)."""
    if row.get("url"):
        return str(row["url"])
    return f"{row['source']}#{row['anchor']}" if row["anchor"] else str(row["source"])
