"""No results without evidence: nonsense finds nothing, hashing vectors only reorder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scidx.embed.hashing import HashingEmbedder
from scidx.errors import CorruptIndexError
from scidx.index.index import Index, load_bytes
from scidx.pack.packer import pack_records

RECORDS = [
    {"id": "a", "title": "Install", "text": "Install the tool with pip, then run it once."},
    {"id": "b", "title": "Logs", "text": "Rotate nginx logs every day with logrotate."},
    {"id": "c", "title": "Cache", "text": "The embedding cache lives in the user cache folder."},
    {"id": "d", "title": "Plugins", "text": "Plugins register providers through entry points."},
]
NONSENSE = ["xyzzyplugh", "qwxzvb", "zzkqpl fmxw", "plugh"]


class _Floor(HashingEmbedder):
    """The hashing embedder with another ``vectorFloor`` in its header."""

    def __init__(self, floor: Any) -> None:
        super().__init__()
        self.floor = floor

    def fusion(self) -> dict[str, Any]:
        return {**super().fusion(), "vectorFloor": self.floor}


def _index(embedder: HashingEmbedder | None = None) -> Index:
    packed = pack_records(RECORDS, None, embedder=embedder, use_cache=False)
    assert packed.data is not None
    return load_bytes(packed.data, source="test")


@pytest.fixture(scope="module")
def index() -> Index:
    return _index()


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_nonsense_has_no_results_in_every_mode(index: Index, mode: str) -> None:
    for query in NONSENSE:
        assert index.search(query, mode=mode) == [], (query, mode)


def test_hashing_hybrid_never_adds_what_keyword_does_not_match(index: Index) -> None:
    assert index.meta["fusion"]["vectorFloor"] is None  # recorded in the header
    for query in ("install pip", "nginx logs rotate", "cache folder", "entry points", "tool"):
        keyword = {cid for cid, _ in index.rank(query, k=10, mode="keyword")}
        hybrid = {cid for cid, _ in index.rank(query, k=10, mode="hybrid")}
        vector = {cid for cid, _ in index.rank(query, k=10, mode="vector")}
        assert keyword and hybrid <= keyword and vector <= keyword, query


def test_the_floor_comes_from_the_header() -> None:
    # A floor of -1 lets every cosine through: the old behaviour, where nonsense found hits.
    loose = _index(_Floor(-1.0))
    assert loose.search("xyzzyplugh", mode="hybrid") != []
    strict = _index(_Floor(0.99))
    assert strict.search("xyzzyplugh", mode="hybrid") == []
    assert [h.id for h in strict.search("nginx logs", mode="hybrid")] == ["b"]


def test_a_bad_floor_is_a_corrupt_index(tmp_path: Path) -> None:
    for bad in ("high", 2.0, True):
        packed = pack_records(RECORDS, None, embedder=_Floor(bad), use_cache=False)
        assert packed.data is not None
        with pytest.raises(CorruptIndexError, match="vectorFloor"):
            load_bytes(packed.data, source="bad")
