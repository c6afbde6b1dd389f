"""The ``toolup-rag`` Typer application object and its root options.

Commands live in their own modules (:mod:`scidx.cli.pack`, :mod:`scidx.cli.search`,
:mod:`scidx.cli.pipeline`) and register themselves on :data:`app` when imported;
:mod:`scidx.cli.run` imports them all and runs the app.
"""

from __future__ import annotations

from typing import Annotated

import typer

from scidx._version import __version__
from scidx.cli.output import echo

__all__ = ["app"]

# Locals may hold an API key: never print them in tracebacks.
app = typer.Typer(
    name="toolup-rag",
    help="Pack Markdown docs into one .scidx index, then search it offline.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    # Plain Click help (scidx.cli.conventions shapes it): no boxes, no type column for flags.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version_callback(value: bool) -> None:
    if value:
        echo(f"toolup-rag {__version__} (import package scidx)")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_callback, is_eager=True, help="Show version."),
    ] = False,
) -> None:
    """Pack Markdown docs into one .scidx index, then search it offline."""
