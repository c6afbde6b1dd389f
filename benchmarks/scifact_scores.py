"""Exact-ranking check: SciFact keyword top 100 of every query, ids and float32 score bits.

Usage (from the project root)::

    .venv/bin/python benchmarks/scifact_scores.py --out new.json
    .venv/bin/python benchmarks/scifact_scores.py --out new.json --compare old.json

Packs ``beir/scifact/corpus.jsonl`` as ``benchmarks/bench_scifact.py`` does (records API,
offline hashing embedder), runs ``rank(query, k=100, mode="keyword")`` for every query of the
split that has qrels, and writes each query's ranked ids with each score exactly
(``float.hex``). ``--compare`` reads the output of another checkout (for instance ``main``,
run from its own worktree) and exits 1 unless every id and every score bit is the same: a
change to how postings are stored must not move one score by one ulp. Prints a SHA-256 of the run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from scidx.evaluation.beir import read_beir  # noqa: E402
from scidx.index.index import load  # noqa: E402


def ranked(shared: Path, split: str, k: int) -> dict[str, list[list[str]]]:
    """Each judged query's top ``k``: ``[id, the score exactly, as float.hex()]`` per hit."""
    from scidx.pack.packer import pack_records

    data = read_beir(shared / "beir" / "scifact", split)
    qids = [q for q in data.qrels if q in data.queries]
    records = [{"id": i, "title": title, "text": text} for i, title, text in data.corpus]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scifact.scidx"
        pack_records(records, path, use_cache=False)
        with load(path) as idx:
            out = {}
            for q in qids:
                pairs = idx.rank(data.queries[q], k=k, mode="keyword")
                out[q] = [[i, float(score).hex()] for i, score in pairs]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--split", default="train")
    ap.add_argument("-k", type=int, default=100)
    ap.add_argument("--out", type=Path, required=True, help="where to write this run")
    ap.add_argument("--compare", type=Path, help="another run's --out to compare with")
    args = ap.parse_args(argv)
    run = ranked(args.shared, args.split, args.k)
    text = json.dumps(run, sort_keys=True)
    args.out.write_text(text, encoding="utf-8")
    hits = sum(len(v) for v in run.values())
    print(f"{len(run)} queries, {hits} hits, sha256 {hashlib.sha256(text.encode()).hexdigest()}")
    if args.compare is None:
        return 0
    other = json.loads(args.compare.read_text(encoding="utf-8"))
    differ = [q for q in sorted(set(run) | set(other)) if run.get(q) != other.get(q)]
    if differ:
        print(f"{len(differ)} queries differ from {args.compare}, first {differ[0]}")
        return 1
    print(f"identical to {args.compare}: every id and every float32 score bit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
