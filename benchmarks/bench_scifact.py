"""SciFact (BEIR) retrieval quality and keyword speed: scidx keyword/vector/hybrid vs bm25s.

Usage (from the project root)::

    .venv/bin/python benchmarks/bench_scifact.py [--shared ../shared] [--split train]

Packs ``beir/scifact/corpus.jsonl`` (title + text per document) through the records API
(``scidx.pack.packer.pack_records``, offline hashing embedder), loads the index with ``scidx.load``
and runs every query of the split. Prints nDCG@10, Recall@100 and MRR@10 per mode next to bm25s
(PyStemmer English stemmer + English stop-words, k1=1.5, b=0.75, Lucene idf) measured in the
same run, then single-thread keyword queries per second for both, with the ratios issue 12
and 25 target: ``search()`` + reading the seven fields a results list shows (``id``, ``score``,
``source``, ``anchor``, ``heading_path``, ``title``, ``url``) of every hit >= 1.5x bm25s one
query per call, those + every snippet >= 0.7x, ``rank()`` >= 2x, ``search_batch()`` (or
``rank_batch()``, the
same output as bm25s's: ids and scores) >= 1.5x bm25s's batch ``retrieve``. The index gets a
URL template (as a docs site's has), so ``url`` is a rendered link, not ``None``. A last line
sets a page of snippets against what the 0.7x target leaves it, and against the least any
snippet must inflate from this storage (240 bytes of each hit's clean text). Speeds are this
process's CPU time (``--wall`` for wall-clock), best of ``--rounds`` interleaved rounds; each
ratio is the median over the rounds of the two calls'
ratio within one round (a paired comparison: a shared machine's speed drifts for seconds at a
time), with the ratio of the two bests in brackets.

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
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

# The speeds compared are single-threaded. A BLAS or numba pool left spinning after one call
# (bm25s's batch, the quality runs' vector products) burns CPU time that this process's clock
# then charges to the next call measured; one thread each keeps every row to its own work.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from scidx.evaluation.beir import read_beir  # noqa: E402
from scidx.evaluation.metrics import mrr_at, ndcg_at, recall_at  # noqa: E402
from scidx.index.hits import Hit  # noqa: E402
from scidx.index.index import Index, load  # noqa: E402

SEARCH = "scidx keyword search() (Hit objects, no field read)"
FIELDS = "scidx keyword search() + 7 fields of every hit"
SNIPPETS = "scidx keyword search() + 7 fields + every snippet"
RANK = "scidx keyword rank() (ids + scores)"
BATCH = "scidx keyword search_batch(group=None) (Hit objects)"
BATCH_GROUPED = "scidx keyword search_batch() (default group)"
RANK_BATCH = "scidx keyword rank_batch() (ids + scores)"
#: A docs site's link pattern, so the timed rows render real URLs.
INFLATE = "scidx inflate 240 B of each hit (the snippet floor)"
URL_TEMPLATE = "https://docs.example.org/{page}#{anchor}"
BM_LOOP = "bm25s retrieve, one query per call"
BM_BATCH = "bm25s retrieve, all queries in one batch"


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
    from scidx.pack.packer import pack_records

    records = [{"id": doc_id, "title": title, "text": text} for doc_id, title, text in corpus]
    t0 = time.perf_counter()
    pack_records(records, out, use_cache=False, url_template=URL_TEMPLATE)
    return time.perf_counter() - t0


def scidx_runs(idx: Index, queries: Mapping[str, str], qids: Sequence[str]) -> dict[str, dict]:
    runs: dict[str, dict] = {}
    for mode in ("keyword", "vector", "hybrid"):
        runs[mode] = {q: [h.id for h in idx.search(queries[q], k=100, mode=mode)] for q in qids}
    return runs


def read_fields(hits: Sequence[Hit]) -> None:
    """Read what a results list shows of each hit (the seven fields of the issue-25 rows)."""
    for h in hits:
        h.id, h.score, h.source, h.anchor, h.heading_path, h.title, h.url  # noqa: B018


def read_snippets(hits: Sequence[Hit]) -> None:
    """:func:`read_fields` and each hit's snippet (what a search box's result list shows)."""
    for h in hits:
        h.id, h.score, h.source, h.anchor, h.heading_path, h.title, h.url, h.snippet  # noqa: B018


def speeds(
    calls: Mapping[str, Callable[[], object]], count: int, rounds: int, clock: Callable[[], float]
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Queries per second of each call (it runs ``count`` queries): best of ``rounds``, and
    the seconds of every round.

    Rounds are interleaved (every call once per round), so a load change on the machine hits
    all of them alike; only the ratios of one run are meaningful.
    """
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            t0 = clock()
            fn()
            times[name].append(clock() - t0)
    return {name: count / min(seconds) for name, seconds in times.items()}, times


def paired_ratio(times: Mapping[str, list[float]], name: str, peer: str) -> float:
    """The median over rounds of (peer's time / this call's time) within the same round.

    A shared machine speeds up and slows down for seconds at a time; two calls of one round
    ran seconds apart, so their ratio is steadier than a ratio of two bests that may come
    from different rounds.
    """
    return statistics.median(p / t for p, t in zip(times[peer], times[name], strict=True))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--split", default="train")
    ap.add_argument("--qps-k", type=int, default=10, help="k for the speed comparison")
    ap.add_argument("--no-bm25s", action="store_true", help="skip the bm25s comparison")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds")
    ap.add_argument(
        "--wall",
        action="store_true",
        help="time wall-clock instead of this process's CPU time (CPU time is steadier on a "
        "shared machine; every path here is single-threaded)",
    )
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
        calls: dict[str, Callable[[], object]] = {
            SEARCH: lambda: [idx.search(t, k=k, mode="keyword") for t in qtexts],
            # Fields are read on first access; these rows pay for what a results page shows.
            FIELDS: lambda: [read_fields(idx.search(t, k=k, mode="keyword")) for t in qtexts],
            SNIPPETS: lambda: [read_snippets(idx.search(t, k=k, mode="keyword")) for t in qtexts],
            RANK: lambda: [idx.rank(t, k=k, mode="keyword") for t in qtexts],
            # Raw chunks, as bm25s's batch retrieve returns them (a SciFact document is one
            # chunk, so grouping changes no result; the default-grouped call is shown too).
            BATCH: lambda: idx.search_batch(qtexts, k=k, mode="keyword", group=None),
            BATCH_GROUPED: lambda: idx.search_batch(qtexts, k=k, mode="keyword"),
            # What bm25s's batch retrieve returns: ids and scores per query, no hit objects.
            RANK_BATCH: lambda: idx.rank_batch(qtexts, k=k, mode="keyword"),
        }

        # The storage's floor under the snippet row: each snippet inflates its hit's clean text
        # from the start of the record's stream to the end of the part it shows, so at least
        # the first 240 bytes (the snippet's length). The same pages of rows as the search rows.
        store = idx._corpus.chunk_text.store  # the index's TextStore (private: a benchmark)
        pages = [[h.__dict__["_row"] for h in idx.search(t, k=k, mode="keyword")] for t in qtexts]
        calls[INFLATE] = lambda: [store.prefixes(rows, [240] * len(rows)) for rows in pages]

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

            calls[BM_LOOP] = bm_loop
            calls[BM_BATCH] = bm_batch
        clock = time.perf_counter if args.wall else time.process_time
        speed, round_times = speeds(calls, len(qtexts), args.rounds, clock)
        idx.close()

    print()
    print(f"{'system':<24} {'nDCG@10':>8} {'Recall@100':>11} {'MRR@10':>8}")
    for name, r in results.items():
        print(f"{name:<24} {r['nDCG@10']:>8.4f} {r['Recall@100']:>11.4f} {r['MRR@10']:>8.4f}")
    print()
    what = "wall-clock" if args.wall else "CPU-time"
    print(
        f"single-thread keyword queries/second (k={k}, {len(qtexts)} queries, best of "
        f"{args.rounds} interleaved rounds, {what}); ratios: median over the rounds of the "
        "two calls' ratio in the same round [ratio of the two bests]:"
    )
    targets = {FIELDS: 1.5, SNIPPETS: 0.7, RANK: 2.0, BATCH: 1.5, RANK_BATCH: 1.5}
    for name, value in speed.items():
        line = f"  {name:<52} {value:>9.0f}"
        peer = BM_BATCH if name in (BATCH, BATCH_GROUPED, RANK_BATCH) else BM_LOOP
        if peer in speed and name not in (BM_LOOP, BM_BATCH, INFLATE):
            ratio = paired_ratio(round_times, name, peer)
            line += (
                f"   {ratio:5.2f}x {'bm25s batch' if peer == BM_BATCH else 'bm25s'}"
                f" [{value / speed[peer]:.2f}x]"
            )
            if name in targets:
                line += f" (target >= {targets[name]}x)"
        print(line)
    if BM_LOOP in speed:
        print_snippet_budget(speed)
    return 0


def print_snippet_budget(speed: Mapping[str, float]) -> None:
    """What a page of snippets may cost for the 0.7x target, next to what it costs.

    Per query (one page of k hits), from the best rounds: the budget is the time of a query at
    0.7x bm25s minus the fields row's; the snippets row's cost is its time minus the fields
    row's; the floor is :data:`INFLATE`'s time, which no snippet of this storage avoids.
    """
    per = {name: 1e6 / value for name, value in speed.items()}
    budget = per[BM_LOOP] / 0.7 - per[FIELDS]
    spent = per[SNIPPETS] - per[FIELDS]
    floor = per[INFLATE]
    print(
        f"a page of snippets: {spent:.0f} us; the 0.7x target leaves {budget:.0f} us "
        f"(a query at 0.7x bm25s minus the fields row); inflating the least every snippet "
        f"reads takes {floor:.0f} us of it ({floor / budget:.0%})"
    )


if __name__ == "__main__":
    raise SystemExit(main())
