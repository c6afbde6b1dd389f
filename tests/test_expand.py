"""Typo tolerance and search as you type: the edit rules, the word dictionary, the search path."""

from __future__ import annotations

import random
import string
import time
import zlib
from typing import Any

import numpy as np
import pytest

from scidx.errors import CorruptIndexError, QueryError
from scidx.index.dictionary import (
    MAX_KEY_RANGE,
    edit_distance,
    encode_dictionary,
    key_lengths,
    word_frequency,
)
from scidx.index.expand import expand_query
from scidx.index.index import Index, load_bytes
from scidx.index.params import SearchParams
from support.indexes import build_index, record, rewrite

TEXTS = [
    (
        "deploy.md",
        "Deploy",
        "Teleport the deployment to another cluster with the teleport command.",
    ),
    (
        "deploy.md",
        "Rollout",
        "A deployment rollout replaces pods one at a time; teleport is not needed.",
    ),
    (
        "config.md",
        "Configuration",
        "The configuration file sets the server port and the form fields.",
    ),
    ("config.md", "Server", "Configuration of the server: the server listens on a port."),
    (
        "middleware.md",
        "Middleware",
        "Middleware runs before every request; add middleware with app.add.",
    ),
    ("middleware.md", "Order", "Middleware order matters: the first middleware added runs last."),
    ("forms.md", "Forms", "Read form data from a request; the form must be sent from the browser."),
    ("misc.md", "Other", "Production builds strip debug output from the bundle."),
    ("misc.md", "Production", "Production servers need a production configuration."),
]


@pytest.fixture(scope="module")
def idx() -> Index:
    recs = [
        record(src, text, anchor=head.lower(), title=head, heading_path=[head], ordinal=0)
        for src, head, text in TEXTS
    ]
    return load_bytes(build_index(recs))


def headings(hits: list) -> list[str]:
    return [h.heading_path[-1] for h in hits]


# -- edit rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "d"),
    [
        ("teleport", "teleport", 0),
        ("telport", "teleport", 1),  # delete
        ("teleeport", "teleport", 1),  # insert
        ("telaport", "teleport", 1),  # substitute
        ("tleeport", "teleport", 1),  # swap of neighbours
        ("etleport", "teleport", 1),  # swap at the start
        ("teleprot", "teleport", 1),  # swap at the end
        ("tlpeort", "teleport", 2),
        ("abc", "xyz", 3),
        ("ca", "abc", 3),  # OSA, not full Damerau: no letter is edited twice
    ],
)
def test_edit_distance(a: str, b: str, d: int) -> None:
    assert edit_distance(a, b, 3) == d
    assert edit_distance(b, a, 3) == d
    if d:
        assert edit_distance(a, b, d - 1) == d  # above the limit: limit + 1


def test_edit_distance_is_capped() -> None:
    assert edit_distance("a" * 50, "b" * 50, 2) == 3
    assert edit_distance("kitten", "sitting", 1) == 2


@pytest.mark.parametrize("length", range(3, 33))
def test_one_edit_keeps_a_key(length: int) -> None:
    # Every single edit leaves the prefix key or the suffix key intact (the look-up's premise).
    rnd = random.Random(length)
    a, b = key_lengths(length)
    assert a + b == length - 1
    word = "".join(rnd.choices(string.ascii_lowercase, k=length))
    edits = []
    for i in range(length):
        edits.append(word[:i] + word[i + 1 :])
        edits.append(word[:i] + "#" + word[i + 1 :])
        edits.append(word[:i] + "#" + word[i:])
        if i + 1 < length:
            edits.append(word[:i] + word[i + 1] + word[i] + word[i + 2 :])
    edits.append(word + "#")
    for typo in edits:
        assert typo[:a] == word[:a] or (b and typo[-b:] == word[-b:]), (word, typo)


def test_word_frequency_is_a_rounded_log() -> None:
    for count in (1, 2, 3, 5, 10, 100, 1000, 123456):
        assert word_frequency(count) == min(255, round(8 * np.log2(count)))
    assert word_frequency(10**40) == 255


# -- typos -------------------------------------------------------------------------------------


def test_typo_is_corrected_in_both_modes(idx: Index) -> None:
    for mode in ("keyword", "hybrid"):
        hits = idx.search("telport", mode=mode, group=None)
        assert headings(hits)[:2] == ["Deploy", "Rollout"]
        (fix,) = hits[0].corrections
        assert (fix.word, fix.shown, fix.kind) == ("telport", "teleport", "typo")
        assert hits[0].to_dict()["corrections"][0]["shown"] == "teleport"


def test_swap_and_delete(idx: Index) -> None:
    assert headings(idx.search("midlewear", mode="keyword"))[:1] == []  # 2 edits, 9 letters: no
    assert headings(idx.search("middlewrae", mode="keyword"))[0] == "Middleware"  # swap
    assert headings(idx.search("middleare", mode="keyword"))[0] == "Middleware"  # delete
    assert headings(idx.search("prduction", mode="keyword", group=None))[0] == "Production"


def test_correction_scores_below_exact(idx: Index) -> None:
    exact = idx.search("teleport", mode="keyword", group=None)
    typo = idx.search("telport", mode="keyword", group=None)
    assert [h.id for h in exact] == [h.id for h in typo]
    assert typo[0].score < exact[0].score
    assert not exact[0].corrections


def test_stop_words_and_short_words_are_never_corrected(idx: Index) -> None:
    # "from" is a stop word (never a term), "frm" and "serer" are short: no correction.
    assert idx.search("from", mode="keyword") == []
    assert idx.search("frm", mode="keyword") == []
    assert idx.search("fomr", mode="keyword") == []  # 4 letters: never corrected to "form"


def test_fuzzy_can_be_turned_off(idx: Index) -> None:
    assert idx.search("telport", mode="keyword", fuzzy=False) == []
    with pytest.raises(QueryError, match="fuzzy must be True or False"):
        idx.search("telport", fuzzy="yes")  # type: ignore[typeddict-item]
    with pytest.raises(QueryError, match="prefix must be True or False"):
        idx.search("telport", prefix=1)  # type: ignore[typeddict-item]


@pytest.mark.parametrize("query", ["xyzzyplugh", "qwxzv jkplm", "zzqqxxvv", "kjhgfdsa qpwoeiru"])
@pytest.mark.parametrize("mode", ["keyword", "hybrid", "vector"])
def test_nonsense_stays_empty(idx: Index, query: str, mode: str) -> None:
    assert idx.search(query, mode=mode, prefix=True) == []
    assert idx.search(query + " ", mode=mode, prefix=True) == []


def test_random_letters_stay_empty(idx: Index) -> None:
    rnd = random.Random(7)
    for _ in range(200):
        query = "".join(rnd.choices("bcdfghjklmnpqvwxz", k=rnd.randrange(5, 12)))
        assert idx.search(query, mode="keyword", prefix=True) == [], query


# -- search as you type ------------------------------------------------------------------------


def test_last_word_is_completed_while_typed(idx: Index) -> None:
    hits = idx.search("middlew", mode="keyword", prefix=True)
    assert headings(hits)[0] == "Middleware"
    assert [c.kind for c in hits[0].corrections] == ["prefix"]
    assert hits[0].corrections[0].shown == "middleware"
    # A space ends the word: no completion, and without prefix= none either.
    assert idx.search("middlew ", mode="keyword", prefix=True) == []
    assert idx.search("middlew", mode="keyword") == []
    # The stem of a half-typed word may be no prefix of the term: "configura" -> configuration.
    assert headings(idx.search("server configura", mode="keyword", prefix=True, group=None))[0] in (
        "Server",
        "Configuration",
    )


def test_completion_keeps_results_stable(idx: Index) -> None:
    # Typed key by key: once a word has a completion, its results stay until it is finished.
    word = "deployment"
    seen = [headings(idx.search(word[:i], mode="keyword", prefix=True))[:1] for i in range(3, 11)]
    assert all(s == ["Rollout"] or s == ["Deploy"] for s in seen), seen


def test_vector_leg_embeds_the_corrected_query(idx: Index) -> None:
    terms = idx._live().terms("how to telport a pod", SearchParams())
    assert getattr(terms, "text", "") == "how to teleport a pod"
    assert getattr(idx._live().terms("teleport", SearchParams()), "text", "") == "teleport"


# -- bounded work and hostile input ------------------------------------------------------------


def test_bad_input_is_bounded(idx: Index) -> None:
    dictionary = idx._live().corpus.dictionary
    for query in ("a" * 10_000, " ".join(["telport"] * 1000), "x" * 100_000 + "y"):
        start = time.perf_counter()
        idx.search(query, mode="keyword", prefix=True)
        assert time.perf_counter() - start < 2.0
    every = "".join(chr(c) for c in range(0x20, 0x3000) if not 0xD800 <= c < 0xE000)
    idx.search(every, mode="keyword", prefix=True)
    assert expand_query("é" * 50, dictionary, fuzzy=True, prefix=True).corrections == ()
    assert dictionary is not None and dictionary.neighbours("a" * 40, 2) == []


def test_key_ranges_are_capped() -> None:
    assert MAX_KEY_RANGE <= 4096


def _with_dictionary(data: bytes, stream: bytes, dictionary: dict[str, object]) -> bytes:
    def change(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        arrays["dict.words"] = np.frombuffer(stream, dtype=np.uint8).copy()
        meta["dictionary"] = dictionary

    return rewrite(data, change)


def _dictionary_index(counts: dict[str, int], **meta: object) -> bytes:
    recs = [
        record("a.md", "teleport deployment middleware", anchor="a", title="A"),
        record("b.md", "teleport again", anchor="b", title="B"),
    ]
    stream, count, size = encode_dictionary(counts)
    found = {"version": "scidx-dict-1", "words": count, "bytes": size, **meta}
    return _with_dictionary(build_index(recs), stream, found)


def test_hostile_dictionary_is_a_corrupt_index_error() -> None:
    good = _dictionary_index({"teleport": 3, "deployment": 2})
    assert load_bytes(good).search("telport", mode="keyword")
    bad_count = _dictionary_index({"teleport": 3}, words=5)
    with pytest.raises(CorruptIndexError, match="dict.words"):
        load_bytes(bad_count).search("telport", mode="keyword")
    with pytest.raises(CorruptIndexError, match="meta.dictionary.bytes"):
        load_bytes(_dictionary_index({"teleport": 3}, bytes=10**12))
    # Unsorted words, as a forger might write them.
    raw = b"\x01\x01" + b"zebra\nalpha"
    packer = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
    stream = packer.compress(raw) + packer.flush()
    data = _with_dictionary(
        build_index([record("a.md", "alpha zebra", anchor="a", title="A")]),
        stream,
        {"version": "scidx-dict-1", "words": 2, "bytes": len(raw)},
    )
    with pytest.raises(CorruptIndexError, match="not strictly ascending"):
        load_bytes(data).search("zebrra", mode="keyword")
    with pytest.raises(CorruptIndexError, match="dict.words"):
        load_bytes(data, verify=True)


def test_unknown_dictionary_version_is_ignored() -> None:
    data = _dictionary_index({"teleport": 3}, version="scidx-dict-99")
    idx = load_bytes(data)
    assert idx._live().corpus.dictionary is None
    assert idx.search("telport", mode="keyword") == []
    assert idx.search("teleport", mode="keyword")


def _osa(a: str, b: str) -> int:
    """The textbook optimal string alignment table, as the oracle."""
    d = [[i + j if not i * j else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def test_edit_distance_equals_the_table_at_every_limit() -> None:
    rnd = random.Random(3)
    for _ in range(20_000):
        a = "".join(rnd.choices("abc", k=rnd.randrange(0, 7)))
        b = "".join(rnd.choices("abc", k=rnd.randrange(0, 7)))
        for limit in (1, 2, 3):
            assert edit_distance(a, b, limit) == min(_osa(a, b), limit + 1), (a, b, limit)
