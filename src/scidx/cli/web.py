"""``toolup-rag export-web``: write a static search bundle (no server) from an index."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scidx.cli.app import app
from scidx.cli.exits import fail, unreadable
from scidx.errors import ScidxError

__all__ = ["export_web_command"]


@app.command("export-web")
def export_web_command(
    index: Annotated[Path, typer.Argument(help="The .scidx index file.")],
    out: Annotated[Path, typer.Argument(help="The bundle folder (created or replaced).")],
    title: Annotated[
        str | None, typer.Option("--title", help="The search page's title (default: Search).")
    ] = None,
    embeddings_url: Annotated[
        str | None,
        typer.Option(
            "--embeddings-url",
            help="OpenAI-compatible API base (https://host/v1) for the page's vector leg "
            "(semantic indexes; default: keyword only).",
        ),
    ] = None,
    locale: Annotated[
        str | None,
        typer.Option(
            "--locale",
            help="The page's UI language (en, zh, ja, ko, de, fr, es, pt; default: the index's).",
        ),
    ] = None,
) -> None:
    """Write a static search bundle: open OUT/index.html from any static host, no server.

    Keyword results equal `toolup-rag search --mode keyword`; files other than index.html and
    scidx-bundle.json are content-hashed (cache them forever). See docs/web-bundle.md.
    """
    from scidx.export.web_bundle import write_web_bundle

    try:
        report = write_web_bundle(
            index, out, title=title, embeddings_url=embeddings_url, locale=locale
        )
    except ScidxError as exc:
        fail(exc)
    except OSError as exc:
        fail(unreadable(index, exc))
    typer.echo(
        f"wrote {report.out}: {report.files} files, {report.bytes:,} bytes "
        f"({report.terms:,} terms in {report.term_shards} shards, {report.pages} pages, "
        f"{report.vector_shards} vector shards)",
        err=True,
    )
    if report.vector_shards and _has_windows(index):
        typer.echo(
            "note: the bundle holds each chunk's main vector only, so its vector search ranks "
            "a long chunk by its first window (the index ranks it by its best one; "
            "docs/web-bundle.md)",
            err=True,
        )


def _has_windows(index: Path) -> bool:
    """Whether the index has window rows of long chunks (docs/FORMAT.md §2.11)."""
    from scidx.index.format import read_header_file

    try:
        return "windows" in read_header_file(index).meta
    except (OSError, ScidxError):  # it was just read whole: cannot fail short of a race
        return False
