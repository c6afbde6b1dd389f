"""Time and peak memory of chunking pathological Markdown (the limits in docs/RELIABILITY.md).

Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_pathological.py

Each input is chunked in a fresh process (so peak RSS is its own) with the default budget of
1500 characters; prints seconds, peak RSS in MiB, chunk count and the longest chunk.
"""

from __future__ import annotations

import json
import subprocess
import sys

CASES = {
    "16 MiB single line (the input limit)": "'x ' * (8 << 20)",
    "16 MiB single paragraph of sentences": "'Sentence here. ' * ((16 << 20) // 15)",
    "100k repeated H2 headings": "'## Same heading\\n\\ntext\\n\\n' * 100_000",
    "10k nested list markers on one line": "'- ' * 10_000 + 'item\\n'",
    "10k nested block quotes": "'> ' * 10_000 + 'quote\\n'",
    "2k nested indented list levels": "''.join('  ' * i + '- item\\n' for i in range(2_000))",
    "1 MiB front-matter line": "'---\\na' + ' ' * (1 << 20) + 'b: c\\n---\\nbody\\n'",
}

_CHILD = """
import json, resource, sys, time
from scidx.pack.chunk import chunk_markdown
doc = eval(sys.argv[1])
start = time.perf_counter()
chunks = chunk_markdown(doc, "p.md")
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"bytes": len(doc.encode()), "seconds": round(seconds, 2),
                  "peakMiB": round(peak), "chunks": len(chunks),
                  "longest": max((len(c.text) for c in chunks), default=0)}))
"""


def main() -> None:
    only = sys.argv[1:]
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
        print(
            f"{name}: {row['bytes'] / 2**20:.1f} MiB in, {row['seconds']} s, "
            f"peak {row['peakMiB']} MiB, {row['chunks']} chunks, longest {row['longest']} chars"
        )


if __name__ == "__main__":
    main()
