"""``toolup-rag llms-txt``: write llms.txt and llms-full.txt from an index."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scidx.cli.app import app
from scidx.cli.exits import fail, unreadable
from scidx.errors import ScidxError

__all__ = ["llms_txt_command"]


@app.command("llms-txt")
def llms_txt_command(
    index: Annotated[Path, typer.Argument(help="The .scidx index file.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Folder to write into (default: the index's folder)."),
    ] = None,
    title: Annotated[
        str | None, typer.Option("--title", help="The H1 (default: the front page's title).")
    ] = None,
    summary: Annotated[
        str | None,
        typer.Option(
            "--summary", help="The '>' summary (default: the front page's first sentence)."
        ),
    ] = None,
) -> None:
    """Write llms.txt (links per page and section) and llms-full.txt (clean text).

    The format is llmstxt.org's; both files are deterministic and made from the index alone.
    """
    from scidx.export.llms_txt import write_llms_txt

    try:
        short, full = write_llms_txt(
            index, out if out is not None else index.parent, title=title, summary=summary
        )
    except ScidxError as exc:
        fail(exc)
    except OSError as exc:
        fail(unreadable(index, exc))
    typer.echo(f"wrote {short} and {full}", err=True)
