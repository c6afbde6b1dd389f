"""The Markdown chunker: focused tests per hard case, corpus snapshot, fuzzing, real corpora."""

from __future__ import annotations

import bisect
import dataclasses
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from syrupy.assertion import SnapshotAssertion

from scidx.errors import ConfigError
from scidx.pack.chunk import CHUNKER_VERSION, Chunk, chunk_markdown
from scidx.pack.cleantext import plain_text
from scidx.pack.frontmatter import Metadata, normalize_source, parse_front_matter

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "docs"


def summary(chunks: list[Chunk]) -> list[tuple[str, tuple[str, ...], str]]:
    return [(c.id, c.heading_path, c.text) for c in chunks]


def test_version_is_pinned() -> None:
    assert CHUNKER_VERSION == "scidx-chunk-6"


def test_sections_paths_and_ids() -> None:
    doc = "# Tool\n\nIntro.\n\n## Install\n\nRun it.\n\n### On Linux\n\nUse apt.\n\n## Use\n\nGo.\n"
    assert summary(chunk_markdown(doc, "a.md")) == [
        ("a.md:tool:0", ("Tool",), "Intro."),
        ("a.md:install:0", ("Tool", "Install"), "Run it."),
        ("a.md:on-linux:0", ("Tool", "Install", "On Linux"), "Use apt."),
        ("a.md:use:0", ("Tool", "Use"), "Go."),
    ]
    chunk = chunk_markdown(doc, "a.md")[1]
    assert (chunk.char_start, chunk.char_end, chunk.line_start, chunk.line_end) == (28, 35, 7, 7)
    assert doc[chunk.char_start : chunk.char_end] == chunk.text
    assert {c.title for c in chunk_markdown(doc, "a.md")} == {"Tool"}


def test_headings_in_backtick_and_tilde_fences_are_not_headings() -> None:
    doc = (
        "# T\n\nt\n\n## A\n\n```sh\n# comment\n## not a heading\n```\n\n"
        "~~~\n## tilde, not a heading\n~~~\n\n````md\n```\n## nested fence\n```\n````\n"
    )
    chunks = chunk_markdown(doc, "f.md")
    assert [c.anchor for c in chunks] == ["t", "a"]
    assert chunks[1].text == doc[doc.index("```sh") :].rstrip("\n")


def test_unclosed_fence_keeps_all_following_text() -> None:
    doc = "# T\n\n## A\n\n```\ncode\n## swallowed heading\n\ntail text\n"
    chunks = chunk_markdown(doc, "f.md")
    assert summary(chunks)[0] == (
        "f.md:a:0",
        ("T", "A"),
        "```\ncode\n## swallowed heading\n\ntail text",
    )


def test_setext_headings() -> None:
    doc = "Title\n=====\n\nIntro.\n\nPart one\n--------\n\nBody\nof part.\n"
    assert summary(chunk_markdown(doc, "s.md")) == [
        ("s.md:title:0", ("Title",), "Intro."),
        ("s.md:part-one:0", ("Title", "Part one"), "Body\nof part."),
    ]


def test_multiline_setext_heading_text() -> None:
    chunks = chunk_markdown("Two\nlines\n---\n\nx\n", "s.md")
    assert (chunks[0].heading_path, chunks[0].anchor) == (("Two lines",), "two-lines")


def test_yaml_front_matter_title_without_h1() -> None:
    doc = (
        "---\n"
        'title: "Install: the guide"\n'
        "weight: 20 # sort order\n"
        "tags: [a, b]\n"
        "nested:\n"
        "  key: skipped\n"
        "description: >\n"
        "  Folded\n"
        "  text.\n"
        "quote: 'it''s'\n"
        "---\n"
        "Lead paragraph.\n\n"
        "## Linux\n\napt install tool\n"
    )
    chunks = chunk_markdown(doc, "i.md")
    assert summary(chunks) == [
        ("i.md::0", ("Install: the guide",), "Lead paragraph."),
        ("i.md:linux:0", ("Install: the guide", "Linux"), "apt install tool"),
    ]
    assert chunks[0].title == "Install: the guide"
    assert dict(chunks[0].metadata) == {
        "description": "Folded text.",
        "quote": "it's",
        "title": "Install: the guide",
        "weight": "20",
    }
    assert chunks[0].metadata is chunks[1].metadata  # shared by all chunks of the file
    assert all("weight" not in c.text for c in chunks)  # front matter is never body text
    assert chunks[0].line_start == 12


def test_front_matter_title_wins_over_h1() -> None:
    # As the generators title a page (MkDocs, Docusaurus, Starlight, VitePress: front matter
    # first); the H1 still heads the heading path.
    doc = "---\ntitle: Meta title\n---\n# Page title\n\nx\n"
    chunks = chunk_markdown(doc, "p.md")
    assert (chunks[0].title, chunks[0].heading_path) == ("Meta title", ("Page title",))
    assert chunks[0].metadata["title"] == "Meta title"


def test_title_falls_back_to_first_heading_then_file_name() -> None:
    assert chunk_markdown("## Usage\n\nx\n", "a.md")[0].title == "Usage"
    assert chunk_markdown("Just text.\n", "docs/contributing.md")[0].title == "Contributing"
    assert chunk_markdown("x\n", "guide/02_first-steps.mdx")[0].title == "First steps"
    assert chunk_markdown("x\n", "docs/api/README.md")[0].title == "Api"
    assert chunk_markdown("x\n", "index.md")[0].title == "Home"


def test_toml_front_matter() -> None:
    doc = '+++\ntitle = "Hugo page"\nweight = 3\n[params]\nhidden = true\n+++\n\n## A\n\nx\n'
    chunks = chunk_markdown(doc, "h.md")
    assert summary(chunks) == [("h.md:a:0", ("Hugo page", "A"), "x")]
    assert dict(chunks[0].metadata) == {"title": "Hugo page", "weight": "3"}


def test_nul_in_front_matter_becomes_a_replacement_character() -> None:
    """Issue 24 #5: a "\\0" escape or a raw NUL never reaches title or metadata."""
    text = '---\ntitle: "Guide\\0 one"\nteam: a\x00b\n"k\x00": "v\\0"\n---\n# Body\x00text\n\nx\n'
    _, fields = parse_front_matter(normalize_source(text))
    assert fields == {"title": "Guide\ufffd one", "team": "a\ufffdb", "k\ufffd": "v\ufffd"}
    chunks = chunk_markdown(text, "guide.md")
    assert all("\0" not in c.title + c.text + repr(dict(c.metadata)) for c in chunks)
    assert chunks[0].metadata["team"] == "a\ufffdb"


def test_unclosed_front_matter_is_ordinary_markdown() -> None:
    assert parse_front_matter("---\ntitle: x\n\nno closing line\n") == (0, {})
    doc = "---\ntitle: x\n"
    chunks = chunk_markdown(doc, "u.md")
    # "---" is a thematic break and "title: x" a paragraph: nothing may be lost.
    assert summary(chunks) == [("u.md::0", (), "---\ntitle: x")]


def test_html_block_and_comment_with_heading_inside() -> None:
    doc = (
        "# T\n\n<!--\n## commented out\n-->\n\n## A\n\n"
        '<div class="note">\n\n## inside html\n\n</div>\n'
    )
    chunks = chunk_markdown(doc + "\ntext\n", "h.md")
    # Sections whose text is only a comment or a tag have no clean text: no result of their own
    # (and "A", a sibling H2, is not in the path of the next H2).
    assert [(c.anchor, c.heading_path) for c in chunks] == [("inside-html", ("T", "inside html"))]
    assert chunks[0].text == "</div>\n\ntext"


def test_empty_sections_leave_no_heading_in_later_paths() -> None:
    doc = "# T\n## Empty\n## Also empty\n\n\n## Full\n\nx\n\n## Sub\n### Leaf\n\ny\n## End\n"
    chunks = chunk_markdown(doc, "e.md")
    # No empty result; an empty section's heading stays only in its own subsections' paths.
    assert summary(chunks) == [
        ("e.md:full:0", ("T", "Full"), "x"),
        ("e.md:leaf:0", ("T", "Sub", "Leaf"), "y"),
    ]


def test_folded_h3_sections_are_not_in_the_next_h2_path() -> None:
    # Issue 40: `# T / ## A / text / ### B / ### C / ## D / text` gave T > B > C > D for D.
    doc = "# T\n\n## A\n\ntext a\n\n### B\n\n### C\n\n## D\n\ntext d\n"
    assert [(c.anchor, c.heading_path) for c in chunk_markdown(doc, "p.md")] == [
        ("a", ("T", "A")),
        ("d", ("T", "D")),
    ]


def test_level_jump_h1_to_h3_and_h3_reset_by_h2() -> None:
    doc = "# T\n\n### Deep\n\na\n\n## Mid\n\nb\n\n### Low\n\nc\n\n## Next\n\nd\n"
    assert [c.heading_path for c in chunk_markdown(doc, "j.md")] == [
        ("T", "Deep"),
        ("T", "Mid"),
        ("T", "Mid", "Low"),
        ("T", "Next"),
    ]


def test_h4_and_deeper_stay_in_their_h3_chunk_but_take_slugs() -> None:
    doc = "# T\n\n### S\n\n#### Example\n\nx\n\n##### Deep\n\ny\n\n## Example\n\nz\n"
    chunks = chunk_markdown(doc, "d.md")
    assert summary(chunks) == [
        ("d.md:s:0", ("T", "S"), "#### Example\n\nx\n\n##### Deep\n\ny"),
        ("d.md:example-1:0", ("T", "Example"), "z"),  # "example" went to the H4
    ]


def test_inline_markup_in_headings_uses_plain_text() -> None:
    doc = (
        "# The `kelpie` *tool*\n\n"
        "## Read [the guide](g.md) **first**\n\n"
        "## ![logo](l.png) Channels\n\n"
        "## Tom &amp; Jerry \\*escaped\\*\n\n"
        "## <span>html</span> inline\n"
    ).replace("\n\n", "\n\nx\n\n") + "\nx\n"
    chunks = chunk_markdown(doc, "m.md")
    assert [(c.heading_path[-1], c.anchor) for c in chunks] == [
        ("The kelpie tool", "the-kelpie-tool"),
        ("Read the guide first", "read-the-guide-first"),
        ("Channels", "-channels"),  # GitHub slugs the untrimmed textContent
        ("Tom & Jerry *escaped*", "tom--jerry-escaped"),
        ("html inline", "html-inline"),
    ]
    assert chunks[0].title == "The kelpie tool"


def test_custom_ids() -> None:
    doc = (
        "# T\n\nt\n\n## Quick start {#first-steps}\n\na\n\n## First steps\n\nb\n\n"
        "## Again {#first-steps}\n\nc\n\n## Attr list {: #attr .wide}\n\nd\n\n"
        "## Code `{#not-an-id}`\n\ne\n"
    )
    chunks = chunk_markdown(doc, "c.md")
    assert [(c.heading_path[-1], c.anchor) for c in chunks] == [
        ("T", "t"),
        ("Quick start", "first-steps"),
        ("First steps", "first-steps-1"),  # the explicit id was registered first
        ("Again", "first-steps-2"),  # a repeated explicit id is de-duplicated, ids stay unique
        ("Attr list", "attr"),
        ("Code {#not-an-id}", "code-not-an-id"),  # inside inline code it is just text
    ]
    mk = chunk_markdown(doc, "c.md", anchor_style="mkdocs")
    assert [c.anchor for c in mk] == ["t", "first-steps", "first-steps_1", "first-steps_2"] + [
        "attr",
        "code-not-an-id",
    ]


def test_crlf_and_bom_are_normalised_and_spans_refer_to_normalised_text() -> None:
    raw = "\ufeff# T\r\n\r\nIntro line\r\nsecond\r\n\r\n## A\r\nbody\rold mac\r\n"
    norm = normalize_source(raw)
    assert norm == "# T\n\nIntro line\nsecond\n\n## A\nbody\nold mac\n"
    chunks = chunk_markdown(raw, "w.md")
    assert summary(chunks) == [
        ("w.md:t:0", ("T",), "Intro line\nsecond"),
        ("w.md:a:0", ("T", "A"), "body\nold mac"),
    ]
    assert all(norm[c.char_start : c.char_end] == c.text for c in chunks)
    assert [(c.line_start, c.line_end) for c in chunks] == [(3, 4), (7, 8)]
    assert chunk_markdown(raw, "w.md") == chunk_markdown(norm, "w.md")


def test_no_headings_at_all() -> None:
    assert summary(chunk_markdown("Just text.\n\nMore.\n", "n.md")) == [
        ("n.md::0", (), "Just text.\n\nMore.")
    ]
    assert chunk_markdown("", "n.md") == []
    assert chunk_markdown(" \n\n\t\n", "n.md") == []
    assert chunk_markdown("---\ntitle: Only meta\n---\n", "n.md") == []
    assert chunk_markdown("---\ntitle: Only meta\n---", "n.md") == []  # closer without newline
    assert summary(chunk_markdown("+++\ntitle = 'T'\n+++\nx", "n.md")) == [("n.md::0", ("T",), "x")]


def test_no_headings_long_text_is_split_into_parts() -> None:
    paragraphs = [f"Paragraph {i} " + "word " * 20 for i in range(10)]
    doc = "\n\n".join(p.strip() for p in paragraphs) + "\n"
    chunks = chunk_markdown(doc, "n.md", max_chunk_chars=300)
    assert [c.id for c in chunks] == [f"n.md::{i}" for i in range(len(chunks))]
    assert len(chunks) == 5  # two ~120-char paragraphs fit in 300, three do not
    assert "\n\n".join(c.text for c in chunks) == doc.strip()


def test_text_before_first_heading_and_empty_slug_heading() -> None:
    doc = "[![badge](b.svg)](ci)\n\n# Tool\n\nx\n\n## !!!\n\ny\n"
    chunks = chunk_markdown(doc, "p.md")
    assert summary(chunks) == [
        ("p.md::0", (), "[![badge](b.svg)](ci)"),
        ("p.md:tool:0", ("Tool",), "x"),
        ("p.md:-1:0", ("Tool", "!!!"), "y"),  # "" belongs to the preamble chunk
    ]
    assert chunks[0].title == "Tool"
    # Without a preamble, an empty slug is just "".
    assert [c.anchor for c in chunk_markdown("## !!!\n\ny\n", "p.md")] == [""]


def test_multiple_h1_start_new_top_ancestors() -> None:
    doc = "# One\n\na\n\n## Sub\n\nb\n\n# Two\n\nc\n\n### Deep\n\nd\n\n## Sub\n\ne\n"
    assert summary(chunk_markdown(doc, "h.md")) == [
        ("h.md:one:0", ("One",), "a"),
        ("h.md:sub:0", ("One", "Sub"), "b"),
        ("h.md:two:0", ("Two",), "c"),
        ("h.md:deep:0", ("Two", "Deep"), "d"),
        ("h.md:sub-1:0", ("Two", "Sub"), "e"),
    ]
    assert {c.title for c in chunk_markdown(doc, "h.md")} == {"One"}


def test_nested_headings_take_a_slug_but_do_not_split() -> None:
    doc = "# T\n\n> ## Quoted\n> text\n\n- ## In list\n\n## Quoted\n\nx\n"
    chunks = chunk_markdown(doc, "q.md")
    assert summary(chunks) == [
        ("q.md:t:0", ("T",), "> ## Quoted\n> text\n\n- ## In list"),
        ("q.md:quoted-1:0", ("T", "Quoted"), "x"),
    ]


def test_duplicate_headings_mkdocs_style() -> None:
    doc = "# A\n\nx\n\n## A\n\nx\n\n## A\n\nx\n\n## A_1\n\nx\n"
    assert [c.anchor for c in chunk_markdown(doc, "d.md", anchor_style="mkdocs")] == [
        "a",
        "a_1",
        "a_2",
        "a_3",  # as toc.unique: "a_1" is taken, so count on from it
    ]
    assert [c.anchor for c in chunk_markdown(doc, "d.md")] == ["a", "a-1", "a-2", "a_1"]


def test_over_budget_section_keeps_big_fence_whole_and_splits_lists_between_items() -> None:
    fence = "```\n" + "\n".join(f"line {i:03d} " + "x" * 40 for i in range(10)) + "\n```"
    items = "\n".join(f"- item {i:02d} " + "y" * 30 for i in range(12))
    doc = f"# T\n\n## Big\n\nBefore.\n\n{fence}\n\nAfter.\n\n{items}\n\nEnd.\n"
    chunks = chunk_markdown(doc, "b.md", max_chunk_chars=200)
    big = [c for c in chunks if c.anchor == "big"]
    assert [c.ordinal for c in big] == list(range(len(big)))
    assert big[0].text == "Before."
    assert big[1].text == fence  # larger than the budget, emitted whole
    assert big[2].text.startswith("After.\n\n- item 00")
    assert all(len(c.text) <= 200 for c in big if c.text != fence)
    # every part of the list starts at an item boundary
    assert all(c.text.startswith(("- item", "After.", "Before.", "```")) for c in big)
    assert "\n".join(c.text for c in big[2:]).replace("\n\n", "\n") == (f"After.\n{items}\nEnd.")
    assert {c.heading_path for c in big} == {("T", "Big")}
    doc_norm = normalize_source(doc)
    assert all(doc_norm[c.char_start : c.char_end] == c.text for c in chunks)


def test_big_list_item_and_table_are_not_split_inside() -> None:
    table = "| a | b |\n|---|---|\n" + "\n".join(f"| {i} | {'z' * 40} |" for i in range(8))
    item = "- one long item\n" + "".join(f"  continued line {i} {'w' * 30}\n" for i in range(6))
    doc = f"## S\n\n{table}\n\n{item}- short item\n"
    chunks = chunk_markdown(doc, "t.md", max_chunk_chars=150)
    assert [c.text for c in chunks] == [table, item.rstrip("\n"), "- short item"]


def test_h4_is_glued_to_the_block_after_it() -> None:
    doc = "## S\n\n" + "p" * 90 + "\n\n#### Sub\n\n" + "q" * 90 + "\n"
    chunks = chunk_markdown(doc, "g.md", max_chunk_chars=120)
    assert [c.text for c in chunks] == ["p" * 90, "#### Sub\n\n" + "q" * 90]


def test_link_reference_definitions_are_kept() -> None:
    doc = "## S\n\n[ref]: https://example.org\n\n" + "a" * 50 + "\n\n" + "b" * 50 + "\n"
    chunks = chunk_markdown(doc, "r.md", max_chunk_chars=60)
    assert "".join(c.text for c in chunks).startswith("[ref]: https://example.org")
    assert sum(len(c.text) for c in chunks) >= len(doc.strip()) - len("## S\n\n") - 4


def test_chunk_is_frozen_hashable_with_read_only_metadata() -> None:
    chunk = Chunk("a.md", ("T",), "t", 0, "x", 0, 1, 1, 1, metadata={"k": "v"})
    assert isinstance(chunk.metadata, Metadata)
    assert chunk.id == "a.md:t:0"
    assert hash(chunk) == hash(Chunk("a.md", ("T",), "t", 0, "x", 0, 1, 1, 1, metadata={"k": "v"}))
    assert chunk.metadata == {"k": "v"}
    with pytest.raises(TypeError):
        chunk.metadata["k"] = "w"  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        chunk.text = "y"  # type: ignore[misc]
    assert Chunk("a.md", (), "", 0, "", 0, 0, 1, 1).metadata == {}


def test_bad_arguments_raise_config_error() -> None:
    with pytest.raises(ConfigError, match="max_chunk_chars must be a positive integer, got 0"):
        chunk_markdown("x", "a.md", max_chunk_chars=0)
    with pytest.raises(
        ConfigError, match="anchor_style must be 'github', 'mkdocs', 'vitepress' or 'docutils'"
    ):
        chunk_markdown("x", "a.md", anchor_style="hugo")  # type: ignore[arg-type]


def test_deterministic() -> None:
    text = (FIXTURES / "configuration.md").read_text("utf-8")
    assert chunk_markdown(text, "c.md") == chunk_markdown(text, "c.md")


# --------------------------------------------------------------------------------------------
# The example corpus
# --------------------------------------------------------------------------------------------


def _fixture_chunks(anchor_style: Literal["github", "mkdocs"]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(FIXTURES.glob("*.md")):
        text = path.read_bytes().decode("utf-8")  # keep the BOM and CRLF bytes as written
        for chunk in chunk_markdown(text, f"docs/{path.name}", anchor_style=anchor_style):
            record = dataclasses.asdict(chunk)
            record["id"] = chunk.id
            record["metadata"] = dict(chunk.metadata)
            out.append(record)
    return out


def test_fixture_corpus_files_exercise_the_raw_cases() -> None:
    assert (FIXTURES / "changelog.md").read_bytes().startswith(b"\xef\xbb\xbf")
    assert b"\r\n" in (FIXTURES / "cli-reference.md").read_bytes()


def test_fixture_corpus_snapshot(snapshot: SnapshotAssertion) -> None:
    assert _fixture_chunks("github") == snapshot


def test_fixture_corpus_mkdocs_anchors(snapshot: SnapshotAssertion) -> None:
    assert [c["id"] for c in _fixture_chunks("mkdocs")] == snapshot


# --------------------------------------------------------------------------------------------
# Fuzzing: never raise, spans in bounds, no non-blank text lost
# --------------------------------------------------------------------------------------------

_FRAGMENTS = [
    "# H1\n",
    "## H2\n",
    "### H3\n",
    "#### H4\n",
    "Setext\n===\n",
    "Setext\n---\n",
    "```\n",
    "~~~\n",
    "```py\n## fenced\n",
    "---\n",
    "+++\n",
    "title: T\n",
    "---",
    "+++",
    "<!--\n",
    "-->\n",
    "<div>\n",
    "</div>\n",
    "- item\n",
    "1. item\n",
    "> quote\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "    indented code\n",
    "## Dup {#x}\n",
    "[ref]: /url\n",
    "\r\n",
    "\r",
    "\ufeff",
    "\n",
    "text\n",
    " ",
]

_markdown = st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=20)), max_size=30).map(
    "".join
)


def _heading_lines(norm: str, fm_end: int) -> set[int]:
    """0-based lines of top-level H1-H3 headings, by an independent markdown-it parse."""
    offset = norm.count("\n", 0, fm_end)
    md = MarkdownIt("commonmark").enable("table")
    lines: set[int] = set()
    for tok in md.parse(norm[fm_end:]):
        if tok.type == "heading_open" and tok.level == 0 and tok.tag in ("h1", "h2", "h3"):
            assert tok.map is not None
            lines.update(range(tok.map[0] + offset, tok.map[1] + offset))
    return lines


def _check_invariants(text: str, max_chunk_chars: int) -> None:
    chunks = chunk_markdown(text, "f.md", max_chunk_chars=max_chunk_chars)
    norm = normalize_source(text)
    n_lines = norm.count("\n") + 1
    ids = [c.id for c in chunks]
    assert len(ids) == len(set(ids))
    covered = bytearray(len(norm))
    for c in chunks:
        assert 0 <= c.char_start <= c.char_end <= len(norm)
        assert 1 <= c.line_start <= c.line_end <= n_lines
        assert norm[c.char_start : c.char_end] == c.text
        covered[c.char_start : c.char_end] = b"\x01" * (c.char_end - c.char_start)
    fm_end, _ = parse_front_matter(norm)
    assert all(c.char_start >= fm_end for c in chunks)  # front matter is never chunk text
    heading_lines = _heading_lines(norm, fm_end)
    line_starts = [0] + [i + 1 for i, ch in enumerate(norm) if ch == "\n"]
    for i in range(fm_end, len(norm)):
        if not covered[i] and not norm[i].isspace():
            line = bisect.bisect_right(line_starts, i) - 1
            # Outside every chunk: a heading line, or a section with no clean text at all
            # (nothing a search could find or show).
            if line not in heading_lines:
                lo = max((h for h in heading_lines if h < line), default=-1) + 1
                hi = min((h for h in heading_lines if h > line), default=len(line_starts))
                end = line_starts[hi] if hi < len(line_starts) else len(norm)
                start = max(line_starts[lo], fm_end)  # front matter is no section's text
                assert not plain_text(norm[start:end]).strip(), (i, norm[i], line)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text())
def test_fuzz_arbitrary_text(text: str) -> None:
    _check_invariants(text, 1500)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_markdown, budget=st.integers(min_value=1, max_value=80))
def test_fuzz_markdownish_text(text: str, budget: int) -> None:
    _check_invariants(text, budget)


# --------------------------------------------------------------------------------------------
# Real corpora
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_shared_corpus_file_chunks_with_unique_ids(shared_dir: Path) -> None:
    corpora = shared_dir / "corpora"
    files = 0
    for corpus in sorted(p for p in corpora.iterdir() if p.is_dir()):
        for path in sorted(corpus.rglob("*.md")):
            if not path.is_file():  # kubernetes has a directory named "*.md"
                continue
            text = path.read_bytes().decode("utf-8")
            chunks = chunk_markdown(text, path.relative_to(corpora).as_posix())
            ids = [c.id for c in chunks]
            assert len(ids) == len(set(ids)), path
            files += 1
    assert files > 2000
