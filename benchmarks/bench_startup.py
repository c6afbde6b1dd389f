"""Start-up cost: ``import scidx`` and "import + load + first keyword query" as whole processes.

Usage (from the project root)::

    .venv/bin/python benchmarks/bench_startup.py [--runs 40] [--index PATH]

Times fresh interpreter processes, each started with ``python -c ...`` (the interpreter's own
start-up included, as a docs site or CLI pays it), interleaved round by round so load changes on
the machine hit every variant alike, and prints the medians and their ratios to a process that
only imports numpy:

* ``python -c pass`` (the interpreter alone, for reference);
* ``import numpy`` (the baseline: every numpy program pays it);
* ``import scidx`` (target: <= 1.2x ``import numpy``; the package imports names lazily);
* ``import scidx; scidx.load(...).search(q, mode="keyword")`` (target: <= 1.3x).

Without ``--index`` the repository's own docs are packed into a temporary index first (offline
hashing provider). Bytecode caches are allowed for the children (``PYTHONDONTWRITEBYTECODE`` is
dropped), as an installed package has them. ``python -X importtime -c "import scidx; ..."``
shows where the time goes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

QUERY = "how do I configure the embedding cache"


def variants(index: Path) -> dict[str, str]:
    """The code each timed process runs."""
    return {
        "python -c pass": "pass",
        "import numpy": "import numpy",
        "import scidx": "import scidx",
        "import + load + keyword query": (
            "import scidx\n"
            f"idx = scidx.load({str(index)!r})\n"
            f"idx.search({QUERY!r}, k=10, mode='keyword')"
        ),
    }


def pack_docs_index(out: Path) -> None:
    """Pack README.md and docs/*.md into ``out`` (hashing provider, no cache)."""
    from scidx.pack.packer import pack_records

    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    records = [
        {"id": f.name, "source": f.name, "title": f.stem, "text": f.read_text(encoding="utf-8")}
        for f in files
    ]
    pack_records(records, out, use_cache=False)


# Children may write bytecode caches, as an installed package has them (pip compiles them at
# install time; numpy's come with its wheel): the warm-up run writes scidx's __pycache__.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_once(code: str) -> float:
    """Wall time of one fresh ``python -c code`` process, in seconds."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=CHILD_ENV)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40, help="processes per variant")
    ap.add_argument("--index", type=Path, help="an existing .scidx (default: pack the docs)")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        index = args.index
        if index is None:
            index = Path(tmp) / "docs.scidx"
            pack_docs_index(index)
        codes = variants(index)
        for code in codes.values():  # warm the page cache and .pyc files
            run_once(code)
        samples: dict[str, list[float]] = {name: [] for name in codes}
        for _ in range(args.runs):
            for name, code in codes.items():
                samples[name].append(run_once(code))

    medians = {name: statistics.median(s) * 1000 for name, s in samples.items()}
    base = medians["import numpy"]
    print(f"fresh processes, median of {args.runs} each (interleaved), {sys.executable}:")
    for name, ms in medians.items():
        print(f"  {name:<32} {ms:8.1f} ms   {ms / base:5.2f}x import numpy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
