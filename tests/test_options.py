"""The search options are declared once: ``SearchParams`` fields and the ``TypedDict`` views."""

from __future__ import annotations

from dataclasses import fields

import pytest

from scidx.fusion import RRF_K, rrf_fuse
from scidx.index.index import Index, load_bytes
from scidx.index.params import (
    BatchSearchOptions,
    FilterOptions,
    RankBatchOptions,
    RankOptions,
    SearchOptions,
    SearchParams,
)
from support.indexes import DOCS, build_index


@pytest.fixture(scope="module")
def index() -> Index:
    return load_bytes(build_index(DOCS))


def test_the_typed_options_are_the_dataclass_fields() -> None:
    names = {f.name for f in fields(SearchParams) if f.init}
    # Every setting, named here so that adding one is a decision this test records.
    assert names == {
        "k",
        "mode",
        "alpha",
        "query_vector",
        "mmr",
        "snippet_chars",
        "min_score",
        "source",
        "heading",
        "metadata",
        "group",
        "rerank",
        "rerank_top",
        "version",
        "fuzzy",
        "prefix",
        "language",
    }
    assert SearchOptions.__optional_keys__ == names
    assert not SearchOptions.__required_keys__
    # Each narrower view is the full set minus what its method cannot use.
    assert RankOptions.__optional_keys__ == names - {"snippet_chars"}
    assert BatchSearchOptions.__optional_keys__ == names - {"query_vector"}
    assert RankBatchOptions.__optional_keys__ == names - {"query_vector", "snippet_chars"}
    assert FilterOptions.__optional_keys__ == {
        "min_score",
        "source",
        "heading",
        "metadata",
        "group",
        "version",
        "language",
    }


def test_an_option_a_method_does_not_take_is_a_type_error(index: Index) -> None:
    with pytest.raises(TypeError, match="search\\(\\) got an unexpected keyword argument 'kk'"):
        index.search("cors", kk=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="search_batch\\(\\) got an unexpected .* 'query_vector'"):
        index.search_batch(["cors"], query_vector=[0.0])  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="rank\\(\\) got an unexpected .* 'snippet_chars'"):
        index.rank("cors", snippet_chars=10)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="rank_batch\\(\\) got an unexpected .* 'query_vector'"):
        index.rank_batch(["cors"], query_vector=[0.0])  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="search_vector\\(\\) got an unexpected .* 'mode'"):
        index.search_vector([0.0], mode="keyword")  # type: ignore[call-arg]


def test_each_method_keeps_its_default_grouping(index: Index) -> None:
    # search/search_batch group by section unless told; rank/rank_batch rank raw chunks.
    grouped = [h.id for h in index.search("install", k=10, mode="keyword")]
    assert [h.id for h in index.search_batch(["install"], k=10, mode="keyword")[0]] == grouped
    raw = [i for i, _ in index.rank("install", k=10, mode="keyword")]
    assert [h.id for h in index.search("install", k=10, mode="keyword", group=None)] == raw
    assert [i for i, _ in index.rank_batch(["install"], k=10, mode="keyword")[0]] == raw


def test_rrf_fuse_scores_ranks_and_breaks_ties_by_list_then_rank() -> None:
    fused = rrf_fuse([["a", "b"], ["c"], ["d", "e", "f"]])
    assert [item for _, item in fused] == ["a", "c", "d", "b", "e", "f"]
    assert fused[0][0] == 1.0 / (RRF_K + 1)
    assert fused[-1][0] == 1.0 / (RRF_K + 3)
    assert rrf_fuse([["x"]], rrf_k=0) == [(1.0, "x")]
