"""The ``toolup-rag`` command-line interface (needs the ``toolup-rag[cli]`` extra).

Modules: :mod:`~scidx.cli.app` (the Typer app), :mod:`~scidx.cli.exits` (errors to exit codes),
:mod:`~scidx.cli.output` (progress and formatting), one module per command group
(:mod:`~scidx.cli.pack`, :mod:`~scidx.cli.search`, :mod:`~scidx.cli.pipeline`) and
:mod:`~scidx.cli.run`, which runs them.
"""

from __future__ import annotations

import sys

__all__ = ["main", "scidx_alias"]

# What the CLI imports that `pip install toolup-rag` (the runtime alone) does not bring.
_CLI_PACKAGES = ("typer", "rich", "markdown_it", "platformdirs")


def main(argv: list[str] | None = None, *, prog_name: str = "toolup-rag") -> None:
    """Console-script entry point: run the CLI, or say which extra to install and exit 1.

    Args:
        argv: The arguments (default ``sys.argv[1:]``).
        prog_name: The command name shown in usage lines and messages.
    """
    import importlib.util

    missing = [name for name in _CLI_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        sys.stderr.write(
            f"error: the {prog_name} command needs the CLI extra ({', '.join(missing)} missing): "
            "pip install 'toolup-rag[cli]'\n"
        )
        sys.exit(1)
    from scidx.cli.run import main as run

    run(argv, prog_name=prog_name)


def scidx_alias() -> None:
    """The ``scidx`` console script: an alias of ``toolup-rag`` that names itself in usage."""
    main(prog_name="scidx")
