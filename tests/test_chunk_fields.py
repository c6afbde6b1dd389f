"""Format 5's compact chunk fields: derived ids, indexed heading/anchor columns, <u4 spans."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scidx.errors import CorruptIndexError
from scidx.index import format
from scidx.index.index import load_bytes
from scidx.pack.packer import pack_records
from support.indexes import rewrite

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
    assert "chunk.id.data" in format.read_header(data).arrays
    assert sorted(g[0] for g in _fields(data)) == sorted(r["id"] for r in _records("own"))


def test_columns_store_each_distinct_value_once(derived: bytes) -> None:
    header = format.read_header(derived)
    for name, distinct in (("chunk.heading", 4), ("chunk.anchor", 4)):
        assert header.arrays[f"{name}.offsets"].shape == (distinct + 1,)
        assert header.arrays[f"{name}.row"].dtype == "<u2"
        assert header.arrays[f"{name}.row"].shape == (8,)
    assert header.arrays["chunk.span"].dtype == "<u4"


def _set(name: str, value: int) -> Any:
    def mutate(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        array = a[name].copy()
        array[:] = value
        a[name] = array

    return mutate


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_set("chunk.heading.row", 9), "array `chunk.heading.row` points at value 9, but"),
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
            "array `chunk.heading.row` has dtype <i4, expected <u4",
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


def test_wide_rows_and_spans_read_the_same(derived: bytes) -> None:
    def widen(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        for name in ("chunk.heading.row", "chunk.anchor.row", "chunk.span"):
            a[name] = a[name].astype("<u4" if name.endswith(".row") else "<u8")

    assert _fields(rewrite(derived, widen)) == _fields(derived)


def test_packing_twice_gives_the_same_bytes(derived: bytes) -> None:
    assert _pack() == derived
