"""Export to a real PostgreSQL + pgvector and search there (tests/support/pg_server.py starts it).

One throwaway cluster serves the whole module; each test writes its own tables.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from scidx.embed.hashing import HashingEmbedder
from scidx.errors import DatabaseError
from scidx.evaluation.metrics import mean_metrics
from scidx.index.bm25 import query_terms, term_hash
from scidx.index.index import Index, load_bytes
from scidx.index.retrieval import IndexRetriever, RetrievalRequest
from scidx.pack.packer import pack_docs, pack_records
from scidx.postgres import PostgresRetriever, export_index
from support.cli import run
from support.pg_server import PASSWORD, PASSWORD_ROLE, PgServer

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    server = PgServer()
    try:
        server.start()
    except Exception:
        log = server.log()
        server.stop()
        raise AssertionError(f"the test PostgreSQL did not start; its log:\n{log}") from None
    try:
        yield server
    finally:
        server.stop()


def _record(i: int, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"doc{i:02d}",
        "title": extra.pop("title", f"Page {i}"),
        "source": extra.pop("source", f"guide/page{i:02d}.md"),
        "anchor": f"section-{i}",
        "headingPath": extra.pop("headingPath", [f"Page {i}", f"Section {i}"]),
        "text": text,
        **extra,
    }


TEXTS = [
    "Install kelpie with the package manager; the installer checks the checksum.",
    "Configure the batch size and the compression algorithm in kelpie.toml.",
    "Ship logs to Azure blob storage or to an S3 bucket with retries.",
    "Uploads fail with access denied when the credentials expired.",
    "The checkpoint file grows when rotation is disabled; prune old entries.",
    "Run kelpie as a sidecar container in a Kubernetes pod.",
    "Rate limits: HTTP 503 means throttling; kelpie backs off exponentially.",
    "Verify the download: compare the sha256 checksum with the published one.",
]


def _records(texts: list[str] = TEXTS) -> list[dict[str, Any]]:
    out = []
    for i, text in enumerate(texts):
        meta = {"section": "ops" if i % 2 else "guide", "weight": str(i)}
        source = f"ops/page{i:02d}.md" if i % 2 else f"guide/page{i:02d}.md"
        out.append(_record(i, text, source=source, metadata=meta))
    return out


def _pack(records: list[dict[str, Any]], dims: int = 64, vectors: str = "float32") -> Index:
    result = pack_records(
        records,
        None,
        embedder=HashingEmbedder(dimensions=dims),
        use_cache=False,
        url_template="https://docs.example.com/{path}#{anchor}",
        vectors=vectors,
    )
    assert result.data is not None
    return load_bytes(result.data, source="memory.scidx")


def _row_versions(pg: PgServer, table: str) -> dict[str, str]:
    """chunk id -> the row version's xmin: a rewritten row gets a new one."""
    with psycopg.connect(pg.dsn) as conn:
        rows = conn.execute(f"SELECT id, xmin::text FROM {table}").fetchall()
    return {str(a): str(b) for a, b in rows}


def _file_matches(idx: Index, request: RetrievalRequest) -> list[tuple[str, float]]:
    return [(m.id, m.score) for m in IndexRetriever(idx).retrieve(request)]


def _pg_matches(r: PostgresRetriever, request: RetrievalRequest) -> list[tuple[str, float]]:
    return [(m.id, m.score) for m in r.retrieve(request)]


# ---------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------


def test_export_writes_rows_indexes_and_stamp(pg: PgServer) -> None:
    idx = _pack(_records())
    report = export_index(idx, pg.dsn, table="t_export")
    assert (report.full, report.inserted, report.updated, report.deleted) == (True, 8, 0, 0)
    assert report.reason == "new table" and report.hnsw
    with psycopg.connect(pg.dsn) as conn:
        n = conn.execute("SELECT count(*) FROM t_export").fetchone()
        assert n is not None and n[0] == 8
        row = conn.execute(
            "SELECT source, anchor, heading_path, title, text, metadata, url, "
            "vector_dims(embedding) FROM t_export WHERE id = 'doc03'"
        ).fetchone()
        assert row == (
            "ops/page03.md",
            "section-3",
            ["Page 3", "Section 3"],
            "Page 3",
            TEXTS[3],
            {"section": "ops", "weight": "3"},
            "https://docs.example.com/ops/page03#section-3",
            64,
        )
        indexes = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 't_export'"
            )
        }
        assert "USING hnsw (embedding vector_cosine_ops)" in indexes["t_export_embedding_hnsw"]
        assert "USING hash (id)" in indexes["t_export_id"]
        assert "USING hash (source)" in indexes["t_export_source"]
        postings = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 't_export_postings'"
            )
        }
        assert "(term_id, doc) INCLUDE (impact)" in postings["t_export_postings_pkey"]
        comments = dict(
            conn.execute(
                "SELECT relname::text, obj_description(oid, 'pg_class') FROM pg_class "
                "WHERE relname LIKE 't_export%%' AND relkind = 'r'"
            ).fetchall()
        )
        assert comments == {
            "t_export": "scidx export t_export: chunks",
            "t_export_postings": "scidx export t_export: postings",
            "t_export_terms": "scidx export t_export: terms",
            "t_export_meta": "scidx export t_export: meta",
        }
        meta = dict(conn.execute("SELECT key, value FROM t_export_meta").fetchall())
        assert meta["stamp"] == idx.stamp
        assert meta["tokenizer"] == idx.meta["bm25"]["tokenizer"]
        assert meta["bm25"] == {"k1": 1.2, "b": 0.75, "headingWeight": 2.0}
        assert meta["stats"]["chunks"] == 8
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables")}
        assert not any("__load" in t for t in tables)


def test_export_twice_writes_nothing(pg: PgServer) -> None:
    idx = _pack(_records())
    export_index(idx, pg.dsn, table="t_twice")
    before = _row_versions(pg, "t_twice")
    with psycopg.connect(pg.dsn) as conn:
        xid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()
    again = export_index(idx, pg.dsn, table="t_twice")
    assert again.up_to_date and again.rows_written == 0 and again.unchanged == 8
    assert (again.terms_written, again.terms_deleted) == (0, 0)
    assert _row_versions(pg, "t_twice") == before
    with psycopg.connect(pg.dsn) as conn:
        # No transaction wrote anything in between: every table's rows predate this one.
        for table in ("t_twice", "t_twice_terms", "t_twice_meta"):
            newer = conn.execute(
                f"SELECT count(*) FROM {table} WHERE xmin::text::bigint > %s::bigint",
                (xid[0] if xid else 0,),
            ).fetchone()
            assert newer == (0,), table


def test_reexport_after_an_edit_writes_only_the_changed_rows(pg: PgServer) -> None:
    v1 = _pack(_records())
    export_index(v1, pg.dsn, table="t_edit")
    before = _row_versions(pg, "t_edit")
    edited = _records()
    edited[2]["text"] = "Ship logs to Google Cloud Storage buckets; retries back off."
    del edited[5]
    edited.append(_record(9, "A brand new page about kelpie doctor diagnostics."))
    v2 = _pack(edited)
    report = export_index(v2, pg.dsn, table="t_edit")
    assert not report.full and not report.up_to_date
    assert (report.inserted, report.updated, report.deleted, report.unchanged) == (1, 1, 1, 6)
    assert report.rows_written == 3 and report.terms_written > 0
    after = _row_versions(pg, "t_edit")
    assert set(after) == {r["id"] for r in edited}
    unchanged = set(before) - {"doc02", "doc05"}
    assert {k: after[k] for k in unchanged} == {k: before[k] for k in unchanged}
    assert after["doc02"] != before["doc02"]
    # Corpus statistics moved (N, df, avgdl): PostgreSQL still ranks exactly like the new file.
    with PostgresRetriever(pg.dsn, table="t_edit") as r:
        for q in ("ship logs to cloud storage", "kelpie doctor", "checksum", "kubernetes pod"):
            request = RetrievalRequest(q, k=8, mode="keyword")
            assert _pg_matches(r, request) == _file_matches(v2, request)
    with psycopg.connect(pg.dsn) as conn:
        terms = conn.execute("SELECT count(*) FROM t_edit_terms").fetchone()
    assert terms == (len(v2._live().corpus.bm25.term_hash),)
    _assert_max_impacts(pg, "t_edit")
    # N and avgdl moved: the postings table was rewritten (fresh, marked, its key renamed).
    with psycopg.connect(pg.dsn) as conn:
        mark = conn.execute(
            "SELECT obj_description('t_edit_postings'::regclass, 'pg_class'), "
            "to_regclass('t_edit_postings_pkey') IS NOT NULL, "
            "to_regclass('t_edit__load_postings') IS NULL"
        ).fetchone()
    assert mark == ("scidx export t_edit: postings", True, True)
    # The exact cut (forced on these few postings) relies on max_impact: still the file's.
    with _every_query_cut(), PostgresRetriever(pg.dsn, table="t_edit") as r:
        for q in ("ship logs to cloud storage", "kelpie doctor", "checksum", "kubernetes pod"):
            for mode in ("keyword", "hybrid"):
                request = RetrievalRequest(q, k=3, mode=mode)
                got, want = _pg_matches(r, request), _file_matches(v2, request)
                assert [m[0] for m in got] == [m[0] for m in want], (q, mode)


def _assert_max_impacts(pg: PgServer, table: str) -> None:
    """Every term's max_impact is the largest impact of its postings (the exact cut's bound)."""
    with psycopg.connect(pg.dsn) as conn:
        wrong = conn.execute(
            f"SELECT count(*) FROM {table}_terms t WHERE max_impact IS DISTINCT FROM "
            f"(SELECT max(impact) FROM {table}_postings p WHERE p.term_id = t.term_id)"
        ).fetchone()
    assert wrong == (0,)


@contextlib.contextmanager
def _every_query_cut() -> Iterator[None]:
    """Run the keyword cut (scidx.postgres.queries) for every query, however few postings."""
    from scidx.postgres import queries

    saved = queries.PRUNE_POSTINGS
    queries.PRUNE_POSTINGS = 0
    try:
        yield
    finally:
        queries.PRUNE_POSTINGS = saved


def test_an_edit_that_keeps_the_corpus_statistics_recomputes_only_its_terms(
    pg: PgServer,
) -> None:
    # Same chunk count and lengths (N, avgdl unchanged), one word swapped: only the impacts of
    # the terms whose df (so idf) moved are recomputed, and ranking still equals the file's.
    v1 = _pack(_records())
    export_index(v1, pg.dsn, table="t_swap")
    texts = list(TEXTS)
    texts[3] = texts[3].replace("expired", "kubernetes")
    v2 = _pack(_records(texts))
    assert v2.meta["bm25"]["avgdl"] == v1.meta["bm25"]["avgdl"]
    with psycopg.connect(pg.dsn) as conn:
        sql = (
            "SELECT t.term_hash, p.doc, p.xmin::text FROM t_swap_postings p "
            "JOIN t_swap_terms t USING (term_id)"
        )
        before = {(h, d): x for h, d, x in conn.execute(sql).fetchall()}
    report = export_index(v2, pg.dsn, table="t_swap")
    assert not report.full and report.rows_written == 1
    with psycopg.connect(pg.dsn) as conn:
        after = {(h, d): x for h, d, x in conn.execute(sql).fetchall()}
    moved = {h for (h, d), x in after.items() if before.get((h, d)) != x}
    kube = int(np.uint64(term_hash(query_terms("kubernetes")[0])).view(np.int64))
    assert kube in moved and len(moved) < len({h for h, _ in after}) / 2
    _assert_max_impacts(pg, "t_swap")
    with PostgresRetriever(pg.dsn, table="t_swap") as r:
        for q in ("kubernetes pod", "uploads fail", "access denied credentials"):
            request = RetrievalRequest(q, k=8, mode="keyword")
            assert _pg_matches(r, request) == _file_matches(v2, request)
            with _every_query_cut():
                assert _pg_matches(r, request) == _file_matches(v2, request)


def test_a_different_embedding_model_rebuilds_the_table(pg: PgServer) -> None:
    export_index(_pack(_records(), dims=64), pg.dsn, table="t_dims")
    report = export_index(_pack(_records(), dims=32), pg.dsn, table="t_dims")
    assert report.full and "stamp" in report.reason and report.inserted == 8
    with PostgresRetriever(pg.dsn, table="t_dims") as r:
        assert r.dimensions == 32


@pytest.mark.parametrize("encoding", ["int8", "binary"])
def test_compact_vector_encodings_are_exported_decoded(pg: PgServer, encoding: str) -> None:
    idx = _pack(_records(), vectors=encoding)
    table = f"t_{encoding}"
    export_index(idx, pg.dsn, table=table)
    with PostgresRetriever(pg.dsn, table=table, exact=True) as r:
        assert r.meta["vector"]["encoding"] == encoding
        for mode in ("keyword", "hybrid", "vector"):
            request = RetrievalRequest("ship logs to azure", k=3, mode=mode)
            got, want = _pg_matches(r, request), _file_matches(idx, request)
            # A text query scores its evidence exactly in every encoding (binary too: the file's
            # Hamming pre-ranking is for query vectors only).
            assert [m[0] for m in got] == [m[0] for m in want], mode
            assert [m[1] for m in got] == pytest.approx([m[1] for m in want], rel=1e-5)


# ---------------------------------------------------------------------------------------------
# Retrieval against the file
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small(pg: PgServer) -> Iterator[tuple[Index, PostgresRetriever, PostgresRetriever]]:
    idx = _pack(_records())
    export_index(idx, pg.dsn, table="t_small")
    with (
        PostgresRetriever(pg.dsn, table="t_small") as approx,
        PostgresRetriever(pg.dsn, table="t_small", exact=True) as exact,
    ):
        yield idx, approx, exact


QUERIES = ["kelpie checksum", "ship logs to azure", "access denied credentials", "kubernetes"]


def test_the_retriever_session_turns_jit_off(
    small: tuple[Index, PostgresRetriever, PostgresRetriever],
) -> None:
    _, approx, _ = small
    approx.rank("kelpie checksum", k=3, mode="keyword")
    row = approx._conn.execute("SHOW jit").fetchone()
    assert row == ("off",)


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_matches_equal_the_files(
    small: tuple[Index, PostgresRetriever, PostgresRetriever], mode: str
) -> None:
    idx, approx, exact = small
    for q in QUERIES:
        request = RetrievalRequest(q, k=5, mode=mode)
        want = _file_matches(idx, request)
        got = _pg_matches(exact, request)
        assert [m[0] for m in got] == [m[0] for m in want], q
        assert [m[1] for m in got] == pytest.approx([m[1] for m in want], rel=1e-5, abs=1e-6)
        if mode == "keyword":
            assert got == want  # bit for bit
        assert [m[0] for m in _pg_matches(approx, request)] == [m[0] for m in want], q
    file_match = IndexRetriever(idx).retrieve(RetrievalRequest("checksum", k=1, mode=mode))[0]
    pg_match = exact.retrieve(RetrievalRequest("checksum", k=1, mode=mode))[0]
    for field in ("id", "source", "anchor", "heading_path", "title", "text", "snippet", "url"):
        assert getattr(pg_match, field) == getattr(file_match, field), field


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
@pytest.mark.parametrize(
    "filters",
    [
        {"source": "ops/"},
        {"source": "guide/*0[0-4].md"},
        {"heading": "SECTION 3"},
        {"metadata": {"section": "ops"}},
        {"metadata": {"section": "guide", "weight": "2"}},
        {"source": "ops/", "min_score": 0.2},
        {"source": "nowhere/"},
    ],
)
def test_filters_run_in_sql_and_agree_with_the_file(
    small: tuple[Index, PostgresRetriever, PostgresRetriever],
    mode: str,
    filters: dict[str, Any],
) -> None:
    idx, approx, exact = small
    request = RetrievalRequest("kelpie logs checksum credentials", k=3, mode=mode, **filters)
    want = _file_matches(idx, request)
    assert [m[0] for m in _pg_matches(exact, request)] == [m[0] for m in want]
    # Through the HNSW index (pgvector's iterative scan keeps k rows coming under filters).
    assert [m[0] for m in _pg_matches(approx, request)] == [m[0] for m in want]


class _FloorEmbedder(HashingEmbedder):
    """The hashing embedder recording a numeric ``vectorFloor``, as a semantic provider does."""

    def __init__(self, floor: float) -> None:
        super().__init__(dimensions=64)
        self.floor = floor

    def fusion(self) -> dict[str, Any]:
        return {**super().fusion(), "vectorFloor": self.floor}


def _pack_with_floor(floor: float) -> Index:
    packed = pack_records(
        _records(), None, embedder=_FloorEmbedder(floor), use_cache=False, vectors="float32"
    )
    assert packed.data is not None
    return load_bytes(packed.data, source="floor.scidx")


def _split(query: str, floor: float) -> tuple[set[str], set[str]]:
    """The chunks whose cosine with ``query`` clears ``floor``, and the positive ones below it."""
    cos = dict(_pack_with_floor(-1.0).rank(query, k=8, mode="vector"))  # a floor admitting all
    assert all(abs(c - floor) > 1e-3 for c in cos.values()), cos  # clear of float rounding
    return {cid for cid, c in cos.items() if c >= floor}, {
        cid for cid, c in cos.items() if 0 < c < floor
    }


def test_a_numeric_vector_floor_admits_exactly_the_chunks_above_it(pg: PgServer) -> None:
    floor = 0.115
    idx = _pack_with_floor(floor)
    assert idx.meta["fusion"]["vectorFloor"] == floor
    export_index(idx, pg.dsn, table="t_floor")
    # A typo is no index term: only the vector leg (character n-grams) can find anything.
    typo = "credentails"
    assert idx.rank(typo, k=8, mode="keyword") == []
    above, below = _split(typo, floor)
    assert above and below  # the query does separate the two groups
    mixed = "kelpie credentails"
    keyword = {cid for cid, _ in idx.rank(mixed, k=8, mode="keyword")}
    mixed_above, mixed_below = _split(mixed, floor)
    assert keyword and mixed_above - keyword and mixed_below - keyword
    with (
        PostgresRetriever(pg.dsn, table="t_floor", exact=True) as exact,
        PostgresRetriever(pg.dsn, table="t_floor") as approx,
    ):
        assert exact.sql_parameters(typo)["floor"] == floor
        for mode in ("vector", "hybrid"):
            # Without feedback (no keyword hit) both modes use the query vector as it is.
            request = RetrievalRequest(typo, k=5, mode=mode)
            want = _file_matches(idx, request)
            assert {m[0] for m in want} == above, mode
            for r in (exact, approx):
                got = _pg_matches(r, request)
                assert [m[0] for m in got] == [m[0] for m in want], mode
                assert [m[1] for m in got] == pytest.approx([m[1] for m in want], rel=1e-5)
            # A query term and a typo: the keyword matches plus chunks clearing the floor.
            request = RetrievalRequest(mixed, k=8, mode=mode)
            want = _file_matches(idx, request)
            found = {m[0] for m in want}
            assert keyword <= found and found - keyword, mode
            if mode == "vector":
                assert found == keyword | mixed_above
            got = _pg_matches(exact, request)
            assert [m[0] for m in got] == [m[0] for m in want], mode
            assert [m[1] for m in got] == pytest.approx([m[1] for m in want], rel=1e-5)


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_nonsense_finds_nothing_in_postgres(
    small: tuple[Index, PostgresRetriever, PostgresRetriever], mode: str
) -> None:
    idx, approx, exact = small
    assert exact.sql_parameters("xyzzyplugh")["floor"] is None  # the hashing provider's
    for query in ("xyzzyplugh", "qwxzvb zzkqpl"):
        request = RetrievalRequest(query, k=5, mode=mode)
        assert _file_matches(idx, request) == []
        assert _pg_matches(exact, request) == [] and _pg_matches(approx, request) == []
        assert exact.rank(query, k=5, mode=mode) == []


def test_a_damaged_vector_floor_is_refused(pg: PgServer) -> None:
    from scidx.errors import CorruptIndexError

    export_index(_pack(_records()), pg.dsn, table="t_badfloor")
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE t_badfloor_meta SET value = jsonb_set(value, '{vectorFloor}', '\"high\"') "
            "WHERE key = 'fusion'"
        )
    with pytest.raises(CorruptIndexError, match=r"`fusion` row has vectorFloor 'high'.*export"):
        PostgresRetriever(pg.dsn, table="t_badfloor")


def test_invalid_filters_and_requests_are_query_errors(
    small: tuple[Index, PostgresRetriever, PostgresRetriever],
) -> None:
    from scidx.errors import QueryError

    _, r, _ = small
    bad: list[dict[str, Any]] = [
        {"source": ""},
        {"heading": ""},
        {"metadata": {1: "a"}},
        {"k": 0},
        {"mode": "fuzzy"},
    ]
    for kwargs in bad:
        with pytest.raises(QueryError):
            r.retrieve(RetrievalRequest("x", **kwargs))
    assert r.retrieve(RetrievalRequest("the of and", mode="keyword")) == []
    assert r.retrieve(RetrievalRequest("", mode="hybrid")) == []


# ---------------------------------------------------------------------------------------------
# SciFact: the file's ranking, query by query
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scifact(shared_dir_module: Path, pg: PgServer) -> tuple[Index, Any, bytes]:
    from scidx.evaluation.beir import read_beir

    data = read_beir(shared_dir_module / "beir" / "scifact", "train")
    records = [{"id": d, "title": t, "text": x} for d, t, x in data.corpus]
    packed = pack_records(records, None, embedder=HashingEmbedder(dimensions=128), use_cache=False)
    assert packed.data is not None
    idx = load_bytes(packed.data, source="scifact.scidx")
    export_index(idx, pg.dsn, table="t_scifact")
    return idx, data, packed.data


@pytest.fixture(scope="module")
def shared_dir_module() -> Path:
    from conftest import _need_shared

    return _need_shared()


def test_scifact_keyword_top10_equals_the_file_for_every_train_query(
    scifact: tuple[Index, Any, bytes], pg: PgServer
) -> None:
    idx, data, _ = scifact
    with PostgresRetriever(pg.dsn, table="t_scifact") as r:
        for qid, text in data.queries.items():
            # PostgreSQL has no word dictionary: it matches words as typed (docs/postgres.md).
            want = idx.rank(text, k=10, mode="keyword", fuzzy=False)
            assert r.rank(text, k=10, mode="keyword") == want, qid


def test_scifact_the_exact_keyword_cut_ranks_like_the_file(
    scifact: tuple[Index, Any, bytes], pg: PgServer
) -> None:
    # At 5k chunks most queries have too few postings for the cut; forced on for all of them
    # here, it must still give the file's top 10 (ids and scores, every tie) for each query,
    # and hybrid the same results as without it.
    idx, data, _ = scifact
    texts = list(data.queries.values())
    with PostgresRetriever(pg.dsn, table="t_scifact") as r:
        plain = [r.rank(text, k=10, mode="hybrid") for text in texts[:80]]
        with _every_query_cut():
            for text in texts[:400]:
                want = idx.rank(text, k=10, mode="keyword", fuzzy=False)
                assert r.rank(text, k=10, mode="keyword") == want
            cut = [r.rank(text, k=10, mode="hybrid") for text in texts[:80]]
            assert r.rank(texts[0], k=3, mode="keyword", source="nowhere/") == []
    assert cut == plain
    _assert_max_impacts(pg, "t_scifact")


def test_scifact_hybrid_ndcg_within_0005_of_the_file(
    scifact: tuple[Index, Any, bytes], pg: PgServer
) -> None:
    idx, data, _ = scifact
    file_runs: dict[str, dict[str, float]] = {}
    pg_runs: dict[str, dict[str, float]] = {}
    # The first 300 train queries keep this under the suite's time budget (a hybrid query
    # costs two statements); benchmarks/bench_postgres.py and the report cover all 809.
    with PostgresRetriever(pg.dsn, table="t_scifact") as r:
        for qid, text in list(data.queries.items())[:300]:
            file_runs[qid] = dict(idx.rank(text, k=10, mode="hybrid"))
            pg_runs[qid] = dict(r.rank(text, k=10, mode="hybrid"))
    qrels = {q: data.qrels[q] for q in file_runs}
    want = mean_metrics(file_runs, qrels, ["ndcg@10"])[0]["ndcg@10"]
    got = mean_metrics(pg_runs, qrels, ["ndcg@10"])[0]["ndcg@10"]
    assert abs(got - want) <= 0.005, (got, want)


def test_a_killed_export_leaves_the_previous_table_intact(
    scifact: tuple[Index, Any, bytes], pg: PgServer, tmp_path: Path
) -> None:
    small_idx = _pack(_records())
    export_index(small_idx, pg.dsn, table="t_kill")
    before = _row_versions(pg, "t_kill")
    with psycopg.connect(pg.dsn) as conn:
        meta_before = conn.execute("SELECT key, value FROM t_kill_meta ORDER BY key").fetchall()
    path = tmp_path / "scifact.scidx"
    path.write_bytes(scifact[2])
    # A full export (other dimensions) of 5k chunks into the same table, killed mid-COPY.
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scidx",
            "export",
            str(path),
            "--postgres",
            pg.dsn,
            "--table",
            "t_kill",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    copied, into = 0, ""
    try:
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None:
                row = conn.execute(
                    "SELECT p.tuples_processed, p.relid::regclass::text FROM "
                    "pg_stat_progress_copy p JOIN pg_stat_activity a USING (pid) "
                    "WHERE a.application_name = 'scidx export'"
                ).fetchone()
                if row and row[0]:
                    copied, into = int(row[0]), str(row[1])
                    proc.send_signal(signal.SIGKILL)
                    break
                time.sleep(0.005)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    # Under load the poll may first see the postings' COPY (~470k rows), after the chunks'.
    total = 5183 if not into.endswith("_postings") else 10**7
    assert 0 < copied < total, f"the export was not caught mid-COPY ({proc.returncode})"
    assert proc.returncode == -signal.SIGKILL
    # The server notices the dead client and rolls its transaction back.
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        deadline = time.monotonic() + 30
        while conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'scidx export'"
        ).fetchone() != (0,):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert conn.execute("SELECT key, value FROM t_kill_meta ORDER BY key").fetchall() == (
            meta_before
        )
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables")}
        assert not any(t.startswith("t_kill__load") for t in tables)
    assert _row_versions(pg, "t_kill") == before
    with PostgresRetriever(pg.dsn, table="t_kill") as r:
        request = RetrievalRequest("kelpie checksum", k=3, mode="keyword")
        assert _pg_matches(r, request) == _file_matches(small_idx, request)


# ---------------------------------------------------------------------------------------------
# The CLI
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kelpie(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import shutil

    root = tmp_path_factory.mktemp("kelpie")
    shutil.copytree(ROOT / "fixtures" / "docs", root / "fixtures" / "docs")
    shutil.copy(ROOT / "staticcorpus.example.json", root / "staticcorpus.json")
    result = pack_docs(root / "staticcorpus.json", use_cache=False)
    assert result.output is not None
    return result.output


def test_cli_export_then_query_and_the_shipped_eval_gate(
    kelpie: Path, pg: PgServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["export", str(kelpie), "--postgres", pg.dsn, "--table", "kelpie"], capsys)
    assert code == 0, err
    assert out.startswith("public.kelpie: full export (new table): ") and "inserted" in out
    code, out, _ = run(["export", str(kelpie), "--postgres", pg.dsn, "--table", "kelpie"], capsys)
    assert code == 0 and "is up to date" in out and "nothing written" in out
    code, out, _ = run(
        ["export", str(kelpie), "--postgres", pg.dsn, "--table", "kelpie", "--json"], capsys
    )
    assert json.loads(out)["upToDate"] is True

    question = ["default batch size", "-k", "3", "--json"]
    # Raw chunks, as the PostgreSQL retriever returns them (it does not group by section).
    code, out, _ = run(
        ["query", str(kelpie), *question, "--mode", "keyword", "--group", "none"], capsys
    )
    file_doc = json.loads(out)
    code, out, err = run(
        ["query", "--postgres", pg.dsn, "--table", "kelpie", *question, "--mode", "keyword"],
        capsys,
    )
    assert code == 0, err
    pg_doc = json.loads(out)
    # Snippets differ: the file index cuts them from the clean text (chunk.plain), PostgreSQL
    # stores the raw Markdown only.
    keys = ("id", "score", "link", "headingPath")
    assert [{k: m[k] for k in keys} for m in pg_doc["matches"]] == [
        {k: m[k] for k in keys} for m in file_doc["matches"]
    ]
    code, _, err = run(["eval", str(ROOT / "docs/eval/kelpie.json"), "--postgres", pg.dsn,
                        "--table", "kelpie", "--baseline",
                        str(ROOT / "docs/eval/kelpie.baseline.json")], capsys)  # fmt: skip
    assert code == 0, err
    code, _, err = run(["query", str(kelpie), "x", "--postgres", pg.dsn], capsys)
    assert code == 1 and "give the question alone with --postgres" in err


def test_cli_bench_against_postgres(
    pg: PgServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    beir = tmp_path / "tiny"
    (beir / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{i}", "title": f"Doc {i}", "text": t} for i, t in enumerate(TEXTS)]
    (beir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": "q1", "text": "sha256 checksum"}, {"_id": "q2", "text": "azure logs"}]
    (beir / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td7\t1\nq2\td2\t1\n")
    common = ["bench", "--beir", str(beir), "--mode", "all", "--json", "-k", "5"]
    code, out, err = run([*common, "--postgres", pg.dsn, "--table", "t_bench"], capsys)
    assert code == 0, err
    pg_rows = json.loads(out)
    code, out, _ = run(common, capsys)
    file_rows = json.loads(out)
    for a, b in zip(pg_rows, file_rows, strict=True):
        assert (a["mode"], a["ndcg@10"], a["queries"]) == (b["mode"], b["ndcg@10"], b["queries"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_wrong_password_exits_8_without_the_password_or_a_traceback(
    kelpie: Path, pg: PgServer, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = f"{pg.password_dsn} password=wrong-{PASSWORD}"
    code, out, err = run(["export", str(kelpie), "--postgres", bad], capsys)
    assert code == 8
    assert err.startswith("error: PostgreSQL database 'postgres' on ") and str(pg.sock) in err
    assert f"as user '{PASSWORD_ROLE}'" in err and "password authentication failed" in err
    assert PASSWORD not in err + out and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    # The right password works (the role really checks it).
    ok = f"{pg.password_dsn} password={PASSWORD}"
    code, out, err = run(["export", str(kelpie), "--postgres", ok, "--table", "t_pw"], capsys)
    assert code == 0, err


def test_unreachable_server_exits_8_for_every_command(
    kelpie: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", "s3cret-from-env")
    dsn = f"postgresql://someone@127.0.0.1:{_free_port()}/docs"
    for argv in (
        ["export", str(kelpie), "--postgres", dsn],
        ["query", "--postgres", dsn, "batch size"],
        ["eval", str(ROOT / "docs/eval/kelpie.json"), "--postgres", dsn],
    ):
        code, out, err = run(argv, capsys)
        assert code == 8, (argv, err)
        assert "database 'docs' on 127.0.0.1 port" in err and "Connection refused" in err
        assert "s3cret" not in err and "Traceback" not in err


def test_bad_names_and_dsns_exit_1(kelpie: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["export", str(kelpie), "--postgres", "", "--table", "Bad-Name"], capsys)
    assert code == 1 and "--table 'Bad-Name' is not a plain SQL name" in err
    code, _, err = run(["export", str(kelpie), "--postgres", "host=x password"], capsys)
    assert code == 1 and "not a valid libpq connection string" in err and "password" in err
    missing = "/nonexistent/x.scidx"
    code, _, err = run(["export", missing, "--postgres", ""], capsys)
    assert code == 1 and f"index {missing} does not exist" in err


def test_missing_table_is_a_clear_error(pg: PgServer) -> None:
    from scidx.errors import InputError

    with pytest.raises(InputError, match="does not exist; write it with `toolup-rag export"):
        PostgresRetriever(pg.dsn, table="t_absent")
    with pytest.raises(DatabaseError):
        PostgresRetriever(pg.dsn.replace("dbname=postgres", "dbname=nodb"))


def _forged(name: str, change: Any) -> Index:
    """The small index with its in-memory BM25 array ``name`` replaced by ``change(copy)``."""
    idx = _pack(_records())
    bm = idx._live().corpus.bm25
    forged = np.array(getattr(bm, name))
    change(forged)
    object.__setattr__(bm, name, forged)
    return idx


def _no_table(pg: PgServer, table: str) -> None:
    with psycopg.connect(pg.dsn) as conn:
        assert conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() == (None,)


def test_corrupt_keyword_arrays_are_refused_before_writing(pg: PgServer) -> None:
    from scidx.errors import CorruptIndexError

    def bump(values: np.ndarray) -> None:
        values[0] += 1.0  # every posting with the smallest frequency gets one more occurrence

    idx = _forged("tf_values", bump)
    with pytest.raises(
        CorruptIndexError,
        match=r"memory.scidx: chunk '.+' has term frequencies \(array `bm25.tf_values` at the "
        r"codes in `bm25.runs`\) summing to \d+, but array `bm25.doc_len` gives it \d+ "
        r"\(\d+ chunks disagree\); the file is corrupt. Rebuild it with `toolup-rag pack-docs`.",
    ):
        export_index(idx, pg.dsn, table="t_corrupt")
    _no_table(pg, "t_corrupt")


def test_a_forged_frequency_code_is_refused_naming_the_array(pg: PgServer) -> None:
    from scidx.errors import CorruptIndexError
    from scidx.index.bm25 import csr_postings, encode_postings

    idx = _pack(_records())
    bm = idx._live().corpus.bm25
    ptr, rows, codes = csr_postings(bm, len(idx))
    codes[3] = 200  # format 6: re-encode the runs with one forged code
    for name, value in encode_postings(ptr, rows, codes, bm.df_values).items():
        object.__setattr__(bm, name.removeprefix("bm25."), value)
    table_size = bm.tf_values.shape[0]
    with pytest.raises(
        CorruptIndexError,
        match=rf"memory.scidx: array `bm25.runs` holds frequency code 200, but `bm25.tf_values` "
        rf"has {table_size} entries. The file is truncated or corrupt; rebuild it with "
        r"`toolup-rag pack-docs`.",
    ):
        export_index(idx, pg.dsn, table="t_forged_code")
    _no_table(pg, "t_forged_code")


def test_a_heading_weight_that_is_not_whole_exports_the_files_scores(pg: PgServer) -> None:
    # Frequencies such as 1.1 + 1 are stored as they are, and their sums are not whole: the
    # export takes them from the file and must rank as it does, ids and scores.
    from support.indexes import build_index, record

    records = [
        record(f"p{i}.md", text, anchor=f"a{i}", title=f"Kelpie {i % 3}", heading_path=["Ship"])
        for i, text in enumerate(TEXTS)
    ]
    idx = load_bytes(build_index(records, heading_weight=1.1), source="hw.scidx")
    assert idx.meta["bm25"]["fieldWeights"]["heading"] == 1.1
    export_index(idx, pg.dsn, table="t_hw")
    with PostgresRetriever(pg.dsn, table="t_hw") as r:
        for q in ("kelpie ship logs", "checksum kelpie", "ship", "rotation disabled"):
            request = RetrievalRequest(q, k=10, mode="keyword", group=None)
            want = _file_matches(idx, request)
            assert want
            assert _pg_matches(r, request) == want


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_the_documented_sql_is_the_retrievers_and_ranks_like_it(
    pg: PgServer, small: tuple[Index, PostgresRetriever, PostgresRetriever], mode: str
) -> None:
    import re

    from psycopg import sql

    _, _, exact = small
    doc = (ROOT / "docs" / "postgres.md").read_text(encoding="utf-8")
    block = doc.split(f"<!-- {mode}-sql: start -->")[1].split(f"<!-- {mode}-sql: end -->")[0]
    statement = block.split("```sql")[1].split("```")[0]
    statement = "\n".join(ln for ln in statement.splitlines() if not ln.startswith("--"))
    assert statement.strip() == exact.sql(mode).replace("public.t_small", "scidx_chunks")
    statement = statement.replace("scidx_chunks", "t_small")
    # psql variables -> driver parameters (a literal % is doubled for the driver)
    statement = statement.replace("%", "%%")
    statement = re.sub(r":'(\w+)'", r"%(\1)s", statement)
    statement = re.sub(r":(k|alpha|prf|beta|floor)\b", r"%(\1)s", statement)
    with psycopg.connect(pg.dsn) as conn:
        conn.execute("SET enable_indexscan = off")  # exact, like the `exact` retriever
        for q in QUERIES:
            params = {**exact.sql_parameters(q), "k": 5, "alpha": 0.3, "prf": 3, "beta": 2.0}
            rows = conn.execute(sql.SQL(statement), params).fetchall()  # type: ignore[arg-type]
            want = exact.rank(q, k=5, mode=mode)
            # float4 as text: the nearest float32 is the value the server holds
            assert [(r[0], float(np.float32(r[1]))) for r in rows] == want, q


# ---------------------------------------------------------------------------------------------
# Safety (issue 24): only its own tables, long keys, refused rows, reconnects, time limits
# ---------------------------------------------------------------------------------------------


def test_export_never_drops_or_replaces_a_table_it_did_not_write(
    kelpie: Path, pg: PgServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE users (id int PRIMARY KEY, name text)")
        conn.execute("INSERT INTO users SELECT g, 'u' || g FROM generate_series(1, 1000) g")
        conn.execute("CREATE TABLE docs_terms (word text)")
        conn.execute("INSERT INTO docs_terms VALUES ('kept')")
    code, _, err = run(["export", str(kelpie), "--postgres", pg.dsn, "--table", "users"], capsys)
    assert code == 1 and "table public.users exists and was not written by" in err, err
    code, _, err = run(["export", str(kelpie), "--postgres", pg.dsn, "--table", "docs"], capsys)
    assert code == 1 and "table public.docs_terms exists and was not written by" in err, err
    code, _, err = run(["export", str(kelpie), "--postgres", pg.dsn, "--table", "guide"], capsys)
    assert code == 0, err
    # Derived names of a new export that are another export's tables: refused, naming them.
    code, _, err = run(
        ["export", str(kelpie), "--postgres", pg.dsn, "--table", "guide_meta"], capsys
    )
    assert code == 1, err
    assert "table public.guide_meta belongs to the export public.guide (its meta table)" in err
    with psycopg.connect(pg.dsn) as conn:
        assert conn.execute("SELECT count(*) FROM users").fetchone() == (1000,)
        assert conn.execute("SELECT word FROM docs_terms").fetchall() == [("kept",)]
    code, out, err = run(["export", str(kelpie), "--postgres", pg.dsn, "--table", "guide"], capsys)
    assert code == 0 and "is up to date" in out, err
    code, out, err = run(
        ["query", "--postgres", pg.dsn, "--table", "guide", "default batch size", "--json"], capsys
    )
    assert code == 0 and json.loads(out)["matches"], err


def test_a_damaged_stamp_table_is_refused_with_instructions_and_repaired_by_exporting(
    pg: PgServer,
) -> None:
    from scidx.errors import CorruptIndexError

    idx = _pack(_records())
    export_index(idx, pg.dsn, table="t_stamp")
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE t_stamp_meta RENAME COLUMN key TO k")
    with pytest.raises(CorruptIndexError, match=r"t_stamp_meta .* is damaged; run `toolup-rag"):
        PostgresRetriever(pg.dsn, table="t_stamp")
    report = export_index(idx, pg.dsn, table="t_stamp")
    assert report.full and report.reason == "damaged stamp table"
    with PostgresRetriever(pg.dsn, table="t_stamp") as r:
        request = RetrievalRequest("kelpie checksum", k=3, mode="keyword")
        assert _pg_matches(r, request) == _file_matches(idx, request)


def test_ids_and_sources_longer_than_a_btree_entry_export_and_search(pg: PgServer) -> None:
    import random

    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    long_id = "".join(rng.choice(letters) for _ in range(3600))  # incompressible
    deep = "/".join("".join(rng.choice(letters) for _ in range(40)) for _ in range(90)) + ".md"
    records = _records()
    records[3]["id"] = long_id
    records[5]["source"] = deep
    idx = _pack(records)
    export_index(idx, pg.dsn, table="t_long")
    with PostgresRetriever(pg.dsn, table="t_long") as r:
        got = r.retrieve(RetrievalRequest("access denied credentials", k=1, mode="keyword"))
        assert got[0].id == long_id
        got = r.retrieve(RetrievalRequest("kubernetes sidecar", k=1, mode="keyword"))
        assert got[0].source == deep
        assert [m.id for m in r.retrieve(RetrievalRequest("pod", k=1, source=deep))] == [got[0].id]


def test_a_row_the_database_refuses_is_named_by_chunk_and_source(pg: PgServer) -> None:
    records = _records()
    records[2]["metadata"] = {"note": "a\x00b"}  # jsonb cannot hold U+0000
    idx = _pack(records)
    if "\x00" not in str(idx.source_metadata()["guide/page02.md"].get("note")):
        export_index(idx, pg.dsn, table="t_refused")  # a packer that cleans it: nothing to refuse
        return
    with pytest.raises(DatabaseError) as info:
        export_index(idx, pg.dsn, table="t_refused")
    message = str(info.value)
    assert "chunk 'doc02' (source 'guide/page02.md') was refused" in message, message
    assert "`metadata`" in message and "nothing was written" in message
    with psycopg.connect(pg.dsn) as conn:
        assert conn.execute("SELECT to_regclass('t_refused')").fetchone() == (None,)


def test_the_retriever_reconnects_once_after_its_backend_is_terminated(
    small: tuple[Index, PostgresRetriever, PostgresRetriever], pg: PgServer
) -> None:
    idx, r, _ = small
    request = RetrievalRequest("kelpie checksum", k=3, mode="hybrid")
    want = [m.id for m in r.retrieve(request)]
    for _ in range(2):  # twice: each new connection is retried again after it breaks
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(%s)", (r._conn.info.backend_pid,))
        assert [m.id for m in r.retrieve(request)] == want
    assert [m.id for m in r.retrieve(request)] == want


def test_a_query_to_a_stopped_backend_times_out_with_exit_8(pg: PgServer) -> None:
    import os

    export_index(_pack(_records()), pg.dsn, table="t_timeout")
    with PostgresRetriever(pg.dsn, table="t_timeout", timeout=1.0) as r:
        request = RetrievalRequest("kelpie checksum", k=3, mode="keyword")
        want = r.rank("kelpie checksum", k=3, mode="keyword")
        pid = r._conn.info.backend_pid
        os.kill(pid, signal.SIGSTOP)
        t0 = time.monotonic()
        try:
            with pytest.raises(DatabaseError, match="did not finish within the 1 s timeout") as e:
                r.retrieve(request)
        finally:
            os.kill(pid, signal.SIGCONT)
        assert e.value.exit_code == 8 and time.monotonic() - t0 < 10
        assert r.rank("kelpie checksum", k=3, mode="keyword") == want  # a new connection


# ---------------------------------------------------------------------------------------------
# A streaming replica serves the same answers
# ---------------------------------------------------------------------------------------------


def _caught_up(primary: PgServer, replica: PgServer) -> None:
    with psycopg.connect(primary.dsn, autocommit=True) as conn:
        # The insert position: with synchronous_commit off the commit may not be written yet.
        row = conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()
    assert row is not None
    with psycopg.connect(replica.dsn, autocommit=True) as conn:
        deadline = time.monotonic() + 60
        while not conn.execute(
            "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (row[0],)
        ).fetchone() == (True,):
            assert time.monotonic() < deadline, "the replica did not catch up"
            time.sleep(0.05)


def test_a_streaming_replica_answers_like_the_primary(pg: PgServer) -> None:
    v1 = _pack(_records())
    export_index(v1, pg.dsn, table="t_replica")
    replica = pg.standby()
    try:
        _caught_up(pg, replica)
        with psycopg.connect(replica.dsn) as conn:
            assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        with (
            PostgresRetriever(pg.dsn, table="t_replica") as primary,
            PostgresRetriever(replica.dsn, table="t_replica") as standby,
        ):
            for mode in ("keyword", "vector", "hybrid"):
                for q in QUERIES:
                    source = "ops/" if "azure" in q else None
                    request = RetrievalRequest(q, k=5, mode=mode, source=source)
                    assert _pg_matches(standby, request) == _pg_matches(primary, request), q
            # An incremental export on the primary reaches the replica as one commit.
            edited = _records()
            edited[2]["text"] = "Ship logs to Google Cloud Storage buckets; retries back off."
            v2 = _pack(edited)
            export_index(v2, pg.dsn, table="t_replica")
            _caught_up(pg, replica)
            request = RetrievalRequest("google cloud storage", k=3, mode="keyword")
            assert _pg_matches(primary, request) == _file_matches(v2, request)
            assert _pg_matches(standby, request) == _file_matches(v2, request)
        # Exporting to the replica is refused cleanly (exit 8): it is read-only.
        with pytest.raises(DatabaseError, match="read-only transaction") as info:
            export_index(v1, replica.dsn, table="t_other")
        assert info.value.exit_code == 8
    finally:
        replica.stop()
