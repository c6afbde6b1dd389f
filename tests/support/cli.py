"""The one in-process runner for the ``toolup-rag`` CLI, with one exit-code mapping."""

from __future__ import annotations

import pytest

from scidx.cli import main

__all__ = ["exit_code", "run"]


def exit_code(code: object) -> int:
    """The process exit status ``SystemExit(code)`` gives: None is 0, an int itself, else 1."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``toolup-rag argv`` in this process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_code(info.value.code), out, err
