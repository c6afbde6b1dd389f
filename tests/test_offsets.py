"""Snippet offsets (``snippet.*``): what the packer stores, what snippets read, bad data.

A snippet marks exactly the words whose tokenizer terms include a query term (the first such
term of a ``\\w+`` run counting) and shows the best window of them. Hits of an index with
offsets must give that result; the text scan (indexes without offsets) may miss words whose
stem is not a prefix of them ("using" for "use"), never mark a wrong one.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scidx.errors import CorruptIndexError, ScidxError
from scidx.index import format, offsets
from scidx.index.highlight import CODE_END, CODE_START, build_snippet, flatten
from scidx.index.index import Index, load, load_bytes
from scidx.pack.arrays import build_offset_arrays, offsets_block
from scidx.pack.packer import pack_records
from scidx.tokenize import term_spans, tokenize
from support.indexes import rewrite
from support.snippets import exact_snippet


def snippets_of(idx: Index, query: str, k: int = 10, chars: int = 240) -> list[tuple[Any, ...]]:
    out = []
    for hit in idx.search(query, k=k, snippet_chars=chars, group=None):
        body = hit.plain if hit.plain is not None else hit.text
        out.append((hit, body))
    return out


# A small corpus with every case: code blocks (not flat), a word making several terms, stems
# that are not prefixes of their words, Unicode, long words, repeated words far apart.
TEXTS = [
    "Reading files: use read_to_string, which reads a whole file. Using it is simple; "
    "the reader was using buffered reads before. " * 3,
    f"Install it:\n\n{CODE_START}pip install scidx\nscidx --help{CODE_END}\n\nThen run the "
    "installer again. Installing twice is harmless; the installation keeps its settings.",
    "Mutability: a mutable variable may change. Interior mutability uses RefCell. "
    + "filler words here. " * 30
    + "At the end, mutable state again, with variables and mutation.",
    "Straße und Übergrößen: ÜBERGRÖSSE prüfen. Ünïcödé wörds are normalised by NFKC and "
    "case folding; the ﬁle ligature is a file.",
    "A" * 300
    + " long word, then the sharing of shared things; sharing is caring. "
    + "x" * 260
    + "_sharing suffix.",
    "Aging dose dosing: the dosing regimen (dose) was given to aging patients with care; "
    "dosing again after aging. " * 4,
]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("offsets") / "small.scidx"
    records = [
        {"id": f"d{i}", "title": f"Doc {i}", "text": t, "source": f"d{i}.md"}
        for i, t in enumerate(TEXTS)
    ]
    pack_records(records, out, use_cache=False)
    return out


QUERIES = [
    "read file",
    "use reading",
    "install installer",
    "mutable mutability variable",
    "übergröße straße file",
    "share sharing",
    "dose aging",
    "read_to_string string",
    "nothing matches here",
]


@pytest.mark.parametrize("chars", [240, 60, 8, 5, 2000])
def test_snippets_equal_the_definition(small: Path, chars: int) -> None:
    with load(small) as idx:
        assert idx._searcher is not None and idx._searcher.corpus.offsets is not None
        checked = matched = 0
        for query in QUERIES:
            for hit, body in snippets_of(idx, query, chars=chars):
                assert hit.snippet_parts == exact_snippet(body, hit.query_terms, chars), query
                checked += 1
            # Hybrid hits are the keyword matches (hashing vectors only reorder them).
            matched += len(idx.rank(query, k=10, mode="keyword"))
        assert checked == matched > 10


def test_offsets_find_words_the_scan_misses(small: Path) -> None:
    """ "using" makes "use" and "dosing" makes "dose": the stems are not prefixes."""
    with load(small) as idx:
        hit = idx.search("use", k=1)[0]
        marked = {hit.snippet[a:b] for a, b in hit.highlights}
        assert "using" in marked or "Using" in marked
        body = hit.plain if hit.plain is not None else hit.text
        scanned = build_snippet(body, hit.query_terms, 240)
        assert {scanned.text[a:b] for a, b in scanned.highlights} < marked


def test_the_scan_never_marks_a_word_the_definition_does_not(small: Path) -> None:
    with load(small) as idx:
        for query in QUERIES:
            for hit, body in snippets_of(idx, query, chars=100000):
                scanned = build_snippet(body, hit.query_terms, 100000)
                exact = exact_snippet(body, hit.query_terms, 100000)
                assert set(scanned.highlights) <= set(exact.highlights)


def test_rust_book_snippets_equal_the_definition(shared_dir: Path, tmp_path: Path) -> None:
    """Every hit of 150 queries made of the book's own headings (code, stems, Unicode)."""
    book = shared_dir / "corpora" / "rust-book" / "src"
    records = []
    for i, path in enumerate(sorted(book.glob("*.md"))[:60]):
        records.append({"id": f"c{i}", "text": path.read_text(encoding="utf-8")})
    out = tmp_path / "rb.scidx"
    pack_records(records, out, use_cache=False)
    headings = sorted(
        {line.lstrip("#").strip() for r in records for line in r["text"].splitlines()} - {""}
    )
    rnd = random.Random(7)
    queries = rnd.sample([h for h in headings if len(h) > 3], 150)
    with load(out) as idx:
        checked = 0
        for query in queries:
            for hit, body in snippets_of(idx, query, chars=160):
                assert hit.snippet_parts == exact_snippet(body, hit.query_terms, 160), query
                checked += 1
        assert checked > 500


def _decode(arrays: dict[str, Any], i: int) -> list[tuple[int, int, int]]:
    """``(start, length, key)`` of chunk ``i``'s stored occurrences (fillers left out)."""
    row, word = arrays["snippet.row"], arrays["snippet.word"]
    gap, size = arrays["snippet.gap"], arrays["snippet.len"]
    lo, hi = row[i], row[i + 1]
    out, start = [], 0
    for w, g, n in zip(
        word[lo:hi].tolist(), gap[lo:hi].tolist(), size[lo:hi].tolist(), strict=True
    ):
        start += g
        if w:
            out.append((start, n, w))
        else:
            assert g == offsets.MAX_GAP and n == 0  # a filler
    return out


def test_packed_offsets_describe_every_indexed_word() -> None:
    texts = [
        "Reading files with read_to_string.",
        f"Code:{CODE_START}x = 1\n  y = 2{CODE_END} done",
        "",
        "the of and",  # stop-words only: no occurrence
        "far " + "." * 700 + " apart, " + "w" * 300 + " averyveryverylongword",
    ]
    arrays = build_offset_arrays([offsets_block(texts)])
    row, word = arrays["snippet.row"], arrays["snippet.word"]
    assert row.tolist()[0] == 0 and row.tolist()[-1] == word.shape[0]
    assert word.shape == arrays["snippet.gap"].shape == arrays["snippet.len"].shape
    flat_bit = offsets.IS_FLAT
    assert arrays["snippet.flat"].tolist() == [flat_bit, 0, flat_bit, flat_bit, flat_bit]
    for i, text in enumerate(texts):
        flat, _ = flatten(text)
        got = [(flat[a : a + n], n, key) for a, n, key in _decode(arrays, i)]
        want = [
            (flat[a:b][: offsets.LONG_WORD], min(b - a, offsets.LONG_WORD), offsets.word_key(t))
            for a, b, made in term_spans(flat)
            for t in dict.fromkeys(made)
        ]
        assert got == want
    assert 0 in word[row[4] : row[5]].tolist()  # the 700 dots need fillers; then long words
    assert all(1 <= offsets.word_key(t) <= 65535 for t in ("a", "read", "straße", "x" * 99))


def test_the_highlighter_measures_the_long_words_the_offsets_do() -> None:
    from scidx.index import highlight

    assert highlight._LONG_WORD == offsets.LONG_WORD


def test_the_pack_records_the_offsets_version(small: Path) -> None:
    header = format.read_header_file(small)
    assert header.meta["snippets"] == {"offsets": offsets.OFFSETS_VERSION}
    assert set(offsets.ARRAY_NAMES) <= set(header.arrays)
    assert not {"snippet.ptr", "snippet.occ", "snippet.flags"} & set(header.arrays)


# ---------------------------------------------------------------------------------------------
# Indexes without offsets, or with offsets this reader does not know: the scan.


def _drop_offsets(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
    for name in offsets.ARRAY_NAMES:
        arrays.pop(name)
    meta.pop("snippets")


@pytest.mark.parametrize(
    "mutate",
    [
        _drop_offsets,
        lambda a, m: m.__setitem__("snippets", {"offsets": "scidx-offsets-99"}),
        lambda a, m: m.pop("snippets"),
    ],
)
def test_without_known_offsets_snippets_scan(small: Path, mutate: Any) -> None:
    data = rewrite(small.read_bytes(), mutate)
    with load_bytes(data) as idx:
        assert idx._searcher is not None and idx._searcher.corpus.offsets is None
        for query in QUERIES:
            for hit, body in snippets_of(idx, query):
                assert hit.snippet_parts == build_snippet(body, hit.query_terms, 240)


def _format_40_offsets(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
    """Format 4.0's arrays and version in place of this one's (a file from packer 12)."""
    for name in offsets.ARRAY_NAMES:
        arrays.pop(name)
    n = arrays["chunk.ordinal"].shape[0]
    arrays["snippet.ptr"] = np.zeros(n + 1, "<u8")
    arrays["snippet.occ"] = np.zeros((0, 3), "<u2")
    arrays["snippet.flags"] = np.zeros(n, "<u1")
    meta["snippets"] = {"offsets": "scidx-offsets-2"}


def test_format_40_offsets_are_ignored(small: Path) -> None:
    """A packer-12 file opens; its snippets scan (pack-docs rebuilds it: packer 13)."""
    data = rewrite(small.read_bytes(), _format_40_offsets)
    with load_bytes(data) as idx:
        assert idx._searcher is not None and idx._searcher.corpus.offsets is None
        for hit, body in snippets_of(idx, "read file"):
            assert hit.snippet_parts == build_snippet(body, hit.query_terms, 240)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda a, m: a.pop("snippet.gap"), "the snippet offsets lack array `snippet.gap`"),
        (
            lambda a, m: a.__setitem__("snippet.row", a["snippet.row"][:-1].copy()),
            "array `snippet.row` has shape",
        ),
        (
            lambda a, m: a.__setitem__("snippet.row", a["snippet.row"] + np.uint64(1)),
            "array `snippet.row` runs from 1",
        ),
        (
            lambda a, m: a.__setitem__("snippet.flat", a["snippet.flat"].astype("<u4")),
            "array `snippet.flat` has dtype <u4, expected <u1",
        ),
        (
            lambda a, m: a.__setitem__("snippet.gap", a["snippet.gap"][:-1].copy()),
            r"array `snippet.gap` is \[\d+\], expected \[\d+\]",
        ),
        (
            lambda a, m: a.__setitem__("snippet.len", a["snippet.len"][1:].copy()),
            r"array `snippet.len` is \[\d+\], expected \[\d+\]",
        ),
        (  # format 4.0's three words per occurrence
            lambda a, m: a.__setitem__(
                "snippet.word", np.zeros((a["snippet.word"].shape[0], 3), "<u2")
            ),
            r"array `snippet.word` has 2 dimension\(s\)",
        ),
    ],
)
def test_inconsistent_offsets_are_corrupt(small: Path, mutate: Any, message: str) -> None:
    data = rewrite(small.read_bytes(), mutate)
    with pytest.raises(CorruptIndexError, match=message):
        load_bytes(data, source="bad.scidx")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda a, m: a["snippet.row"].__setitem__(2, a["snippet.row"][-1]),
            "array `snippet.row` is not monotonic",
        ),
        (
            lambda a, m: a["snippet.flat"].__setitem__(0, 7),
            "array `snippet.flat` has a value other than 0 or 1",
        ),
    ],
)
def test_verify_checks_the_offsets(small: Path, mutate: Any, message: str) -> None:
    data = rewrite(small.read_bytes(), mutate)
    load_bytes(data).close()  # the constant-time open does not read them
    with pytest.raises(CorruptIndexError, match=message):
        load_bytes(data, verify=True)


def _forge(rnd: random.Random, arrays: dict[str, Any], which: str) -> None:
    word, gap = arrays["snippet.word"], arrays["snippet.gap"]
    if which == "word":  # any key, any length, fillers anywhere
        for _ in range(rnd.randrange(1, 20)):
            word[rnd.randrange(word.shape[0])] = rnd.getrandbits(16)
    elif which == "gap":  # starts anywhere: past the text, inside words, on separators
        for _ in range(rnd.randrange(1, 20)):
            gap[rnd.randrange(gap.shape[0])] = rnd.choice((0, 1, 3, 40, 254, 255))
    elif which == "len":  # ends anywhere: inside words, past them, past the text
        size = arrays["snippet.len"]
        for _ in range(rnd.randrange(1, 20)):
            size[rnd.randrange(size.shape[0])] = rnd.choice((0, 1, 7, 200, 255))
    elif which == "row":
        row = arrays["snippet.row"]
        for _ in range(rnd.randrange(1, 4)):
            i = rnd.randrange(1, row.shape[0] - 1)
            row[i] = np.uint64(rnd.choice((0, int(row[-1]), rnd.getrandbits(64))))
    else:  # claim flat text where it is not
        flat = arrays["snippet.flat"]
        for i in range(flat.shape[0]):
            flat[i] = rnd.randrange(2)


@pytest.mark.parametrize("which", ["word", "gap", "len", "row", "flat"])
def test_forged_offsets_never_break_a_snippet(small: Path, which: str) -> None:
    """Hostile offsets give at worst odd marks: never an error, a control character, or a
    mark outside the snippet text."""
    rnd = random.Random(which)
    for _trial in range(25):
        data = rewrite(small.read_bytes(), lambda a, m: _forge(rnd, a, which))
        with load_bytes(data) as idx:
            for query in QUERIES:
                for hit in idx.search(query, k=10, group=None):
                    try:
                        parts = hit.snippet_parts
                    except ScidxError:
                        continue  # a corrupt-index error is allowed, a crash is not
                    assert parts.text.isprintable()
                    assert all(0 <= a < b <= len(parts.text) for a, b in parts.highlights)
                    assert "<mark>" in hit.snippet_html() or not parts.highlights


def test_hits_of_a_query_share_one_lookup(small: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = offsets.SnippetOffsets.page

    def page(self: offsets.SnippetOffsets, rows: Any, terms: Any) -> Any:
        calls.append(len(rows))
        return real(self, rows, terms)

    monkeypatch.setattr(offsets.SnippetOffsets, "page", page)
    with load(small) as idx:
        hits = idx.search("file read install dose", k=5, group=None)
        assert len(hits) > 2
        for hit in hits:
            assert hit.snippet
    assert calls == [len(hits)]


def test_exact_snippet_helper_agrees_with_build_snippet_on_prefix_stems() -> None:
    """The test's own reference: on words whose stems are prefixes, the scan is exact."""
    text = "Reading files: read_to_string reads a file. " * 10
    terms = tokenize("read file")
    assert exact_snippet(text, terms, 80) == build_snippet(text, terms, 80)


def test_snippet_offsets_can_be_left_out(tmp_path: Path) -> None:
    """``snippetOffsets: false`` (config) / ``snippet_offsets=False``: a smaller file, and the
    snippets scan (the same result wherever the scan finds the words)."""
    from scidx.errors import ConfigError
    from scidx.pack.config import config_from_dict
    from scidx.pack.packer import pack_docs

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\n## Reading\n\n" + TEXTS[0], encoding="utf-8")
    sizes = {}
    for flag in (True, False):
        cfg = config_from_dict(
            {"include": ["docs/*.md"], "output": f"out-{flag}.scidx", "snippetOffsets": flag},
            root=tmp_path,
        )
        assert cfg.snippet_offsets is flag
        assert ("snippetOffsets" in cfg.canonical()) is (not flag)
        pack_docs(cfg, use_cache=False)
        out = tmp_path / f"out-{flag}.scidx"
        sizes[flag] = out.stat().st_size
        header = format.read_header_file(out)
        assert ("snippet.word" in header.arrays) is flag
        assert ("snippets" in header.meta) is flag
        with load(out) as idx:
            hit = idx.search("read file", k=1)[0]
            assert hit.highlights
    assert sizes[False] < sizes[True]
    with pytest.raises(ConfigError, match="snippetOffsets"):
        config_from_dict({"include": ["docs/*.md"], "snippetOffsets": "no"}, root=tmp_path)

    records = [{"id": "a", "text": TEXTS[0]}]
    plain = pack_records(records, None, use_cache=False, snippet_offsets=False).data
    full = pack_records(records, None, use_cache=False).data
    assert plain is not None and full is not None and len(plain) < len(full)
    assert "snippet.row" not in format.read_header(plain).arrays


def _best_window(matches: list[tuple[int, int, int]], budget: int) -> tuple[int, int]:
    """The definition: every start's window, most distinct terms, then most matches, first."""
    best = (-1, -1, (0, 0))
    for i, (start, _, _) in enumerate(matches):
        j = i
        while j + 1 < len(matches) and matches[j + 1][1] <= start + budget:
            j += 1
        score = (len({m[2] for m in matches[i : j + 1]}), j - i + 1)
        if score > best[:2]:
            best = (*score, (i, j))
    return best[2]


def test_the_sliding_window_picks_the_defined_window() -> None:
    from scidx.index.highlight import _window

    rng = random.Random(25)
    for _ in range(3000):
        n = rng.randint(1, 40)
        pos = sorted(rng.sample(range(400), n))
        matches = [(a, a + rng.randint(1, 12), rng.randint(0, 4)) for a in pos]
        budget = rng.randint(1, 200)
        assert _window(matches, budget) == _best_window(matches, budget), (matches, budget)


def test_an_index_without_any_occurrence_reads_snippets(tmp_path: Path) -> None:
    """M = 0 (every word a stop word or one letter): ``snippet.word`` is [0], not an error."""
    out = tmp_path / "none.scidx"
    pack_records([{"id": "a", "text": "x y the of"}], out, use_cache=False)
    assert format.read_header(out.read_bytes()).arrays["snippet.word"].shape == (0,)
    with load(out) as idx:
        assert idx.chunk(0).snippet == "x y the of"
