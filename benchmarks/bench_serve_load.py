"""What a served index's private bytes cost: ``serve --load map|memory|copy`` side by side.

Usage (from the project root; niced)::

    nice -n 10 .venv/bin/python benchmarks/bench_serve_load.py [--records 40000] [--index PATH]

Without ``--index`` it packs ``--records`` synthetic chunks (about 600 characters each, hashing
512 dims, float32) into a temporary folder. Then, for each load mode, in a fresh interpreter
(so one mode's page cache or heap does not help the next one's RSS):

* ``load``: the median of 5 :func:`scidx.web.snapshot.load_snapshot` calls (``verify=True``, as
  ``serve`` loads) with the file in the page cache, closed between calls;
* ``RSS +``: the process's resident memory after one load minus before it (``VmRSS``), and
  ``private +``: the same for its anonymous (not file-backed) part (``RssAnon``), i.e. memory
  the kernel cannot evict;
* ``query p50``: the median of 200 keyword searches of 1 to 3 words.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

WORDS = (
    "index server config cache logs rotate install cluster token vector keyword search page "
    "deploy copy rsync mount volume node pod service ingress route header latency budget "
    "shard replica backup restore schema table column query filter score rank chunk"
).split()

MEASURE = """
import json, os, statistics, sys, time
sys.path.insert(0, "src")
from scidx.web.snapshot import load_snapshot

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0

path, mode = sys.argv[1], sys.argv[2]
times = []
for _ in range(5):
    t = time.perf_counter()
    snap = load_snapshot(path, mode=mode, verify=True)
    times.append(time.perf_counter() - t)
    snap.close()
del snap
rss0, anon0 = status("VmRSS"), status("RssAnon")
snap = load_snapshot(path, mode=mode, verify=True)
rss1, anon1 = status("VmRSS"), status("RssAnon")
words = %r
lat = []
for i in range(200):
    q = " ".join(words[(i * 7 + j * 3) %% len(words)] for j in range(1 + i %% 3))
    t = time.perf_counter()
    snap.index.search(q, k=10, mode="keyword")
    lat.append(time.perf_counter() - t)
print(json.dumps({"load": statistics.median(times), "rss": rss1 - rss0, "anon": anon1 - anon0,
                  "p50": statistics.median(lat)}))
"""


def build(path: Path, n: int) -> None:
    from scidx.pack.packer import pack_records

    def records():  # type: ignore[no-untyped-def]
        for i in range(n):
            text = " ".join(WORDS[(i * 13 + j * 7) % len(WORDS)] for j in range(90))
            yield {
                "id": f"p{i // 20}.md:s{i % 20}:0",
                "source": f"p{i // 20}.md",
                "anchor": f"s{i % 20}",
                "title": f"Page {i // 20}",
                "text": f"{text} item{i}",
            }

    pack_records(records(), path, dimensions=512, use_cache=False, vectors="float32")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=40_000)
    parser.add_argument("--index", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.index or Path(tmp) / "bench.scidx"
        if args.index is None:
            t = time.perf_counter()
            build(path, args.records)
            print(f"packed {args.records} records in {time.perf_counter() - t:.1f} s")
        size = os.path.getsize(path)
        print(f"index: {size / 2**20:.1f} MiB")
        print("| mode | load (median of 5) | RSS + | private + | keyword query p50 |")
        print("|---|---|---|---|---|")
        for mode in ("map", "memory", "copy"):
            out = subprocess.run(
                [sys.executable, "-c", MEASURE % (WORDS,), str(path), mode],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(out.stdout)
            print(
                f"| {mode} | {row['load'] * 1000:.0f} ms | {row['rss'] / 2**20:.0f} MiB "
                f"| {row['anon'] / 2**20:.0f} MiB | {row['p50'] * 1e6:.0f} µs |"
            )


if __name__ == "__main__":
    main()
