"""Runtime costs at scale: load time, vector search overhead, peak memory (scidx vs bm25s).

Usage (from the project root)::

    .venv/bin/python benchmarks/bench_runtime.py [--shared ../shared] [--repeat 20]

Builds a ~100k-chunk index by repeating the SciFact corpus ``--repeat`` times (each copy gets its
own ids, so the index really holds 100k chunks) and a ~10k one (×2), with the default offline
provider (hashing, 512 dimensions), through ``scidx.pack.packer.pack_records``. Then reports:

* load time (``scidx.load`` + ``close``), median and p95 of many, for 10k vs 100k chunks;
* vector search latency (``Index.search_vector``, k=10) next to a bare ``vectors @ q`` over the
  same memory-mapped array, medians over the same query vectors, in the same process;
* hybrid latency next to keyword latency plus a bare ``vectors @ q`` (p50s, interleaved): the
  target is hybrid <= 1.3x their sum;
* peak RSS (``VmHWM`` from ``/proc/self/status``; ``ru_maxrss`` where that is missing — on Linux
  ``ru_maxrss`` keeps the forking parent's peak across ``exec``) of a fresh subprocess that does
  "load + 100 queries", for scidx keyword / hybrid and for bm25s (the same corpus, saved with
  ``BM25.save`` and loaded with and without ``mmap``), next to the baseline of the interpreter
  with numpy imported. A keyword query reads only ``bm25.term_hash`` (binary search), the
  ``bm25.term_df``/``term_width``/``run_ptr`` entries and ``bm25.runs`` bytes of its terms, and per
  hit one ``chunk.source`` entry and the string-table rows it shows; it never touches
  ``vectors`` (the bulk of the file), so its RSS stays near the baseline.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from scidx.index.index import load  # noqa: E402
from scidx.index.search import top_k_dense  # noqa: E402


def read_corpus(shared: Path) -> tuple[list[dict], list[str]]:
    folder = shared / "beir" / "scifact"
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    queries = [json.loads(line)["text"] for line in (folder / "queries.jsonl").open()]
    return corpus, queries


def repeated_records(corpus: list[dict], times: int) -> list[dict]:
    return [
        {
            "id": f"{copy}-{d['_id']}",
            "source": f"copy{copy:02d}/{d['_id']}",
            "title": d.get("title", ""),
            "text": d.get("text", ""),
        }
        for copy in range(times)
        for d in corpus
    ]


def pack(records: list[dict], path: Path) -> float:
    from scidx.pack.packer import pack_records

    t0 = time.perf_counter()
    pack_records(records, path, use_cache=False)
    return time.perf_counter() - t0


def time_loads(path: Path, count: int) -> tuple[float, float]:
    for _ in range(5):  # page cache and imports warm
        load(path).close()
    samples = []
    for _ in range(count):
        t0 = time.perf_counter()
        idx = load(path)
        samples.append(time.perf_counter() - t0)
        idx.close()
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def rss_of(script: str, *args: str) -> float:
    # ru_maxrss survives execve on Linux, so a child forked from this (large) process would
    # report the parent's size; VmHWM belongs to the new address space and starts at exec.
    code = textwrap.dedent(script) + textwrap.dedent(
        """
        import resource
        hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
        kib = int(hwm[0].split()[1]) if hwm else resource.getrusage(
            resource.RUSAGE_SELF).ru_maxrss
        print(kib)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    return int(out[-1]) / 1024  # KiB -> MiB (Linux)


SCIDX_QUERIES = """
import json, sys
sys.path.insert(0, "src")
import scidx
idx = scidx.load(sys.argv[1])
queries = json.loads(open(sys.argv[2]).read())
for q in queries:
    idx.search(q, k=10, mode=sys.argv[3])
"""

BM25S_QUERIES = """
import json, sys
import bm25s, Stemmer
stemmer = Stemmer.Stemmer("english")
retriever = bm25s.BM25.load(sys.argv[1], mmap=sys.argv[3] == "mmap")
queries = json.loads(open(sys.argv[2]).read())
for q in queries:
    toks = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, return_ids=False,
                          show_progress=False)
    toks = [t if t else ["\\x00"] for t in toks]
    retriever.retrieve(toks, k=10, show_progress=False)
"""

BASELINE = """
import sys
sys.path.insert(0, "src")
import numpy, scidx
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--loads", type=int, default=300)
    ap.add_argument("--no-bm25s", action="store_true")
    args = ap.parse_args()

    corpus, queries = read_corpus(args.shared)
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        small_records = repeated_records(corpus, 2)
        big_records = repeated_records(corpus, args.repeat)
        small, big = tmpdir / "small.scidx", tmpdir / "big.scidx"
        t_small = pack(small_records, small)
        t_big = pack(big_records, big)
        for recs, secs, path in ((small_records, t_small, small), (big_records, t_big, big)):
            mb = path.stat().st_size / 1e6
            print(f"packed {len(recs)} chunks in {secs:.1f} s ({mb:.0f} MB)")

        print(f"\nload time (scidx.load only, {args.loads} runs), median / p95:")
        for name, path in (("10k", small), ("100k", big)):
            med, p95 = time_loads(path, args.loads)
            print(f"  {name:>5} chunks: {med * 1000:.3f} ms / {p95 * 1000:.3f} ms")

        idx = load(big)
        vectors = idx.vectors
        n, d = vectors.shape
        rnd = np.random.default_rng(0)
        qvecs = [
            (v / np.linalg.norm(v)).astype(np.float32)
            for v in rnd.standard_normal((60, d)).astype(np.float32)
        ]
        for q in qvecs[:5]:  # warm: the whole matrix is in the page cache for both
            vectors @ q
            idx.search_vector(q, k=10)
        # Interleaved, so that memory-bandwidth noise from other processes hits all three alike.
        timings: dict[str, list[float]] = {"bare": [], "ours": [], "ranking": []}
        calls = {
            "bare": lambda q: vectors @ q,
            "ours": lambda q: idx.search_vector(q, k=10),
            "ranking": lambda q: top_k_dense(vectors @ q, 10),
        }
        for _round in range(3):
            for q in qvecs:
                for name, fn in calls.items():
                    t0 = time.perf_counter()
                    fn(q)
                    timings[name].append(time.perf_counter() - t0)
        bare, ours, ranking = (statistics.median(timings[k]) * 1000 for k in calls)
        print(f"\nvector search at {n} x {d} (median of {len(timings['bare'])}, interleaved):")
        print(f"  bare numpy vectors @ q:            {bare:.2f} ms")
        print(f"  Index.search_vector(k=10) + hits:  {ours:.2f} ms  ({ours / bare:.2f}x)")
        print(f"  ranking only (matvec + top-k):     {ranking:.2f} ms  ({ranking / bare:.2f}x)")
        sample = queries[:100]
        # Hybrid costs one keyword search plus one matrix-vector product, and should cost little
        # more: p50 <= 1.3x (keyword p50 + bare matvec p50), all three timed side by side.
        side: dict[str, list[float]] = {"keyword": [], "matvec": [], "hybrid": []}
        steps = {
            "keyword": lambda i: idx.search(sample[i], k=10, mode="keyword"),
            "matvec": lambda i: vectors @ qvecs[i % len(qvecs)],
            "hybrid": lambda i: idx.search(sample[i], k=10, mode="hybrid"),
        }
        for _round in range(3):
            for i in range(len(sample)):
                for name, fn in steps.items():
                    t0 = time.perf_counter()
                    fn(i)
                    side[name].append(time.perf_counter() - t0)
        kw, mv, hy = (statistics.median(side[name]) * 1000 for name in steps)
        print(f"\nhybrid at {n} chunks (p50 of {len(side['hybrid'])}, interleaved):")
        print(f"  keyword search(k=10):              {kw:.2f} ms")
        print(f"  bare numpy vectors @ q:            {mv:.2f} ms")
        print(f"  hybrid search(k=10):               {hy:.2f} ms")
        print(f"  hybrid / (keyword + matvec):       {hy / (kw + mv):.2f}x (target <= 1.3x)")
        idx.close()

        qfile = tmpdir / "queries.json"
        qfile.write_text(json.dumps(sample))
        print("\npeak RSS of a fresh process doing load + 100 queries (MiB):")
        print(f"  python + numpy + scidx imported (baseline): {rss_of(BASELINE):.0f}")
        for mode in ("keyword", "hybrid"):
            rss = rss_of(SCIDX_QUERIES, str(big), str(qfile), mode)
            print(f"  scidx {mode:<8}: {rss:.0f}")
        if not args.no_bm25s:
            import bm25s
            import Stemmer

            stemmer = Stemmer.Stemmer("english")
            texts = [f"{r['title']} {r['text']}" for r in big_records]
            tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
            retriever = bm25s.BM25(k1=1.5, b=0.75)
            retriever.index(tokens, show_progress=False)
            bmdir = tmpdir / "bm25s"
            retriever.save(str(bmdir))
            del retriever, tokens, texts
            for how in ("load", "mmap"):
                rss = rss_of(BM25S_QUERIES, str(bmdir), str(qfile), how)
                print(f"  bm25s ({how}) : {rss:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
