"""Ranking rules on small corpora that show the failure each rule fixes (issue 43).

The figures behind each rule are measured by ``benchmarks/bench_docs_questions.py``; these
tests pin the behaviour, not the figures.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.support.indexes import build_index, record, replace_arrays

from scidx import load_bytes
from scidx.errors import CorruptIndexError
from scidx.index import bm25

# Two pages with one look-alike section each (same heading path, same body), but only the
# first page is about log rotation as a whole; the second is about metrics.
LOOK_ALIKE = [
    record(
        "logs.md",
        "Kelpie writes its logs to one file per day and keeps them for a week.",
        anchor="",
        title="Kelpie",
        heading_path=["Kelpie"],
    ),
    record(
        "logs.md",
        "Set retention to rotate logs weekly instead.",
        anchor="retention",
        title="Kelpie",
        heading_path=["Kelpie", "Retention"],
    ),
    record(
        "logs.md",
        "Old logs rotate out when the disk fills; rotated logs are compressed.",
        anchor="disk",
        title="Kelpie",
        heading_path=["Kelpie", "Disk usage"],
    ),
    record(
        "metrics.md",
        "Set retention to rotate logs weekly instead.",
        anchor="retention",
        title="Kelpie",
        heading_path=["Kelpie", "Retention"],
    ),
    record(
        "metrics.md",
        "Metrics are sampled every ten seconds and kept for a month.",
        anchor="sampling",
        title="Kelpie",
        heading_path=["Kelpie", "Sampling"],
    ),
]


def _without_page_weight(data: bytes) -> bytes:
    """The same index as packed before page evidence: no ``meta.bm25.pageWeight`` key."""

    def drop(meta: dict[str, Any]) -> None:
        meta["bm25"].pop("pageWeight", None)

    return _edit_meta(data, drop)


def _edit_meta(data: bytes, edit: Any) -> bytes:
    from scidx.index.format import read_header

    header = read_header(data)
    meta = dict(header.meta)
    meta["bm25"] = dict(meta["bm25"])
    edit(meta)
    return replace_arrays(data, meta=meta)


def test_page_evidence_prefers_the_section_on_the_page_about_the_query() -> None:
    data = build_index(LOOK_ALIKE)
    idx = load_bytes(data)
    assert idx.meta["bm25"]["pageWeight"] == bm25.DEFAULT_PAGE_WEIGHT
    hits = idx.search("rotate logs retention", mode="keyword", k=5, group=None)
    # Identical section bodies: the one on the page about rotating logs comes first.
    assert [h.id for h in hits[:2]] == ["logs.md:retention:0", "metrics.md:retention:0"]
    assert hits[0].score > hits[1].score
    # The same file without page evidence ties them and lists them by chunk id.
    old = load_bytes(_without_page_weight(data))
    assert "pageWeight" not in old.meta["bm25"]
    before = old.search("rotate logs retention", mode="keyword", k=5, group=None)
    tied = [h for h in before if h.anchor == "retention"]
    assert tied[0].score == tied[1].score
    assert [h.id for h in tied] == ["logs.md:retention:0", "metrics.md:retention:0"]


def test_page_evidence_never_adds_a_chunk_without_a_query_term() -> None:
    idx = load_bytes(build_index(LOOK_ALIKE))
    hits = idx.search("compressed", mode="keyword", k=10, group=None)
    assert [h.id for h in hits] == ["logs.md:disk:0"]  # its page-mates have no such word


def test_page_evidence_is_the_page_bm25_of_the_term() -> None:
    """Each posting's impact: chunk BM25 + pageWeight x the term's BM25 on the whole page."""
    idx = load_bytes(build_index(LOOK_ALIKE))
    arrays = idx._live().corpus.bm25  # noqa: SLF001 - the stored arrays
    n = len(idx)
    rows, impacts = bm25.term_postings(arrays, "retent", n)  # type: ignore[misc]
    page_of = np.asarray(arrays.page_of, dtype=np.int64)
    pages = page_of.max() + 1
    page_len = np.bincount(page_of, weights=arrays.doc_len.astype(np.float64), minlength=pages)
    ptr, docs, codes = bm25.csr_postings(arrays, n)
    t = int(np.searchsorted(arrays.term_hash, np.uint64(bm25.term_hash("retent"))))
    run = slice(int(ptr[t]), int(ptr[t + 1]))
    tf = arrays.tf_values[codes[run]]
    chunk = bm25.bm25_impacts(
        float(arrays.idf_values[int(arrays.term_df[t])]),
        tf,
        arrays.doc_len[docs[run]],
        arrays.k1,
        arrays.b,
        arrays.avgdl,
    )
    # "retent" occurs once on each of the two pages: page df 2 of 2 pages.
    page_idf = float(np.log1p((2 - 2 + 0.5) / (2 + 0.5)))
    page = bm25.bm25_impacts(
        page_idf, tf, page_len[page_of[docs[run]]], arrays.k1, arrays.b, float(page_len.mean())
    )
    want = (chunk + bm25.DEFAULT_PAGE_WEIGHT * page).astype(np.float32)
    assert rows.tolist() == docs[run].tolist()
    assert impacts.tobytes() == want.tobytes()
    # The exporters' decode (PostgreSQL, the web bundle) gives the query's impacts bit for bit.
    every = bm25.posting_impacts(arrays, n)
    assert every[run].tobytes() == impacts.tobytes()


def test_one_chunk_pages_rank_as_without_page_evidence() -> None:
    """Every page one chunk (SciFact's documents): page and chunk scores would repeat."""
    recs = [
        record(f"d{i}.md", text, anchor="", title=f"D{i}")
        for i, text in enumerate(
            ["alpha beta", "alpha gamma gamma", "beta beta delta", "alpha alpha alpha"]
        )
    ]
    data = build_index(recs)
    new = load_bytes(data).rank("alpha beta gamma", mode="keyword", k=4)
    old = load_bytes(_without_page_weight(data)).rank("alpha beta gamma", mode="keyword", k=4)
    assert new == old


@pytest.mark.parametrize("value", [-0.1, 11.0, "0.2", True, None, [0.2]])
def test_a_hostile_page_weight_is_a_corrupt_index(value: object) -> None:
    def forge(meta: dict[str, Any]) -> None:
        meta["bm25"]["pageWeight"] = value

    with pytest.raises(CorruptIndexError, match=r"meta\.bm25\.pageWeight"):
        load_bytes(_edit_meta(build_index(LOOK_ALIKE), forge))
