"""scidx.index.search through Index: vector/keyword/hybrid ranking, filters, snippets, errors."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from scidx.embed.base import Embedder
from scidx.embed.hashing import HashingEmbedder
from scidx.errors import QueryEmbeddingError, QueryError
from scidx.index.highlight import build_snippet
from scidx.index.hits import Hit
from scidx.index.index import Index, load_bytes
from scidx.index.search import PRF_BETA, PRF_DOCS, top_k_dense
from support.indexes import DOCS, build_index, record

WORDS = "alpha beta gamma delta kappa sigma omega theta lambda zeta".split()


def random_corpus(n: int, seed: int = 5, *, sections: bool = False) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    recs = []
    for i in range(n):
        text = " ".join(rnd.choices(WORDS, k=rnd.randrange(3, 15)))
        # sections=True: three chunks per section (ordinals 0-2), two sections per page.
        anchor = f"a{(i // 3) % 2}" if sections else f"a{i % 3}"
        page = f"d{i // (6 if sections else 3):03d}.md"
        ordinal = i % 3 if sections else 0
        recs.append(record(page, text, anchor=anchor, title=f"T{i // 3}", ordinal=ordinal))
    # Duplicate chunks (identical vectors and BM25 rows) create exact ties.
    recs.append(record("zz.md", recs[0]["text"], anchor="dup", title=recs[0]["title"]))
    recs.append(record("zz.md", recs[0]["text"], anchor="dup2", title=recs[0]["title"]))
    return recs


@pytest.fixture(scope="module")
def corpus_index() -> Index:
    return load_bytes(build_index(random_corpus(40)))


@pytest.fixture(scope="module")
def docs_index() -> Index:
    return load_bytes(build_index(DOCS, url_template="https://docs.example.com/{path}#{anchor}"))


def brute_force(matrix: np.ndarray, q: np.ndarray, k: int) -> tuple[list[int], list[float]]:
    scores = matrix @ q
    order = np.lexsort((np.arange(matrix.shape[0]), -scores))[:k]
    return order.tolist(), scores[order].tolist()


def ids_of(idx: Index, rows: list[int]) -> list[str]:
    return [idx.chunk(r).id for r in rows]


@pytest.mark.parametrize("k", [1, 5, "n", "n+1"])
def test_vector_search_equals_brute_force(corpus_index: Index, k: int | str) -> None:
    n = len(corpus_index)
    kk = {"n": n, "n+1": n + 1}.get(k, k)  # type: ignore[call-overload]
    matrix = np.array(corpus_index.vectors)
    rnd = np.random.default_rng(0)
    queries = [rnd.standard_normal(matrix.shape[1]) for _ in range(5)] + [matrix[0] * 3.0]
    for q in queries:
        qn = (q / np.linalg.norm(q)).astype(np.float32)
        rows, scores = brute_force(matrix, qn, kk)
        hits = corpus_index.search_vector(q, k=kk)
        assert [h.id for h in hits] == ids_of(corpus_index, rows)
        np.testing.assert_allclose([h.score for h in hits], scores, rtol=1e-6, atol=1e-6)
        assert len(hits) == min(kk, n)


def test_vector_ties_are_broken_by_row(corpus_index: Index) -> None:
    matrix = np.array(corpus_index.vectors)
    hits = corpus_index.search_vector(matrix[0], k=3)
    # Row 0 and its two duplicates score exactly the same; document (row) order wins.
    assert [h.id for h in hits] == [corpus_index.chunk(0).id, "zz.md:dup:0", "zz.md:dup2:0"]
    assert hits[0].score == hits[1].score == hits[2].score


def test_vector_mode_embeds_the_query_with_the_index_provider(corpus_index: Index) -> None:
    q = HashingEmbedder(64).embed(["alpha beta"])[0]
    assert corpus_index.search("alpha beta", mode="vector", k=7) == corpus_index.search_vector(
        q, k=7, query="alpha beta"
    )


def test_keyword_ranking_matches_scores(corpus_index: Index) -> None:
    hits = corpus_index.search("alpha gamma", mode="keyword", k=100)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(("alpha" in h.text or "gamma" in h.text) for h in hits)
    # Ties (the duplicates on one page: same text, same page evidence) come in row order;
    # the copy on another page scores its own page's evidence, so it is not among them.
    same = [h for h in hits if h.text == corpus_index.chunk(0).text and h.source == "zz.md"]
    assert [h.id for h in same] == ["zz.md:dup:0", "zz.md:dup2:0"]
    assert same[0].score == same[1].score
    ranked = [h.id for h in hits]
    assert ranked.index("zz.md:dup2:0") == ranked.index("zz.md:dup:0") + 1


def test_hybrid_fuses_both_legs(corpus_index: Index) -> None:
    query = "alpha kappa"
    keyword = corpus_index.search(query, mode="keyword", k=10)
    hybrid = corpus_index.search(query, k=10)
    assert all(0.0 <= h.score <= 1.0 + 1e-6 for h in hybrid)
    assert hybrid[0].score == pytest.approx(max(h.score for h in hybrid))
    # alpha=0: pure keyword order (normalised by the top BM25 score).
    only_kw = corpus_index.search(query, k=10, alpha=0.0)
    assert [h.id for h in only_kw] == [h.id for h in keyword]
    top = keyword[0].score
    np.testing.assert_allclose([h.score for h in only_kw], [h.score / top for h in keyword])
    # alpha=1: pure vector order, for the query expanded with the top keyword hits (Rocchio).
    only_vec = corpus_index.search(query, k=10, alpha=1.0)
    matrix = np.array(corpus_index.vectors, dtype=np.float64)
    rows = {h.id: i for i, h in enumerate(corpus_index.chunk(r) for r in range(len(matrix)))}
    fb = keyword[:PRF_DOCS]
    weights = np.array([h.score for h in fb])
    centroid = weights @ matrix[[rows[h.id] for h in fb]] / weights.sum()
    q = HashingEmbedder(64).embed([query])[0]
    expanded = q / np.linalg.norm(q) + PRF_BETA * centroid
    cos = np.maximum(matrix @ (expanded / np.linalg.norm(expanded)), 0.0)
    order = np.lexsort((np.arange(len(cos)), -cos))[:10]
    assert [h.id for h in only_vec] == ids_of(corpus_index, order.tolist())
    np.testing.assert_allclose([h.score for h in only_vec], cos[order] / cos.max(), rtol=1e-5)


def test_hybrid_with_a_supplied_vector_makes_no_embedding(docs_index: Index) -> None:
    q = np.array(docs_index.vectors[1])
    hits = docs_index.search("cors", query_vector=q, k=3)
    assert hits[0].id == "guide/install.md:cors:0"


def test_keyword_mode_makes_no_query_embedding() -> None:
    data = build_index(DOCS, stamp={"provider": "nosuch", "model": "m", "dimensions": 64})
    idx = load_bytes(data)
    assert [h.id for h in idx.search("cors", mode="keyword")] == ["guide/install.md:cors:0"]
    for mode in ("vector", "hybrid"):
        with pytest.raises(QueryEmbeddingError) as info:
            idx.search("cors", mode=mode)
        assert 'mode="keyword"' in str(info.value)
        assert "'nosuch'" in str(info.value)


def test_openai_index_without_key_suggests_keyword(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    stamp = {
        "provider": "openai",
        "model": "text-embedding-3-small",
        "dimensions": 64,
        "normalization": "l2",
    }
    idx = load_bytes(build_index(DOCS, stamp=stamp))
    with pytest.raises(QueryEmbeddingError, match='mode="keyword"'):
        idx.search("cors", mode="vector")
    assert idx.search("cors", mode="keyword")
    # A caller-supplied vector needs no provider at all.
    assert idx.search_vector(np.ones(64), k=2)


class OtherEmbedder(Embedder):
    provider_id = "hashing"
    model_id = "hashing-v0"
    dimensions = 64

    def embed_batch(self, texts: Any) -> Any:  # pragma: no cover - never called
        raise AssertionError


def test_mismatched_query_embedder_is_refused() -> None:
    data = build_index(DOCS)
    with pytest.raises(QueryEmbeddingError) as info:
        load_bytes(data, query_embedder=OtherEmbedder())
    assert str(info.value) == (
        "<buffer>: the query embedder is hashing/hashing-v0 (64 dims) but the index was "
        "embedded with hashing/hashing-v2 (64 dims); vectors from different models are not "
        'comparable. Use the index\'s provider, mode="keyword", or rebuild the index.'
    )
    idx = load_bytes(data, query_embedder=HashingEmbedder(64))
    assert idx.search("cors", mode="vector")[0].id == "guide/install.md:cors:0"


def test_unknown_hashing_model_is_refused() -> None:
    stamp = {"provider": "hashing", "model": "hashing-v9", "dimensions": 64}
    idx = load_bytes(build_index(DOCS, stamp=stamp))
    with pytest.raises(QueryEmbeddingError, match="upgrade scidx or rebuild"):
        idx.search("cors", mode="vector")


# ---------------------------------------------------------------------------------------------
# Hits, filters, min_score


def test_hit_fields_and_to_dict(docs_index: Index) -> None:
    (hit,) = docs_index.search("max_chunk_chars", mode="keyword")
    assert isinstance(hit, Hit)
    assert hit.to_dict() == {
        "id": "ref/options.md:options:0",
        "score": hit.score,
        "source": "ref/options.md",
        "anchor": "options",
        "headingPath": ["Options"],
        "title": "Options",
        "text": "The max_chunk_chars option bounds the size of each chunk.",
        "snippet": "The max_chunk_chars option bounds the size of each chunk.",
        # The identifier and, through its parts, "chunk": the search's own terms.
        "highlights": [[4, 19], [51, 56]],
        "snippetCode": [],
        "url": "https://docs.example.com/ref/options#options",
        "sections": [],
    }
    plain = load_bytes(build_index(DOCS))
    assert plain.search("max_chunk_chars", mode="keyword")[0].url is None


def test_filters(docs_index: Index) -> None:
    def ids(**kw: Any) -> list[str]:
        return [h.id for h in docs_index.search("guide options chunk kubectl cors", k=10, **kw)]

    everything = ids()
    assert len(everything) == 3
    assert ids(source="guide/*") == [i for i in everything if i.startswith("guide/")]
    assert ids(source="ref/") == ["ref/options.md:options:0"]
    assert ids(source="*.txt") == []
    assert ids(heading="cors") == ["guide/install.md:cors:0"]
    assert ids(heading="GUIDE") == [i for i in everything if i.startswith("guide/")]
    assert ids(metadata={"section": "reference"}) == ["ref/options.md:options:0"]
    assert ids(metadata={"section": "guide"}, heading="install") == ["guide/install.md:install:0"]
    assert ids(metadata={"missing": "x"}) == []
    for mode in ("keyword", "vector"):
        hits = docs_index.search("guide", mode=mode, source="guide/install.md", k=10)
        assert {h.source for h in hits} == {"guide/install.md"}


def test_filters_return_k_hits_when_they_exist() -> None:
    recs = [record(f"a/{i:03d}.md", "common words here", anchor=f"x{i}") for i in range(50)]
    recs += [
        record(f"b/{i:03d}.md", "common words", anchor="target", heading_path=["Target"])
        for i in range(5)
    ]
    idx = load_bytes(build_index(recs))
    hits = idx.search("common words", mode="keyword", k=5, heading="target")
    assert [h.source for h in hits] == [f"b/{i:03d}.md" for i in range(5)]


def test_min_score(docs_index: Index) -> None:
    hits = docs_index.search("kubectl cors", mode="keyword", k=10)
    cut = hits[0].score
    assert [h.id for h in docs_index.search("kubectl cors", mode="keyword", min_score=cut)] == [
        h.id for h in hits if h.score >= cut
    ]
    assert docs_index.search("kubectl", mode="keyword", min_score=1e9) == []


def test_empty_and_stop_word_queries(docs_index: Index) -> None:
    for mode in ("keyword", "vector", "hybrid"):
        assert docs_index.search("", mode=mode) == []
        assert docs_index.search("   \n", mode=mode) == []
        assert docs_index.search("the of and", mode=mode) == []
    assert docs_index.search("zzzunknownzzz", mode="keyword") == []


def test_k_larger_than_the_corpus(docs_index: Index) -> None:
    for mode in ("keyword", "vector", "hybrid"):
        hits = docs_index.search("guide chunk", mode=mode, k=1000)
        assert 1 <= len(hits) <= len(docs_index)
    assert len(docs_index.search_vector(np.ones(64), k=1000)) == len(docs_index)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be a positive integer, got 0"),
        ({"k": -3}, "k must be a positive integer, got -3"),
        ({"k": True}, "k must be a positive integer, got True"),
        ({"k": 2.5}, "k must be a positive integer, got 2.5"),
        (
            {"mode": "semantic"},
            "unknown search mode 'semantic'; use one of hybrid, keyword, vector",
        ),
        ({"alpha": 1.5}, r"alpha must be a number in \[0, 1\], got 1.5"),
        ({"min_score": float("nan")}, "min_score must be a number"),
        ({"snippet_chars": 0}, "snippet_chars must be a positive integer, got 0"),
        ({"source": ""}, "the source filter must be a non-empty glob or path prefix"),
        ({"heading": ""}, "the heading filter must be a non-empty string"),
        ({"metadata": {1: "x"}}, "the metadata filter must map front-matter field names"),
        ({"query_vector": [float("nan")] * 64}, "the query vector contains NaN or infinite"),
        ({"query_vector": [1.0] * 63}, r"the query vector has shape \[63\], but this index"),
        ({"query_vector": [0.0] * 64}, "the query vector is all zeros"),
        ({"query_vector": "abc"}, "the query vector"),
    ],
)
def test_bad_requests_raise_query_error(
    docs_index: Index, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(QueryError, match=message):
        docs_index.search("cors", **kwargs)


def test_cached_parameters_still_refuse_what_equals_a_valid_value(docs_index: Index) -> None:
    docs_index.search("cors", k=1)  # caches the validated k=1 settings
    with pytest.raises(QueryError, match="k must be a positive integer, got True"):
        docs_index.search("cors", k=True)  # True == 1 and hashes alike, but is refused
    with pytest.raises(QueryError, match="k must be a positive integer"):
        docs_index.rank("cors", k=[1])  # type: ignore[arg-type]  # unhashable


def test_search_batch_equals_one_search_per_query(corpus_index: Index) -> None:
    queries = ["kubectl install", "", "the of", "cors configuration origins", "chunk size"]
    for mode in ("keyword", "hybrid", "vector"):
        for kwargs in ({"k": 3}, {"k": 50, "min_score": 0.1}, {"k": 4, "source": "doc1*"}):
            batch = corpus_index.search_batch(queries, mode=mode, **kwargs)  # type: ignore[arg-type]
            single = [corpus_index.search(q, mode=mode, **kwargs) for q in queries]  # type: ignore[arg-type]
            assert batch == single
    # Sections of several chunks: the batch groups them exactly as search does.
    queries = ["alpha", "beta gamma", "omega delta zeta", "", "kappa lambda"]
    with load_bytes(build_index(random_corpus(40, sections=True))) as idx:
        for kwargs in ({}, {"group": None}, {"group": "page"}, {"mmr": 0.5, "k": 5}):
            batch = idx.search_batch(queries, mode="keyword", **kwargs)  # type: ignore[arg-type]
            single = [idx.search(q, mode="keyword", **kwargs) for q in queries]  # type: ignore[arg-type]
            assert batch == single, kwargs
            assert [[h.sections for h in hits] for hits in batch] == [
                [h.sections for h in hits] for hits in single
            ]
        raw = idx.search_batch(queries, mode="keyword", group=None, k=20)
        grouped = idx.search_batch(queries, mode="keyword", k=20)
        assert raw != grouped  # grouping is on by default and did collapse some sections
        # Raw keyword batches take their own path: the same hits, the same errors.
        odd = ["alpha", None, "   ", "the of", "beta gamma"]
        for kwargs in ({"k": 7}, {"k": 30, "min_score": 0.5}, {"k": 3, "snippet_chars": 40}):
            batch = idx.search_batch(odd, mode="keyword", group=None, **kwargs)  # type: ignore[arg-type]
            single = [idx.search(q, mode="keyword", group=None, **kwargs) for q in odd]  # type: ignore[arg-type]
            assert batch == single, kwargs
            assert [[h.snippet for h in hits] for hits in batch] == [
                [h.snippet for h in hits] for hits in single
            ]
        with pytest.raises(QueryError, match="the query must be a str"):
            idx.search_batch(["alpha", 3], mode="keyword", group=None)  # type: ignore[list-item]
        # rank_batch: rank() for each query, ids and scores only.
        for mode in ("keyword", "vector", "hybrid"):
            for kwargs in ({"k": 5}, {"k": 30, "min_score": 0.2}, {"group": "section"}):
                got = idx.rank_batch(odd, mode=mode, **kwargs)  # type: ignore[arg-type]
                want = [idx.rank(q, mode=mode, **kwargs) for q in odd]  # type: ignore[arg-type]
                assert got == want, (mode, kwargs)
        with pytest.raises(QueryError, match="a list of queries"):
            idx.rank_batch("alpha")
        with pytest.raises(QueryError, match="the query must be a str"):
            idx.rank_batch(["alpha", 3], mode="keyword")  # type: ignore[list-item]
    with pytest.raises(QueryError, match="a list of queries"):
        corpus_index.search_batch("kubectl")
    with pytest.raises(QueryError, match="k must be a positive integer"):
        corpus_index.search_batch(["x"], k=0)


def test_query_error_is_a_value_error(docs_index: Index) -> None:
    with pytest.raises(ValueError):
        docs_index.search("cors", k=0)
    with pytest.raises(QueryError, match="the query must be a str"):
        docs_index.search(b"cors")  # type: ignore[arg-type]
    with pytest.raises(QueryError):
        docs_index.search_vector(None)


# ---------------------------------------------------------------------------------------------
# Snippets


LONG = (
    "Kubernetes runs containers. " * 10
    + "To configure CORS on the ingress, set the allowed origins and the CORS headers. "
    + "Unrelated filler sentence about clusters. " * 10
)


def make_snippet(text: str, terms: list[str], limit: int) -> str:
    return build_snippet(text, terms, limit).text


def test_snippet_picks_the_densest_passage() -> None:
    snippet = make_snippet(LONG, ["configur", "cor"], 120)
    assert len(snippet) <= 120
    assert "configure CORS" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    inner = snippet.strip("…")
    # Cut on word boundaries: every word is a whole word of the text.
    words = LONG.split()
    assert all(w in words for w in inner.split())


def test_snippet_without_matches_and_short_text() -> None:
    assert make_snippet("short  text\nhere", ["x"], 240) == "short text here"
    snippet = make_snippet(LONG, ["nomatch"], 50)
    assert len(snippet) <= 50 and snippet.startswith("Kubernetes") and snippet.endswith("…")
    assert make_snippet(LONG, [], 50) == snippet


@pytest.mark.parametrize("limit", [1, 5, 30, 239, 240, 1000])
def test_snippet_respects_the_limit(limit: int) -> None:
    for terms in (["cor"], ["kubernet"], ["zzz"]):
        assert len(make_snippet(LONG, terms, limit)) <= limit


def test_search_snippets(docs_index: Index) -> None:
    text = DOCS[0]["text"]
    (hit, *_) = docs_index.search("version", mode="keyword", snippet_chars=30)
    assert hit.text == text
    assert len(hit.snippet) <= 30 and "version" in hit.snippet


@pytest.mark.parametrize("k", [1, 5, 10, 100, 4999, 5000, 5001])
def test_top_k_dense_equals_a_full_sort(k: int) -> None:
    rnd = np.random.default_rng(k)
    # Rounded scores make many exact ties, including across the k-th place.
    scores = np.round(rnd.standard_normal(5000), 1).astype(np.float32)
    rows, got = top_k_dense(scores, k)
    order = np.lexsort((np.arange(5000), -scores))[:k]
    assert rows.tolist() == order.tolist()
    assert got.tolist() == scores[order].tolist()


def test_top_k_dense_survives_nan_scores() -> None:
    scores = np.ones(5000, dtype=np.float32)
    scores[::7] = np.nan
    rows, got = top_k_dense(scores, 10)
    assert len(rows) == 10 and np.all(got == 1.0)


def test_top_k_dense_with_a_few_nan_scores_keeps_the_true_top() -> None:
    scores = np.linspace(0, 1, 5000, dtype=np.float32)
    scores[[4999, 4990, 10]] = np.nan
    rows, _ = top_k_dense(scores, 5)
    assert rows.tolist() == [4998, 4997, 4996, 4995, 4994]


def test_hybrid_equals_the_documented_formula(corpus_index: Index) -> None:
    query, alpha = "alpha kappa omega", 0.3
    n = len(corpus_index)
    keyword = corpus_index.search(query, mode="keyword", k=n)
    row_of = {corpus_index.chunk(r).id: r for r in range(n)}
    kw = np.zeros(n)
    for h in keyword:
        kw[row_of[h.id]] = h.score
    matrix = np.array(corpus_index.vectors, dtype=np.float64)
    fb = keyword[:PRF_DOCS]
    weights = np.array([h.score for h in fb])
    centroid = weights @ matrix[[row_of[h.id] for h in fb]] / weights.sum()
    q = HashingEmbedder(64).embed([query])[0]
    expanded = q / np.linalg.norm(q) + PRF_BETA * centroid
    cos = np.maximum(matrix @ (expanded / np.linalg.norm(expanded)), 0.0)
    fused = (1 - alpha) * kw / kw.max() + alpha * cos / cos.max()
    order = np.lexsort((np.arange(n), -fused))[:10]
    hits = corpus_index.search(query, k=10, alpha=alpha)
    assert [h.id for h in hits] == ids_of(corpus_index, order.tolist())
    np.testing.assert_allclose([h.score for h in hits], fused[order], rtol=1e-5)


def test_hybrid_filters_apply_before_the_cut() -> None:
    strong = [record(f"a/{i:03d}.md", "kappa kappa kappa omega", anchor="s") for i in range(150)]
    weak = [record(f"b/{i}.md", "kappa and some other words here", anchor="w") for i in range(3)]
    idx = load_bytes(build_index(strong + weak))
    for mode in ("hybrid", "keyword", "vector"):
        hits = idx.search("kappa omega", mode=mode, k=5, source="b/")
        # Identical rows can differ in the last float32 bit of a BLAS product: compare as sets.
        assert sorted(h.source for h in hits) == ["b/0.md", "b/1.md", "b/2.md"], mode


@pytest.mark.parametrize(
    ("source", "path", "page"),
    [
        ("guide/install.md", "guide/install", "guide/install/"),
        ("guide/index.md", "guide/index", "guide/"),
        ("blog/_index.md", "blog/_index", "blog/"),
        ("README.md", "README", ""),
        ("index.md", "index", ""),
        ("a/b/Page.MDX", "a/b/Page", "a/b/Page/"),
        ("notes.txt", "notes.txt", "notes.txt/"),
    ],
)
def test_url_parts(source: str, path: str, page: str) -> None:
    from scidx.index.urls import url_parts

    parts = url_parts(source)
    assert parts is not None
    assert (parts["source"], parts["path"], parts["page"]) == (source, path, page)


def test_url_template_from_the_file_is_never_str_format() -> None:
    """A forged index cannot use format specs or attribute access in its urlTemplate."""
    from scidx.errors import ConfigError, CorruptIndexError
    from scidx.index.urls import URL_PLACEHOLDERS, parse_url_template
    from scidx.pack.packer import pack_records

    assert URL_PLACEHOLDERS == ("source", "path", "page", "anchor")  # config uses the same module
    for bad in ("{source.__class__}", "{page:>999999999}", "{path!r}", "{nope}", "{"):
        assert parse_url_template(bad) is None, bad
        with pytest.raises(ConfigError):
            pack_records([{"id": "a", "text": "x"}], None, url_template=bad, dimensions=8)
    braces = pack_records([{"id": "a", "text": "x"}], None, url_template="x/{{l}}/{page}")
    assert braces.data is not None
    assert load_bytes(braces.data).get("a").url == "x/{l}/a/"  # type: ignore[union-attr]
    # Same length as the forged template, so the header keeps its size and offsets.
    template = "https://x/{page}" + "z" * len(":>999999999")
    good = pack_records([{"id": "a", "text": "x"}], None, url_template=template, dimensions=8)
    assert good.data is not None
    forged = good.data.replace(template.encode(), b"https://x/{page:>999999999}")
    assert forged != good.data and len(forged) == len(good.data)
    with pytest.raises(CorruptIndexError, match="urlTemplate"):
        load_bytes(forged)


def test_extreme_and_complex_query_vectors() -> None:
    idx = load_bytes(build_index(random_corpus(40)))
    d = idx.vectors.shape[1]
    base = np.asarray(idx.vectors[3], dtype=np.float64)
    small = idx.search_vector(base, k=3)
    huge = idx.search_vector(base * 1e300, k=3)
    tiny = idx.search_vector(base * 1e-300, k=3)
    assert [h.id for h in huge] == [h.id for h in small] == [h.id for h in tiny]
    assert huge[0].score == pytest.approx(small[0].score)
    with pytest.raises(QueryError, match="real numbers"):
        idx.search_vector(np.ones(d, dtype=np.complex128), k=3)


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_rank_equals_search(mode: str) -> None:
    idx = load_bytes(build_index(random_corpus(60)))
    for query in ("alpha beta", "gamma", "delta omega kappa"):
        hits = idx.search(query, k=7, mode=mode)
        assert len(hits) == 7
        assert idx.rank(query, k=7, mode=mode) == [(h.id, h.score) for h in hits]
    with pytest.raises(QueryError):
        idx.rank("alpha", k=0)


def test_dense_hybrid_fusion_equals_the_row_path(
    corpus_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fusing dense keyword scores (no row lists) gives the row-list fusion's hits exactly."""
    from scidx.index.search import Searcher

    queries = ["alpha beta", "gamma delta kappa", "sigma omega theta lambda", "zeta alpha zeta"]
    settings: list[dict[str, Any]] = [
        {"k": 10},
        {"k": 40, "min_score": 0.2},
        {"k": 5, "alpha": 0.8},
    ]
    fast = [[corpus_index.search(q, mode="hybrid", **kw) for q in queries] for kw in settings]
    calls: list[int] = []
    dense = Searcher._dense_keyword

    def spy(self: Searcher, terms: Any) -> Any:
        out = dense(self, terms)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(Searcher, "_dense_keyword", spy)
    corpus_index.search(queries[0], mode="hybrid")
    assert any(calls)  # the dense path is the one the first run took
    monkeypatch.setattr(Searcher, "_dense_keyword", lambda self, terms: None)
    slow = [[corpus_index.search(q, mode="hybrid", **kw) for q in queries] for kw in settings]
    assert fast == slow
    assert [[[h.score for h in r] for r in s] for s in fast] == [
        [[h.score for h in r] for r in s] for s in slow
    ]
