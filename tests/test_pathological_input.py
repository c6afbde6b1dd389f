"""Packing memory follows a Markdown file's lines, so their number is bounded (issue 39 K3).

markdown-it makes a few Python objects per line (a table row: eight tokens), so 2.8 M short
lines (13.7 MiB) took 84 s and 2.0 GB. Files over ``MAX_INPUT_LINES`` are refused (exit 1,
naming the file and the limit) before markdown-it sees them; below it, peak memory per line is
bounded (measured here on a small file, at the limit in benchmarks/bench_pathological.py).
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scidx.pack.sources import MAX_INPUT_LINES
from support.cli import run


def _project(root: Path, body: bytes) -> Path:
    (root / "docs").mkdir()
    (root / "docs" / "ok.md").write_text("# Fine\n\nA normal page.\n")
    (root / "docs" / "short.md").write_bytes(body)
    cfg = root / "staticcorpus.json"
    cfg.write_text(json.dumps({"include": ["docs/*.md"], "output": "out.scidx"}))
    return cfg


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_a_file_over_the_line_limit_is_refused_with_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], newline: bytes
) -> None:
    cfg = _project(tmp_path, (b"k: v" + newline) * (MAX_INPUT_LINES + 1))
    code, _, err = run(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 1, err
    assert (
        f"input file docs/short.md has {MAX_INPUT_LINES + 1:,} lines, more than "
        f"{MAX_INPUT_LINES:,}, the limit for one Markdown page" in err
    )
    assert not (tmp_path / "out.scidx").exists()


def test_a_file_at_the_line_limit_is_read(tmp_path: Path) -> None:
    from scidx.pack.sources import check_line_count

    check_line_count(b"k: v\n" * MAX_INPUT_LINES, "a.md")
    check_line_count(b"k: v\n" * (MAX_INPUT_LINES - 1) + b"k: v", "a.md")


_SHAPES = {
    "short": "k: v\n" * 3_000,
    "table": "|a|b|\n|-|-|\n" + "|c|d|\n" * 2_998,
}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_chunking_memory_per_line_is_bounded(shape: str) -> None:
    """3,000 lines of the worst shapes (tracemalloc is slow); at the limit, under 400 MiB."""
    from scidx.pack.chunk import chunk_markdown

    doc = _SHAPES[shape]
    tracemalloc.start()
    try:
        chunks = chunk_markdown(doc, "p.md")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(chunks) > 5
    per_line = peak / doc.count("\n")
    assert 100 < per_line and per_line * MAX_INPUT_LINES < 400 << 20, (shape, per_line)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("ab:# \t\n.-=|>~$%é")), max_size=60))
def test_line_only_inline_content_reads_as_markdown_it_parses_it(content: str) -> None:
    """The no-token path for content whose only inline special is a line break is exact."""
    from scidx.pack import cleantext
    from scidx.pack.markdown import TEXT_TYPES, markdown_parser

    md = markdown_parser()
    children: list[Any] = []
    md.inline.parse(content, md, {}, children)
    want = "".join(
        c.content if c.type in TEXT_TYPES else "\n"
        for c in children
        if c.type in TEXT_TYPES or c.type in ("softbreak", "hardbreak")
    )
    assert cleantext._inline_plain(content, md, {}) == want
