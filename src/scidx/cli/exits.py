"""How the CLI reports errors: one ``error: ...`` line on stderr and the documented exit code.

Library errors (:class:`~scidx.errors.ScidxError`) carry their exit code (``exc.exit_code``); the
CLI catches them only at the command boundary and calls :func:`fail`:

====  =====================================================
0     success (``pack-docs``: written, or already up to date)
1     invalid config, arguments, input file, fixture or template
2     the embedding provider or chat model failed
3     an output (the index, its sidecar, ``--out``, ``--trace``) could not be written
4     an index file is corrupt, truncated or not a .scidx
5     invalid query
6     ``pack-docs --check``: the index is stale
7     ``eval --baseline``: quality fell below the baseline
70    an internal error (a bug, or a system limit such as memory): one message, no traceback
====  =====================================================

A usage error (unknown option, missing argument) exits 1: Typer's own code for it is 2, which
means "provider failed" here; :func:`scidx.cli.run.main` maps it.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import typer

from scidx.cli.output import echo
from scidx.errors import ConfigError, ScidxError

__all__ = ["INTERNAL_EXIT", "STALE_EXIT", "USAGE_EXIT", "fail", "unreadable"]

STALE_EXIT = 6
INTERNAL_EXIT = 70  # sysexits' EX_SOFTWARE
USAGE_EXIT = 1


def fail(exc: ScidxError) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit with the error's documented code."""
    echo(f"error: {exc}", err=True)
    raise typer.Exit(exc.exit_code)


def unreadable(path: Path, exc: OSError) -> ConfigError:
    """The error for an index path the OS refuses to read (permissions, a folder, ...)."""
    return ConfigError(f"cannot read {path}: {exc.strerror or exc}; check the index path")
