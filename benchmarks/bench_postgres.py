"""The same index in a .scidx file and in PostgreSQL + pgvector: export time, query latency, recall.

Usage (from the project root, with ``pip install -e '.[test]'``)::

    nice -n 10 .venv/bin/python benchmarks/bench_postgres.py [--shared ../shared] \
        [--sizes 5k,100k] [--queries 200] [--dims 256] [--json out.json] \
        [--modes pg_keyword,pg_hybrid_hnsw,...] [--packed DIR]

``--modes`` measures only the named rows (``file_keyword``, ``file_vector``, ``file_hybrid``,
``pg_keyword``, ``pg_vector_hnsw``, ``pg_vector_exact``, ``pg_hybrid_hnsw``,
``pg_hybrid_exact``, ``reference_hybrid``; the reference's ``tsvector`` column is built only
when ``reference_hybrid`` is measured); ``--packed DIR`` keeps each size's packed file as
``DIR/<size>.scidx`` and reuses it (the 1m pack alone takes tens of minutes). At 1m::

    nice -n 10 .venv/bin/python benchmarks/bench_postgres.py --sizes 1m --queries 100 \
        --modes file_keyword,file_hybrid,pg_keyword,pg_hybrid_hnsw --packed /tmp/scidx-bench

Corpora: SciFact (5,183 chunks, "5k") and SciFact repeated ×20 with distinct ids and sources
("100k", 103,660 chunks), packed with the offline hashing provider. For each size, in one run
and one process, against a throwaway PostgreSQL 18 + pgvector 0.8 cluster started by
``tests/support/pg_server.py`` (Unix socket, fsync off, default memory settings):

* pack time (the file) and full ``export_index`` time (postings + COPY + indexes), then a
  second export of the same index (up to date: nothing written) and an incremental one after
  editing 1% of the chunks;
* query p50/p95 over the first ``--queries`` SciFact train queries, k=10: keyword, vector
  (HNSW, ``hnsw.ef_search`` = 40), vector exact (sequential scan), hybrid — next to
  ``Index.rank`` on the file for the same queries;
* recall@10 of the HNSW vector search against the exact ranking, and whether the keyword
  top-10 equals the file's.

Vector mode is a text query, so the evidence rule applies (``scidx.index.search``): with the
hashing provider (no ``vectorFloor``) it ranks the chunks matching a query term by exact cosine,
in the file and in PostgreSQL alike, and the HNSW index takes no part: the vector rows then
measure that, and their recall against exact (or float32) is 1 by construction.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from scidx.embed.hashing import HashingEmbedder  # noqa: E402
from scidx.index.index import Index, load_bytes  # noqa: E402
from scidx.pack.packer import pack_records  # noqa: E402
from scidx.postgres import PostgresRetriever, export_index  # noqa: E402
from support.pg_server import PgServer  # noqa: E402


def read_scifact(shared: Path) -> tuple[list[dict[str, str]], list[str]]:
    folder = shared / "beir" / "scifact"
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    texts = {json.loads(x)["_id"]: json.loads(x)["text"] for x in (folder / "queries.jsonl").open()}
    qids: list[str] = []
    for line in list((folder / "qrels" / "train.tsv").open())[1:]:
        q = line.split("\t")[0]
        if q not in qids:
            qids.append(q)
        QRELS.setdefault(q, {})[line.split("\t")[1]] = int(line.split("\t")[2])
    QIDS.extend(qids)
    return corpus, [texts[q] for q in qids]


QRELS: dict[str, dict[str, int]] = {}
QIDS: list[str] = []


def records(corpus: list[dict[str, str]], copies: int) -> list[dict[str, str]]:
    return [
        {
            "id": f"{c}-{d['_id']}" if copies > 1 else d["_id"],
            "source": f"copy{c:02d}/{d['_id']}",
            "title": d.get("title", ""),
            "text": d.get("text", ""),
        }
        for c in range(copies)
        for d in corpus
    ]


def pack(
    recs: list[dict[str, str]], dims: int, cached: Path | None = None
) -> tuple[Index, float, bytes]:
    if cached is not None and cached.exists():
        data = cached.read_bytes()
        return load_bytes(data, source=str(cached)), float("nan"), data
    t0 = time.perf_counter()
    result = pack_records(recs, None, embedder=HashingEmbedder(dimensions=dims), use_cache=False)
    assert result.data is not None
    took = time.perf_counter() - t0
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.with_suffix(".tmp").write_bytes(result.data)
        cached.with_suffix(".tmp").replace(cached)
    return load_bytes(result.data, source="bench.scidx"), took, result.data


def latencies(fn: Any, queries: list[str]) -> tuple[float, float, list[Any]]:
    out = []
    samples = []
    for q in queries:
        t0 = time.perf_counter()
        out.append(fn(q))
        samples.append(time.perf_counter() - t0)
    samples.sort()
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    return statistics.median(samples) * 1000, p95 * 1000, out


def bench_size(
    server: PgServer, name: str, copies: int, corpus: list[dict[str, str]], queries: list[str],
    dims: int, incremental: bool, qrels: dict[str, dict[str, int]] | None,
    modes: set[str] | None = None, packed: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    import os

    row: dict[str, Any] = {"size": name, "load_average_at_start": os.getloadavg()[0]}
    recs = records(corpus, copies)
    idx, row["pack_s"], data = pack(recs, dims, packed / f"{name}.scidx" if packed else None)
    row["chunks"] = len(idx)
    table = f"bench_{name}"
    report = export_index(idx, server.dsn, table=table)
    row["export_s"] = round(report.seconds, 2)
    row["export_stages_s"] = {k: round(v, 2) for k, v in report.stages.items()}
    again = export_index(idx, server.dsn, table=table)
    row["export_again_s"] = round(again.seconds, 3)
    row["export_again_rows_written"] = again.rows_written
    if incremental:
        edited = [dict(r) for r in recs]
        step = 100
        for r in edited[::step]:
            r["text"] = r["text"] + " (edited)"
        idx2, _, _ = pack(edited, dims)
        inc = export_index(idx2, server.dsn, table=table)
        row["export_incremental_s"] = round(inc.seconds, 2)
        row["export_incremental_rows_written"] = inc.rows_written
        idx2.close()
        export_index(idx, server.dsn, table=table)  # back to the measured index
    import psycopg

    wanted = set(MODES) if modes is None else modes
    if "reference_hybrid" in wanted:
        reference_setup(server.dsn, table, row)

    with psycopg.connect(server.dsn) as conn:
        for label, rel in (
            ("table_mb", table),
            ("hnsw_mb", f"{table}_embedding_hnsw"),
            ("postings_mb", f"{table}_postings"),
            ("terms_table_mb", f"{table}_terms"),
            ("reference_tsvector_gin_mb", f"{table}_tsv_gin"),
        ):
            size = conn.execute("SELECT pg_total_relation_size(to_regclass(%s))", (rel,)).fetchone()
            row[label] = round((size[0] if size and size[0] is not None else 0) / 2**20, 1)
    row["file_mb"] = round(len(data) / 2**20, 1)

    def file_rank(mode: str) -> Any:
        return lambda q: idx.rank(q, k=10, mode=mode)

    with (
        PostgresRetriever(server.dsn, table=table) as pg,
        PostgresRetriever(server.dsn, table=table, exact=True) as pg_exact,
    ):

        def pg_rank(r: PostgresRetriever, mode: str) -> Any:
            return lambda q: r.rank(q, k=10, mode=mode)

        results: dict[str, Any] = {}
        for label, fn in (
            ("file_keyword", file_rank("keyword")),
            ("file_vector", file_rank("vector")),
            ("file_hybrid", file_rank("hybrid")),
            ("pg_keyword", pg_rank(pg, "keyword")),
            ("pg_vector_hnsw", pg_rank(pg, "vector")),
            ("pg_vector_exact", pg_rank(pg_exact, "vector")),
            ("pg_hybrid_hnsw", pg_rank(pg, "hybrid")),
            ("pg_hybrid_exact", pg_rank(pg_exact, "hybrid")),
            ("reference_hybrid", None),
        ):
            if label not in wanted:
                continue
            if label == "reference_hybrid":
                fn = reference_rank(server.dsn, table, pg)
            p50, p95, out = latencies(fn, queries)
            row[f"{label}_p50_ms"] = round(p50, 2)
            row[f"{label}_p95_ms"] = round(p95, 2)
            results[label] = out
    derived(row, results, queries, copies, server, table)
    with PostgresRetriever(server.dsn, table=table) as r:
        row["plans"] = plans(r, queries[0])
    if qrels is not None:
        from scidx.evaluation.metrics import mean_metrics

        for label in ("file_hybrid", "pg_hybrid_hnsw", "pg_hybrid_exact", "reference_hybrid",
                      "file_keyword", "pg_keyword"):  # fmt: skip
            if label not in results:
                continue
            runs = {
                q: dict(r)
                for q, r in zip(QIDS[: len(queries)], results[label], strict=True)
                if q in qrels
            }
            got_m = mean_metrics(runs, {q: qrels[q] for q in runs}, ["ndcg@10"])[0]
            row[f"{label}_ndcg@10"] = round(got_m["ndcg@10"], 4)
    idx.close()
    return row


MODES = (
    "file_keyword", "file_vector", "file_hybrid", "pg_keyword", "pg_vector_hnsw",
    "pg_vector_exact", "pg_hybrid_hnsw", "pg_hybrid_exact", "reference_hybrid",
)  # fmt: skip


def derived(
    row: dict[str, Any], results: dict[str, Any], queries: list[str], copies: int,
    server: PgServer, table: str,
) -> None:  # fmt: skip
    """Parity and recall figures, from the rows that were measured."""
    if "file_keyword" in results and "pg_keyword" in results:
        row["keyword_top10_equal_file"] = sum(
            a == b for a, b in zip(results["file_keyword"], results["pg_keyword"], strict=True)
        ) / len(queries)
    if "file_hybrid" in results and "pg_hybrid_hnsw" in results:
        row["hybrid_top10_ids_equal_file"] = sum(
            [x for x, _ in a] == [x for x, _ in b]
            for a, b in zip(results["file_hybrid"], results["pg_hybrid_hnsw"], strict=True)
        ) / len(queries)
    if "pg_vector_hnsw" not in results or "pg_vector_exact" not in results:
        return
    recall = []
    for approx, exact in zip(results["pg_vector_hnsw"], results["pg_vector_exact"], strict=True):
        want = {cid for cid, _ in exact}
        recall.append(len(want & {cid for cid, _ in approx}) / max(len(want), 1))
    row["hnsw_recall@10"] = round(statistics.mean(recall), 4)
    if "file_vector" in results:
        exact_vs_file = [
            len({x for x, _ in a} & {x for x, _ in b}) / max(len(b), 1)
            for a, b in zip(results["pg_vector_exact"], results["file_vector"], strict=True)
        ]
        row["exact_vector_overlap_with_file@10"] = round(statistics.mean(exact_vs_file), 4)
    if copies == 1:
        for ef in (40, 100, 200):
            with PostgresRetriever(server.dsn, table=table, ef_search=ef) as r:
                got = [r.rank(q, k=10, mode="vector") for q in queries]
            rec = [
                len({a for a, _ in g} & {b for b, _ in e}) / max(len(e), 1)
                for g, e in zip(got, results["pg_vector_exact"], strict=True)
            ]
            row[f"hnsw_recall@10_ef{ef}"] = round(statistics.mean(rec), 4)


def plans(r: PostgresRetriever, query: str) -> dict[str, str]:
    """``EXPLAIN (ANALYZE, BUFFERS)`` of the keyword and hybrid statements for ``query``."""
    from scidx.index.bm25 import query_terms, term_hash

    out = {}
    hashes = [int(np.uint64(term_hash(t)).view(np.int64)) for t in query_terms(query)]
    params = {"k": 10, "hashes": hashes, "alpha": 0.3, "q": r.embed(query), "prf": 3, "beta": 2.0}
    params["floor"] = r.sql_parameters(query)["floor"]  # the index's evidence floor
    conn = r._conn  # noqa: SLF001 - the retriever's own session settings
    r.rank(query, k=10, mode="hybrid")  # the session's settings (ef_search...) as in a query
    for mode in ("keyword", "hybrid"):
        stmt = (
            r._statements.keyword("TRUE", "")
            if mode == "keyword"
            else r._statements.hybrid("TRUE", "")
        )  # noqa: SLF001
        rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + stmt, params).fetchall()
        out[mode] = "\n".join(str(x[0]) for x in rows)
    return out


def compact(
    server: PgServer, corpus: list[dict[str, str]], queries: list[str], dims: int
) -> dict[str, Any]:
    """int8 and binary exports at 5k: recall@10 of their vector search against exact float32."""
    recs = records(corpus, 1)
    ref, _, _ = pack(recs, dims)
    want = [ref.rank(q, k=10, mode="vector") for q in queries]
    row: dict[str, Any] = {"size": "5k compact"}
    for encoding in ("int8", "binary"):
        t0 = time.perf_counter()
        result = pack_records(
            recs, None, embedder=HashingEmbedder(dimensions=dims), use_cache=False,
            vectors=encoding,
        )  # fmt: skip
        assert result.data is not None
        idx = load_bytes(result.data, source=f"{encoding}.scidx")
        row[f"{encoding}_pack_s"] = round(time.perf_counter() - t0, 2)
        table = f"bench_{encoding}"
        report = export_index(idx, server.dsn, table=table)
        row[f"{encoding}_export_s"] = round(report.seconds, 2)
        import psycopg

        with psycopg.connect(server.dsn) as conn:
            size = conn.execute("SELECT pg_total_relation_size(%s::regclass)", (table,)).fetchone()
            row[f"{encoding}_table_mb"] = round((size[0] if size else 0) / 2**20, 1)
        for label, got_fn in (
            ("file", lambda q, idx=idx: idx.rank(q, k=10, mode="vector")),
            ("pg_hnsw", None),
            ("pg_exact", None),
        ):
            if got_fn is None:
                r = PostgresRetriever(server.dsn, table=table, exact=label == "pg_exact")
                p50, _, got = latencies(lambda q, r=r: r.rank(q, k=10, mode="vector"), queries)
                r.close()
            else:
                p50, _, got = latencies(got_fn, queries)
            rec = [
                len({a for a, _ in g} & {b for b, _ in w}) / max(len(w), 1)
                for g, w in zip(got, want, strict=True)
            ]
            row[f"{encoding}_{label}_recall@10_vs_float32"] = round(statistics.mean(rec), 4)
            row[f"{encoding}_{label}_vector_p50_ms"] = round(p50, 2)
        idx.close()
    ref.close()
    return row


def reference_setup(dsn: str, table: str, row: dict[str, Any]) -> None:
    """The reference system's keyword leg: a stored tsvector with a GIN index (timed)."""
    import psycopg

    t0 = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS tsv tsvector GENERATED ALWAYS AS "
            "(to_tsvector('english', title || ' ' || text)) STORED"
        )
        conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_tsv_gin ON {table} USING gin (tsv)")
        conn.execute(f"VACUUM ANALYZE {table}")
    row["reference_tsvector_setup_s"] = round(time.perf_counter() - t0, 2)


#: The reference's hybrid statement: ts_rank over a tsvector match, pgvector cosine,
#: 0.7 * dense + 0.3 * keyword over the union of both legs' top 50 (as specified there).
REFERENCE_SQL = """
WITH q AS (SELECT plainto_tsquery('english', %(text)s) AS tq),
kw AS (SELECT doc, ts_rank(tsv, q.tq) AS r FROM {t}, q WHERE tsv @@ q.tq
       ORDER BY r DESC LIMIT 50),
vec AS (SELECT doc, 1 - (embedding <=> %(v)s::vector) AS s FROM {t}
        ORDER BY embedding <=> %(v)s::vector LIMIT 50)
SELECT c.id, (0.7 * coalesce(vec.s, 0) + 0.3 * coalesce(kw.r, 0))::real AS score
FROM (SELECT doc FROM kw UNION SELECT doc FROM vec) u
LEFT JOIN kw USING (doc) LEFT JOIN vec USING (doc) JOIN {t} c USING (doc)
ORDER BY score DESC, c.id LIMIT 10
"""


def reference_rank(dsn: str, table: str, pg: PostgresRetriever) -> Any:
    import psycopg

    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("SET hnsw.ef_search = 100")
    statement = REFERENCE_SQL.format(t=table)

    def rank(q: str) -> list[tuple[str, float]]:
        vec = pg.embed(q)
        v = "[" + ",".join(repr(float(x)) for x in vec) + "]" if vec is not None else None
        rows = conn.execute(statement, {"text": q, "v": v}).fetchall()
        return [(str(a), float(b)) for a, b in rows]

    return rank


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--sizes", default="5k,100k", help="5k, 100k and/or 1m, comma-separated")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--modes", default=None, help="measure only these rows (comma-separated)")
    ap.add_argument("--packed", type=Path, default=None, help="keep/reuse packed files here")
    args = ap.parse_args()
    corpus, queries = read_scifact(args.shared)
    queries = queries[: args.queries]
    copies = {"5k": 1, "100k": 20, "1m": 193}
    server = PgServer().start()
    rows = []
    try:
        modes = None if args.modes is None else set(args.modes.split(","))
        if modes is not None and modes - set(MODES):
            raise SystemExit(f"unknown --modes: {sorted(modes - set(MODES))}")
        if "5k" in args.sizes.split(",") and modes is None:
            row = compact(server, corpus, queries, args.dims)
            print(json.dumps(row), flush=True)  # noqa: T201
            rows.append(row)
        for name in args.sizes.split(","):
            n = copies[name]
            row = bench_size(
                server, name, n, corpus, queries, args.dims, n <= 1,
                QRELS if n == 1 else None, modes, args.packed,
            )  # fmt: skip
            print(json.dumps(row), flush=True)  # noqa: T201
            rows.append(row)
    finally:
        server.stop()
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
