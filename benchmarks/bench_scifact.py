"""SciFact (BEIR) retrieval quality and keyword speed: scidx keyword/vector/hybrid vs bm25s.

Usage (from the project root)::

    .venv/bin/python benchmarks/bench_scifact.py [--shared ../shared] [--split train]

Packs ``beir/scifact/corpus.jsonl`` (title + text per document) through the records API
(``scidx.build.pack.pack_records``, offline hashing embedder), loads the index with ``scidx.load``
and runs every query of the split. Prints nDCG@10, Recall@100 and MRR@10 per mode next to bm25s
(PyStemmer English stemmer + English stop-words, k1=1.5, b=0.75, Lucene idf) measured in the
same run, then single-thread keyword queries per second for both.

Metric definitions follow pytrec_eval / trec_eval (what BEIR reports):

* nDCG@10: gain = the qrels relevance grade (linear), discount log2(rank + 1), ideal DCG from
  the qrels' grades sorted descending (judged documents, retrieved or not).
* Recall@100: relevant (grade > 0) documents in the top 100 / all relevant documents.
* MRR@10: 1 / rank of the first relevant document within the top 10, else 0.

Queries without a relevant document in the qrels are skipped (as pytrec_eval does). Deterministic
and offline; SciFact is for evaluation only and is never copied into the project.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from scidx.evaluation.beir import read_beir  # noqa: E402
from scidx.evaluation.metrics import mrr_at, ndcg_at, recall_at  # noqa: E402
from scidx.index.index import Index, load  # noqa: E402


def evaluate(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]) -> dict:
    """Mean nDCG@10, Recall@100, MRR@10 over the judged queries (scidx.evaluation.metrics)."""
    judged = [q for q, r in qrels.items() if any(g > 0 for g in r.values())]
    return {
        "nDCG@10": statistics.fmean(ndcg_at(run.get(q, []), qrels[q], 10) for q in judged),
        "Recall@100": statistics.fmean(recall_at(run.get(q, []), qrels[q], 100) for q in judged),
        "MRR@10": statistics.fmean(mrr_at(run.get(q, []), qrels[q], 10) for q in judged),
        "queries": len(judged),
    }


def build_scidx(corpus: Sequence[tuple[str, str, str]], out: Path) -> float:
    from scidx.build.pack import pack_records

    records = [{"id": doc_id, "title": title, "text": text} for doc_id, title, text in corpus]
    t0 = time.perf_counter()
    pack_records(records, out, use_cache=False)
    return time.perf_counter() - t0


def scidx_runs(idx: Index, queries: Mapping[str, str], qids: Sequence[str]) -> dict[str, dict]:
    runs: dict[str, dict] = {}
    for mode in ("keyword", "vector", "hybrid"):
        runs[mode] = {q: [h.id for h in idx.search(queries[q], k=100, mode=mode)] for q in qids}
    return runs


def qps(fn: Callable[[], object], count: int, repeat: int = 3) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return count / best


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--split", default="train")
    ap.add_argument("--qps-k", type=int, default=10, help="k for the speed comparison")
    ap.add_argument("--no-bm25s", action="store_true", help="skip the bm25s comparison")
    args = ap.parse_args(argv)

    data = read_beir(args.shared / "beir" / "scifact", args.split)
    corpus, queries, qrels = data.corpus, data.queries, data.qrels
    qids = [q for q in qrels if q in queries]
    print(f"SciFact {args.split}: {len(corpus)} documents, {len(qids)} queries with qrels")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scifact.scidx"
        pack_s = build_scidx(corpus, path)
        idx = load(path)
        print(f"scidx pack_records: {pack_s:.2f} s, {path.stat().st_size / 1e6:.1f} MB")
        results = {
            f"scidx {m}": evaluate(r, qrels) for m, r in scidx_runs(idx, queries, qids).items()
        }

        qtexts = [queries[q] for q in qids]
        k = args.qps_k
        speed: dict[str, float] = {}
        speed["scidx keyword search() (Hit objects)"] = qps(
            lambda: [idx.search(t, k=k, mode="keyword") for t in qtexts], len(qtexts)
        )
        # Snippets are computed when first read; this line pays for all of them.
        speed["scidx keyword search() + every snippet read"] = qps(
            lambda: [[h.snippet for h in idx.search(t, k=k, mode="keyword")] for t in qtexts],
            len(qtexts),
        )
        speed["scidx keyword rank() (ids + scores, like bm25s)"] = qps(
            lambda: [idx.rank(t, k=k, mode="keyword") for t in qtexts], len(qtexts)
        )

        if not args.no_bm25s:
            import bm25s
            import Stemmer

            stemmer = Stemmer.Stemmer("english")
            texts = [f"{title} {text}" for _, title, text in corpus]
            t0 = time.perf_counter()
            tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
            retriever = bm25s.BM25(k1=1.5, b=0.75)
            retriever.index(tokens, show_progress=False)
            bm_index_s = time.perf_counter() - t0
            print(f"bm25s index: {bm_index_s:.2f} s")
            doc_ids = [doc_id for doc_id, _, _ in corpus]

            def bm_query_tokens(batch: list[str]) -> list[list[str]]:
                return bm25s.tokenize(  # type: ignore[no-any-return]
                    batch, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
                )

            # bm25s's default n_threads=0 is its plain single-thread path (n_threads=1 would
            # start a thread pool per call and make it look slower than it is).
            qtok = bm_query_tokens(qtexts)
            # bm25s cannot score a query without tokens; give it a no-match placeholder.
            qtok = [t if t else ["\x00"] for t in qtok]
            docs, _scores = retriever.retrieve(qtok, k=100, show_progress=False)
            run = {q: [doc_ids[int(i)] for i in docs[j]] for j, q in enumerate(qids)}
            results["bm25s (PyStemmer en)"] = evaluate(run, qrels)

            def bm_batch() -> None:
                toks = [t if t else ["\x00"] for t in bm_query_tokens(qtexts)]
                retriever.retrieve(toks, k=k, show_progress=False)

            def bm_loop() -> None:
                for t in qtexts:
                    toks = bm_query_tokens([t])
                    toks = [x if x else ["\x00"] for x in toks]
                    retriever.retrieve(toks, k=k, show_progress=False)

            speed["bm25s retrieve, all queries in one batch"] = qps(bm_batch, len(qtexts))
            speed["bm25s retrieve, one query per call"] = qps(bm_loop, len(qtexts))
        idx.close()

    print()
    print(f"{'system':<24} {'nDCG@10':>8} {'Recall@100':>11} {'MRR@10':>8}")
    for name, r in results.items():
        print(f"{name:<24} {r['nDCG@10']:>8.4f} {r['Recall@100']:>11.4f} {r['MRR@10']:>8.4f}")
    print()
    print(f"single-thread keyword queries/second (k={k}, {len(qtexts)} queries, best of 3):")
    for name, value in speed.items():
        print(f"  {name:<44} {value:>9.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
