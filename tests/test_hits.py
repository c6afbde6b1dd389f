"""Hit fields are decoded a page at once (issue 25): same values, no reference cycles."""

from __future__ import annotations

import gc
import pickle
import weakref

import pytest

from scidx.index.hits import PAGE_FIELDS, Hit
from scidx.index.index import Index, load_bytes
from support.indexes import build_index, record

TEMPLATE = "https://docs.example.org/{page}#{anchor}"


@pytest.fixture(scope="module")
def index() -> Index:
    recs = [
        record(
            f"guide/p{i % 7}.md",
            f"common words in chunk {i} about topic{i % 3}",
            anchor=f"s{i}",
            title=f"Page {i % 7}",
            heading_path=[f"Page {i % 7}", f"Section {i}"] if i % 4 else [],
        )
        for i in range(40)
    ]
    return load_bytes(build_index(recs, url_template=TEMPLATE))


def _fields(hit: Hit) -> tuple[object, ...]:
    return (hit.id, hit.score, hit.source, hit.anchor, hit.heading_path, hit.title, hit.url)


def _expected(index: Index, hit: Hit) -> tuple[object, ...]:
    """The seven fields read one by one from the corpus, the way a per-field reader would."""
    from scidx.index.urls import render_url

    c = index._live().corpus
    row = hit.__dict__["_row"]
    src = int(c.chunk_source[row])
    heading = c.chunk_heading[row]
    source, anchor = c.source_path[src], c.chunk_anchor[row]
    return (
        c.chunk_id[row],
        hit.score,
        source,
        anchor,
        heading.split("\x1f") if heading else [],
        c.source_title[src],
        render_url(TEMPLATE, source, anchor, c.source_root),
    )


def test_one_read_fills_the_whole_page(index: Index) -> None:
    hits = index.search("common words", k=10, mode="keyword", group=None)
    assert len(hits) == 10
    assert not any(PAGE_FIELDS & h.__dict__.keys() for h in hits)
    assert hits[3].title  # one field of one hit
    for h in hits:  # every hit of the page got every page field, and nothing else
        assert PAGE_FIELDS <= h.__dict__.keys()
        assert "text" not in h.__dict__ and "plain" not in h.__dict__
    assert [_fields(h) for h in hits] == [_expected(index, h) for h in hits]
    assert hits[0].text.startswith("common words")  # bodies stay per hit


def test_page_sections_and_dropped_hits(index: Index) -> None:
    hits = index.search("common words topic1", k=3, mode="keyword", group="page")
    subs = [s for h in hits for s in h.sections]
    assert subs
    kept = subs[-1]
    del hits, subs  # the rest of the page is gone before anything was read
    gc.collect()
    assert _fields(kept) == _expected(index, kept)


def test_a_hit_is_freed_without_the_cycle_collector(index: Index) -> None:
    hits = index.search("common words", k=5, mode="keyword", group=None)
    hits[0].url  # noqa: B018  # the page is filled
    refs = [weakref.ref(h) for h in hits]
    gc.disable()
    try:
        del hits
        assert all(r() is None for r in refs)  # freed by reference counting alone
    finally:
        gc.enable()


def test_pickled_hit_keeps_its_fields(index: Index) -> None:
    hit = index.search("common words", k=4, mode="keyword", group=None)[2]
    copy = pickle.loads(pickle.dumps(hit))
    assert _fields(copy) == _fields(hit) and copy.text == hit.text
