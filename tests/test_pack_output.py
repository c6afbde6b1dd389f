"""Where ``output`` may write (issue 24 #10): never over the config, an input or a foreign file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scidx.errors import ConfigError, OutputError
from scidx.index.format import MAGIC
from scidx.pack.packer import pack_docs


def _project(tmp_path: Path, output: str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nalpha\n")
    (tmp_path / "README.md").write_text("# Project\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    config = tmp_path / "staticcorpus.json"
    config.write_text(json.dumps({"include": ["docs/**/*.md"], "output": output}))
    return config


@pytest.mark.parametrize("output", ["staticcorpus.json", "./staticcorpus.json"])
def test_output_never_replaces_the_config(tmp_path: Path, output: str) -> None:
    config = _project(tmp_path, output)
    before = config.read_bytes()
    for force in (False, True):
        with pytest.raises(OutputError, match="is the config file itself"):
            pack_docs(config, use_cache=False, force=force)
    assert config.read_bytes() == before


@pytest.mark.parametrize("output", ["README.md", ".git/HEAD"])
def test_output_never_replaces_a_foreign_file_without_force(tmp_path: Path, output: str) -> None:
    config = _project(tmp_path, output)
    target = tmp_path / output
    before = target.read_bytes()
    with pytest.raises(OutputError, match="exists and is not a scidx index.*--force"):
        pack_docs(config, use_cache=False)
    assert target.read_bytes() == before
    pack_docs(config, use_cache=False, force=True)  # said plainly: replace it
    assert target.read_bytes().startswith(MAGIC)


def test_output_that_is_a_matched_input_is_refused_even_with_force(tmp_path: Path) -> None:
    config = _project(tmp_path, "docs/a.md")
    for force in (False, True):
        with pytest.raises(ConfigError, match="one of the input files matched"):
            pack_docs(config, use_cache=False, force=force)
    assert (tmp_path / "docs" / "a.md").read_text() == "# A\n\nalpha\n"


def test_indexes_and_empty_files_are_replaced_and_outside_the_folder_is_allowed(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = _project(project, "../site/docs.scidx")  # documented: a sibling site folder
    pack_docs(config, use_cache=False)
    out = tmp_path / "site" / "docs.scidx"
    assert out.read_bytes().startswith(MAGIC)
    (project / "docs" / "a.md").write_text("# A\n\nbeta\n")
    pack_docs(config, use_cache=False)  # an existing index is replaced
    empty = project / "empty.scidx"
    empty.write_bytes(b"")
    config.write_text(json.dumps({"include": ["docs/**/*.md"], "output": "empty.scidx"}))
    pack_docs(config, use_cache=False)
    assert empty.read_bytes().startswith(MAGIC)


def test_cli_exit_code_and_message(tmp_path: Path) -> None:
    config = _project(tmp_path, "README.md")
    proc = subprocess.run(
        [sys.executable, "-m", "scidx", "pack-docs", "--config", str(config)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("error: output path ") and "--force" in proc.stderr
    assert (tmp_path / "README.md").read_text() == "# Project\n"
