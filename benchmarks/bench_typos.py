"""Typo tolerance's cost: keyword search() on SciFact queries with one typo vs spelled right.

Usage (from the project root)::

    nice .venv/bin/python benchmarks/bench_typos.py [--shared ../shared] [--split train]
        [--src OTHER/src] [--rounds 7]

Packs SciFact as ``benchmarks/bench_scifact.py`` does (hashing, records API) and times, per
round and interleaved (this process's CPU time, best of ``--rounds``; ratios are the median of
the per-round ratios, as bench_scifact's), single-thread keyword ``search(q, k=10)`` over:

* ``exact``: every query of the split as written;
* ``typo``: the same queries with one typo each: in the first word of 5+ letters (letters
  only) a deterministic edit (swap of two neighbours, a deletion, an insertion or a
  substitution, by turns), so each query has a word to correct;
* ``exact, fuzzy=False``: the queries as written without typo tolerance.

Issue 38's targets: ``typo`` at most 1.3x the time of ``exact``, and ``exact`` at most 1.05x
of today's (run this script with ``--src`` pointing at a checkout without the feature: it then
times ``exact`` alone, as that checkout searches). The first look-up decodes the dictionary
(once per process); a warm-up query pays it before timing. Also prints how many typo queries
were corrected to the original word's term.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parent.parent

_LETTERS = "etaoinshrdlucmfwypvbgkjqxz"


def typo(query: str, n: int) -> str:
    """``query`` with one edit in its first word of 5+ letters (the n-th kind of edit)."""
    words = query.split(" ")
    for i, word in enumerate(words):
        if len(word) >= 5 and word.isalpha():
            at = 1 + n % (len(word) - 2)
            kind = n % 4
            if kind == 0:
                edited = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
            elif kind == 1:
                edited = word[:at] + word[at + 1 :]
            elif kind == 2:
                edited = word[:at] + _LETTERS[n % 26] + word[at:]
            else:
                other = _LETTERS[(n + 1) % 26]
                if other == word[at]:
                    other = _LETTERS[(n + 2) % 26]
                edited = word[:at] + other + word[at + 1 :]
            words[i] = edited
            return " ".join(words)
    return query


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--split", default="train")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--src", type=Path, default=ROOT / "src")
    ap.add_argument("--index", type=Path, default=None, help="reuse this packed index")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(args.src))
    from scidx.evaluation.beir import read_beir
    from scidx.index.index import load
    from scidx.pack.packer import pack_records

    data = read_beir(args.shared / "beir" / "scifact", args.split)
    queries = [data.queries[q] for q in data.qrels if q in data.queries]
    typos = [typo(q, n) for n, q in enumerate(queries)]
    with tempfile.TemporaryDirectory() as tmp:
        path = args.index or Path(tmp) / "scifact.scidx"
        if args.index is None or not path.exists():
            records = [{"id": d, "title": t, "text": x} for d, t, x in data.corpus]
            pack_records(records, path, use_cache=False)
        idx = load(path)
        featured = "fuzzy" in getattr(idx.search, "__doc__", "")
        idx.search(typos[0], k=10, mode="keyword")  # decodes the dictionary once
        calls: dict[str, Callable[[], object]] = {
            "exact": lambda: [idx.search(q, k=10, mode="keyword") for q in queries],
        }
        if featured:
            calls["typo"] = lambda: [idx.search(q, k=10, mode="keyword") for q in typos]
            calls["exact, fuzzy=False"] = lambda: [
                idx.search(q, k=10, mode="keyword", fuzzy=False) for q in queries
            ]
        times: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(args.rounds):
            for name, fn in calls.items():
                t0 = time.process_time()
                fn()
                times[name].append(time.process_time() - t0)
        print(f"SciFact {args.split}: {len(queries)} queries, {args.src}")
        for name, seconds in times.items():
            print(
                f"  {name:24} {len(queries) / min(seconds):8.0f} q/s "
                f"(first round, words not yet remembered: {len(queries) / seconds[0]:.0f} q/s)"
            )
        if featured:
            for name in ("typo", "exact, fuzzy=False"):
                ratio = statistics.median(
                    a / b for a, b in zip(times[name], times["exact"], strict=True)
                )
                print(f"  time of {name!r} / 'exact': {ratio:.3f}")
            fixed = 0
            from scidx.tokenize import tokenize

            for q, t in zip(queries, typos, strict=True):
                hits = idx.search(t, k=1, mode="keyword")
                want = set(tokenize(q))
                if hits and any(set(c.terms) & want for c in hits[0].corrections):
                    fixed += 1
            print(f"  typo queries corrected to the original word's term: {fixed}/{len(typos)}")
        idx.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
