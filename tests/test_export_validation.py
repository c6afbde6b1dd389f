"""Exporters trust no field they did not check (issue 39 P6, P7): forged files, recomputed sums.

Each forged file here has its checksums recomputed, so only a content check can refuse it. The
exporters (PostgreSQL, web bundle, llms.txt) must then stop with a CorruptIndexError naming the
array or meta key (exit 4) before they allocate by a forged size or write anything. The
fuzzing of every exporter over random mutants is ``test_fuzz.py``'s export cases.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scidx.errors import CorruptIndexError
from scidx.export.web_bundle import build_web_bundle
from scidx.index.bm25 import posting_impacts, posting_tfs
from scidx.index.format import read_header, read_string_table, string_table_arrays
from scidx.index.index import load_bytes
from scidx.pack.packer import pack_records
from support.cli import run
from support.indexes import fixture_records, rewrite
from support.pg_server import PgServer


@pytest.fixture(scope="module")
def packed() -> bytes:
    data = pack_records(fixture_records(), None, dimensions=32, use_cache=False).data
    assert data is not None
    return data


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    pytest.importorskip("psycopg", reason="the PostgreSQL export needs the postgres extra")
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


def _forged_df(data: bytes) -> bytes:
    """The document frequency most terms share (1) made 2**32 - 1: terabytes of postings."""

    def change(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        values = arrays["bm25.df_values"]
        assert int(values[0]) == 1
        values[0] = 2**32 - 1

    return rewrite(data, change)


def _with_field_weights(data: bytes, weights: Any) -> bytes:
    def change(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        meta["bm25"]["fieldWeights"] = weights

    return rewrite(data, change)


def _tables(pg: PgServer, like: str) -> list[str]:
    import psycopg

    with psycopg.connect(pg.dsn) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE %s ORDER BY 1", (like,)
        ).fetchall()
    return [r[0] for r in rows]


def test_a_forged_document_frequency_is_refused_before_allocating(packed: bytes) -> None:
    forged = _forged_df(packed)
    with pytest.raises(CorruptIndexError, match=r"array `bm25\.df_values`"):
        load_bytes(forged, verify=True)
    with load_bytes(forged) as idx:
        bm = idx._live().corpus.bm25  # noqa: SLF001 - the exporters' reader, called directly
        tracemalloc.start()
        try:
            for read in (posting_impacts, posting_tfs):
                with pytest.raises(CorruptIndexError, match=r"array `bm25\.df_values` holds"):
                    read(bm, len(idx), idx.source)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 16 << 20, peak  # was np.empty(terabytes): MemoryError, exit 70
        with pytest.raises(CorruptIndexError, match=r"bm25\.df_values"):
            build_web_bundle(idx)


def test_a_run_without_gap_bits_cannot_claim_more_postings_than_its_bytes(packed: bytes) -> None:
    """A document frequency in [1, N] with zero widths would size postings from no bytes."""

    def change(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        df = arrays["bm25.df_values"].astype(np.int64)[arrays["bm25.term_df"].astype(np.int64)]
        t = int(np.flatnonzero(df > 1)[0])
        width = arrays["bm25.term_width"]
        lo, hi = int(arrays["bm25.run_ptr"][t]), int(arrays["bm25.run_ptr"][t + 1])
        want = (int(df[t]) * int(width[t, 1]) + 7) // 8
        runs = arrays["bm25.runs"]
        arrays["bm25.runs"] = np.concatenate([runs[:lo], runs[hi - want : hi], runs[hi:]])
        ptr = arrays["bm25.run_ptr"].astype(np.int64)
        ptr[t + 1 :] -= hi - lo - want
        arrays["bm25.run_ptr"] = ptr.astype(arrays["bm25.run_ptr"].dtype)
        width[t, 0] = 0

    forged = rewrite(packed, change)
    with load_bytes(forged) as idx:
        bm = idx._live().corpus.bm25  # noqa: SLF001
        with pytest.raises(
            CorruptIndexError, match=r"not ascending within a term \(`bm25\.term_width` gives"
        ):
            posting_impacts(bm, len(idx), idx.source)


@pytest.mark.parametrize(
    "weights", [7, "heading", [1.0, 2.0], {"heading": -1.0}, {"heading": "2"}, {"heading": True}]
)
def test_field_weights_must_be_a_map_of_finite_numbers(packed: bytes, weights: Any) -> None:
    forged = _with_field_weights(packed, weights)
    for verify in (True, False):
        with pytest.raises(CorruptIndexError, match=r"`meta\.bm25\.fieldWeights` is"):
            load_bytes(forged, verify=verify)
    load_bytes(_with_field_weights(packed, {"heading": 2.0, "body": 1}), verify=True).close()


def test_cli_exporters_refuse_forged_files_with_exit_4_and_write_nothing(
    packed: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, data, key in (
        ("df.scidx", _forged_df(packed), "bm25.df_values"),
        ("fw.scidx", _with_field_weights(packed, 7), "meta.bm25.fieldWeights"),
    ):
        path = tmp_path / name
        path.write_bytes(data)
        out = tmp_path / f"{name}.web"
        code, _, err = run(["export-web", str(path), str(out)], capsys)
        assert code == 4, err
        assert key in err and "Traceback" not in err
        assert not out.exists()
        assert list(tmp_path.glob(".*")) == []  # no temp folder left beside the target
    # llms.txt reads the tables itself: a title table shorter than the sources is refused.
    path = tmp_path / "titles.scidx"
    path.write_bytes(_short_titles(packed))
    llms = tmp_path / "llms"
    code, _, err = run(["llms-txt", str(path), "--out", str(llms)], capsys)
    assert code == 4 and "string table `source.title` has" in err, err
    assert not (llms / "llms.txt").exists()


def _short_titles(data: bytes) -> bytes:
    def change(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        titles = read_string_table(data, read_header(data), "source.title")
        for name in [n for n in arrays if n.startswith("source.title.")]:
            del arrays[name]
        arrays.update(string_table_arrays("source.title", list(titles)[:-1]))

    return rewrite(data, change)


def test_postgres_export_refuses_forged_files_with_exit_4_and_writes_nothing(
    pg: PgServer, packed: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, data, key in (
        ("df.scidx", _forged_df(packed), "array `bm25.df_values`"),
        ("fw.scidx", _with_field_weights(packed, 7), "`meta.bm25.fieldWeights` is 7"),
    ):
        path = tmp_path / name
        path.write_bytes(data)
        argv = ["export", str(path), "--postgres", pg.dsn, "--table", "forged"]
        code, _, err = run(argv, capsys)
        assert code == 4, err
        assert key in err and "Traceback" not in err, err
        assert _tables(pg, "forged%") == []
    # The real file exports; the forged one then leaves that export as it was.
    path = tmp_path / "ok.scidx"
    path.write_bytes(packed)
    code, _, err = run(["export", str(path), "--postgres", pg.dsn, "--table", "forged"], capsys)
    assert code == 0, err
    tables = _tables(pg, "forged%")
    assert tables
    code, _, err = run(
        ["export", str(tmp_path / "df.scidx"), "--postgres", pg.dsn, "--table", "forged"], capsys
    )
    assert code == 4 and "bm25.df_values" in err, err
    assert _tables(pg, "forged%") == tables
