"""The ``toolup-rag`` command-line interface (needs the ``scidx[cli]`` extra).

Modules: :mod:`~scidx.cli.app` (the Typer app), :mod:`~scidx.cli.exits` (errors to exit codes),
:mod:`~scidx.cli.output` (progress and formatting), one module per command group
(:mod:`~scidx.cli.pack`, :mod:`~scidx.cli.search`, :mod:`~scidx.cli.pipeline`) and
:mod:`~scidx.cli.run`, which runs them.
"""

from __future__ import annotations

import sys

__all__ = ["main"]

# What the CLI imports that `pip install scidx` (the runtime alone) does not bring.
_CLI_PACKAGES = ("typer", "rich", "markdown_it", "platformdirs")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI, or say which extra to install and exit 1."""
    import importlib.util

    missing = [name for name in _CLI_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        sys.stderr.write(
            f"error: the toolup-rag command needs the CLI extra ({', '.join(missing)} missing): "
            "pip install 'scidx[cli]'\n"
        )
        sys.exit(1)
    from scidx.cli.run import main as run

    run(argv)
