"""``.pre-commit-hooks.yaml``: the hooks' shape, and their entry commands run against a project.

pre-commit itself is not needed: it would run ``entry`` + ``args`` in the project folder with no
file names (``pass_filenames: false``), which is what these tests do.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"
STALE_EXIT = 6


def _scalar(text: str) -> Any:
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        return [_scalar(item) for item in text[1:-1].split(",") if item.strip()]
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return {"true": True, "false": False}.get(text, text)


def parse_hooks(text: str) -> list[dict[str, Any]]:
    """Parse the list-of-flat-mappings YAML that ``.pre-commit-hooks.yaml`` is.

    PyYAML is not a test dependency; this reads exactly the subset the file uses (block list of
    ``key: value`` mappings, flow lists, quoted strings, booleans) and fails on anything else.
    """
    hooks: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = re.fullmatch(r"(- |  )([A-Za-z_]+): (.+)", line)
        assert match, f"line {number} is outside the supported YAML subset: {line!r}"
        lead, key, value = match.groups()
        if lead == "- ":
            hooks.append({})
        assert hooks, f"line {number}: a key before the first '- '"
        assert key not in hooks[-1], f"line {number}: duplicate key {key}"
        hooks[-1][key] = _scalar(value)
    return hooks


@pytest.fixture(scope="module")
def hooks() -> dict[str, dict[str, Any]]:
    parsed = parse_hooks(HOOKS_FILE.read_text(encoding="utf-8"))
    try:
        import yaml  # optional: cross-check the small parser when PyYAML happens to be present
    except ImportError:
        pass
    else:
        assert yaml.safe_load(HOOKS_FILE.read_text(encoding="utf-8")) == parsed
    return {hook["id"]: hook for hook in parsed}


def test_hooks_are_declared_as_pre_commit_expects(hooks: dict[str, dict[str, Any]]) -> None:
    assert set(hooks) == {"scidx-pack-docs", "scidx-check-docs"}
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for hook in hooks.values():
        assert {"id", "name", "entry", "language"} <= set(hook)
        assert hook["language"] == "python"  # pre-commit pip-installs this repository
        assert hook["pass_filenames"] is False  # the config names the inputs, not git
        assert shlex.split(hook["entry"])[0] in scripts
        assert hook["args"] == ["--config", "staticcorpus.json"]
    # --check lives in the entry, so a user overriding `args` (their config path) keeps it.
    assert "--check" in shlex.split(hooks["scidx-check-docs"]["entry"])
    assert "--check" not in shlex.split(hooks["scidx-pack-docs"]["entry"])


@pytest.mark.parametrize(
    ("path", "runs"),
    [
        ("docs/index.md", True),
        ("README.md", True),
        ("docs/guide/page.markdown", True),
        ("site/page.mdx", True),
        ("staticcorpus.json", True),
        ("docs/staticcorpus.json", True),
        ("src/pkg/module.py", False),
        ("docs.scidx", False),
        ("docs.scidx.inputs", False),
        ("package.json", False),
    ],
)
def test_hooks_run_when_docs_or_config_change(
    hooks: dict[str, dict[str, Any]], path: str, runs: bool
) -> None:
    for hook in hooks.values():
        # pre-commit applies `files` with re.search to each staged path.
        assert bool(re.search(hook["files"], path)) is runs


def _command(hook: dict[str, Any], *extra: str) -> list[str]:
    argv = shlex.split(hook["entry"]) + list(hook["args"]) + list(extra)
    # The console script as pre-commit's hook venv would have it on PATH.
    script = Path(sys.executable).parent / argv[0]
    assert script.exists(), f"{script} missing; reinstall scidx"
    return [str(script), *argv[1:]]


def _project(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "docs/index.md").write_text("# Guide\n\n## Install\n\nRun the installer.\n")
    (root / "docs/usage.md").write_text("# Usage\n\n## Search\n\nType a query.\n")
    (root / "staticcorpus.json").write_text(
        json.dumps({"include": ["docs/**/*.md"], "output": "docs.scidx"})
    )
    return root


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=120, env=os.environ.copy()
    )


def test_pack_hook_then_check_hook(hooks: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    project = _project(tmp_path / "repo")
    pack = _command(hooks["scidx-pack-docs"])
    check = _command(hooks["scidx-check-docs"])

    # Before the first pack there is no index: the gate fails.
    first_check = _run(check, project)
    assert first_check.returncode == STALE_EXIT, first_check.stdout + first_check.stderr
    assert not (project / "docs.scidx").exists()

    first = _run(pack, project)
    assert first.returncode == 0, first.stderr
    index = (project / "docs.scidx").read_bytes()

    again = _run(pack, project)
    assert again.returncode == 0, again.stderr
    assert "is up to date" in again.stdout
    ok = _run(check, project)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    # A doc edit: the check hook fails (exit 6), names the changed chunk and writes nothing.
    (project / "docs/usage.md").write_text("# Usage\n\n## Search\n\nType a better query.\n")
    stale = _run(check, project)
    assert stale.returncode == STALE_EXIT, stale.stdout + stale.stderr
    assert "is stale" in stale.stdout
    assert "~ docs/usage.md:search:0" in stale.stdout
    assert (project / "docs.scidx").read_bytes() == index

    # The pack hook repairs it (pre-commit then asks for the changed index to be staged).
    assert _run(pack, project).returncode == 0
    assert (project / "docs.scidx").read_bytes() != index
    assert _run(check, project).returncode == 0


def test_hook_reports_a_bad_config_with_exit_1(
    hooks: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    project = _project(tmp_path / "repo")
    (project / "staticcorpus.json").write_text('{"include": ["nothing/*.md"], "output": "x.scidx"}')
    for hook_id in ("scidx-pack-docs", "scidx-check-docs"):
        proc = _run(_command(hooks[hook_id]), project)
        assert proc.returncode == 1
        assert 'staticcorpus.json: "include" glob "nothing/*.md" matches no file' in (proc.stderr)
