"""Compressed chunk texts (``text.*``, FORMAT.md §2.9): round trips and hostile records."""

from __future__ import annotations

import random
import zlib
from typing import Any

import numpy as np
import pytest

from scidx.errors import CorruptIndexError
from scidx.index.index import load_bytes
from scidx.index.texts import DICT_BYTES, TextStore, encode_texts, make_dictionary
from support.indexes import DOCS, build_arrays, write_arrays

WORDS = ["pod", "kubectl", "ünïcode", "", "`code`", "日本語", "a" * 300, "\n\n", "emoji 🎉"]


def _texts(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [" ".join(rnd.choices(WORDS, k=rnd.randrange(0, 40))) for _ in range(n)]


def _store(arrays: dict[str, Any]) -> TextStore:
    return TextStore(
        arrays["text.dict"], arrays["text.ptr"], arrays["text.data"], arrays["text.len"]
    )


@pytest.mark.parametrize("with_plain", [False, True])
def test_round_trip(with_plain: bool) -> None:
    texts = _texts(300, 1)
    plains = _texts(300, 2) if with_plain else None
    arrays = encode_texts(texts, plains)
    assert arrays["text.len"].shape == (300, 2 if with_plain else 1)
    assert 0 < arrays["text.dict"].shape[0] <= DICT_BYTES
    store = _store(arrays)
    for i in (0, 17, 299, 17):  # 17 twice: the second from the memo
        assert store.text(i) == texts[i]
        assert store.plain(i) == (plains[i] if plains is not None else texts[i])
    store.validate_all()
    again = encode_texts(texts, plains)  # deterministic
    assert all(np.array_equal(again[k], arrays[k]) for k in arrays)


def test_empty_corpus_and_empty_records() -> None:
    empty = _store(encode_texts([], None))
    assert empty.n == 0
    empty.validate_all()
    store = _store(encode_texts(["", "x", ""], ["", "", "y"]))
    assert [store.text(i) for i in range(3)] == ["", "x", ""]
    assert [store.plain(i) for i in range(3)] == ["", "", "y"]


def test_dictionary_is_a_deterministic_sample() -> None:
    records = [f"record {i} ".encode() * 40 for i in range(1000)]
    zdict = make_dictionary(records)
    assert zdict == make_dictionary(list(records))
    assert len(zdict) == 16384 and b"record 992" in zdict


def _damaged(edit: Any) -> TextStore:
    arrays = {k: v.copy() for k, v in encode_texts(_texts(20, 3), _texts(20, 4)).items()}
    edit(arrays)
    return _store(arrays)


def test_a_declared_length_deflate_cannot_make_is_refused_without_allocating() -> None:
    def claim(a: dict[str, Any]) -> None:
        a["text.len"] = a["text.len"].astype("<u4")
        a["text.len"][5] = (0xFFFFFFFF, 0xFFFFFFFF)

    store = _damaged(claim)
    with pytest.raises(CorruptIndexError, match="chunk 5 is 8589934590 bytes, more than"):
        store.text(5)
    with pytest.raises(CorruptIndexError, match="chunk 5 is 8589934590 bytes, more than"):
        store.prefix(5, 10)  # a snippet's partial read is bounded the same way
    store.text(4)  # the other records still read


def test_a_zlib_bomb_inflates_no_further_than_declared() -> None:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = c.compress(bytes(50_000_000)) + c.flush()  # 50 MB of zeros in ~50 KB
    store = TextStore(
        np.zeros(0, "<u1"),
        np.array([0, len(bomb)], "<u8"),
        np.frombuffer(bomb, "<u1"),
        np.array([[1000]], "<u4"),
    )
    with pytest.raises(CorruptIndexError, match="does not inflate to the 1000 bytes"):
        store.text(0)


@pytest.mark.parametrize(
    ("edit", "read", "message"),
    [
        (lambda a: a["text.ptr"].__setitem__(3, 10**9), "plain", "out of order or past"),
        # The Markdown follows the clean text: a clean text read stops before it.
        (lambda a: a["text.len"].__setitem__((3, 0), 1), "text", "does not inflate to the"),
        (lambda a: a["text.len"].__setitem__((3, 1), 60000), "plain", "fewer bytes than the"),
        (lambda a: a["text.data"].__setitem__(slice(None), 0xFF), "plain", "bad stream|fewer"),
    ],
)
def test_damaged_records_are_corrupt_index_errors(edit: Any, read: str, message: str) -> None:
    store = _damaged(edit)
    with pytest.raises(CorruptIndexError, match=message):
        getattr(store, read)(3)
    with pytest.raises(CorruptIndexError):
        store.validate_all()


def test_records_hold_the_clean_text_first_and_a_snippet_reads_only_that() -> None:
    texts, plains = _texts(20, 3), _texts(20, 4)
    arrays = encode_texts(texts, plains)
    store = _store(arrays)
    record = store.record(7)
    assert record.startswith(plains[7].encode()) and record.endswith(texts[7].encode())
    assert store.plain(7) == plains[7] and store.text(7) == texts[7]
    assert store.prefix(8, 5) == plains[8].encode()[:5]
    assert store.prefix(8, 10**6) == plains[8].encode()
    assert store.clean_size(8) == len(plains[8].encode())
    # A stream cut after the clean text: the clean text still reads, the Markdown is corrupt.
    z = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY)
    stream = z.compress(b"clean words") + z.flush(zlib.Z_SYNC_FLUSH)
    cut = TextStore(
        np.zeros(0, "<u1"),
        np.array([0, len(stream)], "<u4"),
        np.frombuffer(stream, "<u1"),
        np.array([[9, 11]], "<u2"),
    )
    assert cut.plain(0) == "clean words"
    with pytest.raises(CorruptIndexError, match="does not inflate to the 20 bytes"):
        cut.text(0)


@pytest.mark.parametrize("with_plain", [False, True])
def test_a_page_of_prefixes_reads_as_one_prefix_per_row(with_plain: bool) -> None:
    """``prefixes``/``clean_sizes`` (a page of snippets) give what one read per row gives,
    whichever layout the arrays have, and refuse a row out of range."""
    texts, plains = _texts(30, 5), _texts(30, 6)
    arrays = encode_texts(texts, plains if with_plain else None)
    rnd = random.Random(2)
    rows = [rnd.randrange(30) for _ in range(40)]
    sizes = [rnd.choice((0, 1, 7, 64, 10**6)) for _ in rows]
    store = _store(arrays)
    source = plains if with_plain else texts
    assert store.prefixes(rows, sizes) == [
        source[r].encode()[:s] for r, s in zip(rows, sizes, strict=True)
    ]
    assert store.clean_sizes(rows) == [len(source[r].encode()) for r in rows]
    assert store.clean_sizes(rows) == [store.clean_size(r) for r in rows]
    # Arrays that are not plain native views (a strided copy) take numpy's path: the same bytes.
    strided = TextStore(
        arrays["text.dict"],
        np.repeat(arrays["text.ptr"], 2)[::2],
        arrays["text.data"],
        np.repeat(arrays["text.len"], 2, axis=0)[::2],
    )
    assert strided.prefixes(rows, sizes) == _store(arrays).prefixes(rows, sizes)
    assert strided.clean_sizes(rows) == _store(arrays).clean_sizes(rows)
    with pytest.raises(IndexError):
        _store(arrays).prefixes([3, 30], [5, 5])
    with pytest.raises(IndexError):
        _store(arrays).prefixes([-1], [5])


def test_pointers_and_lengths_are_as_narrow_as_they_fit() -> None:
    small = encode_texts(["a" * 10, "b"], None)
    assert small["text.ptr"].dtype == np.dtype("<u4")
    assert small["text.len"].dtype == np.dtype("<u2")
    wide = encode_texts(["x" * 70000, "b"], ["y", "b"])
    assert wide["text.len"].dtype == np.dtype("<u4")
    assert _store(wide).text(0) == "x" * 70000


def test_trailing_bytes_and_bad_utf8_are_refused() -> None:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = c.compress(b"\xff\xfe") + c.flush()
    for data, want, message in ((stream + b"junk", 2, "does not inflate"), (stream, 2, "UTF-8")):
        store = TextStore(
            np.zeros(0, "<u1"),
            np.array([0, len(data)], "<u8"),
            np.frombuffer(data, "<u1"),
            np.array([[want]], "<u4"),
        )
        with pytest.raises(CorruptIndexError, match=message):
            store.text(0)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("text.dict", np.zeros(DICT_BYTES + 1, "<u1"), "at most 32768 bytes"),
        ("text.len", np.zeros((len(DOCS), 3), "<u4"), "expected <u2 or <u4"),
        ("text.len", np.zeros((len(DOCS), 1), "<u8"), "has dtype <u8, expected <u2"),
        ("text.ptr", np.zeros(len(DOCS) + 1, "<u2"), "has dtype <u2, expected <u4"),
        ("text.ptr", np.zeros(len(DOCS) + 1, "<u8"), "runs from 0 to 0, expected 0 to"),
    ],
)
def test_malformed_arrays_are_refused_on_open(name: str, value: Any, message: str) -> None:
    arrays, meta = build_arrays(DOCS)
    arrays[name] = value
    with pytest.raises(CorruptIndexError, match=message):
        load_bytes(write_arrays(arrays, meta))


def test_a_hit_over_a_damaged_record_raises_a_scidx_error() -> None:
    arrays, meta = build_arrays(DOCS)
    lengths = arrays["text.len"].copy()
    lengths[:] = 7
    arrays["text.len"] = lengths
    with load_bytes(write_arrays(arrays, meta)) as idx:
        (hit,) = idx.search("max_chunk_chars", mode="keyword", k=1)
        assert hit.id  # page fields are not in the record
        with pytest.raises(CorruptIndexError, match="text"):
            hit.text  # noqa: B018
    with pytest.raises(CorruptIndexError):
        load_bytes(write_arrays(arrays, meta), verify=True)
