"""Clean text (``Chunk.plain``, ``chunk.plain``) and ``llms.txt`` written from an index."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scidx.export.llms_txt import build_llms_txt, write_llms_txt
from scidx.index.format import read_header
from scidx.index.highlight import CODE_END, CODE_START
from scidx.index.texts import open_texts, text_columns
from scidx.pack.chunk import chunk_markdown
from scidx.pack.cleantext import plain_text
from scidx.pack.packer import pack_docs, pack_records

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        ("Some *em*, **strong** and _under_ text.", "Some em, strong and under text."),
        (
            "See [the guide](https://x.org/g 'title') and <https://x.org>.",
            "See the guide and https://x.org.",
        ),
        ("An ![alt *text*](i.png) image.", "An alt text image."),
        ("Run `pip install x` now.", "Run pip install x now."),
        ("Escaped \\*star\\* and &amp; entity.", "Escaped *star* and & entity."),
        ("Before <!-- a comment --> after.", "Before  after."),
        ("<!-- a\nblock comment -->\n\nText.", "Text."),
        ('<Listing number="9-9" file-name="src/main.rs">\n\nText.\n\n</Listing>', "Text."),
        ("<p>Inline <b>html</b> block</p>", "Inline html block"),
        ("A <span class='x'>span</span> inline.", "A span inline."),
        ("```rust\n{{#include ../listings/x.rs:here}}\n```\n\nProse.", "Prose."),
        ("```toml\n[[source]]\npath = 'a'\n```", f"{CODE_START}[[source]]\npath = 'a'{CODE_END}"),
        ("    indented code\n", f"{CODE_START}indented code{CODE_END}"),
        ("{{#include ../x.md}}\n\nText.", "Text."),
        ('A {{< glossary_tooltip text="Pod" term_id="pod" >}} runs.', "A Pod runs."),
        ("{{< note >}}\nBe careful.\n{{< /note >}}", "Be careful."),
        ("{* ../../docs_src/first_steps/tutorial001.py hl[1] *}\n\nText.", "Text."),
        ("#### Nginx log format {#nginx}\n\nBody.", "Nginx log format\n\nBody."),
        ("- one\n- two\n\n1. three", "one\ntwo\n\nthree"),
        ("| a | b |\n|---|---|\n| 1 | `2` |", "a\tb\n1\t2"),
        ("Use [ref] here.\n\n[ref]: https://x.org", "Use ref here."),
        ("Bell \x07 and \x02 controls.", "Bell  and  controls."),
    ],
)
def test_plain_text(markdown: str, plain: str) -> None:
    assert plain_text(markdown) == plain


def test_chunk_plain_belongs_to_its_part() -> None:
    doc = "# T\n\nIntro [link](u).\n\n## A\n\nFirst *part*.\n\n```sh\necho hi\n```\n\n## B\n"
    chunks = {c.anchor: c for c in chunk_markdown(doc, "a.md")}
    assert chunks["t"].plain == "Intro link."
    assert chunks["a"].plain == f"First part.\n\n{CODE_START}echo hi{CODE_END}"
    assert "b" not in chunks  # a heading with nothing under it is no result
    # A split section: every part has the clean text of its own blocks only.
    long = "## S\n\n" + "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(6))
    parts = chunk_markdown(long, "b.md", max_chunk_chars=600)
    assert len(parts) > 1
    joined = "\n\n".join(p.plain for p in parts)
    assert joined == plain_text(long.split("\n", 2)[2])


def test_rust_book_chunks_index_no_markup(shared_dir: Path) -> None:
    path = (
        shared_dir / "corpora" / "rust-book" / "src" / "ch09-02-recoverable-errors-with-result.md"
    )
    chunks = chunk_markdown(path.read_text(encoding="utf-8"), "ch09-02.md")
    raw = "\n".join(c.text for c in chunks)
    # Code blocks are code (a backtick in compiler output is content): check the prose.
    plain = re.sub(f"{CODE_START}.*?{CODE_END}", "", "\n".join(c.plain for c in chunks), flags=re.S)
    for markup in ("<Listing", "{{#include", "{{#rustdoc_include", "<!--", "]: ../", "`"):
        assert markup in raw
        assert markup not in plain


def test_index_stores_plain_only_when_it_differs(tmp_path: Path) -> None:
    plain = pack_records([{"id": "a", "text": "just words"}], None)
    assert plain.data is not None
    header = read_header(plain.data)
    assert header.arrays["text.len"].shape == (1, 1)  # the record is the text alone
    assert header.meta["packer"] == "scidx-pack-21"
    cfg = _example_config(tmp_path)
    pack_docs(cfg, use_cache=False)
    data = (tmp_path / "example.scidx").read_bytes()
    header = read_header(data)
    texts, cleans = text_columns(open_texts(data, header, header.arrays["text.ptr"].shape[0] - 1))
    assert cleans is not None
    assert len(cleans) == len(texts)
    assert any("`" in texts[i] for i in range(len(texts)))
    assert not any("`" in cleans[i] for i in range(len(cleans)))
    assert header.meta["sourceRoot"] == "fixtures/docs"


def _example_config(tmp_path: Path) -> Path:
    cfg = json.loads((ROOT / "staticcorpus.example.json").read_text())
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures", target_is_directory=True)
    cfg["output"] = "example.scidx"
    cfg["sourceRoot"] = "fixtures/docs"
    cfg["allowExternalSymlinks"] = True  # the fixtures are linked in from the checkout
    cfg["urlTemplate"] = "https://kelpie.example.org/{page}#{anchor}"
    path = tmp_path / "staticcorpus.json"
    path.write_text(json.dumps(cfg))
    return path


def test_llms_txt_from_the_example_index(tmp_path: Path) -> None:
    pack_docs(_example_config(tmp_path), use_cache=False)
    index = tmp_path / "example.scidx"
    first = build_llms_txt(index, title="Kelpie")
    assert first == build_llms_txt(index, title="Kelpie")  # deterministic
    lines = first.index.splitlines()
    assert lines[0] == "# Kelpie"
    assert lines[2].startswith("> ")
    assert "## Docs" in lines
    assert "- [Installing Kelpie](https://kelpie.example.org/installation/): " in "\n".join(lines)
    assert "  - [Linux](https://kelpie.example.org/installation/#linux)" in lines
    assert first.full.startswith("# ")
    assert "Source: https://kelpie.example.org/installation/" in first.full
    assert "```\n" in first.full and CODE_START not in first.full
    short, full = write_llms_txt(index, tmp_path / "site", title="Kelpie")
    assert short.read_text(encoding="utf-8") == first.index
    assert full.read_text(encoding="utf-8") == first.full


def test_parts_of_a_paragraph_split_inside_have_their_own_clean_text() -> None:
    sentence = "The *kelpie* agent ships logs to a bucket. "
    doc = "## Long\n\n" + sentence * 60 + "\n"
    parts = chunk_markdown(doc, "a.md", max_chunk_chars=400)
    assert len(parts) > 2
    for part in parts:
        assert part.plain and "*" not in part.plain
        assert len(part.plain) <= len(part.text)
