"""Anchor slugs: github-slugger's own fixtures, and Python-Markdown's toc as an oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown.extensions.toc import slugify as toc_slugify
from markdown.extensions.toc import unique as toc_unique
from markdown_it import MarkdownIt

from scidx.pack.slug import (
    GithubSlugger,
    MkdocsSlugger,
    github_slugify,
    make_slugger,
    mkdocs_slugify,
)


def test_github_slugger_reproduces_all_upstream_fixtures(shared_dir: Path) -> None:
    cases = json.loads((shared_dir / "slugs/github-slugger/fixtures.json").read_text("utf-8"))
    assert len(cases) == 78
    slugger = GithubSlugger()  # one slugger, in file order: later cases rely on earlier ones
    got = [(case["name"], slugger.slug(case["input"])) for case in cases]
    assert got == [(case["name"], case["expected"]) for case in cases]


def test_github_duplicates_never_collide_with_literal_slugs() -> None:
    slugger = GithubSlugger()
    assert [slugger.slug(t) for t in ["echo", "echo", "echo 1", "echo-1", "echo"]] == [
        "echo",
        "echo-1",
        "echo-1-1",
        "echo-1-2",
        "echo-2",
    ]


def test_github_unique_and_reserve() -> None:
    slugger = GithubSlugger()
    slugger.reserve("")
    assert slugger.unique("setup") == "setup"
    assert slugger.slug("Setup") == "setup-1"
    assert slugger.slug("!!!") == "-1"  # "" was reserved (text before the first heading)
    assert slugger.unique("setup") == "setup-2"


def test_github_slugify_keeps_spaces_uncollapsed() -> None:
    assert github_slugify("  A  b ") == "--a--b-"
    assert github_slugify("Ⓐ circled") == "ⓐ-circled"  # Other_Alphabetic symbols survive


def test_make_slugger() -> None:
    assert isinstance(make_slugger("github"), GithubSlugger)
    assert isinstance(make_slugger("mkdocs"), MkdocsSlugger)
    with pytest.raises(ValueError, match="unknown anchor style 'hugo'"):
        make_slugger("hugo")  # type: ignore[arg-type]


_HAND_PICKED = [
    "Installation",
    "Installation",
    "Installation_1",
    "installation",
    "Ünïcödé Überschrift",
    "žlutý kůň",
    "日本語のみ",
    "日本語のみ",
    "",
    "!!!",
    "   ",
    "a - b -- c",
    "tabs\tand\nnewlines",
    "under_score and-dash",
    "ﬁ ligature and ½ fraction",
    "`code` in *heading*",
    "C++ / C# & F#",
    "trailing_7",
    "trailing_7",
    "trailing",
    "trailing_1",
    "Ⅻ roman",
    "emoji 😄 heading",
    "café",
    "cafe",
]


def _oracle(texts: list[str]) -> list[str]:
    ids: set[str] = set()
    return [toc_unique(toc_slugify(t, "-"), ids) for t in texts]


def test_mkdocs_matches_python_markdown_on_hand_picked_headings() -> None:
    slugger = MkdocsSlugger()
    assert [slugger.slug(t) for t in _HAND_PICKED] == _oracle(_HAND_PICKED)
    assert all(mkdocs_slugify(t) == toc_slugify(t, "-") for t in _HAND_PICKED)


def _corpus_headings(root: Path) -> list[list[str]]:
    """Plain text of every heading, per document, across a shared corpus."""
    md = MarkdownIt("commonmark")
    docs: list[list[str]] = []
    for path in sorted(root.rglob("*.md")):
        if not path.is_file():
            continue
        tokens = md.parse(path.read_text("utf-8"))
        heads = [
            "".join(c.content for c in (tok.children or []) if c.type in ("text", "code_inline"))
            for prev, tok in zip(tokens, tokens[1:], strict=False)
            if prev.type == "heading_open"
        ]
        docs.append(heads)
    return docs


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["fastapi-docs-en", "rust-book", "rails-guides"])
def test_mkdocs_matches_python_markdown_on_corpus_headings(shared_dir: Path, corpus: str) -> None:
    docs = _corpus_headings(shared_dir / "corpora" / corpus)
    assert sum(map(len, docs)) > 500
    for heads in docs:
        slugger = MkdocsSlugger()
        assert [slugger.slug(h) for h in heads] == _oracle(heads)


@given(
    st.lists(
        st.sampled_from(["a", "a_1", "a_2", "a_1_1", "b", "b_3", "", "_1", "_2", "a_x"]),
        max_size=40,
    )
)
def test_mkdocs_unique_matches_toc_unique(anchors: list[str]) -> None:
    ids: set[str] = set()
    expected = [toc_unique(a, ids) for a in anchors]
    slugger = MkdocsSlugger()
    assert [slugger.unique(a) for a in anchors] == expected


def test_many_duplicate_headings_stay_linear() -> None:
    slugger = MkdocsSlugger()
    anchors = [slugger.slug("Same") for _ in range(20_000)]
    assert anchors[-1] == "same_19999"
    github = GithubSlugger()
    assert [github.slug("Same") for _ in range(20_000)][-1] == "same-19999"
