"""Packing many small files (issue 24 #9): past 65,530 files the packer used to die.

Usage (from the project root; niced)::

    nice -n 10 .venv/bin/python benchmarks/bench_many_files.py [--files 70000]

Writes ``--files`` tiny Markdown pages (a heading and a line each, 100 per folder) into a
temporary folder and runs ``python -m scidx pack-docs`` on them in a fresh process. Prints the
exit code, wall time, the packer's peak RSS (``ru_maxrss`` of the child; worker processes are
children too, the largest of them counts) and the chunk count. Before the fix each file was read
into a 16 MiB buffer that left one memory mapping alive, so past ``vm.max_map_count`` (65,530 by
default) it failed with ``ImportError: ... failed to map segment from shared object``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=70_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(args.files):
            folder = root / "docs" / f"d{i // 100}"
            if i % 100 == 0:
                folder.mkdir(parents=True)
            (folder / f"p{i}.md").write_text(f"# Page {i}\n\nword{i} and some text.\n")
        config = root / "staticcorpus.json"
        config.write_text(
            json.dumps({"include": ["docs/**/*.md"], "output": "out.scidx", "dimensions": 64})
        )
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "scidx", "pack-docs", "--config", str(config), "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        chunks = json.loads(proc.stdout)["chunks"] if proc.returncode == 0 else None
        print(
            f"files {args.files:,}: exit {proc.returncode}, {seconds:.1f} s, "
            f"peak RSS {peak:.0f} MiB"
        )
        print(f"chunks: {chunks}")
        if proc.returncode:
            print(proc.stderr[-2000:])


if __name__ == "__main__":
    main()
