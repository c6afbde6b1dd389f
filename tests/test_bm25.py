"""scidx.index.bm25: the stored arrays and scores against a straightforward reference BM25."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from scidx.index import bm25
from scidx.index.bm25 import BM25Arrays, build_arrays, query_terms, score_query, term_hash, top_k
from scidx.tokenize import TOKENIZER_VERSION, tokenize

HEADINGS = [
    "Guide\nInstall",
    "Guide\nConfigure",
    "Reference",
    "",
    "Cats",
    "Guide\nInstall",
]
BODIES = [
    "Install kubectl with apt, then install the plugin. Installing twice is harmless.",
    "Configure CORS origins. The configuration lives in settings.",
    "The max_chunk_chars option bounds the chunk size; see the chunk reference.",
    "the and of",  # only stop-words: an empty chunk for BM25
    "Cats chase mice. Dogs chase cats. Cats sleep.",
    "Install kubectl with apt, then install the plugin. Installing twice is harmless.",
]


def reference_scores(
    headings: list[str],
    bodies: list[str],
    query: str,
    *,
    k1: float,
    b: float,
    heading_weight: float,
) -> np.ndarray:
    """Textbook BM25 (Lucene idf) with a field-weighted term frequency, one doc at a time."""
    tfs: list[Counter[str]] = []
    lengths: list[int] = []
    for head, body in zip(headings, bodies, strict=True):
        tf: Counter[str] = Counter()
        for t in tokenize(head):
            tf[t] += heading_weight
        for t in tokenize(body):
            tf[t] += 1.0
        tfs.append(tf)
        lengths.append(round(heading_weight * len(tokenize(head)) + len(tokenize(body))))
    n = len(bodies)
    avgdl = sum(lengths) / n if any(lengths) else 1.0
    scores = np.zeros(n)
    for term in dict.fromkeys(tokenize(query)):
        df = sum(1 for tf in tfs if term in tf)
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for d, tf in enumerate(tfs):
            f = tf.get(term, 0.0)
            if f:
                denom = f + k1 * (1 - b + b * lengths[d] / avgdl)
                scores[d] += idf * f * (k1 + 1) / denom
    return scores


def as_view(arrays: dict[str, np.ndarray], meta: dict[str, object]) -> BM25Arrays:
    return BM25Arrays.of(arrays, meta)


@pytest.mark.parametrize(("k1", "b", "hw"), [(1.2, 0.75, 2.0), (1.5, 0.3, 1.0), (0.9, 1.0, 0.0)])
@pytest.mark.parametrize(
    "query",
    [
        "install kubectl",
        "configure cors configuration",
        "cats cats chase",
        "max_chunk_chars",
        "guide",
        "unknownword",
    ],
)
def test_scores_equal_reference(k1: float, b: float, hw: float, query: str) -> None:
    arrays, meta = build_arrays(HEADINGS, BODIES, k1=k1, b=b, heading_weight=hw)
    rows, scores = score_query(as_view(arrays, meta), query_terms(query))
    dense = np.zeros(len(BODIES))
    dense[rows] = scores
    expected = reference_scores(HEADINGS, BODIES, query, k1=k1, b=b, heading_weight=hw)
    np.testing.assert_allclose(dense, expected, rtol=1e-5, atol=1e-5)
    assert set(rows.tolist()) == set(np.flatnonzero(expected).tolist())
    assert meta["k1"] == k1 and meta["b"] == b


def test_random_corpus_equals_reference() -> None:
    rnd = random.Random(3)
    vocab = [f"w{i}" for i in range(40)] + ["alpha", "beta", "gamma"]
    bodies = [" ".join(rnd.choices(vocab, k=rnd.randrange(1, 30))) for _ in range(60)]
    heads = [" ".join(rnd.choices(vocab, k=rnd.randrange(0, 3))) for _ in range(60)]
    arrays, meta = build_arrays(heads, bodies, k1=1.2, b=0.75, heading_weight=2.0)
    view = as_view(arrays, meta)
    for _ in range(30):
        query = " ".join(rnd.choices(vocab, k=3))
        rows, scores = score_query(view, query_terms(query))
        dense = np.zeros(len(bodies))
        dense[rows] = scores
        expected = reference_scores(heads, bodies, query, k1=1.2, b=0.75, heading_weight=2.0)
        np.testing.assert_allclose(dense, expected, rtol=1e-5, atol=1e-5)


def test_arrays_follow_the_contract() -> None:
    arrays, meta = build_arrays(HEADINGS, BODIES)
    assert set(arrays) == set(bm25.ARRAY_NAMES)
    th, dl = arrays["bm25.term_hash"], arrays["bm25.doc_len"]
    tfs, dfs, idfs = (arrays[f"bm25.{n}_values"] for n in ("tf", "df", "idf"))
    n = len(BODIES)
    ptr, doc, codes = bm25.csr_postings(as_view(arrays, meta), n)
    assert th.dtype == np.uint64 and arrays["bm25.run_ptr"].dtype == np.uint32
    assert dl.dtype == np.uint16  # lengths below 65536: two bytes
    assert arrays["bm25.term_df"].dtype == np.uint8  # <= 256 document frequencies: one byte
    assert arrays["bm25.term_width"].dtype == np.uint8
    assert arrays["bm25.term_width"].shape == (th.shape[0], 2)
    assert arrays["bm25.runs"].dtype == np.uint8
    assert tfs.dtype == np.float64 and np.all(tfs[1:] > tfs[:-1]) and tfs[0] > 0
    assert int(codes.max()) == tfs.shape[0] - 1  # every listed frequency is used
    assert dfs.dtype == np.uint32 and np.all(dfs[1:] > dfs[:-1])
    assert set(np.diff(ptr).tolist()) == set(dfs.tolist())
    assert np.array_equal(dfs[arrays["bm25.term_df"]], np.diff(ptr))
    assert idfs.dtype == np.float64 and idfs.shape == dfs.shape
    np.testing.assert_array_equal(idfs, np.log1p((n - dfs + 0.5) / (dfs + 0.5)))
    assert np.all(th[1:] > th[:-1])  # sorted, unique
    assert ptr.shape == (th.shape[0] + 1,) and ptr[0] == 0 and ptr[-1] == doc.shape[0]
    assert np.all(np.diff(ptr) > 0)
    for t in range(th.shape[0]):
        run = doc[int(ptr[t]) : int(ptr[t + 1])]
        assert np.all(run[1:] > run[:-1])
    # Each run is the term's bits exactly: its widths are the bit lengths of its largest
    # gap and code, and re-encoding the decoded postings gives the same bytes.
    again = bm25.encode_postings(ptr, doc, codes, dfs)
    for name, value in again.items():
        assert value.dtype == arrays[name].dtype and value.tobytes() == arrays[name].tobytes()
    assert np.all(bm25.posting_impacts(as_view(arrays, meta), n) > 0)
    assert dl.tolist()[3] == 0  # a chunk of stop-words has no tokens
    assert th[np.searchsorted(th, np.uint64(term_hash("kubectl")))] == term_hash("kubectl")
    assert meta == {
        "k1": bm25.DEFAULT_K1,
        "b": bm25.DEFAULT_B,
        "avgdl": pytest.approx(float(dl.mean())),
        "tokenizer": TOKENIZER_VERSION,
        "fieldWeights": {"heading": bm25.DEFAULT_HEADING_WEIGHT, "body": 1.0},
        "idf": "lucene",
        "queryTerms": "distinct",
        "pageWeight": bm25.DEFAULT_PAGE_WEIGHT,
    }


def test_build_is_deterministic() -> None:
    a, ma = build_arrays(HEADINGS, BODIES)
    b, mb = build_arrays(list(HEADINGS), list(BODIES))
    assert ma == mb
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), name


def test_empty_corpus_and_empty_chunks() -> None:
    arrays, meta = build_arrays([], [])
    assert arrays["bm25.term_hash"].shape == (0,)
    assert arrays["bm25.run_ptr"].tolist() == [0]
    assert arrays["bm25.doc_len"].shape == (0,)
    assert meta["avgdl"] == 1.0
    rows, scores = score_query(as_view(arrays, meta), ["anything"])
    assert rows.shape == (0,) and scores.shape == (0,)
    arrays, _ = build_arrays(["", ""], ["the", "a of"])
    assert arrays["bm25.runs"].shape == (0,) and arrays["bm25.term_df"].shape == (0,)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k1": 0.0}, "k1 must be a positive number"),
        ({"b": 1.5}, r"b must be in \[0, 1\]"),
        ({"heading_weight": -1.0}, "heading_weight must be >= 0"),
    ],
)
def test_bad_parameters(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_arrays(["a"], ["b"], **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="headings has 1 entries but bodies has 2"):
        build_arrays(["a"], ["b", "c"])


def test_repeated_query_terms_count_once() -> None:
    arrays, meta = build_arrays(HEADINGS, BODIES)
    view = as_view(arrays, meta)
    assert query_terms("cats cats Cats chase") == ["cat", "chase"]
    once = score_query(view, query_terms("cats chase"))
    many = score_query(view, query_terms("cats cats cats chase"))
    np.testing.assert_array_equal(once[1], many[1])


def test_top_k_orders_by_score_then_row() -> None:
    rows = np.array([0, 1, 2, 3, 4, 5], dtype=np.int64)
    scores = np.array([1.0, 3.0, 2.0, 3.0, 1.0, 2.0], dtype=np.float32)
    r, s = top_k(rows, scores, 3)
    assert r.tolist() == [1, 3, 2] and s.tolist() == [3.0, 3.0, 2.0]
    r, _ = top_k(rows, scores, 5)
    assert r.tolist() == [1, 3, 2, 5, 0]  # the tie at the cut goes to the lower row
    r, _ = top_k(rows, scores, 100)
    assert r.tolist() == [1, 3, 2, 5, 0, 4]
    assert top_k(rows, scores, 0)[0].shape == (0,)


@pytest.mark.parametrize("seed", range(20))
def test_keyword_top_k_equals_scoring_every_chunk_then_cutting(seed: int) -> None:
    # The pruned top-k must pick exactly what ranking every scored chunk picks: same rows,
    # same float32 scores, same tie order (ties are common: duplicate chunks, repeated terms).
    rnd = random.Random(seed)
    vocab = [f"w{i}" for i in range(rnd.choice((5, 40, 300)))]
    n = rnd.choice((3, 50, 400, 3000))
    bodies = [" ".join(rnd.choice(vocab) for _ in range(rnd.randint(0, 30))) for _ in range(n)]
    bodies += bodies[: n // 5]  # exact duplicates tie
    arrays, meta = build_arrays([""] * len(bodies), bodies)
    bm = as_view(arrays, meta)
    lookup = bm25.PostingLookup(bm, len(bodies))
    for _ in range(15):
        terms = [rnd.choice(vocab) for _ in range(rnd.randint(1, 8))] + ["absent"]
        k = rnd.choice((1, 2, 10, 70, 5000))
        min_score = rnd.choice((None, None, 0.5, 3.0))
        rows, scores = score_query(bm, terms)
        keep = scores > 0 if min_score is None else scores >= np.float32(min_score)
        want_rows, want_scores = top_k(rows[keep], scores[keep], k)
        got = bm25.keyword_top_k(lookup.postings(terms), len(bodies), k, min_score)
        assert got == (want_rows.tolist(), want_scores.tolist())


def test_posting_memo_is_bounded_in_bytes_and_gives_the_same_postings() -> None:
    # Decoded runs are copies: a memo bounded only in terms could hold every posting of a big
    # index. Over a small byte budget it starts over, and every answer stays the same.
    rnd = random.Random(7)
    vocab = [f"w{i}" for i in range(200)]
    bodies = [" ".join(rnd.choices(vocab, k=rnd.randrange(1, 40))) for _ in range(500)]
    arrays, meta = build_arrays([""] * len(bodies), bodies)
    bm = as_view(arrays, meta)
    full = bm25.PostingLookup(bm, len(bodies))
    small = bm25.PostingLookup(bm, len(bodies))
    small.MAX_BYTES = 4096
    largest = 0
    for _ in range(300):
        terms = rnd.sample(vocab, 3)
        want, got = full.postings(terms), small.postings(terms)
        for (wr, ww, wb), (gr, gw, gb) in zip(want, got, strict=True):
            assert wr.tobytes() == gr.tobytes() and ww.tobytes() == gw.tobytes() and wb == gb
            largest = max(largest, gr.nbytes + gw.nbytes)
        held = sum(p[0].nbytes + p[1].nbytes for p in small._memo.values() if p is not None)
        assert held == small._bytes <= max(small.MAX_BYTES, largest)
    assert len(small._memo) < len(full._memo)  # it did start over


@pytest.mark.parametrize("block", [1, 7, 64])
@pytest.mark.parametrize("pass2", [1, 16, 1 << 19])
def test_build_bytes_do_not_depend_on_blocks_or_hash_ranges(
    monkeypatch: pytest.MonkeyPatch, block: int, pass2: int
) -> None:
    """Pass 1 reduces any blocking of the chunks, pass 2 sorts any split of the hash range."""
    rnd = random.Random(block * 31 + pass2)
    vocab = [f"w{i}" for i in range(300)]
    bodies = [" ".join(rnd.choices(vocab, k=rnd.randrange(0, 40))) for _ in range(150)]
    heads = [" ".join(rnd.choices(vocab, k=rnd.randrange(0, 4))) for _ in range(150)]
    expected, meta = build_arrays(heads, bodies)  # one block, one hash range
    monkeypatch.setattr(bm25, "_PASS2_POSTINGS", pass2)
    h, b = bm25.hash_fields(heads, bodies)
    blocks = (
        bm25.TermBlock.from_hashes(h[i : i + block], b[i : i + block])
        for i in range(0, len(b), block)
    )
    got, got_meta = bm25.build_arrays_from_blocks(blocks, len(bodies))
    assert got_meta == meta
    assert set(got) == set(expected)
    for name in expected:
        assert got[name].dtype == expected[name].dtype, name
        assert got[name].tobytes() == expected[name].tobytes(), name


def test_blocks_must_cover_every_chunk() -> None:
    block = bm25.hash_terms(["", ""], ["alpha", "beta"])
    with pytest.raises(ValueError, match="the blocks hold 2 chunks, not 3"):
        bm25.build_arrays_from_blocks([block], 3)
    with pytest.raises(ValueError, match="more than 1 chunks"):
        bm25.build_arrays_from_blocks([block], 1)
    h, b = bm25.hash_fields(["", ""], ["alpha", "beta"])
    with pytest.raises(ValueError, match="a block has 1 headings but 2 bodies"):
        bm25.TermBlock.from_hashes(h[:1], b)


def test_hash_fields_is_hash_terms_per_chunk() -> None:
    heads = ["Title", "", "Install Guide"]
    bodies = ["reading files", "", "the read_to_string function reads"]
    h, b = bm25.hash_fields(heads, bodies)
    assert [x.tolist() for x in h] == [[term_hash(t) for t in tokenize(x)] for x in heads]
    assert [x.tolist() for x in b] == [[term_hash(t) for t in tokenize(x)] for x in bodies]
    assert bm25.hash_fields([], []) == ([], [])
    block = bm25.hash_terms(None, bodies)
    assert block.chunks == 3 and block.head_lens.tolist() == [0, 0, 0]


def _format3_impacts(
    heads: list[str], bodies: list[str], k1: float, b: float, hw: float
) -> dict[tuple[int, int], np.float32]:
    """Format 3's stored impact of each (term hash, row): the packer's float64 operations."""
    tfs: list[dict[int, float]] = []
    for head, body in zip(heads, bodies, strict=True):
        tf: dict[int, float] = {}
        for t in tokenize(head) if hw else []:
            tf[term_hash(t)] = tf.get(term_hash(t), 0.0) + hw
        for t in tokenize(body):
            tf[term_hash(t)] = tf.get(term_hash(t), 0.0) + 1.0
        tfs.append(tf)
    lengths = np.rint([sum(tf.values()) for tf in tfs]).astype(np.uint32)
    n = len(bodies)
    avgdl = float(lengths.mean()) if n and lengths.any() else 1.0
    norm = k1 * (1.0 - b + b * lengths.astype(np.float64) / avgdl)
    df: Counter[int] = Counter(h for tf in tfs for h in tf)
    hashes = sorted(df)
    dfs = np.array([df[h] for h in hashes], dtype=np.float64)
    idf = dict(zip(hashes, np.log1p((n - dfs + 0.5) / (dfs + 0.5)).tolist(), strict=True))
    return {
        (h, row): np.float32(idf[h] * f * (k1 + 1.0) / (f + norm[row]))
        for row, tf in enumerate(tfs)
        for h, f in tf.items()
    }


@pytest.mark.parametrize(("hw", "vocab", "repeat"), [(2.0, 40, 30), (1.1, 40, 30), (1.0, 4, 1000)])
def test_posting_tfs_are_the_weighted_frequencies_of_the_text(
    hw: float, vocab: int, repeat: int
) -> None:
    """:func:`bm25.posting_tfs` (the PostgreSQL export's reader): each posting's row and tf."""
    rnd = random.Random(vocab + repeat)
    words = [f"w{i}" for i in range(vocab)]
    bodies = [" ".join(rnd.choices(words, k=rnd.randrange(0, repeat * 3))) for _ in range(90)]
    heads = [" ".join(rnd.choices(words, k=rnd.randrange(0, 4))) for _ in range(90)]
    arrays, meta = build_arrays(heads, bodies, heading_weight=hw)
    rows, tfs = bm25.posting_tfs(as_view(arrays, meta), len(bodies))
    th = arrays["bm25.term_hash"]
    ptr, _, _ = bm25.csr_postings(as_view(arrays, meta), len(bodies))
    term = np.repeat(np.arange(th.shape[0]), np.diff(ptr))
    want: dict[tuple[int, int], float] = {}
    for row, (head, body) in enumerate(zip(heads, bodies, strict=True)):
        for t, weight in [(t, hw) for t in tokenize(head)] + [(t, 1.0) for t in tokenize(body)]:
            want[(term_hash(t), row)] = want.get((term_hash(t), row), 0.0) + weight
    assert rows.dtype == np.int64 and tfs.dtype == np.float64
    got = {(int(th[t]), int(r)): float(f) for t, r, f in zip(term, rows, tfs, strict=True)}
    assert got.keys() == want.keys()
    # 1.1 is not a binary fraction: the packer's sums may differ from these in the last bit.
    assert got == (want if hw.is_integer() else pytest.approx(want, rel=1e-12))


def _forge_code(ptr: Any, rows: Any, codes: Any) -> None:
    codes[2] = 9


def _forge_row(ptr: Any, rows: Any, codes: Any) -> None:
    rows[int(ptr[1]) - 1] = 3  # term 0's last row: still ascending, but past the 3 chunks


@pytest.mark.parametrize(
    ("forge", "message"),
    [
        (_forge_code, r"`bm25.runs` holds frequency code 9, but `bm25.tf_values` has"),
        (_forge_row, r"`bm25.runs` points at chunk 3, but the index has 3"),
        (None, r"`bm25.tf_values` holds a frequency"),
    ],
)
def test_posting_tfs_refuses_forged_arrays_naming_them(forge: Any, message: str) -> None:
    from scidx.errors import CorruptIndexError

    arrays, meta = build_arrays(["kelpie", "ship", ""], ["kelpie ship logs", "ship logs", "logs"])
    assert arrays["bm25.tf_values"].shape[0] < 9
    forged = dict(arrays)
    if forge is None:
        forged["bm25.tf_values"] = np.zeros_like(arrays["bm25.tf_values"])
    else:
        ptr, rows, codes = bm25.csr_postings(as_view(arrays, meta), 3)
        forge(ptr, rows, codes)
        forged.update(bm25.encode_postings(ptr, rows, codes, arrays["bm25.df_values"]))
    with pytest.raises(CorruptIndexError, match=rf"^x.scidx: array {message}"):
        bm25.posting_tfs(as_view(forged, meta), 3, "x.scidx")


@pytest.mark.parametrize(("hw", "vocab", "repeat"), [(2.0, 40, 30), (1.1, 40, 30), (1.0, 4, 1000)])
def test_impacts_are_format_3_impacts_bit_for_bit(hw: float, vocab: int, repeat: int) -> None:
    """Codes and tables decode to exactly the float32 impacts format 3 stored (issue 25).

    1.1 makes inexact float64 sums (the table keeps them as summed); 4 words repeated up to
    750 times make over 256 distinct frequencies (two-byte codes).
    """
    rnd = random.Random(vocab * repeat)
    words = [f"w{i}" for i in range(vocab)]
    bodies = [" ".join(rnd.choices(words, k=rnd.randrange(0, repeat * 3))) for _ in range(120)]
    heads = [" ".join(rnd.choices(words, k=rnd.randrange(0, 4))) for _ in range(120)]
    arrays, meta = build_arrays(heads, bodies, heading_weight=hw)
    view = as_view(arrays, meta)
    if repeat > 256:
        assert arrays["bm25.tf_values"].shape[0] > 256
        assert int(arrays["bm25.term_width"][:, 1].max()) > 8  # codes over a byte
    want = _format3_impacts(heads, bodies, bm25.DEFAULT_K1, bm25.DEFAULT_B, hw)
    every = bm25.posting_impacts(view, len(bodies))
    th = arrays["bm25.term_hash"]
    ptr, rows, _ = bm25.csr_postings(view, len(bodies))
    term = np.repeat(np.arange(th.shape[0]), np.diff(ptr))
    got = {(int(th[t]), int(r)): w for t, r, w in zip(term, rows, every, strict=True)}
    assert got.keys() == want.keys()
    assert all(got[key].view(np.uint32) == want[key].view(np.uint32) for key in want)
    for word in words:
        found = bm25.term_postings(view, word, len(bodies))
        assert found is not None
        docs, weights = found
        start = int(ptr[int(np.searchsorted(th, np.uint64(term_hash(word))))])
        np.testing.assert_array_equal(
            weights.view(np.uint32), every[start : start + len(docs)].view(np.uint32)
        )
