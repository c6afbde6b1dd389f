"""Includes expanded where they render (issue 40): pymdownx.snippets, mdBook, MDX partials.

Small sites built by the tests, packed for real: the included text is searchable where the page
shows it, line ranges and sections select what the generator selects, and every include that
cannot be read (missing, a loop, too big, outside the project, a URL) is dropped from the text
and counted in the pack summary, never read from outside the project.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scidx.index.index import load
from scidx.pack.chunk import chunk_markdown
from scidx.pack.frontmatter import normalize_source
from scidx.pack.includes import (
    MAX_INCLUDE_BYTES,
    expand_includes,
    include_settings,
    map_chunks,
    snippet_base_paths,
)
from scidx.pack.packer import pack_docs
from support.cli import run

# A snippet directive as pymdownx.snippets reads it (not the escaped `;--8<--` literal).
_SNIPPET_LINE = re.compile(r"^[ \t]*-+8<-+[ \t]+[\"']", re.MULTILINE)


def _site(tmp_path: Path, files: dict[str, str], config: dict[str, object]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "staticcorpus.json").write_text(
        json.dumps({"output": "out.scidx", **config}), encoding="utf-8"
    )
    return tmp_path / "staticcorpus.json"


MKDOCS_YML = """site_name: t
markdown_extensions:
  - admonition
  - pymdownx.snippets:
      base_path:
        - snips
        - .
  - pymdownx.superfences
"""


def _mkdocs_site(tmp_path: Path, page: str, **extra: str) -> Path:
    files = {
        "mkdocs.yml": MKDOCS_YML,
        "snips/example.py": "".join(f"line_{n} = {n}\n" for n in range(1, 11)),
        "snips/sections.py": (
            "import os\n# --8<-- [start:setup]\ndef setup_quokka():\n    return 1\n"
            "# --8<-- [end:setup]\nprint('rest')\n"
        ),
        "docs/index.md": page,
        **extra,
    }
    return _site(tmp_path, files, {"include": ["docs/**/*.md"]})


def test_snippet_base_paths_from_mkdocs_yml(tmp_path: Path) -> None:
    yml = tmp_path / "mkdocs.yml"
    assert snippet_base_paths(yml, MKDOCS_YML) == (str(tmp_path / "snips"), str(tmp_path))
    inline = "markdown_extensions:\n  - pymdownx.snippets:\n      base_path: [a, 'b/c']\n"
    assert snippet_base_paths(yml, inline) == (str(tmp_path / "a"), str(tmp_path / "b/c"))
    # Without the key, the folder `mkdocs build` runs in (the mkdocs.yml folder).
    assert snippet_base_paths(yml, "markdown_extensions:\n  - pymdownx.snippets\n") == (
        str(tmp_path),
    )


def test_snippets_with_line_ranges_sections_and_the_block_form(tmp_path: Path) -> None:
    page = (
        '# Guide\n\nIntro.\n\n```python\n--8<-- "example.py:3:4"\n```\n\n'
        '## Setup\n\n--8<-- "sections.py:setup"\n\n'
        "## Block\n\n    --8<--\n    example.py:9\n    example.py::1\n    --8<--\n\n"
        '## Literal\n\nWrite it as:\n\n;--8<-- "example.py"\n'
    )
    config = _mkdocs_site(tmp_path, page)
    result = pack_docs(config, use_cache=False)
    assert result.includes.unresolved == 0
    assert result.includes.resolved == 4
    with load(tmp_path / "out.scidx") as idx:
        by_anchor = {h.anchor: h for h in (idx.chunk(i) for i in range(len(idx)))}
    guide = by_anchor["guide"].text
    # Lines 3-4 only, inside the fence where the directive was.
    assert "```python\nline_3 = 3\nline_4 = 4\n```" in guide
    assert "line_2" not in guide and "line_5" not in guide
    setup = by_anchor["setup"].text
    assert "def setup_quokka():" in setup and "import os" not in setup and "[start:" not in setup
    # The block form: line 9 to the end, then lines 1 (``::1``), indented as the directive.
    assert "    line_9 = 9\n    line_10 = 10\n    line_1 = 1" in by_anchor["block"].text
    # `;--8<--` is the escaped literal: no include, left as the author wrote it.
    assert by_anchor["literal"].text == 'Write it as:\n\n;--8<-- "example.py"'
    for hit in by_anchor.values():
        assert not _SNIPPET_LINE.search(hit.text)
    with load(tmp_path / "out.scidx") as idx:
        hits = idx.search("setup_quokka", mode="keyword")
        assert [h.anchor for h in hits] == ["setup"]


def test_spans_point_at_the_original_lines(tmp_path: Path) -> None:
    page = '# T\n\n```python\n--8<-- "example.py"\n```\n\n## After\n\nText after.\n'
    _mkdocs_site(tmp_path, page)
    settings = include_settings(tmp_path.resolve(), "mkdocs")
    text = normalize_source(page)
    expanded = expand_includes(text, tmp_path / "docs" / "index.md", settings)
    assert expanded.text.count("\n") == text.count("\n") + 9  # ten lines instead of one
    chunks = map_chunks(chunk_markdown(expanded.text, "index.md"), expanded, text)
    after = next(c for c in chunks if c.anchor == "after")
    # The section is on lines 7-9 of the file, whatever the snippet above it added.
    assert (after.line_start, after.line_end) == (9, 9)
    assert text[after.char_start : after.char_end] == "Text after."
    first = chunks[0]
    assert (first.line_start, first.line_end) == (3, 5)
    assert "line_10 = 10" in first.text


def test_include_loops_are_dropped_and_counted(tmp_path: Path) -> None:
    page = '# T\n\nBefore.\n\n--8<-- "a.md"\n\n--8<-- "index.md"\n'
    config = _mkdocs_site(
        tmp_path,
        page,
        **{"snips/a.md": 'A text.\n\n--8<-- "b.md"\n', "snips/b.md": 'B text.\n--8<-- "a.md"\n'},
    )
    result = pack_docs(config, use_cache=False)
    # a -> b -> a is cut at the second a; the page including itself is refused (the page is
    # found beside itself, in the including file's folder).
    assert result.includes.resolved == 2
    assert result.includes.unresolved == 2
    assert any("an include loop" in e for e in result.includes.examples)
    with load(tmp_path / "out.scidx") as idx:
        text = idx.chunk(0).text
    assert text.count("A text.") == 1 and text.count("B text.") == 1
    assert not _SNIPPET_LINE.search(text)


def test_includes_outside_the_project_are_refused_never_read(tmp_path: Path) -> None:
    project = tmp_path / "project"
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-WORDS\n", encoding="utf-8")
    page = (
        '# T\n\n--8<-- "/etc/passwd"\n\n--8<-- "../../etc/passwd"\n\n--8<-- "../secret.txt"\n\n'
        '--8<-- "link.txt"\n\n--8<-- "https://example.com/x.md"\n\nKept.\n'
    )
    config = _mkdocs_site(project, page)
    (project / "snips" / "link.txt").symlink_to(secret)  # inside, but resolves outside
    result = pack_docs(config, use_cache=False)
    assert result.includes.resolved == 0
    assert result.includes.unresolved == 5
    reasons = " ".join(result.includes.examples)
    assert "an absolute path" in reasons and "outside the project root" in reasons
    assert "a URL; nothing is downloaded" in reasons
    with load(project / "out.scidx") as idx:
        text = idx.chunk(0).text
    assert "root:" not in text and "TOP-SECRET" not in text
    assert text.strip() == "Kept."


def test_huge_includes_are_refused(tmp_path: Path) -> None:
    big = "x = 1\n" * (MAX_INCLUDE_BYTES // 6 + 10)
    config = _mkdocs_site(tmp_path, '# T\n\n--8<-- "big.py"\n\nSmall.\n', **{"snips/big.py": big})
    result = pack_docs(config, use_cache=False)
    assert result.includes.unresolved == 1
    assert "larger than 1 MiB" in result.includes.examples[0]
    with load(tmp_path / "out.scidx") as idx:
        assert idx.chunk(0).text.strip() == "Small."


def test_cli_summary_and_json_count_unresolvable_includes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _mkdocs_site(tmp_path, '# T\n\n--8<-- "example.py:1:1"\n\n--8<-- "gone.md"\n')
    code, out, err = run(["pack-docs", "--config", str(config), "--no-cache"], capsys)
    assert code == 0, err
    assert "includes: 1 expanded, 1 unresolvable (dropped from the text)" in out
    assert 'dropped: docs/index.md line 5: --8<-- "gone.md" (not found)' in out
    code, out, err = run(["pack-docs", "--config", str(config), "--json", "--force"], capsys)
    assert code == 0, err
    assert json.loads(out)["includes"] == {
        "resolved": 1,
        "unresolved": 1,
        "examples": ['docs/index.md line 5: --8<-- "gone.md" (not found)'],
    }


def test_a_changed_included_file_makes_the_index_stale(tmp_path: Path) -> None:
    config = _mkdocs_site(tmp_path, '# T\n\n--8<-- "note.md"\n', **{"snips/note.md": "One.\n"})
    assert not pack_docs(config, use_cache=False).up_to_date
    assert pack_docs(config, use_cache=False).up_to_date
    (tmp_path / "snips" / "note.md").write_text("Two.\n", encoding="utf-8")
    again = pack_docs(config, use_cache=False)
    assert not again.up_to_date
    with load(tmp_path / "out.scidx") as idx:
        assert idx.chunk(0).text == "Two."


def test_mdbook_includes_with_anchors_and_ranges(tmp_path: Path) -> None:
    main_rs = (
        "fn main() {\n    // ANCHOR: here\n    let wombat = 5;\n    // ANCHOR_END: here\n"
        '    println!("{wombat}");\n}\n'
    )
    page = (
        "# Chapter\n\n```rust\n{{#rustdoc_include listings/main.rs:here}}\n```\n\n"
        "Line five: {{#include listings/main.rs:5}}\n\n"
        "```rust\n{{#include listings/main.rs::2}}\n{{#include listings/gone.rs}}\n```\n"
    )
    files = {"book.toml": '[book]\ntitle = "x"\n', "src/listings/main.rs": main_rs}
    config = _site(
        tmp_path, {**files, "src/ch1.md": page}, {"include": ["src/**/*.md"], "generator": "mdbook"}
    )
    result = pack_docs(config, use_cache=False)
    assert (result.includes.resolved, result.includes.unresolved) == (3, 1)
    with load(tmp_path / "out.scidx") as idx:
        text = idx.chunk(0).text
    assert "```rust\n    let wombat = 5;\n```" in text  # the anchor's lines, no ANCHOR lines
    assert 'Line five:     println!("{wombat}");' in text
    assert "```rust\nfn main() {\n\n```" in text  # lines 1-2, the anchor line removed
    assert "{{#" not in text


def test_docusaurus_partials_are_rendered_where_they_are_used(tmp_path: Path) -> None:
    files = {
        "docusaurus.config.js": "module.exports = {baseUrl: '/', url: 'https://x.org'};\n",
        "docs/_parts/_shared.md": (
            "---\ntitle: part\n---\n\nShared **numbat** words.\n\n"
            'import Inner from "./_inner.mdx";\n\n<Inner />\n'
        ),
        "docs/_parts/_inner.mdx": "Inner bilby words.\n",
        "docs/intro.mdx": (
            "# Intro\n\nimport Shared from './_parts/_shared.md';\n"
            "import Gone from './_parts/_gone.md';\nimport Button from '@site/src/Button';\n\n"
            "<Shared />\n\n<Gone />\n\n<Button />\n\n```jsx\n<Shared />\n```\n"
        ),
    }
    config = _site(tmp_path, files, {"include": ["docs/**/*.md*"], "exclude": ["**/_*"]})
    result = pack_docs(config, use_cache=False)
    assert (result.includes.resolved, result.includes.unresolved) == (2, 1)
    with load(tmp_path / "out.scidx") as idx:
        hits = idx.search("numbat bilby", mode="keyword")
        assert [h.source for h in hits] == ["docs/intro.mdx"]
        text = hits[0].text
    assert "Shared **numbat** words." in text and "Inner bilby words." in text
    assert "title: part" not in text  # the partial's front matter is not text
    assert "<Button />" in text  # a component, not a partial: left to the MDX rules
    assert "```jsx\n<Shared />\n```" in text  # code shows the tag, renders no partial


# -- the shared corpora --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("corpus", "generator"),
    [
        ("mkdocs-material-docs", "mkdocs"),
        ("fastapi-docs-en", "mkdocs"),
        ("openai-agents-python-docs-en", "mkdocs"),
        ("rust-book", "mdbook"),
    ],
)
def test_no_unresolved_include_line_in_any_chunk_of_the_shared_corpora(
    shared_dir: Path, corpus: str, generator: str
) -> None:
    root = (shared_dir / "corpora" / corpus).resolve()
    settings = include_settings(root, generator)
    unresolved = resolved = chunks = 0
    directive = _SNIPPET_LINE if generator == "mkdocs" else re.compile(r"\{\{#\w*include")
    for path in sorted(root.rglob("*.md")):
        text = normalize_source(path.read_text(encoding="utf-8"))
        expanded = expand_includes(text, path, settings)
        unresolved += expanded.unresolved
        resolved += expanded.resolved
        rel = path.relative_to(root).as_posix()
        for chunk in map_chunks(
            chunk_markdown(expanded.text, rel, generator=generator), expanded, text
        ):
            chunks += 1
            assert not directive.search(chunk.text), (rel, chunk.anchor)
            assert not directive.search(chunk.plain), (rel, chunk.anchor)
            assert 1 <= chunk.line_start <= chunk.line_end <= text.count("\n") + 1
    assert chunks > 50
    if corpus == "rust-book":
        # The subset kept no listings: every include is unresolvable, dropped and counted.
        assert unresolved > 500 and resolved == 0
    if os.environ.get("SCIDX_SHOW_INCLUDES"):
        print(corpus, chunks, resolved, unresolved)  # noqa: T201


_PIECES = [
    "# Title",
    "## Section",
    "text line",
    "```python",
    "```",
    '--8<-- "a.md"',
    '--8<-- "b.py:2:3"',
    '--8<-- "b.py:-1:x"',
    '--8<-- "../../etc/passwd"',
    '--8<-- "self.md"',
    "--8<--",
    "a.md",
    ';--8<-- "a.md"',
    "{{#include b.py:2}}",
    "import P from './a.md';",
    "<P />",
    "    indented",
    "",
]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.sampled_from(_PIECES), max_size=30),
    generator=st.sampled_from(["mkdocs", "mdbook", "docusaurus"]),
)
def test_any_mix_of_directives_expands_with_spans_inside_the_page(
    tmp_path: Path, lines: list[str], generator: str
) -> None:
    # No error, no loop, and every chunk's spans inside the page, whatever the directives.
    root = tmp_path.resolve()
    (root / "a.md").write_text('Included A.\n--8<-- "self.md"\n<P />\n', encoding="utf-8")
    (root / "b.py").write_text("one\ntwo\nthree\n", encoding="utf-8")
    text = normalize_source("\n".join(lines))
    page = root / "self.md"
    page.write_text(text, encoding="utf-8")
    settings_ = include_settings(root, generator)
    expanded = expand_includes(text, page, settings_)
    chunks = map_chunks(
        chunk_markdown(expanded.text, "self.md", generator=generator), expanded, text
    )
    count = text.count("\n") + 1
    for chunk in chunks:
        assert 0 <= chunk.char_start <= chunk.char_end <= len(text)
        assert 1 <= chunk.line_start <= chunk.line_end <= count
    assert not any("passwd" in name for name in expanded.files)
