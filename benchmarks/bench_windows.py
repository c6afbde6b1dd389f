"""How to combine a long chunk's windows: MaxP against other ways, on SciFact and the docs fixtures.

Usage (from the project root; niced, SciFact's vectors come from the embedding cache)::

    SCIDX_MODEL_DIR=../shared/models/all-MiniLM-L6-v2-int8 nice -n 10 .venv/bin/python \\
        benchmarks/bench_windows.py [--shared ../shared] [--cache-dir DIR]
        [--fixture docs/eval/kelpie.json=fixtures.local.scidx ...] [--only main,max,margin:0.01]

SciFact train (title + text, the local provider through ``pack_records``) is split by sorted
query id: every third query is held out, the other two thirds are where a parameter may be
tuned. Each combination rescores every chunk from the index's own main and window rows
(``score(main, windows)``) and ranks with ``scidx.index.search``'s formulas: vector mode keeps
the chunks with evidence (a query term, or a cosine at least the header's ``vectorFloor``) by
cosine; hybrid is the header's weighted sum with the same evidence rule. Docs fixtures are run
through ``scidx.evaluation.run_eval`` (section grouping included) with the combination in place
of ``Windows.best``. nDCG@10 throughout. The combinations:

* ``main``: the first window only (the model's truncated input, as before windows);
* ``max``: MaxP, the best of the main row and the windows;
* ``margin:m``: MaxP where a later window counts ``m`` less (``meta.windows.margin``);
* ``mixmean:l``: ``l * max + (1 - l) * mean`` of all windows;
* ``mixfirst:l``: ``l * max + (1 - l) * main``;
* ``nwin:g``: ``max - g * ln(windows)`` (a per-window-count discount);
* ``gate:t``: the main row where it is at least ``t``, else MaxP (windows only when weak);
* ``lse:t``: a soft maximum, ``t * ln(mean(exp(cos / t)))``;
* ``top2:l``: ``l * best + (1 - l) * second best``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from scidx.embed.local import LocalEmbedder  # noqa: E402
from scidx.evaluation.beir import read_beir  # noqa: E402
from scidx.evaluation.metrics import ndcg_at, run_eval  # noqa: E402
from scidx.index import windows as window_module  # noqa: E402
from scidx.index.index import Index, load  # noqa: E402

Combine = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
DEFAULT = (
    "main,max,margin:0.005,margin:0.01,margin:0.015,margin:0.02,margin:0.03,margin:0.05,"
    "mixmean:0.5,mixmean:0.7,mixmean:0.8,mixmean:0.9,mixfirst:0.3,mixfirst:0.5,mixfirst:0.7,"
    "nwin:0.01,nwin:0.02,nwin:0.04,gate:0.4,gate:0.5,gate:0.6,lse:0.02,lse:0.05,top2:0.7"
)


def combination(spec: str) -> Combine:
    """``f(main, cos, starts, ends)``: one score per windowed chunk.

    ``main`` holds the windowed chunks' main-row cosines, ``cos`` every window row's, and
    ``starts``/``ends`` each chunk's run of window rows.
    """
    name, _, value = spec.partition(":")
    p = float(value) if value else 0.0

    def run(main: np.ndarray, cos: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        wmax = np.maximum.reduceat(cos, starts).astype(np.float64)
        count = (ends - starts).astype(np.float64) + 1.0  # windows including the main row
        best = np.maximum(main, wmax)
        if name == "main":
            return main
        if name == "max":
            return best
        if name == "margin":
            return np.maximum(main, wmax - p)
        if name == "mixmean":
            return p * best + (1 - p) * (main + np.add.reduceat(cos, starts)) / count
        if name == "mixfirst":
            return p * best + (1 - p) * main
        if name == "nwin":
            return np.maximum(main, best - p * np.log(count))
        if name == "gate":
            return np.where(main >= p, main, best)
        if name == "lse":
            total = np.add.reduceat(np.exp(cos / p), starts) + np.exp(main / p)
            return p * np.log(total / count)
        if name == "top2":
            out = np.empty_like(main)
            for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
                v = np.sort(np.r_[main[i], cos[a:b]])[::-1]
                out[i] = p * v[0] + (1 - p) * v[1]
            return out
        raise SystemExit(f"unknown combination {spec!r}")

    return run


def rescore(idx: Index, q: np.ndarray, combine: Combine) -> np.ndarray:
    """Every chunk's vector score for ``q`` under ``combine`` (float32, as the reader keeps it)."""
    corpus = idx._corpus
    assert corpus is not None and corpus.store is not None
    scores = np.asarray(corpus.store @ q, dtype=np.float64)
    windows = corpus.windows
    if windows is not None and len(windows):
        starts, rows = windows.segments()
        ends = np.r_[starts[1:], len(windows)]
        cos = np.asarray(windows.store @ q, dtype=np.float64)
        scores[rows] = combine(scores[rows], cos, starts, ends)
    return scores.astype(np.float32)


def _rankings(
    idx: Index, qvec: np.ndarray, keyword: tuple[np.ndarray, np.ndarray], combine: Combine
) -> tuple[np.ndarray, np.ndarray]:
    """Top-10 rows in vector and hybrid mode (the search formulas, evidence rule included)."""
    fusion = idx.meta["fusion"]
    floor, alpha = float(fusion.get("vectorFloor") or 2.0), float(fusion["alpha"])
    cos = rescore(idx, qvec, combine).astype(np.float64)
    rows, kw = keyword
    keep = cos >= floor
    keep[rows] = True
    cand = np.flatnonzero(keep)
    vector = cand[np.lexsort((cand, -cos[cand]))][:10]
    c = np.maximum(cos, 0.0)
    fused = c * (alpha / c.max()) if c.max() > 0 else np.zeros_like(c)
    if rows.size and kw.max() > 0:
        fused[rows] += (1 - alpha) * kw / kw.max()
    fused[~keep] = 0.0
    fused32 = fused.astype(np.float32)
    hybrid = np.lexsort((np.arange(len(fused32)), -fused32))[:10]
    return vector, hybrid[fused32[hybrid] > 0]


def scifact(args: argparse.Namespace, specs: Sequence[str]) -> None:
    from scidx.pack.packer import pack_records

    data = read_beir(args.shared / "beir" / "scifact", "train")
    qids = sorted(q for q in data.qrels if q in data.queries and any(data.qrels[q].values()))
    held = np.array([i % 3 == 2 for i in range(len(qids))])
    embedder = LocalEmbedder(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scifact.scidx"
        records = [{"id": d, "title": t, "text": x} for d, t, x in data.corpus]
        packed = pack_records(records, out, embedder=embedder, cache_dir=args.cache_dir)
        print(
            f"SciFact train: {len(records)} documents ({packed.window_chunks} windowed, "
            f"{packed.windows} window rows), {len(qids)} judged queries: "
            f"{int((~held).sum())} tune, {int(held.sum())} held out (every third by id)"
        )
        qvecs = embedder.embed([data.queries[q] for q in qids])
        with load(out, model_dir=args.model) as idx:
            ids = [idx.chunk(i).id for i in range(len(idx))]
            row_of = {d: i for i, d in enumerate(ids)}
            keyword = []
            for q in qids:
                ranked = idx.rank(data.queries[q], k=len(idx), mode="keyword")
                keyword.append(
                    (
                        np.array([row_of[d] for d, _ in ranked], dtype=np.int64),
                        np.array([s for _, s in ranked], dtype=np.float64),
                    )
                )
            print(
                "\n| SciFact train | vector all | tune | held out | hybrid all | tune | held out |"
            )
            print("|---|---|---|---|---|---|---|")
            for spec in specs:
                combine = combination(spec)
                nd = np.zeros((2, len(qids)))
                for i, q in enumerate(qids):
                    for m, top in enumerate(_rankings(idx, qvecs[i], keyword[i], combine)):
                        nd[m, i] = ndcg_at([ids[j] for j in top], data.qrels[q], 10)
                cells = [f(nd[m]) for m in (0, 1) for f in (np.mean, _tune(held), _held(held))]
                print(f"| {spec} | " + " | ".join(f"{c:.4f}" for c in cells) + " |", flush=True)


def _tune(held: np.ndarray) -> Callable[[np.ndarray], float]:
    return lambda v: float(v[~held].mean())


def _held(held: np.ndarray) -> Callable[[np.ndarray], float]:
    return lambda v: float(v[held].mean())


def fixtures(args: argparse.Namespace, specs: Sequence[str]) -> None:
    pairs = [f.split("=", 1) for f in args.fixture]
    opened = [(Path(fx).stem, fx, load(ip, model_dir=args.model)) for fx, ip in pairs]
    print(
        "\n| docs fixtures | " + " | ".join(f"{n} vector | {n} hybrid" for n, _, _ in opened) + " |"
    )
    print("|---" * (1 + 2 * len(opened)) + "|")
    original = window_module.Windows.best
    try:
        for spec in specs:
            combine = combination(spec)

            def best(
                self: Any, scores: np.ndarray, q: np.ndarray, combine: Combine = combine
            ) -> None:
                starts, rows = self.segments()
                ends = np.r_[starts[1:], len(self)]
                cos = np.asarray(self.store @ q, dtype=np.float64)
                scores[rows] = combine(scores[rows].astype(np.float64), cos, starts, ends)

            window_module.Windows.best = best  # type: ignore[method-assign]
            cells = []
            for _, fx, idx in opened:
                report = run_eval(fx, index=idx, modes=["vector", "hybrid"])
                cells += [
                    f"{report['modes'][m]['summary']['ndcg@10']:.4f}" for m in ("vector", "hybrid")
                ]
            print(f"| {spec} | " + " | ".join(cells) + " |", flush=True)
    finally:
        window_module.Windows.best = original  # type: ignore[method-assign]
        for _, _, idx in opened:
            idx.close()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument(
        "--cache-dir", type=Path, default=None, help="embedding cache (default: scidx's)"
    )
    ap.add_argument("--fixture", action="append", default=[], help="FIXTURE.json=INDEX.scidx")
    ap.add_argument("--only", default=DEFAULT, help="comma-separated combinations")
    ap.add_argument("--no-scifact", action="store_true")
    args = ap.parse_args(argv)
    args.model = args.model or args.shared / "models" / "all-MiniLM-L6-v2-int8"
    specs = args.only.split(",")
    if args.fixture:
        fixtures(args, specs)
    if not args.no_scifact:
        scifact(args, specs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
