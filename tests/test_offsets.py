"""Snippet hints (FORMAT.md §2.8): the marks are exactly the definition's, whatever the file says.

The definition, by brute force (tests/support/snippets.py): the part of the text the
``snippet.where`` bytes point at, its best window, and every word of the shown text tokenized.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scidx.errors import CorruptIndexError
from scidx.index import format, offsets
from scidx.index.highlight import CODE_END, CODE_START, build_snippet
from scidx.index.index import Index, load, load_bytes
from scidx.pack.arrays import needle_table, where_block
from scidx.pack.packer import pack_records
from scidx.tokenize import tokenize
from support.indexes import rewrite
from support.snippets import exact_snippet, expected_snippet, where_bits


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
    "The dying star: " + "plain words between the two ends of the text. " * 12 + "a dying end.",
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
    "die star",
    "nothing matches here",
]


@pytest.mark.parametrize("chars", [240, 60, 8, 5, 2000])
def test_snippets_equal_the_definition(small: Path, chars: int) -> None:
    with load(small) as idx:
        assert idx._searcher is not None and idx._searcher.corpus.hints is not None
        checked = matched = 0
        for query in QUERIES:
            for hit, body in snippets_of(idx, query, chars=chars):
                assert hit.snippet_parts == expected_snippet(body, hit.query_terms, chars), query
                checked += 1
            # Hybrid hits are the keyword matches (hashing vectors only reorder them).
            matched += len(idx.rank(query, k=10, mode="keyword"))
        assert checked == matched > 10


def test_words_whose_stem_is_no_prefix_are_marked(small: Path) -> None:
    """ "using" makes "use", "dosing" "dose" (the derived needle finds them), "dying" "die"
    (only the stored needle does)."""
    with load(small) as idx:
        for query, word in (("use", "using"), ("dose", "dosing"), ("die", "dying")):
            hit = idx.search(query, k=1)[0]
            marked = {hit.snippet[a:b].lower() for a, b in hit.highlights}
            assert word in marked, query
        body = idx.search("die", k=1)[0].plain or ""
        scanned = build_snippet(body, ["die"], 240)  # no index: no stored needle
        assert not scanned.highlights


def test_the_needle_table_lists_what_derived_needles_miss() -> None:
    block = where_block(
        ["The dying and lying man was tying a ﬁle; using µM, _in_pod and κυβερνήτης."]
    )
    assert needle_table([block]) == [
        "die\x00dying",
        "file\x00ﬁle",
        "lie\x00lying",
        "tie\x00tying",
        "μm\x00µm",
    ]


def test_where_bytes_are_the_eighths_of_each_term(small: Path) -> None:
    """Every posting's byte, from the packed file, equals the brute-force eighths of §2.8."""
    with load(small) as idx:
        corpus = idx._searcher.corpus if idx._searcher is not None else None
        assert corpus is not None and corpus.hints is not None
        hints, postings = corpus.hints, idx._searcher.postings
        checked = 0
        for row in range(corpus.n):
            body = corpus.plain(row)
            for term, bits in where_bits(body).items():
                found = postings.postings([term])
                assert found, term
                docs = found[0][0]
                at = int(np.searchsorted(docs, row))
                assert int(docs[at]) == row
                assert hints._where is not None
                assert int(hints._where[hints.start(term) + at]) == bits, (row, term)
                checked += 1
        assert checked > 50


def test_the_pack_records_the_hints_version(small: Path) -> None:
    header = format.read_header_file(small)
    assert header.meta["snippets"] == {"offsets": offsets.OFFSETS_VERSION}
    assert {"snippet.where", "snippet.needle.offsets", "snippet.needle.data"} <= set(header.arrays)
    assert header.arrays["snippet.where"].shape == (header.meta["counts"]["postings"],)
    assert not {"snippet.row", "snippet.word", "snippet.occ"} & set(header.arrays)


def test_regions_of_a_page_equal_the_definition() -> None:
    rng = random.Random(6)
    for _ in range(400):
        rows, terms = rng.randint(1, 12), rng.randint(1, 9)
        bits = np.array(
            [[rng.choice((0, 0, rng.getrandbits(8))) for _ in range(rows)] for _ in range(terms)],
            dtype=np.uint8,
        )
        sizes = [
            rng.choice((0, 1, 100, 300, 1500, 9000, rng.randint(0, 5000))) for _ in range(rows)
        ]
        budget = rng.choice((6, 58, 238, 998))
        got = offsets.regions(bits, sizes, budget)
        want = [
            offsets.region(bits[:, r].tolist(), sizes[r], budget) if sizes[r] else None
            for r in range(rows)
        ]
        assert got == want, (bits, sizes, budget)


def test_regions_of_a_budget_below_one_choose_no_part() -> None:
    """A caller's budget of 0 or less shows the whole text, and never grows the score tables."""
    for budget in (0, -1, -5, *range(-(10**6), 0, 9973)):
        assert offsets.regions([[0xFF, 0x01]], [1500, 9000], budget) == [None, None]
    assert offsets._score_table.cache_info().currsize <= 1


# ---------------------------------------------------------------------------------------------
# Indexes without hints, or with hints this reader does not know: the whole text is scanned.


def _drop_hints(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
    for name in ("snippet.where", "snippet.needle.offsets", "snippet.needle.data"):
        arrays.pop(name)
    meta.pop("snippets")


@pytest.mark.parametrize(
    "mutate",
    [
        _drop_hints,
        lambda a, m: m.__setitem__("snippets", {"offsets": "scidx-offsets-99"}),
        lambda a, m: m.pop("snippets"),
    ],
)
def test_without_known_hints_snippets_scan(small: Path, mutate: Any) -> None:
    data = rewrite(small.read_bytes(), mutate)
    with load_bytes(data) as idx:
        assert idx._searcher is not None and idx._searcher.corpus.hints is None
        for query in QUERIES:
            for hit, body in snippets_of(idx, query):
                assert hit.snippet_parts == build_snippet(body, hit.query_terms, 240)


def test_without_where_bytes_the_whole_text_is_scanned(small: Path) -> None:
    """No ``snippet.where`` (``snippetOffsets: false``): the best window over all words, and
    the stored needles still mark "dying"."""
    data = rewrite(small.read_bytes(), lambda a, m: a.pop("snippet.where"))
    with load_bytes(data) as idx:
        for query in QUERIES:
            for hit, body in snippets_of(idx, query):
                assert hit.snippet_parts == exact_snippet(body, hit.query_terms, 240), query


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda a, m: a.__setitem__("snippet.where", a["snippet.where"].astype("<u2")),
            "array `snippet.where` has dtype <u2, expected <u1",
        ),
        (lambda a, m: a.pop("snippet.needle.data"), "snippet.needle.data"),
    ],
)
def test_inconsistent_hints_are_corrupt(small: Path, mutate: Any, message: str) -> None:
    data = rewrite(small.read_bytes(), mutate)
    with pytest.raises(CorruptIndexError, match=message):
        load_bytes(data, source="bad.scidx")


def test_verify_counts_the_where_bytes(small: Path) -> None:
    data = rewrite(
        small.read_bytes(),
        lambda a, m: a.__setitem__("snippet.where", a["snippet.where"][:-1].copy()),
    )
    with load_bytes(data) as idx:  # opened in O(1); every read is bounds-checked
        for hit, _body in snippets_of(idx, "file"):
            assert hit.snippet_parts.text
    with pytest.raises(CorruptIndexError, match=r"array `snippet.where` has \d+ bytes, expected"):
        load_bytes(data, verify=True)


def test_verify_checks_the_needle_table(small: Path) -> None:
    def damage(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        arrays["snippet.needle.data"][:] = 0xFF  # not UTF-8

    data = rewrite(small.read_bytes(), damage)
    with load_bytes(data) as idx:  # the constant-time open does not read it ...
        for hit, body in snippets_of(idx, "die star"):  # ... and a snippet finds fewer words
            assert set(hit.highlights) <= set(exact_snippet(body, hit.query_terms, 240).highlights)
    with pytest.raises(CorruptIndexError, match="snippet.needle"):
        load_bytes(data, verify=True)


def _forge(rnd: random.Random, arrays: dict[str, Any], which: str) -> list[int]:
    if which == "where":  # any byte anywhere
        where = arrays["snippet.where"]
        for _ in range(rnd.randrange(1, 40)):
            where[rnd.randrange(where.shape[0])] = rnd.getrandbits(8)
        return []
    # needles: any term, any text (a NUL, none, a huge one, an empty one)
    rows = ["", "\x00", "read\x00", "\x00x", "file\x00" + "a" * 5000, "dose\x00d", "die\x00 "]
    rnd.shuffle(rows)
    offsets_, data = format.encode_strings(rows[: rnd.randrange(1, len(rows))])
    arrays["snippet.needle.offsets"], arrays["snippet.needle.data"] = offsets_, data
    return []


@pytest.mark.parametrize("which", ["where", "needle"])
def test_forged_hints_only_move_the_window(small: Path, which: str) -> None:
    """Hostile bytes choose another part of the text, add candidates or drop needles: what is
    shown is marked exactly (or, without a needle, less), and nothing raises."""
    rnd = random.Random(which)
    for _trial in range(15):
        data = rewrite(small.read_bytes(), lambda a, m: _forge(rnd, a, which))
        with load_bytes(data) as idx:
            for query in QUERIES:
                for hit, _body in snippets_of(idx, query, chars=120):
                    parts = hit.snippet_parts
                    assert parts.text.isprintable()
                    assert all(0 <= a < b <= len(parts.text) for a, b in parts.highlights)
                    exact = exact_snippet(parts.text.strip("…"), hit.query_terms, 10**6)
                    if which == "where":  # every needle is there: exactly the shown words
                        assert len(parts.highlights) == len(exact.highlights), query
                    else:  # a needle left out finds fewer words, a forged one no other word
                        assert len(parts.highlights) <= len(exact.highlights), query


def test_hits_of_a_query_share_one_lookup(small: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = offsets.SnippetHints.regions

    def regions(self: offsets.SnippetHints, posts: Any, sizes: Any, budget: int) -> Any:
        calls.append(len(sizes))
        return real(self, posts, sizes, budget)

    monkeypatch.setattr(offsets.SnippetHints, "regions", regions)
    with load(small) as idx:
        hits = idx.search("file read install dose", k=5, group=None)
        assert len(hits) > 2
        for hit in hits:
            assert hit.snippet
    assert calls == [len(hits)]


def test_exact_snippet_helper_agrees_with_build_snippet_on_prefix_stems() -> None:
    """The test's own reference: where derived needles find every word, the scan is exact."""
    text = "Reading files: read_to_string reads a file; using, dosing. " * 10
    terms = tokenize("read file use dose")
    assert exact_snippet(text, terms, 80) == build_snippet(text, terms, 80)
    code = f"Text {CODE_START}read(file){CODE_END} more text. " * 9
    assert exact_snippet(code, terms, 60) == build_snippet(code, terms, 60)


def test_snippet_offsets_can_be_left_out(tmp_path: Path) -> None:
    """``snippetOffsets: false`` (config) / ``snippet_offsets=False``: no ``snippet.where``, a
    smaller file, and the snippets scan the whole text (the same marks)."""
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
        assert ("snippet.where" in header.arrays) is flag
        assert "snippet.needle.offsets" in header.arrays
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
    assert "snippet.where" not in format.read_header(plain).arrays


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


def test_an_index_without_any_indexed_word_reads_snippets(tmp_path: Path) -> None:
    """P = 0 (every word a stop word or one letter): ``snippet.where`` is [0], not an error."""
    out = tmp_path / "none.scidx"
    pack_records([{"id": "a", "text": "x y the of"}], out, use_cache=False)
    assert format.read_header(out.read_bytes()).arrays["snippet.where"].shape == (0,)
    with load(out) as idx:
        assert idx.chunk(0).snippet == "x y the of"


def test_where_entries_packed_sort_equals_the_stable_argsort() -> None:
    # The packer sorts one int64 per entry (term, row and byte together) to save memory; it
    # must give exactly the stable argsort's keys and bytes.
    from scidx.pack.arrays import _where_entries

    rnd = random.Random(5)
    vocab = ["alpha", "beta", "gamma", "delta", "dosing", "dying", "ﬁle", "kubelet", "pods"]
    texts = [" ".join(rnd.choices(vocab, k=rnd.randrange(0, 30))) for _ in range(120)]
    blocks = [where_block(texts[i : i + 25]) for i in range(0, len(texts), 25)]
    th = np.unique(np.concatenate([b.hashes for b in blocks]))[::2]  # some terms unmatched
    got = _where_entries(list(blocks), th, len(texts))
    want = _where_entries(list(blocks), th, len(texts), pack=False)
    assert got[0].shape[0] > 100
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
