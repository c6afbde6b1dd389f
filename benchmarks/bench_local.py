"""The local embedding provider: SciFact quality and fusion tuning, pack speed, latency, memory.

Usage (from the project root; heavy, so niced)::

    nice -n 10 .venv/bin/python benchmarks/bench_local.py [--shared ../shared]
        [--model ../shared/models/all-MiniLM-L6-v2-int8] [--split train]
        [--sections quality,latency,memory,pack] [--cache-dir /tmp/scidx-bench-cache]

Sections (one table each, all from one run):

* **quality** — packs SciFact (``beir/scifact``, title + text per document) with the local
  provider through ``pack_records`` (vectors cached in ``--cache-dir``, so a second run skips
  the model), then scores every judged query of the split: keyword, vector, hybrid with the
  fusion recorded in the header, reciprocal-rank fusion (k=60) of the keyword and vector runs,
  and a grid of weighted-sum settings (alpha x pseudo-relevance feedback) computed with the same
  formula as ``scidx.index.search`` from the index's own BM25 scores and vectors. The grid is
  how ``scidx.embed.local.FUSION`` was chosen.
* **latency** — query latency p50/p95 on that index (~5k chunks), vector and hybrid, including
  query embedding (each query embedded once, no cache), and the query embedding alone.
* **memory** — peak RSS of a fresh process that loads the index and answers 100 hybrid queries
  (and, for reference, one that answers them in keyword mode).
* **pack** — ``pack_docs`` over ``corpora/fastapi-docs-en``: cold (empty cache), warm (cache
  only: zero model calls), and the hashing provider in the same run for scale.

Metrics are scidx.evaluation's (trec_eval definitions): nDCG@10, Recall@100, MRR@10.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from scidx.embed.local import FUSION, LocalEmbedder  # noqa: E402
from scidx.evaluation.beir import read_beir  # noqa: E402
from scidx.evaluation.metrics import mrr_at, ndcg_at, recall_at  # noqa: E402
from scidx.index.index import Index, load  # noqa: E402

RRF_K = 60
ALPHAS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
PRF = ((0, 0.0), (3, 0.5), (3, 1.0), (3, 2.0), (5, 1.0))


def scifact(args: argparse.Namespace) -> Any:
    """SciFact's split, or only its first ``--docs`` documents for a smoke run."""
    data = read_beir(args.shared / "beir" / "scifact", args.split)
    if args.docs:
        data = dataclasses.replace(data, corpus=data.corpus[: args.docs])
    return data


def evaluate(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]) -> dict:
    judged = [q for q, r in qrels.items() if any(g > 0 for g in r.values())]
    return {
        "nDCG@10": statistics.fmean(ndcg_at(run.get(q, []), qrels[q], 10) for q in judged),
        "Recall@100": statistics.fmean(recall_at(run.get(q, []), qrels[q], 100) for q in judged),
        "MRR@10": statistics.fmean(mrr_at(run.get(q, []), qrels[q], 10) for q in judged),
    }


def row(name: str, metrics: Mapping[str, float]) -> str:
    return (
        f"| {name} | {metrics['nDCG@10']:.4f} | {metrics['Recall@100']:.4f} "
        f"| {metrics['MRR@10']:.4f} |"
    )


def rrf(*runs: Sequence[str]) -> list[str]:
    scores: dict[str, float] = {}
    for run in runs:
        for rank, doc in enumerate(run):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (RRF_K + rank + 1)
    return [d for d, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))][:100]


def fused_run(
    idx: Index,
    ids: list[str],
    qvec: np.ndarray,
    kw: list[tuple[str, float]],
    alpha: float,
    docs: int,
    beta: float,
) -> list[str]:
    """scidx.index.search's weighted sum with Rocchio feedback, for one query."""
    vectors = idx.vectors
    row_of = {d: i for i, d in enumerate(ids)}
    kw_rows = np.array([row_of[d] for d, _ in kw], dtype=np.int64)
    kw_scores = np.array([s for _, s in kw], dtype=np.float64)
    q = qvec.astype(np.float64)
    if docs and beta and kw_rows.size:
        top = kw_rows[:docs]
        w = kw_scores[:docs]
        q = q + beta * (w @ vectors[top].astype(np.float64)) / w.sum()
        q /= np.linalg.norm(q)
    raw = np.asarray(vectors @ q.astype(np.float32), dtype=np.float32)
    windows = idx._corpus.windows if idx._corpus is not None else None
    if windows is not None:
        windows.best(raw, q.astype(np.float32))  # a long text scores its best window (MaxP)
    cos = np.maximum(raw, 0.0).astype(np.float64)
    fused = cos * (alpha / cos.max()) if cos.max() > 0 else np.zeros_like(cos)
    if kw_rows.size:
        fused[kw_rows] += (1 - alpha) * kw_scores / kw_scores.max()
    order = np.lexsort((np.arange(len(fused)), -fused))[:100]
    return [ids[i] for i in order if fused[i] > 0]


def quality(args: argparse.Namespace, index_path: Path) -> None:
    from scidx.pack.packer import pack_records

    data = scifact(args)
    qids = [q for q in data.qrels if q in data.queries]
    print(f"\nSciFact {args.split}: {len(data.corpus)} documents, {len(qids)} judged queries")
    records = [{"id": d, "title": t, "text": x} for d, t, x in data.corpus]
    embedder = LocalEmbedder(args.model, threads=args.threads, window_overlap=args.window_overlap)
    t0 = time.perf_counter()
    packed = pack_records(records, index_path, embedder=embedder, cache_dir=args.cache_dir)
    pack_s = time.perf_counter() - t0
    print(
        f"pack_records: {pack_s:.1f} s ({packed.embedded} embedded, {packed.cache_hits} cached, "
        f"{packed.window_chunks} longer than {embedder.max_tokens} tokens, read as "
        f"{packed.windows} more windows with overlap {embedder.window_overlap}: "
        f"{packed.windows_embedded} embedded, {packed.windows_cached} cached)"
    )
    idx = load(index_path, model_dir=args.model)
    ids = [idx.chunk(i).id for i in range(len(idx))]
    runs: dict[str, dict[str, list[str]]] = {m: {} for m in ("keyword", "vector", "hybrid")}
    keyword_full: dict[str, list[tuple[str, float]]] = {}
    for q in qids:
        text = data.queries[q]
        for mode in runs:
            runs[mode][q] = [d for d, _ in idx.rank(text, k=100, mode=mode)]
        keyword_full[q] = idx.rank(text, k=len(idx), mode="keyword")
    print("\n| SciFact " + args.split + " (local provider) | nDCG@10 | Recall@100 | MRR@10 |")
    print("|---|---|---|---|")
    print(row("keyword (BM25)", evaluate(runs["keyword"], data.qrels)))
    print(row("vector (local)", evaluate(runs["vector"], data.qrels)))
    header = f"alpha {FUSION['alpha']}, PRF {FUSION['prfDocs']}x{FUSION['prfBeta']}"
    print(row(f"hybrid, header fusion ({header})", evaluate(runs["hybrid"], data.qrels)))
    rrf_run = {q: rrf(runs["keyword"][q], runs["vector"][q]) for q in qids}
    print(row(f"hybrid, RRF k={RRF_K} (keyword + vector)", evaluate(rrf_run, data.qrels)))

    if args.no_grid:
        idx.close()
        return
    qvecs = embedder.embed([data.queries[q] for q in qids])
    print("\nWeighted-sum grid (nDCG@10 / Recall@100), the formula of scidx.index.search:")
    print("| alpha | " + " | ".join(f"PRF {d}x{b}" for d, b in PRF) + " |")
    print("|---" * (len(PRF) + 1) + "|")
    best = (0.0, None)
    for alpha in ALPHAS:
        cells = []
        for docs, beta in PRF:
            run = {
                q: fused_run(idx, ids, qvecs[i], keyword_full[q], alpha, docs, beta)
                for i, q in enumerate(qids)
            }
            m = evaluate(run, data.qrels)
            cells.append(f"{m['nDCG@10']:.4f} / {m['Recall@100']:.4f}")
            if m["nDCG@10"] > best[0]:
                best = (m["nDCG@10"], (alpha, docs, beta))
        print(f"| {alpha} | " + " | ".join(cells) + " |")
    print(f"best: nDCG@10 {best[0]:.4f} at (alpha, prfDocs, prfBeta) = {best[1]}")
    idx.close()


def latency(args: argparse.Namespace, index_path: Path) -> None:
    data = read_beir(args.shared / "beir" / "scifact", args.split)
    texts = list(dict.fromkeys(data.queries.values()))[: args.queries * 3]
    idx = load(index_path, model_dir=args.model)
    idx.search("warm up the model", k=10)  # loads the model once; not timed
    print(f"\nQuery latency over {len(idx)} chunks, k=10, each query text used once:")
    print("| mode | p50 ms | p95 ms | queries |")
    print("|---|---|---|---|")
    chunks = [texts[i::3] for i in range(3)]
    for mode, batch in zip(("keyword", "vector", "hybrid"), chunks, strict=True):
        lat = []
        for text in batch[: args.queries]:
            t0 = time.perf_counter()
            idx.rank(text, k=10, mode=mode)
            lat.append((time.perf_counter() - t0) * 1000)
        p50, p95 = np.percentile(lat, [50, 95])
        print(f"| {mode} (incl. query embedding) | {p50:.2f} | {p95:.2f} | {len(lat)} |")
    emb = LocalEmbedder(args.model, threads=args.threads)
    emb.embed_query("warm up")
    lat = []
    for i in range(args.queries):
        t0 = time.perf_counter()
        emb.embed_query(f"what causes insulin resistance {i}")
        lat.append((time.perf_counter() - t0) * 1000)
    p50, p95 = np.percentile(lat, [50, 95])
    print(f"| query embedding alone (short query) | {p50:.2f} | {p95:.2f} | {len(lat)} |")
    idx.close()


MEMORY_SCRIPT = """
import json, sys
sys.path.insert(0, {src!r})
import scidx
queries = json.loads(sys.argv[1])
idx = scidx.load({index!r}, model_dir={model!r})
for q in queries:
    idx.search(q, k=10, mode={mode!r})
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the (large) parent process.
print([line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM")][0])
"""


def memory(args: argparse.Namespace, index_path: Path) -> None:
    data = read_beir(args.shared / "beir" / "scifact", args.split)
    queries = list(data.queries.values())[:100]
    print(f"\nPeak RSS of a process that loads the index and answers {len(queries)} queries:")
    print("| mode | peak RSS MB |")
    print("|---|---|")
    for mode in ("keyword", "hybrid"):
        code = MEMORY_SCRIPT.format(
            src=str(ROOT / "src"), index=str(index_path), model=str(args.model), mode=mode
        )
        out = subprocess.run(
            [sys.executable, "-c", code, json.dumps(queries)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        print(f"| {mode} | {int(out.strip()) / 1024:.0f} |")


def pack(args: argparse.Namespace) -> None:
    from scidx.pack.packer import pack_docs

    corpus = args.shared / "corpora" / "fastapi-docs-en"
    print(f"\npack_docs over {corpus} (2 cores shared with the rest of the machine):")
    print("| run | chunks | embedded | cache hits | pack s | embed s | chunks/s (embedding) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(corpus, work / "docs")
        for name, provider in (("local", "local"), ("hashing", "hashing")):
            settings: dict[str, object] = {
                "include": ["docs/**/*.md"],
                "output": f"{name}.scidx",
                "embeddingProvider": provider,
                "cacheDir": f"cache-{name}",
            }
            if provider == "local":
                settings["model"] = str(args.model.resolve())
                if args.threads:
                    settings["threads"] = args.threads
            cfg = work / f"{name}.json"
            cfg.write_text(json.dumps(settings), encoding="utf-8")
            for label in ("cold", "warm"):
                if label == "warm":
                    (work / f"{name}.scidx").unlink()  # only the cache may help
                result = pack_docs(cfg, force=True)
                rate = result.embedded / result.embed_seconds if result.embedded else 0.0
                print(
                    f"| {name} {label} | {result.chunks} | {result.embedded} | "
                    f"{result.cache_hits} | {result.seconds:.2f} | {result.embed_seconds:.2f} | "
                    f"{rate:.1f} |"
                )
                if label == "warm":
                    assert result.embedded == 0, "a warm re-pack called the model"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--split", default="train")
    ap.add_argument("--sections", default="quality,latency,memory,pack")
    ap.add_argument("--no-grid", action="store_true", help="skip the alpha x feedback grid")
    ap.add_argument(
        "--window-overlap", type=int, default=None, help="tokens windows of long texts share"
    )
    ap.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "scidx-bench")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--queries", type=int, default=200, help="queries per latency row")
    ap.add_argument("--docs", type=int, default=None, help="only the first N documents (smoke run)")
    args = ap.parse_args(argv)
    args.model = args.model or args.shared / "models" / "all-MiniLM-L6-v2-int8"
    sections = args.sections.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        index_path = Path(tmp) / "scifact-local.scidx"
        if {"quality", "latency", "memory"} & set(sections):
            if "quality" in sections:
                quality(args, index_path)
            else:
                from scidx.pack.packer import pack_records

                data = scifact(args)
                records = [{"id": d, "title": t, "text": x} for d, t, x in data.corpus]
                pack_records(
                    records,
                    index_path,
                    embedder=LocalEmbedder(args.model),
                    cache_dir=args.cache_dir,
                )
        if "latency" in sections:
            latency(args, index_path)
        if "memory" in sections:
            memory(args, index_path)
    if "pack" in sections:
        pack(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
