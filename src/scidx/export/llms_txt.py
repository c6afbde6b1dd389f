"""``llms.txt`` and ``llms-full.txt`` (https://llmstxt.org) written from an index alone.

* ``llms.txt``: ``# title``, a ``> summary`` line, then one ``## folder`` section per top-level
  folder of the site (``Docs`` for pages at its root), each a list of pages
  ``- [Page title](url): first sentence`` with the page's sections as nested links.
* ``llms-full.txt``: every page's clean text (``chunk.plain``), pages in the same order, each
  under ``# Page title`` and a ``Source: url`` line, sections under ``##``/``###`` headings,
  parts of one section joined (no repeated heading), code blocks fenced.

Both are deterministic: pages sorted by source path, sections in document order (``chunk.span``),
no dates or absolute paths. Nothing is parsed as Markdown: the index's clean text is used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from scidx.errors import CorruptIndexError
from scidx.index.columns import read_column
from scidx.index.format import Header, array_view, read_header, read_string_table
from scidx.index.highlight import CODE_END, CODE_START
from scidx.index.ids import read_chunk_ids
from scidx.index.texts import open_texts, text_columns
from scidx.index.urls import page_problem, render_url, url_parts
from scidx.pack.fileio import atomic_write

__all__ = ["LlmsTxt", "build_llms_txt", "write_llms_txt"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_DESCRIPTION_CHARS = 200
_SUMMARY_CHARS = 300


@dataclass
class _Section:
    anchor: str
    heading_path: list[str]
    start: int
    parts: list[tuple[int, str]] = field(default_factory=list)  # (ordinal, clean text)


@dataclass
class _Page:
    source: str
    title: str
    sections: list[_Section]
    page: str | None = None  # the stored page path (source.page), if the index has them


@dataclass(frozen=True)
class LlmsTxt:
    """The two files' contents.

    Attributes:
        index: The text of ``llms.txt``.
        full: The text of ``llms-full.txt``.
    """

    index: str
    full: str


def _pages(path: Path) -> tuple[list[_Page], str | None, str | None]:
    data = path.read_bytes()
    header = read_header(data, source=str(path), file_size=len(data))
    ids = read_chunk_ids(data, header)
    markdown, clean = text_columns(open_texts(data, header, len(ids)))
    texts = clean if clean is not None else markdown
    headings = read_column(data, header, "chunk.heading", len(ids))
    anchors = read_column(data, header, "chunk.anchor", len(ids))
    paths = read_string_table(data, header, "source.path")
    titles = read_string_table(data, header, "source.title")
    rows = array_view(data, header, "chunk.source", dtype=("<u2", "<u4"), ndim=1)
    ordinals = array_view(data, header, "chunk.ordinal", dtype=("<u2", "<u4"), ndim=1)
    spans = array_view(data, header, "chunk.span", ndim=2)
    if spans.dtype.kind != "u":
        raise CorruptIndexError(
            f"{path}: array `chunk.span` has dtype {spans.dtype.str}; rebuild the index"
        )
    n = len(ids)
    if rows.shape[0] != n or ordinals.shape[0] != n or spans.shape[0] != n:
        raise CorruptIndexError(f"{path}: the chunk arrays disagree in length; rebuild the index")
    if len(titles) != len(paths):
        raise CorruptIndexError(
            f"{path}: string table `source.title` has {len(titles)} rows but `source.path` has "
            f"{len(paths)}; rebuild the index"
        )
    by_source: dict[int, dict[str, _Section]] = {}
    for i in range(n):
        row = int(rows[i])
        if row >= len(paths):
            raise CorruptIndexError(f"{path}: chunk {i} points past the sources; rebuild it")
        sections = by_source.setdefault(row, {})
        anchor = anchors[i]
        section = sections.get(anchor)
        start = int(spans[i][0])
        if section is None:
            heading = headings[i]
            section = _Section(anchor, heading.split("\x1f") if heading else [], start)
            sections[anchor] = section
        section.start = min(section.start, start)
        section.parts.append((int(ordinals[i]), texts[i]))
    stored = _stored_pages(path, data, header, len(paths))
    pages = []
    for row in sorted(by_source, key=lambda r: paths[r].encode("utf-8")):
        ordered = sorted(by_source[row].values(), key=lambda s: (s.start, s.anchor))
        for item in ordered:
            item.parts.sort()
        page = stored[row] if stored is not None else None
        pages.append(_Page(paths[row], titles[row], ordered, page))
    template = header.meta.get("urlTemplate")
    root = header.meta.get("sourceRoot")
    return (
        pages,
        template if isinstance(template, str) else None,
        root if isinstance(root, str) else None,
    )


def _stored_pages(path: Path, data: bytes, header: Header, n_sources: int) -> list[str] | None:
    """The ``source.page`` rows (FORMAT.md §2.3), each checked, or None without the table."""
    if not {"source.page.offsets", "source.page.data", "source.page.zdata"} & set(header.arrays):
        return None
    table = read_string_table(data, header, "source.page")
    if len(table) != n_sources:
        raise CorruptIndexError(f"{path}: `source.page` has {len(table)} rows; rebuild the index")
    values = [table[i] for i in range(n_sources)]
    for row, value in enumerate(values):
        problem = page_problem(value)
        if problem:
            raise CorruptIndexError(f"{path}: `source.page` row {row} {problem}; rebuild it")
    return values


def _first_sentence(text: str, limit: int) -> str:
    prose = _prose(text).split("\n\n", 1)[0]
    flat = " ".join(prose.split())
    match = _SENTENCE_END.search(flat)
    if match is not None:
        flat = flat[: match.start()]
    if len(flat) > limit:
        flat = flat[: limit - 1].rsplit(" ", 1)[0] + "…"
    return flat


def _prose(text: str) -> str:
    # Code blocks say little about a page: a description takes the first prose block.
    out: list[str] = []
    for block in text.split("\n\n"):
        if block.startswith(CODE_START) or not block.strip():
            continue
        out.append(block)
    return "\n\n".join(out)


def _fenced(text: str) -> str:
    """Clean text with code blocks as Markdown fences (a fence longer than any backtick run)."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find(CODE_START, pos)
        if start == -1:
            out.append(text[pos:])
            break
        end = text.find(CODE_END, start)
        end = len(text) if end == -1 else end
        out.append(text[pos:start])
        code = text[start + 1 : end]
        longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
        fence = "`" * max(3, longest + 1)
        out.append(f"{fence}\n{code}\n{fence}")
        pos = end + 1
    return "".join(out)


def _link_text(text: str) -> str:
    # Brackets would end the link text early; a newline would break the list item.
    return " ".join(text.replace("[", "(").replace("]", ")").split())


def _url(template: str | None, root: str | None, page: _Page, anchor: str) -> str:
    source = page.source
    url = render_url(template, source, anchor, root, page.page)
    if url is not None:
        return url
    # No template (or a page outside sourceRoot): a link relative to the docs' own files.
    return f"{source}#{anchor}" if anchor else source


def _page_name(page: _Page) -> str:
    # A page without an H1 or front-matter title (mdBook chapters start at "##") is named by
    # its first heading.
    if page.title:
        return page.title
    first = next((s.heading_path[0] for s in page.sections if s.heading_path), "")
    return first or page.source


def _group(source: str, root: str | None) -> str:
    parts = url_parts(source, root)
    rel = parts["source"] if parts is not None else source
    folder, _, _ = rel.partition("/")
    return folder if "/" in rel else ""


def build_llms_txt(
    index: str | Path, *, title: str | None = None, summary: str | None = None
) -> LlmsTxt:
    """Build ``llms.txt`` and ``llms-full.txt`` from an index.

    Args:
        index: The ``.scidx`` file.
        title: The H1 of ``llms.txt``; default the title of the site's front page (an
            ``index``/``README`` page at the top of ``sourceRoot``), else the index's file name.
        summary: The ``>`` line; default the first sentence of the front page.

    Returns:
        Both texts.

    Raises:
        IndexFormatError: The index is not a valid ``.scidx`` file.
        OSError: It cannot be read.
    """
    path = Path(index)
    pages, template, root = _pages(path)
    front = next(
        (
            p
            for p in pages
            if (parts := url_parts(p.source, root, p.page)) is not None and parts["page"] == ""
        ),
        None,
    )
    front_text = ""
    if front is not None:
        front_text = next((t for s in front.sections for _, t in s.parts if _prose(t)), "")
    name = title or (front.title if front is not None and front.title else "") or path.stem
    lines = [f"# {_link_text(name)}", ""]
    blurb = summary if summary is not None else _first_sentence(front_text, _SUMMARY_CHARS)
    if blurb:
        lines += [f"> {' '.join(blurb.split())}", ""]
    groups: dict[str, list[_Page]] = {}
    for page in pages:
        groups.setdefault(_group(page.source, root), []).append(page)
    for group in sorted(groups, key=lambda g: (g != "", g)):
        lines += [f"## {_link_text(group) or 'Docs'}", ""]
        for page in groups[group]:
            first = page.sections[0] if page.sections else None
            page_url = _url(template, root, page, "")
            text = next((t for s in page.sections for _, t in s.parts if _prose(t)), "")
            description = _first_sentence(text, _DESCRIPTION_CHARS)
            label = _link_text(_page_name(page))
            lines.append(f"- [{label}]({page_url})" + (f": {description}" if description else ""))
            for section in page.sections:
                if not section.anchor or (first is section and len(section.heading_path) <= 1):
                    continue  # the page link already points at its top
                heading = _link_text(section.heading_path[-1] if section.heading_path else "")
                url = _url(template, root, page, section.anchor)
                lines.append(f"  - [{heading or section.anchor}]({url})")
        lines.append("")
    full: list[str] = []
    for page in pages:
        full += [f"# {_link_text(_page_name(page))}", ""]
        full += [f"Source: {_url(template, root, page, '')}", ""]
        for section in page.sections:
            depth = len(section.heading_path)
            if section.anchor and depth >= 2:
                heading = " ".join(section.heading_path[-1].split())
                full += [f"{'#' * min(depth, 6)} {heading}", ""]
            body = "\n\n".join(_fenced(t) for _, t in section.parts if t.strip())
            if body:
                full += [body.strip("\n"), ""]
    return LlmsTxt("\n".join(lines).rstrip("\n") + "\n", "\n".join(full).rstrip("\n") + "\n")


def write_llms_txt(
    index: str | Path,
    out_dir: str | Path,
    *,
    title: str | None = None,
    summary: str | None = None,
) -> tuple[Path, Path]:
    """Write ``llms.txt`` and ``llms-full.txt`` into ``out_dir`` (atomically, UTF-8).

    Args:
        index: The ``.scidx`` file.
        out_dir: The folder to write into (created if missing).
        title: As for :func:`build_llms_txt`.
        summary: As for :func:`build_llms_txt`.

    Returns:
        The two paths written.

    Raises:
        IndexFormatError: The index is not valid.
        OutputError: A file could not be written.
    """
    texts = build_llms_txt(index, title=title, summary=summary)
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (("llms.txt", texts.index), ("llms-full.txt", texts.full)):
        target = folder / name
        data = text.encode("utf-8")
        atomic_write(target, lambda fh, data=data: fh.write(data))  # type: ignore[misc]
        written.append(target)
    return written[0], written[1]
