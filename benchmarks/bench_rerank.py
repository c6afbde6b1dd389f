"""Reranking cost on this CPU: what a cross-encoder of a given depth spends on 20 candidates.

Usage (from the project root; niced)::

    nice -n 10 .venv/bin/python benchmarks/bench_rerank.py [--shared ../shared]
        [--model ../shared/models/all-MiniLM-L6-v2-int8] [--candidates 20] [--repeat 5]

No cross-encoder weights are available offline, so the cost is measured on the nearest thing
that is: the shared all-MiniLM-L6-v2 encoder (6 layers, hidden 384, int8), which is exactly the
encoder of ``cross-encoder/ms-marco-MiniLM-L-6-v2`` (a cross-encoder adds a 384 x 1 head, a
negligible cost). A cross-encoder runs the encoder once per (query, passage) pair, so one
reranking of N candidates costs one encoder pass over N inputs of query + passage length. Rows:

* ``pairs of T tokens`` — median wall time of one model run over ``--candidates`` inputs of T
  tokens each (tokenization included, as :class:`~scidx.rerank.cross_encoder.CrossEncoderReranker`
  does it), with 1 and 2 intra-op threads.

Shallower models scale by depth at equal width (L-2 ≈ 1/3, L-4 ≈ 2/3 of L-6); docs/rerank.md
turns these rows into a model-per-budget table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from scidx.embed.local import LocalEmbedder  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    model = args.model or args.shared / "models" / "all-MiniLM-L6-v2-int8"
    words = "the cache entry stores a response for the configured time to live".split()
    print(f"| threads | pair length | {args.candidates} pairs, median ms | per pair ms |")
    print("|---|---|---|---|")
    for threads in (1, 2):
        embedder = LocalEmbedder(model, threads=threads, max_tokens=256)
        for tokens in (64, 128, 256):
            text = " ".join(words[i % len(words)] for i in range(tokens - 2))
            texts = [f"{i} {text}" for i in range(args.candidates)]
            embedder.embed(texts[:2])  # load and warm up
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                embedder.embed(texts)
                times.append(time.perf_counter() - started)
            ms = statistics.median(times) * 1000
            print(f"| {threads} | {tokens} | {ms:.0f} | {ms / args.candidates:.1f} |")


if __name__ == "__main__":
    main()
