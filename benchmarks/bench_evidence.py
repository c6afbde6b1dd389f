"""What "no results without evidence" costs on SciFact, and where the semantic floor sits.

Usage (from the project root)::

    nice .venv/bin/python benchmarks/bench_evidence.py [--shared ../shared] [--split train]
        [--model ../shared/models/all-MiniLM-L6-v2-int8] [--floors 0.1,0.15,0.2,0.25,0.3]

Packs SciFact's corpus through the records API twice (hashing; ``local`` with ``--model``),
then ranks every query of the split in hybrid and vector mode under each evidence rule and
prints nDCG@10 next to the old behaviour (every chunk with a positive fused score is a hit):

* hashing: ``vectorFloor`` nil, the shipped rule: a chunk no query term matches is never a hit;
* local: each candidate ``vectorFloor`` (a chunk without a query term needs at least that
  cosine); the chosen floor is the highest whose hybrid nDCG@10 loses at most 0.002.

For each setting it also prints how many hits nonsense queries (``xyzzyplugh``, random
letters) get. The rules are swapped on the loaded index (``_corpus.fusion``) so one pack per
provider serves every row; the shipped rule is what ``meta.fusion`` records at pack time.
"""

from __future__ import annotations

import argparse
import random
import string
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from scidx.evaluation.beir import _make_embedder, _subset, read_beir  # noqa: E402
from scidx.evaluation.metrics import ndcg_at  # noqa: E402
from scidx.index.index import Index, load_bytes  # noqa: E402
from scidx.pack.packer import pack_records  # noqa: E402

_NONSENSE_SEED = 22


def nonsense(count: int) -> list[str]:
    """``xyzzyplugh`` and random lower-case strings of 6-14 letters (seeded)."""
    rng = random.Random(_NONSENSE_SEED)
    words = ["xyzzyplugh", "qwxzvb", "zzkqpl fmxw"]
    words += [
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(6, 14)))
        for _ in range(count - len(words))
    ]
    return words


def _pack(data: object, provider: str, model: str | None) -> Index:
    embedder = _make_embedder(provider, model, None)
    records = [{"id": d, "title": t, "text": x} for d, t, x in data.corpus]  # type: ignore[attr-defined]
    packed = pack_records(records, None, embedder=embedder, use_cache=provider != "hashing")
    assert packed.data is not None
    return load_bytes(packed.data, source=f"scifact ({provider})")


def _score(index: Index, queries: dict[str, str], qrels: dict, mode: str) -> float:
    total = 0.0
    for qid, text in queries.items():
        ranked = [cid for cid, _ in index.rank(text, k=10, mode=mode)]
        total += ndcg_at(ranked, qrels[qid], 10)
    return total / len(queries)


def _rows(index: Index, queries: dict[str, str], qrels: dict, floors: list[float | None]) -> None:
    fusion = index._corpus.fusion  # type: ignore[union-attr]
    junk = nonsense(30)
    for floor in floors:
        fusion["vectorFloor"] = floor
        label = "old (-1: any cosine)" if floor == -1.0 else f"vectorFloor={floor}"
        cells = []
        for mode in ("hybrid", "vector"):
            cells.append(f"{mode} nDCG@10 {_score(index, queries, qrels, mode):.4f}")
        hits = sum(len(index.rank(q, k=10, mode="hybrid")) for q in junk)
        print(f"  {label:24} {'  '.join(cells)}  nonsense hybrid hits/30 queries: {hits}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--split", default="train")
    parser.add_argument("--model", default=None)
    parser.add_argument("--floors", default="0.15,0.2,0.25,0.3,0.35")
    args = parser.parse_args()
    data = read_beir(Path(args.shared) / "beir" / "scifact", args.split)
    queries, qrels = _subset(data, None)
    print(f"SciFact {args.split}: {len(queries)} queries, {len(data.corpus)} documents")
    index = _pack(data, "hashing", None)
    kw = _score(index, queries, qrels, "keyword")
    print(f"hashing (keyword nDCG@10 {kw:.4f})")
    _rows(index, queries, qrels, [-1.0, None])
    index.close()
    model = args.model or str(Path(args.shared) / "models" / "all-MiniLM-L6-v2-int8")
    if Path(model).exists():
        index = _pack(data, "local", model)
        print(f"local {Path(model).name}")
        floors = [-1.0, *(float(f) for f in args.floors.split(","))]
        _rows(index, queries, qrels, floors)
        index.close()


if __name__ == "__main__":
    main()
