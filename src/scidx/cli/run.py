"""Run ``toolup-rag``: import every command module, then map how the run ended to an exit code."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import typer
import typer.main

# Importing a command module registers its commands on the app.
import scidx.cli.distill
import scidx.cli.llms
import scidx.cli.pack
import scidx.cli.pipeline
import scidx.cli.postgres
import scidx.cli.search
import scidx.cli.serve
import scidx.cli.web  # noqa: F401
from scidx.cli import conventions
from scidx.cli.app import app
from scidx.cli.exits import INTERNAL_EXIT, USAGE_EXIT
from scidx.cli.output import echo
from scidx.index.safety import terminal_safe
from scidx.redact import redact

__all__ = ["main"]

_CLICK_USAGE_EXIT = 2  # Click's code for a usage error; 2 means "provider failed" in scidx


def main(argv: list[str] | None = None, *, prog_name: str = "toolup-rag") -> None:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``) and exit with the documented code.

    ``prog_name`` is the name usage lines show (``scidx`` for the alias).

    Click runs non-standalone so that a usage error (Typer's exit 2, which means "provider
    failed" in scidx) is told apart from a command that exits 2 on purpose: it exits 1.
    """
    command = conventions.apply(typer.main.get_command(app))
    try:
        code = command.main(args=argv, prog_name=prog_name, standalone_mode=False)
    except typer.Abort:
        echo("Aborted!", err=True)
        sys.exit(1)
    except Exception as exc:
        # Typer vendors Click and does not export its exception classes: a Click error is
        # recognised by its interface (show() and exit_code); exit_code 2 is a usage error.
        show, exit_code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if not callable(show) or not isinstance(exit_code, int):
            _internal_error(exc)
        show()
        sys.exit(USAGE_EXIT if exit_code == _CLICK_USAGE_EXIT else exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def _internal_error(exc: Exception) -> NoReturn:
    """Anything but a scidx error (a bug, or a system limit): one message, exit 70.

    A traceback is no message for a user; ``SCIDX_TRACEBACK=1`` shows it for a bug report.
    """
    if os.environ.get("SCIDX_TRACEBACK") == "1":
        raise exc
    detail = terminal_safe(redact(f"{type(exc).__name__}: {exc}"), one_line=True)[:500]
    echo(
        f"error: internal error ({detail}). This is a bug in scidx or a limit of this system "
        "(memory, open files, memory mappings); run again with SCIDX_TRACEBACK=1 to see the "
        "traceback, and report it",
        err=True,
    )
    sys.exit(INTERNAL_EXIT)
