"""Compact chunk fields: derived ids, indexed anchors, heading paths as a tree, <u4 spans.

Format 5 derived the ids and indexed the headings and anchors; format 7 stores the heading
paths as a path column (each distinct prefix once, with its parent: FORMAT.md §2.2).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from scidx.errors import CorruptIndexError, ScidxError
from scidx.index import format
from scidx.index.columns import PathColumn, encode_path_column, read_column
from scidx.index.index import load_bytes
from scidx.pack.packer import pack_records
from support.indexes import rewrite, write_arrays

SECTIONS = [
    ("guide/install.md", "Guide", ["Guide", "Install"], "install", 3),
    ("guide/install.md", "Guide", ["Guide", "Upgrade"], "upgrade", 2),
    ("tutorial/cors.md", "CORS", ["CORS"], "", 1),
    ("tutorial/cors.md", "CORS", ["CORS", "Options"], "options", 2),
]


def _records(ids: str = "derived") -> list[dict[str, Any]]:
    out = []
    for source, title, path, anchor, parts in SECTIONS:
        for ordinal in range(parts):
            own = f"{source}:{anchor}:{ordinal}" if ids == "derived" else f"doc-{len(out)}"
            text = f"Part {ordinal} of {path[-1]}: install kubectl, cors options {anchor}."
            out.append(
                {
                    "id": own,
                    "source": source,
                    "title": title,
                    "headingPath": path,
                    "anchor": anchor,
                    "ordinal": ordinal,
                    "text": text,
                }
            )
    return out


def _pack(ids: str = "derived") -> bytes:
    data = pack_records(_records(ids), None, dimensions=32, use_cache=False).data
    assert data is not None
    return data


@pytest.fixture(scope="module")
def derived() -> bytes:
    return _pack()


def _fields(data: bytes) -> list[tuple[str, str, tuple[str, ...]]]:
    with load_bytes(data, verify=True) as idx:
        hits = [idx.chunk(i) for i in range(len(idx))]
        assert all(idx.get(h.id) is not None and idx.get(h.id).id == h.id for h in hits)  # type: ignore[union-attr]
        return [(h.id, h.anchor, tuple(h.heading_path)) for h in hits]


def test_markdown_ids_are_derived_and_read_as_stored(derived: bytes) -> None:
    names = set(format.read_header(derived).arrays)
    assert not {"chunk.id.offsets", "chunk.id.data"} & names
    assert {"chunk.heading.row", "chunk.anchor.row"} <= names
    got = _fields(derived)
    want = sorted(
        (r["id"], r["anchor"], tuple(r["headingPath"])) for r in _records()
    )  # rows are in id order
    assert got == want

    # The same index with the ids stored as a table (as records with ids of their own are)
    # reads the same.
    def store(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        a["chunk.id.offsets"], a["chunk.id.data"] = format.encode_strings([g[0] for g in got])

    assert _fields(rewrite(derived, store)) == got


def test_records_with_their_own_ids_keep_the_table() -> None:
    data = _pack("own")
    assert "chunk.id.zdata" in format.read_header(data).arrays  # small: stored deflated
    assert sorted(g[0] for g in _fields(data)) == sorted(r["id"] for r in _records("own"))


def test_columns_store_each_distinct_value_once(derived: bytes) -> None:
    header = format.read_header(derived)
    # Anchors: 4 distinct values; heading paths: the nodes Guide, Guide>Install,
    # Guide>Upgrade, CORS, CORS>Options (5; "Guide" and "CORS" are shared prefixes).
    for name, distinct in (("chunk.heading", 5), ("chunk.anchor", 4)):
        assert header.arrays[f"{name}.offsets"].shape == (distinct + 1,)
        assert header.arrays[f"{name}.offsets"].dtype == "<u4"
        assert header.arrays[f"{name}.row"].dtype == "<u2"
        assert header.arrays[f"{name}.row"].shape == (8,)
    assert header.arrays["chunk.heading.parent"].shape == (5,)
    assert header.arrays["chunk.span"].dtype == "<u4"


def test_a_path_column_is_each_distinct_prefix_once_parents_first() -> None:
    paths = ["A\x1fB\x1fC", "", "A\x1fB", "A\x1fD", "E", "A\x1fB\x1fC", "\x1f", "\x1fF"]
    arrays = encode_path_column("h", paths)
    # Nodes in part order: ("",) ("", "") ("", "F") (A) (A,B) (A,B,C) (A,D) (E).
    assert format.StringTable(arrays["h.offsets"], arrays["h.data"], name="h").take(range(8)) == [
        "",
        "",
        "F",
        "A",
        "B",
        "C",
        "D",
        "E",
    ]
    assert arrays["h.parent"].tolist() == [0, 1, 1, 0, 4, 5, 4, 0]
    assert arrays["h.row"].tolist() == [6, 0, 5, 7, 8, 6, 2, 3]
    assert arrays["h.row"].dtype == "<u2" and arrays["h.parent"].dtype == "<u2"
    data = write_arrays(arrays, {})
    column = read_column(data, format.read_header(data), "h", len(paths))
    assert isinstance(column, PathColumn)
    assert column.take(range(len(paths))) == paths  # every path reads back as stored
    column.validate_all()


def test_a_page_of_headings_reads_as_cheaply_as_the_indexed_column(derived: bytes) -> None:
    with load_bytes(derived) as idx:
        column = idx._live().corpus.chunk_heading  # noqa: SLF001
        assert isinstance(column, PathColumn)
        assert column.take([0, 3, 5]) == ["\x1f".join(idx.chunk(i).heading_path) for i in (0, 3, 5)]


def test_a_page_of_anchors_reads_as_row_by_row(derived: bytes) -> None:
    with load_bytes(derived) as idx:
        column = idx._live().corpus.chunk_anchor  # noqa: SLF001
        rows = [7, 0, 3, 3, -1]
        assert column.take(rows) == [column[i] for i in rows]
        assert column.take([2, 4]) == [idx.chunk(i).anchor for i in (2, 4)]
        assert column.take([]) == []
        with pytest.raises(IndexError):
            column.take([1, 8])


def _set(name: str, value: int) -> Any:
    def mutate(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        array = a[name].copy()
        array[:] = value
        a[name] = array

    return mutate


def _loop(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
    """A parent that is the node itself (a walk that would never end)."""
    parent = a["chunk.heading.parent"].copy()
    parent[:] = np.arange(1, parent.shape[0] + 1)
    parent[0] = 0
    a["chunk.heading.parent"] = parent


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_set("chunk.heading.row", 9), "array `chunk.heading.row` points at node 9, but"),
        (_set("chunk.heading.parent", 5), "the parent 5, not an earlier node"),
        (_loop, "array `chunk.heading.parent` gives node 4 the parent 4, not an earlier node"),
        (_set("chunk.anchor.row", 60000), "array `chunk.anchor.row` points at value 60000"),
        (_set("chunk.source", 7), "past the 2 sources"),
    ],
)
def test_rows_past_their_table_are_corrupt(derived: bytes, mutate: Any, message: str) -> None:
    data = rewrite(derived, mutate)
    with pytest.raises(CorruptIndexError, match="chunk"):
        load_bytes(data, verify=True)
    with load_bytes(data) as idx:  # the open is O(1): rows are checked when read
        for read in (
            lambda: [(h.id, h.heading_path) for h in idx.search("install kubectl", k=3)],
            lambda: [idx.chunk(i).heading_path for i in range(len(idx))],
        ):
            with pytest.raises(CorruptIndexError) as info:
                read()
            assert message in str(info.value)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda a, m: a.__setitem__("chunk.heading.row", a["chunk.heading.row"].astype("<i4")),
            "array `chunk.heading.row` has dtype <i4, expected <u2 or <u4",
        ),
        (
            lambda a, m: a.__setitem__("chunk.heading.parent", a["chunk.heading.parent"][:-1]),
            "array `chunk.heading.parent` has 4 rows, expected 5 (one per node",
        ),
        (
            lambda a, m: a.__setitem__("chunk.anchor.row", a["chunk.anchor.row"][:-1].copy()),
            "array `chunk.anchor.row` has 7 rows, expected 8",
        ),
        (
            lambda a, m: a.__setitem__("chunk.id.offsets", np.zeros(9, dtype="<u8")),
            "the index has no array `chunk.id.data`",
        ),
        (
            lambda a, m: a.__setitem__("chunk.span", a["chunk.span"].astype("<i8")),
            "array `chunk.span` has dtype <i8, expected <u8",
        ),
        (lambda a, m: a.pop("chunk.heading.offsets"), "no array `chunk.heading.offsets`"),
    ],
)
def test_malformed_chunk_arrays_are_refused_on_open(
    derived: bytes, mutate: Any, message: str
) -> None:
    with pytest.raises(CorruptIndexError) as info:
        load_bytes(rewrite(derived, mutate))
    assert message in str(info.value)


def _half(name: str) -> Any:
    def mutate(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        a[name] = a[name][: a[name].shape[0] // 2].copy()

    return mutate


def _deflating_pack() -> bytes:
    """An index whose tables are big enough to be stored deflated."""
    records = [
        {
            "id": f"guide/installing-page-{i % 6}.md:options-and-configuration-part-{i}:0",
            "source": f"guide/installing-page-{i % 6}.md",
            "title": f"Installing things, page {i % 6}",
            "headingPath": ["Installing things", f"Options and configuration, part {i}"],
            "anchor": f"options-and-configuration-part-{i}",
            "ordinal": 0,
            "text": f"Part {i}: install kubectl with the cors options.",
        }
        for i in range(40)
    ]
    packed = pack_records(records, None, dimensions=32, use_cache=False).data
    assert packed is not None
    return packed


@pytest.mark.parametrize(
    "name", ["chunk.heading.zdata", "chunk.anchor.zdata", "source.path.zdata", "source.title.zdata"]
)
def test_a_truncated_deflated_table_is_corrupt_when_read_and_with_verify(name: str) -> None:
    """Format 8 tables inflate on first use: a forged stream fails there, naming the array."""
    packed = _deflating_pack()
    assert name in format.read_header(packed).arrays
    data = rewrite(packed, _half(name))
    with pytest.raises(CorruptIndexError, match=f"array `{name}` does not inflate to exactly"):
        load_bytes(data, verify=True)
    with load_bytes(data) as idx:  # the open is O(1): nothing is inflated yet
        with pytest.raises(CorruptIndexError, match=f"array `{name}` does not inflate"):
            [h.to_dict() for h in idx.search("install kubectl", k=3)]


def test_flipped_bits_in_deflated_tables_raise_only_scidx_errors() -> None:
    packed = _deflating_pack()
    header = format.read_header(packed)
    spans = [
        (header.data_start + info.offset, info.nbytes)
        for name, info in header.arrays.items()
        if name.endswith(".zdata")
    ]
    rnd = random.Random(25)
    refused = 0
    for _ in range(60):
        blob = bytearray(packed)
        start, size = rnd.choice(spans)
        blob[start + rnd.randrange(size)] ^= 1 << rnd.randrange(8)
        try:
            with load_bytes(bytes(blob)) as idx:
                [h.to_dict() for i in range(len(idx)) for h in [idx.chunk(i)]]
        except ScidxError:
            refused += 1
    assert refused  # most flips break the stream; none may escape as another exception


def test_wide_rows_and_spans_read_the_same(derived: bytes) -> None:
    def widen(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        for name in ("chunk.heading.row", "chunk.heading.parent", "chunk.anchor.row"):
            a[name] = a[name].astype("<u4")
        for name in ("chunk.span", "chunk.heading.offsets", "chunk.anchor.offsets"):
            a[name] = a[name].astype("<u8")

    assert _fields(rewrite(derived, widen)) == _fields(derived)


def test_packing_twice_gives_the_same_bytes(derived: bytes) -> None:
    assert _pack() == derived
