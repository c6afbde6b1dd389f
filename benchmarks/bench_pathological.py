"""Time and peak memory of chunking pathological Markdown (the limits in docs/RELIABILITY.md).

Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_pathological.py

Each input is chunked in a fresh process (so peak RSS is its own) with the default budget of
1500 characters; prints seconds, peak RSS in MiB (and above the interpreter's baseline, per
input MiB), chunk count and the longest chunk. The line-structure cases (issue 39) sit at the
packer's line limit (``MAX_INPUT_LINES``); ``--refused`` also runs the 13.7 MiB file of 2.8 M
short lines through ``pack-docs``, which refuses it (exit 1) before chunking.
"""

from __future__ import annotations

import json
import subprocess
import sys

CASES = {
    "16 MiB single line (the input limit)": "'x ' * (8 << 20)",
    "16 MiB single paragraph of sentences": "'Sentence here. ' * ((16 << 20) // 15)",
    "25k repeated H2 headings (100k lines)": "'## Same heading\\n\\ntext\\n\\n' * 25_000",
    "10k nested list markers on one line": "'- ' * 10_000 + 'item\\n'",
    "10k nested block quotes": "'> ' * 10_000 + 'quote\\n'",
    "2k nested indented list levels": "''.join('  ' * i + '- item\\n' for i in range(2_000))",
    "1 MiB front-matter line": "'---\\na' + ' ' * (1 << 20) + 'b: c\\n---\\nbody\\n'",
    # Line structure at the line limit (100,000 lines): memory follows lines, not bytes.
    "100k short lines `k: v`": "'k: v\\n' * 100_000",
    "100k short lines with code spans": "'k: `v`\\n' * 100_000",
    "100k table rows": "'|a|b|\\n|-|-|\\n' + '|c|d|\\n' * 99_998",
    "100k list items": "'- k: v\\n' * 100_000",
    "100k nested quote lines": "'> > > k: v\\n' * 100_000",
}

_CHILD = """
import json, resource, sys, time
from scidx.pack.chunk import chunk_markdown
chunk_markdown("# warm\\n\\ntext\\n", "w.md")
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
doc = eval(sys.argv[1])
start = time.perf_counter()
chunks = chunk_markdown(doc, "p.md")
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"bytes": len(doc.encode()), "seconds": round(seconds, 2),
                  "peakMiB": round(peak), "aboveMiB": round(peak - base),
                  "chunks": len(chunks),
                  "longest": max((len(c.text) for c in chunks), default=0)}))
"""


def main() -> None:
    only = [a for a in sys.argv[1:] if not a.startswith("--")]
    for name, expr in CASES.items():
        if only and not any(o in name for o in only):
            continue
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, expr], capture_output=True, text=True, timeout=1800
        )
        if out.returncode:
            print(f"{name}: failed: {out.stderr.strip()[-300:]}")
            continue
        row = json.loads(out.stdout)
        mib = row["bytes"] / 2**20
        print(
            f"{name}: {mib:.2f} MiB in, {row['seconds']} s, peak {row['peakMiB']} MiB "
            f"({row['aboveMiB'] / max(mib, 1e-9):.0f} MiB per input MiB above the baseline), "
            f"{row['chunks']} chunks, longest {row['longest']} chars"
        )
    if "--refused" in sys.argv:
        refused()


def refused() -> None:
    """pack-docs on the 13.7 MiB, 2.8 M-line file: its exit status, time, peak RSS, message."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "docs" / "short.md").write_bytes(b"k: v\n" * 2_870_000)
        cfg = root / "staticcorpus.json"
        cfg.write_text(json.dumps({"include": ["docs/*.md"], "output": "out.scidx"}))
        code = (
            "import resource, subprocess, sys, time; t = time.perf_counter(); "
            "p = subprocess.run([sys.executable, '-m', 'scidx', 'pack-docs', '--config', "
            "sys.argv[1]], capture_output=True, text=True); "
            "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024; "
            "print(p.returncode, round(time.perf_counter() - t, 2), round(peak), "
            "p.stderr.strip().splitlines()[-1])"
        )
        out = subprocess.run([sys.executable, "-c", code, str(cfg)], capture_output=True, text=True)
        size = (root / "docs" / "short.md").stat().st_size / 2**20
        print(f"pack-docs on {size:.1f} MiB of 2.87 M short lines: exit, s, peak MiB, message:")
        print(out.stdout.strip() or out.stderr.strip()[-500:])


if __name__ == "__main__":
    main()
