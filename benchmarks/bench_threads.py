"""Search throughput under threads: queries/s for 1, 2, 4 and 16 threads sharing one Index.

A server calls ``Index.search`` from a thread pool. The vector leg's matrix-vector product used to
go through BLAS unguarded, whose own thread pool oversubscribed the cores as soon as several
searches ran at once (issue 11: 58 queries/s with 16 threads against 3,388 with one). The
shipped kernel runs one BLAS product at a time in the process (a lock). This benchmark measures
it next to the unguarded BLAS product (``blas``) and numpy's single-threaded einsum loop
(``einsum``, shipped for a while) in the same run, so the figures are ratios.

Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_threads.py --chunks 20000 --queries 2000

Prints one line per (kernel, threads): queries/s and the ratio to one thread.
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from typing import Any

import numpy as np

from scidx.index import search as search_module
from scidx.index.index import load_bytes
from scidx.pack.packer import pack_records

WORDS = (
    "pod node service deploy config volume secret ingress network policy label selector "
    "replica scale rollout image container port probe health metric log trace cluster "
    "namespace role binding token account quota limit request schedule taint affinity"
).split()


def corpus(n: int, seed: int = 3) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    return [
        {
            "id": f"doc{i:06d}",
            "source": f"s{i // 20:05d}.md",
            "title": " ".join(rnd.choices(WORDS, k=3)),
            "text": " ".join(rnd.choices(WORDS, k=rnd.randint(40, 160))),
        }
        for i in range(n)
    ]


def run(idx: Any, queries: list[tuple[str, str]], threads: int) -> float:
    """Queries per second for ``queries`` split over ``threads`` threads."""
    parts = [queries[i::threads] for i in range(threads)]

    def work(part: list[tuple[str, str]]) -> None:
        for text, mode in part:
            idx.search(text, k=10, mode=mode)

    pool = [threading.Thread(target=work, args=(p,)) for p in parts]
    started = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return len(queries) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--dimensions", type=int, default=512)
    parser.add_argument("--threads", default="1,2,4,16")
    parser.add_argument(
        "--kernel", default="shipped,einsum,blas", help="shipped (locked BLAS), einsum, blas"
    )
    args = parser.parse_args()
    data = pack_records(corpus(args.chunks), None, dimensions=args.dimensions, use_cache=False)
    assert data.data is not None
    idx = load_bytes(data.data)
    rnd = random.Random(7)
    modes = ["keyword", "vector", "hybrid"]
    queries = [
        (" ".join(rnd.choices(WORDS, k=rnd.randint(1, 4))), modes[i % 3])
        for i in range(args.queries)
    ]
    shipped = search_module.Searcher.vector_scores

    def blas(self: Any, q: Any) -> Any:
        return np.asarray(self.corpus.vectors @ q, dtype=np.float32)

    def einsum(self: Any, q: Any) -> Any:
        return np.einsum("ij,j->i", self.corpus.vectors, q, dtype=np.float32)

    kernels = {"shipped": shipped, "einsum": einsum, "blas": blas}
    print(f"{args.chunks} chunks x {args.dimensions} dims, {args.queries} mixed queries")
    for kernel in args.kernel.split(","):
        search_module.Searcher.vector_scores = kernels[kernel]  # type: ignore[method-assign]
        run(idx, queries[:50], 1)  # warm-up (query embedder, page cache)
        base = None
        for threads in (int(t) for t in args.threads.split(",")):
            qps = run(idx, queries, threads)
            base = base or qps
            print(f"{kernel:<7} threads={threads:<3} {qps:8.0f} queries/s  ({qps / base:.2f}x)")
    search_module.Searcher.vector_scores = shipped  # type: ignore[method-assign]


if __name__ == "__main__":
    main()
