"""Many input files (issue 24 #9): read by size, never all held at once, no mapping per file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scidx.pack.packer import pack_docs

FILES = 3_000


def _maps() -> int:
    with open("/proc/self/maps", "rb") as fh:
        return sum(1 for _ in fh)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux /proc")
def test_packing_many_files_leaves_no_mapping_per_file(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for d in range(FILES // 500):
        (docs / f"d{d}").mkdir(parents=True)
        for i in range(500):
            (docs / f"d{d}" / f"p{i}.md").write_text(f"# Page {d}-{i}\n\nword{i} text\n")
    config = tmp_path / "staticcorpus.json"
    config.write_text(
        json.dumps({"include": ["docs/**/*.md"], "output": "out.scidx", "dimensions": 16})
    )
    before = _maps()
    peak = [0]

    def progress(stage: str, done: int, total: int) -> None:
        if stage in ("read", "chunk") and done == total:
            peak[0] = max(peak[0], _maps())

    result = pack_docs(config, use_cache=False, workers=1, progress=progress)
    assert result.files == FILES and result.chunks == FILES
    # Each file read into a 16 MiB buffer used to keep one mapping alive (3,000 here; past
    # vm.max_map_count, 65,530, the packer died); read by size, the count stays flat.
    assert peak[0] - before < FILES // 10, (before, peak[0])


def test_a_file_changed_between_scan_and_chunking_is_an_error(tmp_path: Path) -> None:
    from scidx.errors import InputError
    from scidx.pack.inputs import InputFile
    from scidx.pack.sources import read_scanned, scan_inputs

    page = tmp_path / "p.md"
    page.write_text("# One\n")
    (scanned,) = scan_inputs([InputFile("p.md", page)], lambda *a: None)
    assert read_scanned("p.md", str(page), scanned.digest) == b"# One\n"
    page.write_text("# Two\n")
    with pytest.raises(InputError, match="p.md changed while it was being packed"):
        read_scanned("p.md", str(page), scanned.digest)


_BOOM = """
import sys
import scidx.pack.packer as packer
from scidx.cli.run import main

def boom(*args, **kwargs):
    raise ImportError("libfoo.so: failed to map segment from shared object")

packer.scan_inputs = boom  # what hitting vm.max_map_count looked like (issue 24 #9)
main(["pack-docs", "--config", sys.argv[1]])
"""


def test_an_unexpected_exception_is_a_message_and_exit_70(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "a.md").write_text("# A\n")
    config = tmp_path / "staticcorpus.json"
    config.write_text(json.dumps({"include": ["*.md"], "output": "out.scidx"}))
    env = {k: v for k, v in os.environ.items() if k != "SCIDX_TRACEBACK"}
    proc = subprocess.run(
        [sys.executable, "-c", _BOOM, str(config)], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 70, proc.stderr
    assert proc.stderr.startswith("error: internal error (ImportError: libfoo.so: failed to map")
    assert "Traceback" not in proc.stderr and "SCIDX_TRACEBACK=1" in proc.stderr
    shown = subprocess.run(
        [sys.executable, "-c", _BOOM, str(config)],
        capture_output=True,
        text=True,
        env={**env, "SCIDX_TRACEBACK": "1"},
    )
    assert "Traceback" in shown.stderr and shown.returncode == 1
