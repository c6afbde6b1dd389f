"""Results a docs site can show as they are: highlights, grouping, MMR, prompt merging, output.

Snapshots of ``toolup-rag search`` (JSON and the terminal table) over the example corpus, the
``group=`` contract (a section never twice), the Rust-book query of issue 13, and the helpers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scidx.cli import main
from scidx.errors import QueryError
from scidx.index.grouping import group_rows, mmr_order
from scidx.index.highlight import CODE_END, CODE_START, build_snippet, highlight_html
from scidx.index.index import Index, load, load_bytes
from scidx.index.retrieval import Match, RetrievalRequest
from scidx.pack.config import config_from_dict
from scidx.pack.packer import pack_docs, pack_records
from scidx.rag.pipeline import build_context
from scidx.tokenize import tokenize

ROOT = Path(__file__).resolve().parent.parent

QUERIES = ["configure the s3 sink credentials", "install on linux", "log rotation"]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example corpus packed with links (sourceRoot fixtures/docs)."""
    root = tmp_path_factory.mktemp("example")
    (root / "fixtures").symlink_to(ROOT / "fixtures", target_is_directory=True)
    cfg = json.loads((ROOT / "staticcorpus.example.json").read_text())
    cfg.update(
        output="example.scidx",
        sourceRoot="fixtures/docs",
        urlTemplate="https://kelpie.example.org/{page}#{anchor}",
        allowExternalSymlinks=True,  # the fixtures are linked in from the checkout
    )
    (root / "staticcorpus.json").write_text(json.dumps(cfg))
    pack_docs(root / "staticcorpus.json", use_cache=False)
    return root / "example.scidx"


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, _ = capsys.readouterr()
    code = info.value.code
    return (code if isinstance(code, int) else 1), out


@pytest.fixture
def json_snapshot(snapshot):  # type: ignore[no-untyped-def]
    from syrupy.extensions.json import JSONSnapshotExtension

    return snapshot.with_defaults(extension_class=JSONSnapshotExtension)


# --------------------------------------------------------------------------------------------
# Snapshots of the search output
# --------------------------------------------------------------------------------------------


def test_search_json_snapshot(
    example: Path, capsys: pytest.CaptureFixture[str], json_snapshot
) -> None:  # type: ignore[no-untyped-def]
    out: dict[str, Any] = {}
    for query in QUERIES:
        code, text = _cli(["search", str(example), query, "-k", "4", "--json"], capsys)
        assert code == 0
        rows = json.loads(text)
        for row in rows:
            row["score"] = round(row["score"], 4)
            for sub in row["sections"]:
                sub["score"] = round(sub["score"], 4)
            del row["text"]  # the raw Markdown is pinned by the chunker's snapshot
        out[query] = rows
    code, text = _cli(
        ["search", str(example), "install", "-k", "2", "--json", "--group", "page"], capsys
    )
    rows = json.loads(text)
    for row in rows:
        row["score"] = round(row["score"], 4)
        del row["text"]
        for sub in row["sections"]:
            sub["score"] = round(sub["score"], 4)
    out["install (page)"] = rows
    assert out == json_snapshot


def test_search_terminal_snapshot(example: Path, snapshot) -> None:  # type: ignore[no-untyped-def]
    from rich.console import Console

    from scidx.cli.search import results_table

    with load(example) as idx:
        rows = [h.to_dict() for h in idx.search("configure the s3 sink credentials", k=3)]
    console = Console(record=True, width=140, force_terminal=True, color_system="standard")
    console.print(results_table(rows), crop=False)
    # Rich numbers each OSC 8 link with a random id (it groups a link's cells in a terminal).
    assert re.sub(r"\x1b\]8;id=\d+;", "\x1b]8;id=N;", console.export_text(styles=True)) == (
        snapshot
    )


def test_terminal_table_is_safe_against_markup_and_escapes() -> None:
    from rich.console import Console

    from scidx.cli.search import results_table

    row = {
        "score": 1.0,
        "headingPath": ["[bold red]Title[/]", "\x1b[31mred\x1b[0m"],
        "title": "",
        "url": "https://x.org/[link]",
        "source": "a.md",
        "anchor": "x",
        "snippet": "A [b]bold[/b] \x1b]8;;https://evil\x07 word",
        "highlights": [[14, 18]],
        "snippetCode": [],
        "sections": [],
    }
    console = Console(record=True, width=200, force_terminal=True, color_system="standard")
    console.print(results_table([row]), crop=False)
    plain = console.export_text(clear=False)
    out = console.export_text(styles=True)
    assert "[bold red]Title[/]" in plain and "[b]bold[/b]" in plain  # content, not markup
    assert "\x1b]8;;https://evil" not in out and "\x1b[31m" not in out and "\x07" not in out


def test_on_a_terminal_the_link_is_whole_and_a_hyperlink() -> None:
    import io

    from rich.console import Console

    from scidx.cli.search import results_table

    url = "https://docs.example.com/guides/observability/shipping-logs-to-object-storage/#cred"
    row = {
        "score": 1.0, "headingPath": ["Logs", "Credentials"], "title": "", "url": url,
        "source": "a.md", "anchor": "cred", "snippet": "Set the key.", "highlights": [],
        "snippetCode": [], "sections": [],
    }  # fmt: skip
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, force_terminal=True, color_system="standard")
    console.print(results_table([row]), crop=False)
    out = buffer.getvalue()
    assert len(url) > 80
    assert "\x1b]8;" in out and f";{url}\x1b\\" in out  # OSC 8 with the whole target
    assert f"{url}\x1b" in out  # the text shown is the whole URL too, on one line


# --------------------------------------------------------------------------------------------
# Grouping
# --------------------------------------------------------------------------------------------


def _long_section_index(tmp_path: Path) -> Index:
    docs = tmp_path / "docs"
    docs.mkdir()
    body = "\n\n".join(
        f"Paragraph {i} about reading files into strings. " + "word " * 60 for i in range(8)
    )
    (docs / "a.md").write_text(
        f"# Errors\n\n## Propagating\n\n{body}\n\n## Other\n\nReading files.\n"
    )
    (docs / "b.md").write_text("# Files\n\nRead a file into a string with read_to_string.\n")
    (docs / "c.md").write_text("# Strings\n\n## Reading\n\nA string from a file.\n")
    cfg = config_from_dict(
        {"include": ["docs/*.md"], "output": "x.scidx", "maxChunkChars": 400}, root=tmp_path
    )
    pack_docs(cfg, use_cache=False)
    return load(tmp_path / "x.scidx")


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "vector"])
def test_a_section_never_appears_twice(tmp_path: Path, mode: str) -> None:
    with _long_section_index(tmp_path) as idx:
        raw = idx.search("reading a file into a string", k=10, mode=mode, group=None)
        assert len({(h.source, h.anchor) for h in raw}) < len(raw)  # parts do crowd raw results
        for k in (1, 2, 3, 4, 10):
            hits = idx.search("reading a file into a string", k=k, mode=mode)
            keys = [(h.source, h.anchor) for h in hits]
            assert len(keys) == len(set(keys))
            # Every section that matches at all is reachable: k hits while k sections exist.
            assert len(hits) == min(
                k,
                len(
                    {
                        (h.source, h.anchor)
                        for h in idx.search(
                            "reading a file into a string", k=100, mode=mode, group=None
                        )
                    }
                ),
            )
        # Each group is its section's best part, in ranking order.
        best: dict[tuple[str, str], float] = {}
        for h in idx.search("reading a file into a string", k=100, mode=mode, group=None):
            best.setdefault((h.source, h.anchor), h.score)
        grouped = idx.search("reading a file into a string", k=10, mode=mode)
        assert [h.score for h in grouped] == sorted(best.values(), reverse=True)[: len(grouped)]


def test_group_page_has_sections_as_sub_results(tmp_path: Path) -> None:
    with _long_section_index(tmp_path) as idx:
        pages = idx.search("reading a file into a string", k=5, group="page")
        assert len({h.source for h in pages}) == len(pages) == 3
        top = next(h for h in pages if h.source == "docs/a.md")
        assert top.sections and all(s.anchor != top.anchor for s in top.sections)
        assert len({(s.source, s.anchor) for s in top.sections}) == len(top.sections)
        assert all(s.source == top.source for s in top.sections)
        data = top.to_dict()
        assert [s["id"] for s in data["sections"]] == [s.id for s in top.sections]
        assert "text" not in data["sections"][0]
        ranked = idx.rank("reading a file into a string", k=5, group="page")
        assert [r[0] for r in ranked] == [h.id for h in pages]


def test_group_and_mmr_are_validated(tmp_path: Path) -> None:
    with _long_section_index(tmp_path) as idx:
        with pytest.raises(QueryError, match="unknown group 'chapter'"):
            idx.search("x", group="chapter")
        with pytest.raises(QueryError, match=r"mmr must be a number in \[0, 1\]"):
            idx.search("x", mmr=1.5)
        with pytest.raises(QueryError, match="unknown group"):
            RetrievalRequest("x", group="all")


@pytest.fixture(scope="module")
def rust_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Rust book packed once for this module (../shared/corpora/rust-book)."""
    from conftest import _need_shared

    book = _need_shared("corpora/rust-book")
    tmp_path = tmp_path_factory.mktemp("rust-book")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "src").symlink_to(book / "src")
    cfg = config_from_dict(
        {
            "include": ["docs/**/*.md"],
            "output": "rb.scidx",
            "sourceRoot": "docs/src",
            "urlTemplate": "https://doc.rust-lang.org/book/{page}.html#{anchor}",
            "allowExternalSymlinks": True,  # docs/src links to ../shared
        },
        root=tmp_path,
    )
    pack_docs(cfg, use_cache=False)
    return tmp_path / "rb.scidx"


def test_rust_book_query_shows_distinct_sections(rust_book: Path) -> None:
    """Issue 13: "how do I read a file into a string" was one section four times out of five."""
    with load(rust_book) as idx:
        hits = idx.search("how do I read a file into a string", k=5)
        assert len({(h.source, h.anchor) for h in hits}) >= 4
        assert len(hits) == 5
        urls = {h.url for h in hits}
        assert (
            "https://doc.rust-lang.org/book/ch09-02-recoverable-errors-with-result.html"
            "#propagating-errors"
        ) in urls
        assert "https://doc.rust-lang.org/book/ch12-02-reading-a-file.html#reading-a-file" in urls
        for hit in hits:
            assert "{{#" not in hit.snippet and "<Listing" not in hit.snippet
            assert "`" not in hit.snippet.replace("```", "") or hit.snippet_code
            assert hit.highlights


@pytest.mark.parametrize("k", [1, 3, 10, 25])
def test_section_grouping_is_the_first_k_sections_of_the_full_ranking(
    rust_book: Path, k: int
) -> None:
    """The searcher starts from a short cut and widens it; that never changes the answer."""
    with load(rust_book) as idx:
        queries = ["read a file", "ownership borrowing", "trait objects dyn", "cargo publish"]
        multi = 0
        for query in queries:
            for mode in ("keyword", "hybrid"):
                full = idx.search(query, k=len(idx), mode=mode, group=None)
                first: dict[tuple[str, str], str] = {}
                for hit in full:
                    first.setdefault((hit.source, hit.anchor), hit.id)
                multi += len(full) - len(first)
                expected = list(first.values())[:k]
                got = idx.search(query, k=k, mode=mode, group="section")
                assert [h.id for h in got] == expected, (query, mode)
        assert multi > 0  # some sections have several chunks, so grouping did collapse some


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_hit_snippets_mark_exactly_the_query_words(rust_book: Path, mode: str) -> None:
    """A hit's snippet marks the words whose tokenizer terms include a query term, no more.

    Every hit of many queries (the book's own headings, so code, stems and Unicode all occur)
    must get exactly the snippet that definition gives (FORMAT.md §2.8), worked out by brute
    force.
    """
    from support.snippets import expected_snippet

    with load(rust_book) as idx:
        queries = sorted(
            {h for hit in idx.search("rust", k=200, group=None) for h in hit.heading_path}
        )
        assert len(queries) > 50
        checked = 0
        for query in queries[:120]:
            for hit in idx.search(query, k=10, mode=mode, snippet_chars=160):
                body = hit.plain if hit.plain is not None else hit.text
                assert hit.snippet_parts == expected_snippet(body, hit.query_terms, 160), query
                checked += 1
        assert checked > 500


# --------------------------------------------------------------------------------------------
# Highlights
# --------------------------------------------------------------------------------------------


def test_highlights_are_stem_aware_and_use_the_tokenizer() -> None:
    snip = build_snippet("Reading files: read_to_string reads a file.", tokenize("read file"), 200)
    marked = [snip.text[a:b] for a, b in snip.highlights]
    assert marked == ["Reading", "files", "read_to_string", "reads", "file"]
    # "art" is not the stem of "article": no false prefix match.
    snip = build_snippet("An article about art.", tokenize("art"), 200)
    assert [snip.text[a:b] for a, b in snip.highlights] == ["art"]


def test_snippet_window_offsets_and_code_ranges() -> None:
    text = (
        "Intro words. " * 30
        + f"Use {CODE_START}let x = read();{CODE_END} to read it. "
        + "Tail. " * 30
    )
    snip = build_snippet(text, tokenize("read"), 80)
    assert len(snip.text) <= 80 and snip.text.startswith("…") and snip.text.endswith("…")
    assert "\x02" not in snip.text and "\x03" not in snip.text
    assert [snip.text[a:b] for a, b in snip.highlights] == ["read", "read"]
    assert [snip.text[a:b] for a, b in snip.code] == ["let x = read();"]


def test_highlight_html_escapes_everything_else() -> None:
    text = "<script>alert(1)</script> & read <b>"
    out = build_snippet(text, tokenize("read script"), 200).html()
    assert out == (
        "&lt;<mark>script</mark>&gt;alert(1)&lt;/<mark>script</mark>&gt; &amp; "
        "<mark>read</mark> &lt;b&gt;"
    )
    # Forged or overlapping ranges are clipped; the markup always nests.
    assert highlight_html("abc", [(-5, 2), (1, 99)], [(2, 3)]) == (
        "<mark>ab</mark><code><mark>c</mark></code>"
    )
    assert highlight_html("a<b", [(1, 2)]) == "a<mark>&lt;</mark>b"


def test_hit_snippet_comes_from_the_clean_text(example: Path) -> None:
    with load(example) as idx:
        for query in QUERIES:
            for hit in idx.search(query, k=5):
                assert hit.plain is not None
                assert "`" not in hit.snippet and "](" not in hit.snippet
                for a, b in hit.highlights:
                    assert set(tokenize(hit.snippet[a:b])) & set(tokenize(query))
                assert hit.snippet_html().count("<mark>") == len(hit.highlights) or hit.snippet_code


# --------------------------------------------------------------------------------------------
# MMR and prompts
# --------------------------------------------------------------------------------------------


def test_mmr_order_prefers_novel_rows() -> None:
    vectors = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    assert mmr_order([0, 1, 2], [1.0, 0.99, 0.9], vectors, 1.0, 3) == [0, 1, 2]
    assert mmr_order([0, 1, 2], [1.0, 0.99, 0.9], vectors, 0.5, 3) == [0, 2, 1]
    assert mmr_order([], [], vectors, 0.5, 3) == []


def test_group_rows_keeps_order() -> None:
    groups = group_rows(
        [5, 6, 7, 8], [4.0, 3.0, 2.0, 1.0], 2, "section", lambda r: r // 2, lambda r: 0
    )
    assert [(g.row, g.score) for g in groups] == [(5, 4.0), (6, 3.0)]
    pages = group_rows([5, 6, 7, 8], [4.0, 3.0, 2.0, 1.0], 2, "page", lambda r: r, lambda r: r % 2)
    assert [g.row for g in pages] == [5, 6]
    assert [r for r, _ in pages[0].sections] == [7]


def test_prompt_merges_parts_of_one_section() -> None:
    def m(ordinal: int, score: float, anchor: str = "s") -> Match:
        return Match(
            f"a.md:{anchor}:{ordinal}", score, "a.md", anchor, ["A", anchor], "A", f"part {ordinal}"
        )

    blocks = build_context([m(1, 0.9), m(0, 0.8), m(3, 0.7), m(0, 0.6, "t")])
    assert [b.number for b in blocks] == [1, 2]
    assert blocks[0].body == "part 0\n\npart 1\n\n[…]\n\npart 3"
    assert blocks[0].text.count("[1]") == 1 and "A > s" in blocks[0].text
    assert blocks[1].body == "part 0"


def test_pipeline_request_groups_by_section(tmp_path: Path) -> None:
    with _long_section_index(tmp_path) as idx:
        matches = idx.retrieve(RetrievalRequest("reading a file into a string", k=4))
        keys = [(x.source, x.anchor) for x in matches]
        assert len(keys) == len(set(keys))
        raw = idx.retrieve(RetrievalRequest("reading a file into a string", k=8, group=None))
        assert len({(x.source, x.anchor) for x in raw}) < len(raw)
        varied = idx.retrieve(
            RetrievalRequest("reading a file into a string", k=8, group=None, mmr=0.3)
        )
        assert {x.id for x in varied} != {x.id for x in raw}


def test_bench_has_an_mmr_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    beir = tmp_path / "tiny"
    (beir / "qrels").mkdir(parents=True)
    docs = [
        {
            "_id": f"d{i}",
            "title": f"Doc {i}",
            "text": f"cells {'proliferate' if i % 2 else 'die'} in tissue {i}",
        }
        for i in range(12)
    ]
    (beir / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    (beir / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "cells proliferate"}) + "\n"
    )
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td3\t1\n")
    code, out = _cli(
        ["bench", "--beir", str(beir), "-m", "keyword", "--mmr", "0.5", "-k", "10"], capsys
    )
    assert code == 0, out
    header, plain, mmr = out.strip().splitlines()
    assert header.split(",")[:6] == ["dataset", "split", "provider", "model", "mode", "mmr"]
    assert plain.split(",")[4:6] == ["keyword", ""]
    assert mmr.split(",")[4:6] == ["keyword", "0.5"]


def test_records_without_markdown_keep_raw_text() -> None:
    packed = pack_records([{"id": "a", "text": "Use `x` <b>now</b>."}], None)
    assert packed.data is not None
    with load_bytes(packed.data) as idx:
        (hit,) = idx.search("now", k=1, mode="keyword")
        assert hit.plain is None and hit.snippet == "Use `x` <b>now</b>."
        assert hit.snippet_html() == "Use `x` &lt;b&gt;<mark>now</mark>&lt;/b&gt;."
