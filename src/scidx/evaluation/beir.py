"""BEIR benchmark runner: read a BEIR folder, pack it, run every query of a split, score it.

A BEIR folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``) and ``qrels/<split>.tsv`` (``query-id``, ``corpus-id``, ``score``; a header
row, CRLF or LF line endings). :func:`run_bench` packs the corpus through
:func:`scidx.pack.packer.pack_records` (title + text per document, in memory), runs each judged
query of the split and reports nDCG@10, Recall@100 and MRR@10 with the definitions of
:mod:`scidx.evaluation.metrics` (trec_eval / pytrec_eval semantics), plus ingest time, per-query
latency percentiles and wall time. Differences from BEIR's own ``EvaluateRetrieval``: documents
whose id equals the query id are *not* dropped (BEIR's ``ignore_identical_ids``; in SciFact, query
and document ids are unrelated numbers), and queries with no relevant document are left out of the
averages (SciFact has none).

:func:`run_bm25s` measures the reference the project compares against: bm25s with PyStemmer
English stemming and English stop-words, default parameters (``pip install bm25s PyStemmer``).

Runtime module: numpy, msgpack, xxhash, the stdlib and scidx runtime modules only; the packer,
the OpenAI provider and bm25s are imported when used.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scidx.embed.hashing import MODEL_ID as HASHING_MODEL_ID
from scidx.embed.registry import is_provider, provider_names
from scidx.errors import ConfigError, InputError, OutputError
from scidx.evaluation.metrics import mean_metrics
from scidx.index.index import Index, load_bytes
from scidx.index.search import MODES
from scidx.index.vectors import DEFAULT_ENCODING

__all__ = [
    "BENCH_COLUMNS",
    "BENCH_METRICS",
    "BeirData",
    "BenchRow",
    "append_csv",
    "read_beir",
    "run_bench",
    "run_bm25s",
]

#: The metrics of a bench row.
BENCH_METRICS = ("ndcg@10", "recall@100", "mrr@10")
#: CSV columns, in order.
BENCH_COLUMNS = (
    "dataset",
    "split",
    "provider",
    "model",
    "mode",
    "mmr",
    "reranker",
    "vectors",
    "replicate",
    "k",
    "queries",
    "ndcg@10",
    "recall@100",
    "mrr@10",
    "ingest_s",
    "query_p50_ms",
    "query_p95_ms",
    "query_p99_ms",
    "rerank_p50_ms",
    "wall_s",
)

Progress = Callable[[str, int, int], None]
#: ``backend(index) -> (rank(text, k, mode), close())``: where :func:`run_bench` queries.
Backend = Callable[
    [Any], tuple[Callable[[str, int, str], Sequence[tuple[str, float]]], Callable[[], None]]
]


@dataclass
class BeirData:
    """A BEIR dataset split in memory.

    Attributes:
        name: The folder name (``scifact``).
        split: The qrels split read.
        corpus: ``(doc id, title, text)`` in file order.
        queries: Query id → text, for the judged queries of the split, in qrels order.
        qrels: Query id → ``{doc id: grade}``.
        read_seconds: Time spent reading the files.
    """

    name: str
    split: str
    corpus: list[tuple[str, str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    read_seconds: float = 0.0


@dataclass
class BenchRow:
    """One benchmark result (one CSV row)."""

    dataset: str
    split: str
    provider: str
    model: str
    mode: str
    k: int
    queries: int
    ndcg_10: float
    recall_100: float
    mrr_10: float
    ingest_s: float
    query_p50_ms: float
    query_p95_ms: float
    query_p99_ms: float
    wall_s: float
    mmr: float | None = None
    reranker: str = ""
    vectors: str = "float32"
    replicate: int = 1
    rerank_p50_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row keyed by :data:`BENCH_COLUMNS`, numbers rounded for the CSV."""
        return {
            "dataset": self.dataset,
            "split": self.split,
            "provider": self.provider,
            "model": self.model,
            "mode": self.mode,
            "mmr": "" if self.mmr is None else self.mmr,
            "reranker": self.reranker,
            "vectors": self.vectors,
            "replicate": self.replicate,
            "k": self.k,
            "queries": self.queries,
            # A replicated corpus holds every relevant document N times: no quality metric.
            **{
                name: "" if self.replicate > 1 else round(value, 4)
                for name, value in (
                    ("ndcg@10", self.ndcg_10),
                    ("recall@100", self.recall_100),
                    ("mrr@10", self.mrr_10),
                )
            },
            "ingest_s": round(self.ingest_s, 3),
            "query_p50_ms": round(self.query_p50_ms, 3),
            "query_p95_ms": round(self.query_p95_ms, 3),
            "query_p99_ms": round(self.query_p99_ms, 3),
            "rerank_p50_ms": "" if self.rerank_p50_ms is None else round(self.rerank_p50_ms, 3),
            "wall_s": round(self.wall_s, 3),
        }


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


def _jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        fh = open(path, encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise InputError(
            f"cannot read {path}: {exc.strerror or exc}; a BEIR folder needs corpus.jsonl, "
            "queries.jsonl and qrels/<split>.tsv"
        ) from None
    out: list[dict[str, Any]] = []
    with fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise InputError(f"{path}:{number}: not a JSON object ({exc})") from None
            if not isinstance(item, dict) or not isinstance(item.get("_id"), str):
                raise InputError(f'{path}:{number}: expected an object with a string "_id"')
            out.append(item)
    return out


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    try:
        raw = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(
            f"cannot read {path}: {exc.strerror or exc}; is the split name right "
            "(train, dev, test)?"
        ) from None
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < 3:
            cols = line.split()
        if len(cols) != 3:
            raise InputError(
                f"{path}:{number}: expected 3 tab-separated columns "
                f"(query-id, corpus-id, score), got {len(cols)}"
            )
        qid, did, grade = (c.strip() for c in cols)
        try:
            value = int(grade)
        except ValueError:
            if number == 1:
                continue  # the header row ("query-id corpus-id score")
            raise InputError(f"{path}:{number}: score {grade!r} is not an integer") from None
        qrels.setdefault(qid, {})[did] = value
    if not qrels:
        raise InputError(f"{path} has no judgements")
    return qrels


def read_beir(folder: str | Path, split: str) -> BeirData:
    """Read a BEIR folder's corpus, queries and the qrels of ``split``.

    Only queries judged in the split are kept (in qrels order). Judgements naming a query
    missing from ``queries.jsonl`` are an error; ones naming unknown documents are kept (they
    just cannot be found).

    Raises:
        InputError: A file is missing or malformed (the message names file and line).
    """
    started = time.perf_counter()
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"BEIR folder {root} does not exist or is not a folder")
    if not split or "/" in split or "\\" in split:
        raise ConfigError(f"invalid split name {split!r}; use e.g. train or test")
    corpus = []
    for item in _jsonl(root / "corpus.jsonl"):
        title, text = item.get("title") or "", item.get("text") or ""
        if not isinstance(title, str) or not isinstance(text, str):
            raise InputError(
                f"{root / 'corpus.jsonl'}: document {item['_id']!r} has non-string text"
            )
        corpus.append((item["_id"], title, text))
    texts = {item["_id"]: str(item.get("text") or "") for item in _jsonl(root / "queries.jsonl")}
    qrels = _qrels(root / "qrels" / f"{split}.tsv")
    missing = [q for q in qrels if q not in texts]
    if missing:
        raise InputError(
            f"{root / 'qrels' / f'{split}.tsv'} judges {len(missing)} queries that "
            f"queries.jsonl does not have (first: {missing[0]!r})"
        )
    queries = {q: texts[q] for q in qrels}
    return BeirData(
        root.resolve().name, split, corpus, queries, qrels, time.perf_counter() - started
    )


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


def _percentiles(latencies: Sequence[float]) -> tuple[float, float, float]:
    if not latencies:
        return 0.0, 0.0, 0.0
    arr = np.asarray(latencies, dtype=np.float64) * 1000.0
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return float(p50), float(p95), float(p99)


@dataclass(frozen=True)
class _BenchSettings:
    """What a provider's ``from_config`` reads, for ``bench`` (which has no staticcorpus.json)."""

    model: str | None
    dimensions: int | None
    path: str = "bench"


def _make_embedder(provider: str, model: str | None, dimensions: int | None) -> Any:
    if provider == "hashing":
        from scidx.embed.hashing import HashingEmbedder

        if model not in (None, HASHING_MODEL_ID):
            raise ConfigError(
                f"the hashing provider has only model {HASHING_MODEL_ID}, not {model!r}"
            )
        return HashingEmbedder(dimensions=dimensions or 512)
    if not is_provider(provider):
        names = ", ".join(sorted(provider_names()))
        raise ConfigError(f"unknown provider {provider!r}; use {names} or bm25s")
    if provider == "local" and not model:
        raise ConfigError(
            "the local provider needs --model: the folder holding model.onnx and "
            "tokenizer.json, or a Hugging Face model id in the local cache"
        )
    if provider == "openai":
        dimensions = dimensions or 512  # bench's default, where a pack defaults to full length
    from scidx.pack.embedding import provider_embedder  # build-time module

    # Built-ins and plugins alike, through the registry (as pack-docs resolves them).
    return provider_embedder(provider, _BenchSettings(model, dimensions), "bench")


def _subset(data: BeirData, limit: int | None) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    if limit is None:
        return data.queries, data.qrels
    if limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {limit}")
    ids = list(data.queries)[:limit]
    return {q: data.queries[q] for q in ids}, {q: data.qrels[q] for q in ids}


def _check_bench(
    modes: Sequence[str],
    k: int,
    mmr: Sequence[float | None],
    elsewhere: bool,
    reranked: bool,
    replicate: int,
) -> None:
    """:func:`run_bench`'s argument checks (``elsewhere``: a backend other than the index)."""
    for mode in modes:
        if mode not in MODES:
            raise ConfigError(f"unknown mode {mode!r}; use one of {', '.join(MODES)} or all")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a positive integer, got {k!r}")
    for lam in mmr:
        if lam is not None and not 0.0 <= lam <= 1.0:
            raise ConfigError(f"mmr must be a number in [0, 1], got {lam!r}")
    if elsewhere and any(lam is not None for lam in mmr):
        raise ConfigError("--mmr ranks with the packed index's vectors; drop --postgres for it")
    if elsewhere and reranked:
        raise ConfigError("--rerank reranks the packed index's candidates; drop --postgres for it")
    if isinstance(replicate, bool) or not isinstance(replicate, int) or replicate < 1:
        raise ConfigError(f"--replicate must be an integer >= 1, got {replicate!r}")


def run_bench(
    data: BeirData,
    *,
    provider: str = "hashing",
    model: str | None = None,
    dimensions: int | None = None,
    modes: Sequence[str] = ("hybrid",),
    k: int = 100,
    limit: int | None = None,
    progress: Progress | None = None,
    backend: Backend | None = None,
    mmr: Sequence[float | None] = (None,),
    reranker: Any | None = None,
    rerank_top: int | None = None,
    vectors: str | None = None,
    replicate: int = 1,
) -> list[BenchRow]:
    """Pack ``data``'s corpus once and evaluate each mode over its judged queries.

    Args:
        data: From :func:`read_beir`.
        provider: ``hashing`` (offline default), ``local`` (an ONNX model, ``model`` is its
            folder; uses the embedding cache) or ``openai`` (needs ``OPENAI_API_KEY``; uses the
            embedding cache).
        model: Embedding model (provider default when None; required for ``local``).
        dimensions: Vector dimensions (None: 512 for hashing and OpenAI, the model's own for
            local).
        modes: Search modes, one row each.
        k: Results retrieved per query (Recall@100 needs k >= 100).
        limit: Evaluate only the first ``limit`` judged queries (for quick runs).
        progress: ``progress(stage, done, total)``; stages ``embed``, ``index`` (packing) and
            ``query:<mode>``.
        backend: Query somewhere else: ``backend(index)`` returns ``(rank, close)`` where
            ``rank(text, k, mode)`` gives ``(chunk id, score)`` pairs (e.g. PostgreSQL after
            an export; its time counts as ingest). Default: the packed index itself.
        mmr: Maximal-marginal-relevance weights to run each mode with (``None``: plain
            ranking), one row each (the ``mmr`` column).
        reranker: A :class:`~scidx.index.rerank.Reranker` rescoring each query's best
            ``rerank_top`` candidates (the ``reranker`` column; ``rerank_p50_ms`` is the median
            time spent inside it per query).
        rerank_top: Candidates the reranker rescores (default 20).
        vectors: The vector encoding packed (``float32``, ``int8``, ``binary``; default the
            packer's); the ``vectors`` column says ``postgres`` when ``backend`` is set.
        replicate: Pack the corpus this many times, copies under distinct ids
            (``id~2``, ``id~3``...), to measure speed at N× the size; quality metrics are left
            empty then (every relevant document is there N times).

    Returns:
        One :class:`BenchRow` per mode. ``ingest_s`` (packing and loading) is shared; each
        row's ``wall_s`` is reading + ingest + that mode's queries.

    Raises:
        ConfigError: Unknown provider or mode, ``k`` < 1.
        EmbeddingError: The provider failed.
    """
    _check_bench(modes, k, mmr, backend is not None, reranker is not None, replicate)
    report = progress or (lambda stage, done, total: None)
    embedder = _make_embedder(provider, model, dimensions)
    queries, qrels = _subset(data, limit)
    started = time.perf_counter()
    index = _pack_in_memory(data, embedder, report, provider, replicate, vectors)
    rank, close, timed, extra = _ranker(index, backend, reranker, rerank_top)
    ingest = time.perf_counter() - started
    stamp = index.stamp
    encoded = "postgres" if backend is not None else str(index.meta["vectors"]["encoding"])
    rows: list[BenchRow] = []
    try:
        for mode, lam in ((m, lam) for m in modes for lam in mmr):
            mode_started = time.perf_counter()
            if timed is not None:
                timed.seconds.clear()
            runs, latencies = _query_all(queries, rank, index, k, mode, lam, report, extra)
            row = _measured(
                data,
                runs,
                qrels,
                latencies,
                provider=str(stamp.get("provider")),
                model=str(stamp.get("model")),
                mode=mode,
                mmr=lam,
                k=k,
                ingest=ingest,
                since=mode_started,
                earlier=ingest,
            )
            row.reranker = str(getattr(reranker, "name", "")) if reranker is not None else ""
            row.vectors = encoded
            row.replicate = replicate
            if timed is not None and timed.seconds:
                row.rerank_p50_ms = statistics.median(timed.seconds) * 1000.0
            rows.append(row)
    finally:
        close()
        index.close()
    return rows


def _pack_in_memory(
    data: BeirData,
    embedder: Any,
    report: Progress,
    provider: str,
    replicate: int,
    vectors: str | None,
) -> Index:
    """Pack ``data``'s corpus (``replicate`` copies, distinct ids) in memory and load it."""
    from scidx.pack.packer import pack_records  # build-time module

    records = [
        {"id": did if copy == 1 else f"{did}~{copy}", "title": title, "text": text}
        for copy in range(1, replicate + 1)
        for did, title, text in data.corpus
    ]
    packed = pack_records(
        records,
        None,
        embedder=embedder,
        use_cache=provider != "hashing",
        progress=report,
        vectors=vectors or DEFAULT_ENCODING,
    )
    assert packed.data is not None  # an in-memory pack always returns its bytes
    # Queries are embedded by the embedder that packed (a local model folder, a plugin's own
    # settings): no second lookup of the model by its stamp, which needs $SCIDX_MODEL_DIR.
    return load_bytes(packed.data, source=f"{data.name} (in memory)", query_embedder=embedder)


_Rank = Callable[[str, int, str], Sequence[tuple[str, float]]]


def _ranker(
    index: Index, backend: Backend | None, reranker: Any, rerank_top: Any
) -> tuple[_Rank, Callable[[], None], _TimedReranker | None, dict[str, Any]]:
    """How each query is ranked: ``(rank, close, timed reranker, extra rank options)``.

    The backend's ``rank`` when there is one (the index is closed if it fails to start), else
    the packed index's own ``rank``, through the timed reranker when one is given.
    """
    close: Callable[[], None] = _no_close
    timed: _TimedReranker | None = None
    extra: dict[str, Any] = {}
    if backend is not None:
        try:
            rank, close = backend(index)
        except BaseException:
            index.close()
            raise
        return rank, close, timed, extra
    if reranker is not None:
        timed = _TimedReranker(reranker)
        extra = {"rerank": timed, "rerank_top": rerank_top}

    def rank_file(text: str, k: int, mode: str) -> Sequence[tuple[str, float]]:
        # Only ids and scores count here: rank() skips building hits and snippets.
        return index.rank(text, k=k, mode=mode, **extra)

    return rank_file, close, timed, extra


def _query_all(
    queries: dict[str, str],
    rank: Callable[[str, int, str], Sequence[tuple[str, float]]],
    index: Index,
    k: int,
    mode: str,
    lam: float | None,
    report: Progress,
    extra: Mapping[str, Any] | None = None,
) -> tuple[dict[str, dict[str, float]], list[float]]:
    """Rank every query: the run (query id -> {doc id: score}) and each query's seconds.

    ``lam``: rank with MMR at this weight, over the packed ``index`` (None: ``rank``).
    """
    runs: dict[str, dict[str, float]] = {}
    latencies: list[float] = []
    for i, (qid, text) in enumerate(queries.items()):
        t0 = time.perf_counter()
        if lam is None:
            ranked = rank(text, k, mode)
        else:
            # Only ids and scores count here: rank() skips building hits and snippets.
            ranked = index.rank(text, k=k, mode=mode, mmr=lam, **(extra or {}))
        latencies.append(time.perf_counter() - t0)
        if lam is None:
            runs[qid] = dict(ranked)
        else:
            # MMR reorders without changing scores; the metrics sort by score, so the run
            # carries the MMR order as descending pseudo-scores.
            runs[qid] = {doc: float(len(ranked) - i) for i, (doc, _) in enumerate(ranked)}
        report(f"query:{mode}", i + 1, len(queries))
    return runs, latencies


def _measured(
    data: BeirData,
    runs: dict[str, dict[str, float]],
    qrels: dict[str, dict[str, int]],
    latencies: Sequence[float],
    *,
    provider: str,
    model: str,
    mode: str,
    mmr: float | None,
    k: int,
    ingest: float,
    since: float,
    earlier: float,
) -> BenchRow:
    """Score ``runs`` against ``qrels`` and summarise ``latencies`` into one row.

    ``wall_s`` is the time reading ``data``, plus ``earlier`` seconds, plus the time from
    ``since`` (a ``time.perf_counter()`` value) until now, the metrics included.
    """
    means, per_query, _ = mean_metrics(runs, qrels, BENCH_METRICS)
    p50, p95, p99 = _percentiles(latencies)
    return BenchRow(
        dataset=data.name,
        split=data.split,
        provider=provider,
        model=model,
        mode=mode,
        mmr=mmr,
        k=k,
        queries=len(per_query),
        ndcg_10=means["ndcg@10"],
        recall_100=means["recall@100"],
        mrr_10=means["mrr@10"],
        ingest_s=ingest,
        query_p50_ms=p50,
        query_p95_ms=p95,
        query_p99_ms=p99,
        wall_s=data.read_seconds + earlier + time.perf_counter() - since,
    )


def _no_close() -> None:
    return None


class _TimedReranker:
    """A reranker that records the seconds of each call (the bench's ``rerank_p50_ms``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self.seconds: list[float] = []

    def stamp(self) -> Mapping[str, object]:
        stamp: Mapping[str, object] = self.inner.stamp()
        return stamp

    def rerank(self, query: str, candidates: Sequence[Any]) -> Sequence[float]:
        started = time.perf_counter()
        try:
            scores: Sequence[float] = self.inner.rerank(query, candidates)
            return scores
        finally:
            self.seconds.append(time.perf_counter() - started)


def run_bm25s(data: BeirData, *, k: int = 100, limit: int | None = None) -> BenchRow:
    """Measure bm25s (PyStemmer English stemming, English stop-words, defaults) on ``data``.

    The reference configuration the project's quality target is stated against. Each
    document is ``title + " " + text``, as BEIR's own BM25 baselines index it.

    Raises:
        ConfigError: bm25s or PyStemmer is not installed (``pip install bm25s PyStemmer``).
    """
    try:
        import bm25s  # type: ignore[import-untyped]
        import Stemmer  # type: ignore[import-not-found]
    except ImportError as exc:
        raise ConfigError(
            f"the bm25s comparison needs bm25s and PyStemmer ({exc}); "
            "pip install 'toolup-rag[bench]' or pip install bm25s PyStemmer"
        ) from None
    queries, qrels = _subset(data, limit)
    started = time.perf_counter()
    stemmer = Stemmer.Stemmer("english")
    ids = [did for did, _, _ in data.corpus]
    docs = [f"{title} {text}".strip() for _, title, text in data.corpus]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(docs, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    ingest = time.perf_counter() - started
    top = min(k, len(ids))
    runs: dict[str, dict[str, float]] = {}
    latencies: list[float] = []
    for qid, text in queries.items():
        t0 = time.perf_counter()
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        found, scores = retriever.retrieve(tokens, k=top, show_progress=False)
        latencies.append(time.perf_counter() - t0)
        runs[qid] = {ids[int(d)]: float(s) for d, s in zip(found[0], scores[0], strict=True)}
    row = _measured(
        data,
        runs,
        qrels,
        latencies,
        provider="bm25s",
        model=f"bm25s-{getattr(bm25s, '__version__', '?')}+stemmer-english",
        mode="keyword",
        mmr=None,
        k=k,
        ingest=ingest,
        since=started,
        earlier=0.0,
    )
    row.vectors = ""  # no vectors: bm25s is a keyword reference
    return row


def append_csv(path: str | Path, rows: Sequence[BenchRow]) -> None:
    """Append rows to a CSV file, writing the header when the file is new or empty.

    Raises:
        OutputError: The file cannot be written, or it already has a different header (it
            would be corrupted by appending); choose another ``--out``.
    """
    path = Path(path)
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else ""
    except OSError as exc:
        raise OutputError(f"cannot read {path}: {exc.strerror or exc}") from None
    header = ",".join(BENCH_COLUMNS)
    if existing.strip() and existing.splitlines()[0].strip() != header:
        raise OutputError(
            f"{path} has a different header than a bench CSV ({header}); "
            "choose another --out file or move the old one aside"
        )
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=BENCH_COLUMNS, lineterminator="\n")
    if not existing.strip():
        writer.writeheader()
    for row in rows:
        writer.writerow(row.to_dict())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8", newline="") as fh:
            if existing and not existing.endswith("\n"):
                fh.write("\n")
            fh.write(buf.getvalue())
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
