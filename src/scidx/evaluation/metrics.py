"""Retrieval quality: standard IR metrics, the eval-fixture harness and the baseline gate.

Metrics follow trec_eval as exposed by pytrec_eval (what BEIR reports):

* A run is ranked by score descending; equal scores are ordered by document id
  **descending** (trec_eval's tie rule), see :func:`rank_by_score`. Lists that are already
  ranked (``Sequence[str]``) are used as given.
* **Recall@k**: relevant documents (grade > 0) in the top ``k`` / all relevant documents.
* **MRR@k**: 1 / rank of the first relevant document within the top ``k``, else 0.
* **nDCG@k**: DCG with *linear* gain (the grade itself, as trec_eval's ``ndcg_cut``; grades
  <= 0 gain nothing) and ``log2(rank + 1)`` discount, divided by the DCG of the ideal ranking
  of all judged grades, both cut at ``k``.
* A query with no relevant document (no grade > 0) has no defined recall or nDCG: it is left
  out of the averages and counted in ``skipped`` (pytrec_eval would score it 0; for datasets
  where every judged query has a relevant document, such as SciFact, the two agree). A query
  the system returns nothing for scores 0 (it is not left out).

The harness (:func:`run_eval`) reads an eval fixture, runs every query in each mode and
reports Recall@1/5/10, MRR@10 and nDCG@10 per mode plus per-query values and misses (no
relevant chunk in the top 10); :func:`compare_to_baseline` is the regression gate.

Runtime module: numpy, msgpack, xxhash, the stdlib and scidx runtime modules only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scidx.errors import ConfigError, InputError, QualityRegressionError
from scidx.index.index import Index, load, load_bytes
from scidx.index.retrieval import RetrievalRequest, Retriever
from scidx.index.search import MODES

__all__ = [
    "EVAL_K",
    "EVAL_METRICS",
    "GATED_METRICS",
    "QUALITY_EXIT_CODE",
    "EvalFixture",
    "EvalQuery",
    "GateResult",
    "QualityRegressionError",
    "Regression",
    "compare_to_baseline",
    "evaluate_queries",
    "load_fixture",
    "mean_metrics",
    "mrr_at",
    "ndcg_at",
    "query_metrics",
    "rank_by_score",
    "recall_at",
    "run_eval",
]

#: How many results each eval query looks at.
EVAL_K = 10
#: The metrics ``eval`` reports, in display order.
EVAL_METRICS = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")
#: The metrics the baseline gate checks.
GATED_METRICS = ("recall@5", "ndcg@10")
#: The exit code of ``toolup-rag eval`` when the gate fails.
QUALITY_EXIT_CODE = QualityRegressionError.exit_code
#: Floating-point slack when comparing with a baseline read back from JSON.
_EPS = 1e-9

Qrels = Mapping[str, int]
Ranking = Sequence[str] | Mapping[str, float]


# ---------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------


def rank_by_score(scores: Mapping[str, float]) -> list[str]:
    """Order document ids as trec_eval does: score descending, ties by id descending."""
    return [d for d, _ in sorted(scores.items(), key=lambda t: (t[1], t[0]), reverse=True)]


def _ranked(run: Ranking) -> list[str]:
    return rank_by_score(run) if isinstance(run, Mapping) else list(run)


def recall_at(run: Ranking, qrels: Qrels, k: int) -> float:
    """Recall@k: share of the relevant documents (grade > 0) found in the top ``k``.

    Returns 0.0 when no document is relevant (callers skip such queries).
    """
    relevant = {d for d, g in qrels.items() if g > 0}
    if not relevant:
        return 0.0
    top = _ranked(run)[:k]
    return len(relevant.intersection(top)) / len(relevant)


def mrr_at(run: Ranking, qrels: Qrels, k: int) -> float:
    """Reciprocal rank of the first relevant document within the top ``k`` (else 0)."""
    for rank, doc in enumerate(_ranked(run)[:k], start=1):
        if qrels.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def ndcg_at(run: Ranking, qrels: Qrels, k: int) -> float:
    """nDCG@k with linear gain and log2 discount, as trec_eval's ``ndcg_cut``."""
    dcg = 0.0
    for rank, doc in enumerate(_ranked(run)[:k], start=1):
        gain = qrels.get(doc, 0)
        if gain > 0:
            dcg += gain / math.log2(rank + 1)
    ideal_gains = sorted((g for g in qrels.values() if g > 0), reverse=True)[:k]
    ideal = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal_gains, start=1))
    return dcg / ideal if ideal > 0 else 0.0


_METRIC_FUNCS: Mapping[str, Callable[[Ranking, Qrels, int], float]] = {
    "recall": recall_at,
    "mrr": mrr_at,
    "ndcg": ndcg_at,
}


def query_metrics(run: Ranking, qrels: Qrels, metrics: Sequence[str]) -> dict[str, float]:
    """Compute named metrics (``"ndcg@10"``, ``"recall@100"``, ``"mrr@10"``) for one query."""
    ranked = _ranked(run)
    out: dict[str, float] = {}
    for name in metrics:
        kind, _, cut = name.partition("@")
        func = _METRIC_FUNCS.get(kind)
        if func is None or not cut.isdigit() or int(cut) < 1:
            raise ConfigError(f"unknown metric {name!r}; use recall@K, mrr@K or ndcg@K with K >= 1")
        out[name] = func(ranked, qrels, int(cut))
    return out


def mean_metrics(
    runs: Mapping[str, Ranking], qrels: Mapping[str, Qrels], metrics: Sequence[str]
) -> tuple[dict[str, float], dict[str, dict[str, float]], list[str]]:
    """Average metrics over the queries of ``qrels`` that have a relevant document.

    Args:
        runs: Query id → ranked ids or ``{doc id: score}``; a query absent here scores 0.
        qrels: Query id → ``{doc id: grade}``.
        metrics: Metric names (see :func:`query_metrics`).

    Returns:
        ``(means, per_query, skipped)``: the averages, each evaluated query's values, and
        the ids of queries left out because nothing is relevant for them.
    """
    per_query: dict[str, dict[str, float]] = {}
    skipped: list[str] = []
    for qid in sorted(qrels):
        judged = qrels[qid]
        if not any(g > 0 for g in judged.values()):
            skipped.append(qid)
            continue
        per_query[qid] = query_metrics(runs.get(qid, ()), judged, metrics)
    n = len(per_query)
    means = {m: (sum(v[m] for v in per_query.values()) / n if n else 0.0) for m in metrics}
    return means, per_query, skipped


# ---------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalQuery:
    """One fixture query: its id, text and relevant chunks (id or ``source#anchor`` → grade)."""

    id: str
    query: str
    relevant: Mapping[str, int]


@dataclass
class EvalFixture:
    """A parsed eval fixture.

    Attributes:
        path: The fixture file.
        queries: The queries, in file order.
        index_path: The index it names (resolved against the fixture's folder), if any.
        chunks: Inline chunk records (the second fixture shape), if any.
        modes: Modes named by the fixture (default: all three).
    """

    path: Path
    queries: list[EvalQuery]
    index_path: Path | None = None
    chunks: list[dict[str, Any]] | None = None
    modes: tuple[str, ...] = MODES


def _where(path: Path, what: str) -> str:
    return f"eval fixture {path}: {what}"


def _relevant(path: Path, position: int, item: Mapping[str, Any], key: str) -> dict[str, int]:
    raw = item.get(key)
    if isinstance(raw, list) and raw and all(isinstance(x, str) and x for x in raw):
        return dict.fromkeys(raw, 1)
    if (
        isinstance(raw, Mapping)
        and raw
        and all(
            isinstance(k, str) and k and isinstance(v, int) and not isinstance(v, bool)
            for k, v in raw.items()
        )
    ):
        return dict(raw)
    raise ConfigError(
        _where(
            path,
            f"query #{position} ({item.get('id')!r}) needs `{key}`: a non-empty list of chunk "
            'ids or "source#anchor" strings, or an object mapping them to integer grades',
        )
    )


def load_fixture(path: str | Path) -> EvalFixture:
    """Read and validate an eval fixture.

    Two shapes are accepted::

        {"index": "docs.scidx", "modes": ["keyword", "hybrid"],          # modes optional
         "queries": [{"id": "q1", "query": "...", "relevant": ["a.md#setup", "b.md:x:0"]}]}

        {"chunks": [{"chunkId": "c1", "content": "...", "metadata": {"title": "..."}}],
         "queries": [{"id": "q1", "query": "...", "relevantChunkIds": ["c1"]}]}

    ``relevant`` may also map keys to integer grades (``{"a.md#setup": 2}``).

    Raises:
        InputError: The file cannot be read or is not JSON.
        ConfigError: The fixture is malformed (the message names the field and query).
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read eval fixture {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"eval fixture {path} is not valid JSON: {exc}") from None
    if not isinstance(doc, Mapping):
        raise ConfigError(_where(path, "the top level must be a JSON object"))
    raw_queries = doc.get("queries")
    if not isinstance(raw_queries, list) or not raw_queries:
        raise ConfigError(_where(path, "`queries` must be a non-empty list"))
    chunks = doc.get("chunks")
    inline = chunks is not None
    if inline and (not isinstance(chunks, list) or not chunks):
        raise ConfigError(_where(path, "`chunks` must be a non-empty list"))
    queries = _fixture_queries(path, raw_queries, "relevantChunkIds" if inline else "relevant")
    modes = _fixture_modes(path, doc)
    index_path: Path | None = None
    if not inline:
        index = doc.get("index")
        if index is not None and (not isinstance(index, str) or not index):
            raise ConfigError(_where(path, "`index` must be a path string"))
        if index:
            index_path = (path.parent / index).resolve()
    inline_chunks = list(chunks) if isinstance(chunks, list) else None
    return EvalFixture(path, queries, index_path, inline_chunks, modes)


def _fixture_queries(path: Path, raw_queries: list[Any], key: str) -> list[EvalQuery]:
    """The fixture's queries, each checked (unique non-empty id, non-empty text, judgements)."""
    queries: list[EvalQuery] = []
    seen: set[str] = set()
    for position, item in enumerate(raw_queries):
        if not isinstance(item, Mapping):
            raise ConfigError(_where(path, f"query #{position} is not an object"))
        qid, text = item.get("id"), item.get("query")
        if not isinstance(qid, str) or not qid:
            raise ConfigError(_where(path, f"query #{position} needs a non-empty string `id`"))
        if qid in seen:
            raise ConfigError(_where(path, f"query id {qid!r} is used twice"))
        seen.add(qid)
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(_where(path, f"query {qid!r} needs a non-empty string `query`"))
        queries.append(EvalQuery(qid, text, _relevant(path, position, item, key)))
    return queries


def _fixture_modes(path: Path, doc: Mapping[str, Any]) -> tuple[str, ...]:
    """The fixture's ``modes`` (default: every mode)."""
    if "modes" not in doc:
        return MODES
    raw = doc["modes"]
    if not isinstance(raw, list) or not raw or not all(m in MODES for m in raw):
        raise ConfigError(_where(path, f"`modes` must be a non-empty list of {', '.join(MODES)}"))
    return tuple(raw)


def _records(fixture: EvalFixture) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for position, chunk in enumerate(fixture.chunks or []):
        if not isinstance(chunk, Mapping):
            raise ConfigError(_where(fixture.path, f"chunk #{position} is not an object"))
        cid, content = chunk.get("chunkId"), chunk.get("content")
        if not isinstance(cid, str) or not cid or not isinstance(content, str):
            raise ConfigError(
                _where(
                    fixture.path,
                    f"chunk #{position} needs a string `chunkId` and a string `content`",
                )
            )
        meta = chunk.get("metadata") or {}
        if not isinstance(meta, Mapping):
            raise ConfigError(_where(fixture.path, f"chunk {cid!r}: `metadata` must be an object"))
        record: dict[str, Any] = {
            "id": cid,
            "text": content,
            "metadata": {
                str(k): v if isinstance(v, str) else json.dumps(v) for k, v in meta.items()
            },
        }
        for name in ("title", "source", "anchor"):
            if isinstance(meta.get(name), str):
                record[name] = meta[name]
        out.append(record)
    return out


def _open_fixture_index(fixture: EvalFixture, index: str | Path | Index | None) -> Index:
    if isinstance(index, Index):
        return index
    if index is not None:
        return load(index)
    if fixture.chunks is not None:
        from scidx.pack.packer import pack_records  # build-time module: only for inline fixtures

        result = pack_records(_records(fixture), None, use_cache=False)
        assert result.data is not None  # an in-memory pack always has data
        return load_bytes(result.data, source=f"{fixture.path} (inline chunks)")
    if fixture.index_path is None:
        raise ConfigError(
            _where(fixture.path, "it names no `index` and has no `chunks`; pass --index INDEX")
        )
    try:
        return load(fixture.index_path)
    except FileNotFoundError:
        raise ConfigError(
            _where(
                fixture.path,
                f"its index {fixture.index_path} does not exist; pack it first "
                "(`toolup-rag pack-docs`) or pass --index INDEX",
            )
        ) from None


# ---------------------------------------------------------------------------------------------
# Running an eval
# ---------------------------------------------------------------------------------------------


def _check_keys(fixture: EvalFixture, idx: Index | Retriever) -> None:
    known: set[str] = set()
    if isinstance(idx, Index):
        for row in range(len(idx)):
            hit = idx.chunk(row, snippet_chars=1)
            known.add(hit.id)
            known.add(f"{hit.source}#{hit.anchor}")
    else:
        # Another retriever (PostgreSQL) checks the keys only when it can list its chunks.
        keys = getattr(idx, "chunk_keys", None)
        if keys is None:
            return
        for cid, source, anchor in keys():
            known.add(cid)
            known.add(f"{source}#{anchor}")
    for q in fixture.queries:
        unknown = sorted(k for k in q.relevant if k not in known)
        if unknown:
            raise ConfigError(
                _where(
                    fixture.path,
                    f"query {q.id!r} names relevant chunks the index does not have: "
                    f"{', '.join(unknown)}. Fix the fixture (anchors change when headings "
                    "do) or pack the index it was written for",
                )
            )


def evaluate_queries(
    idx: Index | Retriever,
    queries: Sequence[EvalQuery],
    mode: str,
    *,
    k: int = EVAL_K,
) -> dict[str, Any]:
    """Run ``queries`` against ``idx`` (an index or any retriever) in one mode; score them.

    A hit counts for a relevance key when its chunk id equals the key or its
    ``source#anchor`` does; each key counts once (its best-ranked chunk), so several parts
    of one section do not inflate recall.

    Returns:
        ``{"summary": {metric: mean, "queries": n, "skipped": [...]}, "misses": [ids],
        "queries": {id: {metric: value, "top": [keys]}}}``.
    """
    runs: dict[str, list[str]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in queries:
        hits: Sequence[Any] = (
            idx.search(q.query, k=k * 3, mode=mode, snippet_chars=1, group=None)
            if isinstance(idx, Index)
            else idx.retrieve(RetrievalRequest(q.query, k=k * 3, mode=mode, group=None))
        )
        ranked: list[str] = []
        for h in hits:
            anchor_key = f"{h.source}#{h.anchor}"
            key = h.id if h.id in q.relevant else anchor_key if anchor_key in q.relevant else h.id
            if key not in ranked:
                ranked.append(key)
        runs[q.id] = ranked[:k]
        qrels[q.id] = dict(q.relevant)
    means, per_query, skipped = mean_metrics(runs, qrels, EVAL_METRICS)
    details: dict[str, dict[str, Any]] = {}
    misses: list[str] = []
    for q in queries:
        if q.id not in per_query:
            continue
        values: dict[str, Any] = {m: round(v, 6) for m, v in per_query[q.id].items()}
        values["top"] = runs[q.id]
        details[q.id] = values
        if not any(q.relevant.get(key, 0) > 0 for key in runs[q.id]):
            misses.append(q.id)
    summary: dict[str, Any] = {m: round(v, 6) for m, v in means.items()}
    summary["queries"] = len(per_query)
    summary["skipped"] = skipped
    return {"summary": summary, "misses": misses, "queries": details}


def run_eval(
    fixture: EvalFixture | str | Path,
    *,
    index: str | Path | Index | None = None,
    modes: Sequence[str] | None = None,
    retriever: Retriever | None = None,
) -> dict[str, Any]:
    """Evaluate retrieval on a fixture.

    Args:
        fixture: The fixture (or its path).
        index: The index to evaluate (path or open index); default the fixture's own
            (``index``, or its inline ``chunks`` packed in memory with the offline provider).
        modes: Modes to run (default: the fixture's ``modes``, else all three).
        retriever: Evaluate this retriever instead of an index (e.g. a
            ``scidx.postgres.PostgresRetriever``); the report names it by its ``name``.

    Returns:
        The report: ``{"fixture", "index", "k", "modes": {mode: evaluate_queries(...)}}``,
        ready for ``json.dump`` (and usable as a baseline).

    Raises:
        ConfigError: A malformed fixture, or relevant keys the index does not have.
        IndexFormatError: The index is not a valid ``.scidx``.
        QueryError: A mode is unknown.
    """
    fx = fixture if isinstance(fixture, EvalFixture) else load_fixture(fixture)
    chosen = tuple(modes) if modes else fx.modes
    for mode in chosen:
        if mode not in MODES:
            raise ConfigError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    if retriever is not None:
        _check_keys(fx, retriever)
        return {
            "fixture": fx.path.name,
            "index": str(getattr(retriever, "name", "") or type(retriever).__name__),
            "k": EVAL_K,
            "modes": {mode: evaluate_queries(retriever, fx.queries, mode) for mode in chosen},
        }
    idx = _open_fixture_index(fx, index)
    owned = not isinstance(index, Index)
    try:
        _check_keys(fx, idx)
        report: dict[str, Any] = {
            "fixture": fx.path.name,
            "index": Path(idx.source).name if fx.chunks is None or index else "(inline chunks)",
            "k": EVAL_K,
            "modes": {mode: evaluate_queries(idx, fx.queries, mode) for mode in chosen},
        }
    finally:
        if owned:
            idx.close()
    return report


# ---------------------------------------------------------------------------------------------
# The gate
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Regression:
    """One metric that fell: for a whole mode (``query`` is None) or for one query."""

    mode: str
    metric: str
    baseline: float
    current: float
    query: str | None = None

    def describe(self) -> str:
        """A one-line description for the terminal."""
        where = f"{self.mode} query {self.query}" if self.query else f"{self.mode} mean"
        return f"{where}: {self.metric} {self.baseline:.4f} → {self.current:.4f}"


@dataclass
class GateResult:
    """The outcome of :func:`compare_to_baseline`.

    Attributes:
        failed: Mean regressions beyond the tolerance (the gate fails when non-empty).
        queries: Per-query drops of a gated metric in the modes compared (informational,
            and what ``eval`` prints as "regressed queries").
        compared: Modes present in both reports.
    """

    failed: list[Regression] = field(default_factory=list)
    queries: list[Regression] = field(default_factory=list)
    compared: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether no gated mean fell beyond the tolerance."""
        return not self.failed


def compare_to_baseline(
    current: Mapping[str, Any], baseline: Mapping[str, Any], *, tolerance: float = 0.05
) -> GateResult:
    """Compare an eval report with a baseline report (an earlier ``--out``).

    The gate fails for a mode when its mean Recall@5 or nDCG@10 is below
    ``baseline × (1 - tolerance)`` (a *relative* drop). Modes missing from either report
    are not compared.

    Raises:
        ConfigError: ``tolerance`` is outside [0, 1) or the baseline is not an eval report.
    """
    if not isinstance(tolerance, (int, float)) or not 0.0 <= float(tolerance) < 1.0:
        raise ConfigError(f"tolerance must be in [0, 1), got {tolerance!r} (0.05 means 5%)")
    base_modes = baseline.get("modes") if isinstance(baseline, Mapping) else None
    if not isinstance(base_modes, Mapping):
        raise ConfigError("the baseline is not an eval report (no `modes` object)")
    result = GateResult()
    for mode, cur in current.get("modes", {}).items():
        base = base_modes.get(mode)
        if not isinstance(base, Mapping) or "summary" not in base:
            continue
        result.compared.append(mode)
        for metric in GATED_METRICS:
            was = float(base["summary"].get(metric, 0.0))
            now = float(cur["summary"].get(metric, 0.0))
            if now < was * (1.0 - tolerance) - _EPS:
                result.failed.append(Regression(mode, metric, was, now))
        base_q = base.get("queries") or {}
        for qid in sorted(base_q):
            for metric in GATED_METRICS:
                was = float(base_q[qid].get(metric, 0.0))
                now = float(cur["queries"].get(qid, {}).get(metric, 0.0))
                if now < was - _EPS:
                    result.queries.append(Regression(mode, metric, was, now, qid))
    return result
