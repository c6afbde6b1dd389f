"""Markdown → :class:`Chunk` list: one chunk per H1/H2/H3 section, split to a size budget.

Contract (see ``docs/ARCHITECTURE.md``):

* Input is an already-decoded ``str``; :func:`chunk_markdown` never raises on any text (bad
  *arguments* raise :class:`~scidx.errors.ConfigError`). Pure: no I/O, no global state besides a
  cached parser, and deterministic for identical inputs.
* The text is first normalised by :func:`normalize_source` (leading BOM stripped, CRLF and lone
  CR turned into LF). Every span (``char_start``/``char_end``, ``line_start``/``line_end``) refers
  to that normalised text, and ``chunk.text == normalized[chunk.char_start:chunk.char_end]``.
* Structure comes from markdown-it-py's CommonMark block parser (plus GFM tables); sections are
  sliced out of the source by the tokens' line maps, never found with regexes, so headings in
  fenced code, HTML blocks or comments are not headings.

Decisions where Markdown leaves room:

* **Generators.** The body is first rewritten line for line by the generator's flavour
  (:mod:`scidx.pack.flavours`: admonitions, tabs, MDX, MyST directives, ... become CommonMark
  prose); the parse reads the rewrite, spans and ``text`` stay the author's Markdown.
* **Sections.** Top-level H1, H2 and H3 headings start sections; H4-H6 stay in the enclosing
  section. A chunk's ``heading_path`` ends with its own heading: an H2 chunk has ``(H1, H2)``,
  the H1 chunk (the "intro") has ``(H1,)``. A section with no clean text (a heading followed
  directly by a subheading, or by nothing but comments or build instructions) is no chunk of
  its own; its heading stays in the paths of its own subsections only (it is their open
  ancestor), never in a later sibling's. A part with no clean text joins its neighbour part.
  No chunk has empty clean text.
* **Text before the first heading** becomes a chunk with anchor ``""`` and heading path
  ``(front-matter title,)`` or ``()``, but only if it is not blank.
* **Level jumps.** An H3 directly under an H1 has path ``(H1, H3)``; an H2 clears the open H3;
  a later H1 replaces the top ancestor and clears both. The front-matter ``title`` is the top
  ancestor until the first H1 is seen. It never gets an anchor of its own (the rendered page
  has no heading element for it).
* **Anchors.** Every heading of the document (all levels, including headings nested in
  blockquotes or lists) passes through one slugger in order, so duplicate numbering matches the
  rendered page. A trailing ``{#custom-id}`` (also ``{: #id}`` / ``{#id .class}``) is removed
  from the heading text and used as the anchor; it is registered with the slugger so later
  duplicates are numbered around it (a repeated custom id is de-duplicated the same way).
  Heading text is the rendered plain text: text and inline-code content, no markup, no image
  alt text; line breaks become spaces.
* **Title.** The front-matter ``title`` (as the generators title a page), else the first
  top-level H1, else the first top-level heading, else the humanised file name
  (:func:`humanised_name`): never a path.
* **Front matter.** YAML (``---`` ... ``---``/``...``) or TOML (``+++`` ... ``+++``) is
  recognised only on the very first line and only when it is closed; it is never chunk text.
  Its top-level scalar fields become ``metadata`` (all values as strings).
* **Budget.** A section whose trimmed body is longer than ``max_chunk_chars`` is split between
  top-level blocks (paragraph, fence, list, table, blockquote, HTML block, ...) by greedy packing;
  a list that alone is over budget is split between its items. A block (or list item) larger than
  the budget is emitted whole. An H4-H6 heading stays with the block that follows it. Parts share
  the section's heading path and anchor and are numbered by ``ordinal`` 0..n.
* **Whitespace.** Chunk text is the section body without its heading line(s) and without the
  leading/trailing blank lines; an empty chunk has ``char_start == char_end`` at the end of its
  heading and ``line_start == line_end ==`` the heading's last line.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import Literal, NamedTuple

from markdown_it.token import Token

from scidx.errors import ConfigError
from scidx.index.highlight import CODE_END, CODE_START
from scidx.index.ids import derived_id
from scidx.pack.cleantext import Leaf, join_leaves, plain_leaves, plain_text
from scidx.pack.flavours import flavour_for, rewrite
from scidx.pack.frontmatter import Metadata, normalize_source, parse_front_matter
from scidx.pack.markdown import Block, Heading, markdown_parser, scan_blocks
from scidx.pack.slug import GithubSlugger, MkdocsSlugger, make_slugger

__all__ = ["CHUNKER_VERSION", "HARD_LIMIT_FACTOR", "Chunk", "chunk_markdown", "humanised_name"]

#: Bump whenever the same input could produce different chunks (stored in the index header).
#: 2: a paragraph over the budget (or any block over HARD_LIMIT_FACTOR times it) is split inside.
#: 3: chunks carry their clean text (:attr:`Chunk.plain`).
#: 4: NUL in front matter (raw or a ``"\0"`` escape) becomes U+FFFD, as in bodies.
#: 5: generator flavours (:mod:`scidx.pack.flavours`); sections with no clean text fold into
#: the next section's heading path; titles are front matter, heading, else the file name;
#: MkDocs headings lose a trailing attribute list (``{ id="x" }`` sets the anchor).
#: 6: an empty section's heading no longer joins later siblings' heading paths; includes
#: (``--8<--``, ``{{#include}}``, MDX partials) are expanded where they render; MDX inline
#: code keeps JSX tags with attributes.
CHUNKER_VERSION = "scidx-chunk-6"

_EMPTY_METADATA = Metadata()


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of a Markdown file: a section (or part of one) with its location.

    Attributes:
        source: path relative to the config root, ``/`` separators.
        heading_path: plain text of the ancestor headings H1 > H2 > H3, ending with the chunk's
            own heading (the H1 may be the front-matter title).
        anchor: slug of the chunk's own heading (``""`` for text before any heading).
        ordinal: 0..n for successive parts of one section.
        text: raw Markdown of the section body (heading line and front matter excluded).
        char_start: start offset in the normalised source (see :func:`normalize_source`).
        char_end: end offset (exclusive) in the normalised source.
        line_start: first line, 1-based, inclusive.
        line_end: last line, 1-based, inclusive.
        title: the document title (front-matter title, else H1, else first heading, else the
            humanised file name).
        metadata: front-matter scalar fields as strings, shared by all chunks of a file.
        plain: the clean text of ``text`` (see :func:`plain_text`): what snippets show and what
            BM25 and the embedder read.
    """

    source: str
    heading_path: tuple[str, ...]
    anchor: str
    ordinal: int
    text: str
    char_start: int
    char_end: int
    line_start: int
    line_end: int
    title: str = ""
    metadata: Mapping[str, str] = _EMPTY_METADATA
    plain: str = ""

    def __post_init__(self) -> None:
        # Accept a plain dict from callers but store an immutable, hashable mapping so the
        # frozen dataclass stays hashable and no caller can mutate a shared instance.
        if not isinstance(self.metadata, Metadata):
            object.__setattr__(self, "metadata", Metadata(self.metadata))

    @property
    def id(self) -> str:
        """The chunk id ``{source}:{anchor}:{ordinal}``, unique within an index."""
        return derived_id(self.source, self.anchor, self.ordinal)


class _Lines:
    """Line ↔ offset arithmetic over the normalised text."""

    __slots__ = ("count", "starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        # starts[i] is the offset of line i; starts[count] == len(text) + 1 (virtual newline).
        self.starts = [0, *accumulate(len(line) + 1 for line in text.split("\n"))]
        self.count = len(self.starts) - 1

    def start(self, line: int) -> int:
        """Offset of the start of 0-based ``line`` (``len(text)`` past the last line)."""
        return self.starts[line] if line < self.count else len(self.text)

    def end(self, line: int) -> int:
        """Offset of the end of 0-based ``line``, excluding its newline."""
        return self.starts[line + 1] - 1 if line + 1 < self.count else len(self.text)

    def line_of(self, offset: int) -> int:
        """0-based line containing ``offset``."""
        return bisect.bisect_right(self.starts, offset) - 1


def _trim(lines: _Lines, start_line: int, end_line: int) -> tuple[int, int] | None:
    """Char span of lines [start_line, end_line) without leading/trailing blank lines."""
    text = lines.text
    lo = lines.start(start_line)
    hi = lines.start(end_line)
    if hi > lo and hi <= len(text) and text[hi - 1] == "\n":
        hi -= 1
    segment = text[lo:hi]
    stripped = segment.lstrip()
    if not stripped:
        return None
    first = lo + (len(segment) - len(stripped))
    last = lo + len(segment.rstrip())  # exclusive end of the last non-space char
    prev_nl = text.rfind("\n", lo, first)
    begin = lo if prev_nl == -1 else prev_nl + 1
    nl = text.find("\n", last, hi)
    finish = hi if nl == -1 else nl
    return begin, finish


class _Section(NamedTuple):
    path: tuple[str, ...]
    anchor: str
    heading_end_line: int  # 0-based line index of the heading's last line, -1 for no heading
    body_start: int  # first body line
    body_end: int  # line after the body


def _cuts(
    blocks: list[Block], block_starts: list[int], first: int, end: int, budget: int, lines: _Lines
) -> list[int]:
    """Lines inside (first, end) where a part may begin: block starts and big lists' items."""
    lo = bisect.bisect_left(block_starts, first)
    hi = bisect.bisect_left(block_starts, end)
    cuts: list[int] = []
    for k in range(lo, hi):
        block = blocks[k]
        # An H4-H6 heading must not end a part: never cut right after it.
        if block.start > first and not (k > lo and blocks[k - 1].sticky):
            cuts.append(block.start)
        if block.items:
            list_end = min(block_starts[k + 1] if k + 1 < len(block_starts) else end, end)
            if lines.start(list_end) - lines.start(block.start) > budget:
                cuts.extend(item for item in block.items[1:] if first < item < end)
    return sorted(set(cuts))


_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

HARD_LIMIT_FACTOR = 4
"""A code block, table or list item is kept whole up to this many times ``maxChunkChars``;
beyond that, and for any paragraph over ``maxChunkChars``, the text is split inside the block
(:func:`_split_long`), so no chunk is longer than ``HARD_LIMIT_FACTOR * maxChunkChars``."""

# Where a long block may be cut, best first: after a sentence end, at a line break, at a space.
_SENTENCE_END = re.compile(r"[.!?。！？][\"')\]]*\s")


def _split_long(text: str, lo: int, hi: int, budget: int) -> list[tuple[int, int]]:
    """Cut ``text[lo:hi]`` into spans of at most ``budget`` characters (linear time).

    Each cut is the last sentence end in the window, else its last line break, else its last
    space, else the window's end (a hard cut); whitespace at a cut belongs to no span.
    """
    out: list[tuple[int, int]] = []
    pos = lo
    while pos < hi:
        while pos < hi and text[pos].isspace():
            pos += 1
        if pos >= hi:
            break
        if hi - pos <= budget:
            out.append((pos, hi))
            break
        window_end = pos + budget
        cut = -1
        # Sentence ends in the second half of the window only, so parts do not get tiny.
        for match in _SENTENCE_END.finditer(text, pos + budget // 2, window_end + 1):
            cut = match.end() - 1
        if cut < 0:
            nl = text.rfind("\n", pos + 1, window_end + 1)
            cut = nl if nl > pos else text.rfind(" ", pos + 1, window_end + 1)
        if cut <= pos:
            cut = window_end
        end = cut
        while end > pos and text[end - 1].isspace():
            end -= 1
        out.append((pos, end))
        pos = cut
    return out


def _emit(
    out: list[Chunk],
    section: _Section,
    lines: _Lines,
    blocks: list[Block],
    block_starts: list[int],
    budget: int,
    source: str,
    title: str,
    metadata: Metadata,
    leaves: list[Leaf],
    leaf_lines: list[int],
    reread: Callable[[int, int, int, int], str],
) -> None:
    text = lines.text
    span = _trim(lines, section.body_start, section.body_end)

    def make(ordinal: int, lo: int, hi: int, line_lo: int, line_hi: int) -> Chunk:
        # Parts are cut between blocks, so a block belongs to the part holding its first line.
        first = bisect.bisect_left(leaf_lines, line_lo)
        last = bisect.bisect_right(leaf_lines, line_hi)
        plain = ""
        if hi > lo and first < last:
            # A part cut inside a block (a paragraph over the budget) cannot take whole
            # blocks: its clean text comes from its own Markdown.
            whole = (
                leaf_lines[first] == line_lo
                and leaves[last - 1].end <= line_hi + 1
                and not text[lines.start(line_lo) : lo].strip()
                and not text[hi : lines.end(line_hi)].strip()
            )
            plain = join_leaves(leaves[first:last]) if whole else reread(lo, hi, line_lo, line_hi)
        elif hi > lo and first > 0 and leaves[first - 1].end > line_hi:
            # Inside one block that began in an earlier part (a code block over the hard
            # limit): the part is that block's kind of text.
            inner = _CONTROLS.sub("", text[lo:hi])  # keep CODE_START/CODE_END unambiguous
            code = leaves[first - 1].kind == "code"
            plain = f"{CODE_START}{inner}{CODE_END}" if code else reread(lo, hi, line_lo, line_hi)
        return Chunk(
            source=source,
            heading_path=section.path,
            anchor=section.anchor,
            ordinal=ordinal,
            text=text[lo:hi],
            char_start=lo,
            char_end=hi,
            line_start=line_lo + 1,
            line_end=line_hi + 1,
            title=title,
            metadata=metadata,
            plain=plain,
        )

    if span is None:
        if section.heading_end_line < 0:
            return  # blank text before the first heading: nothing to cite
        line = section.heading_end_line
        at = lines.end(line)
        out.append(make(0, at, at, line, line))
        return
    lo, hi = span
    first_line = lines.line_of(lo)
    if hi - lo <= budget:
        out.append(make(0, lo, hi, first_line, lines.line_of(hi - 1) if hi > lo else first_line))
        return
    last_line = lines.line_of(hi - 1)
    cuts = _cuts(blocks, block_starts, first_line, last_line + 1, budget, lines)
    bounds = [first_line, *(c for c in cuts if first_line < c <= last_line), last_line + 1]
    # Trim each unit once; a part then spans from its first unit's start to its last unit's
    # end, so greedy packing is linear in the section size.
    prose = {b.start for b in blocks if b.prose}
    spans: list[tuple[int, int]] = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        unit = _trim(lines, a, b)
        if unit is None:
            continue
        size = unit[1] - unit[0]
        if size > budget and (a in prose or size > HARD_LIMIT_FACTOR * budget):
            spans.extend(_split_long(text, unit[0], unit[1], budget))
        else:
            spans.append(unit)
    ordinal = 0
    part_lo, part_hi = spans[0]
    for unit_lo, unit_hi in spans[1:]:
        if unit_hi - part_lo <= budget:
            part_hi = unit_hi
            continue
        out.append(
            make(ordinal, part_lo, part_hi, lines.line_of(part_lo), lines.line_of(part_hi - 1))
        )
        ordinal += 1
        part_lo, part_hi = unit_lo, unit_hi
    out.append(make(ordinal, part_lo, part_hi, lines.line_of(part_lo), lines.line_of(part_hi - 1)))


def chunk_markdown(
    text: str,
    source: str,
    *,
    max_chunk_chars: int = 1500,
    anchor_style: Literal["github", "mkdocs", "vitepress", "docutils"] = "github",
    generator: str = "commonmark",
) -> list[Chunk]:
    """Split one Markdown document into section chunks (see the module docstring for the rules).

    Args:
        text: the decoded file content (any ``str``; BOM and CRLF are normalised).
        source: the file's path relative to the corpus root, ``/`` separators; used in ids.
        max_chunk_chars: budget for a chunk's text; larger sections are split between blocks.
        anchor_style: ``"github"``, ``"mkdocs"``, ``"vitepress"`` or ``"docutils"`` anchors.
        generator: The docs generator whose syntax the text uses (see
            :mod:`scidx.pack.flavours`); ``.mdx`` sources are MDX under every generator.

    Returns:
        The chunks in document order. Ids (``source:anchor:ordinal``) are unique within the
        file. Spans refer to :func:`normalize_source` ``(text)``.

    Raises:
        ConfigError: if ``max_chunk_chars`` < 1 or ``anchor_style`` is unknown.

    Example:
        >>> doc = "# Tool\\n\\nIntro.\\n\\n## Install\\n\\nRun it."
        >>> [c.id for c in chunk_markdown(doc, "a.md")]
        ['a.md:tool:0', 'a.md:install:0']
    """
    if not isinstance(max_chunk_chars, int) or max_chunk_chars < 1:
        raise ConfigError(f"max_chunk_chars must be a positive integer, got {max_chunk_chars!r}")
    if anchor_style not in ("github", "mkdocs", "vitepress", "docutils"):
        raise ConfigError(
            "anchor_style must be 'github', 'mkdocs', 'vitepress' or 'docutils', got "
            f"{anchor_style!r}"
        )

    norm = normalize_source(text)
    fm_end, fields = parse_front_matter(norm)
    metadata = Metadata(fields)
    fm_title = fields.get("title", "").strip()
    lines = _Lines(norm)
    # First body line; past the end when the closing delimiter is the last, unterminated line.
    fm_lines = norm.count("\n", 0, fm_end)
    if fm_end and norm[fm_end - 1] != "\n":
        fm_lines = lines.count

    flavour = flavour_for(generator)
    mdx = flavour.mdx or source.endswith(".mdx")
    md = markdown_parser(mdx)
    env: dict[str, object] = {}
    tokens: list[Token] = []
    body = norm[fm_end:] if fm_end else norm
    if "\0" in body:
        body = body.replace("\0", "\ufffd")  # as markdown-it's normalize rule; same length
    # Line for line, so the tokens' line maps still point into the author's text.
    body = rewrite(body, flavour, mdx=mdx)
    md.block.parse(body, md, env, tokens)
    raw_headings, blocks = scan_blocks(tokens, fm_lines, md, env, attr_lists=generator == "mkdocs")
    leaves = plain_leaves(tokens, fm_lines, md, env)
    leaf_lines = [leaf.line for leaf in leaves]
    block_starts = [b.start for b in blocks]

    slugger: GithubSlugger | MkdocsSlugger = make_slugger(anchor_style)
    pre_end = next((h.start for h in raw_headings if h.top and h.level <= 3), lines.count)
    if _trim(lines, fm_lines, pre_end) is not None:
        slugger.reserve("")  # the preamble chunk owns anchor ""; no heading may take it

    headings: list[Heading] = []
    for level, start, end, htext, custom, is_top in raw_headings:
        anchor = slugger.unique(custom) if custom is not None else slugger.slug(htext)
        headings.append(Heading(level, start, end, htext.strip(), anchor, is_top))

    title = _title(fm_title, headings, source)

    sections = _sections(headings, fm_title, fm_lines, pre_end, lines.count)

    shadow = (norm[:fm_end] + body).split("\n") if body is not norm else None
    reread = _rereader(lines, shadow, generator, mdx)

    def emit(section: _Section) -> list[Chunk]:
        parts: list[Chunk] = []
        _emit(
            parts,
            section,
            lines,
            blocks,
            block_starts,
            max_chunk_chars,
            source,
            title,
            metadata,
            leaves,
            leaf_lines,
            reread,
        )
        return parts

    return _fold_empty(sections, emit, norm, reread)


def _title(fm_title: str, headings: list[Heading], source: str) -> str:
    """Front-matter title, else the first top-level H1, else the first heading, else the name."""
    return (
        fm_title
        or next((h.text for h in headings if h.top and h.level == 1 and h.text), "")
        or next((h.text for h in headings if h.top and h.text), "")
        or humanised_name(source)
    )


def _rereader(
    lines: _Lines, shadow: list[str] | None, generator: str, mdx: bool
) -> Callable[[int, int, int, int], str]:
    """The clean text of a part that whole blocks cannot give (see :func:`_emit`)."""
    norm = lines.text

    def reread(lo: int, hi: int, line_lo: int, line_hi: int) -> str:
        # A part that is whole lines reads the rewritten lines (a construct may open in an
        # earlier part); a part cut inside a line re-reads its own Markdown.
        if (
            shadow is not None
            and not norm[lines.start(line_lo) : lo].strip()
            and not norm[hi : lines.end(line_hi)].strip()
        ):
            return plain_text("\n".join(shadow[line_lo : line_hi + 1]), mdx=mdx)
        return plain_text(norm[lo:hi], generator=generator, mdx=mdx)

    return reread


def _sections(
    headings: list[Heading], fm_title: str, fm_lines: int, pre_end: int, count: int
) -> list[_Section]:
    """The preamble and one section per top-level H1-H3, with their heading paths."""
    sections: list[_Section] = []
    h1: str | None = fm_title or None
    h2: str | None = None
    h3: str | None = None
    section_heads = [h for h in headings if h.top and h.level <= 3]
    sections.append(_Section((h1,) if h1 else (), "", -1, fm_lines, pre_end))
    for idx, head in enumerate(section_heads):
        if head.level == 1:
            h1, h2, h3 = head.text, None, None
        elif head.level == 2:
            h2, h3 = head.text, None
        else:
            h3 = head.text
        path = tuple(p for p in (h1, h2, h3) if p is not None)
        nxt = section_heads[idx + 1].start if idx + 1 < len(section_heads) else count
        sections.append(_Section(path, head.anchor, head.end - 1, head.end, nxt))
    return sections


def _merge_empty_parts(
    parts: list[Chunk], text: str, reread: Callable[[int, int, int, int], str]
) -> list[Chunk]:
    """Parts with clean text; an empty part's Markdown joins its neighbour, so none is lost.

    A part with no clean text (only ESM lines or a link definition, say) is no result of its
    own: it joins the next part (the previous one at the end of the section).
    """
    if all(part.plain.strip() for part in parts):
        return parts
    if parts and not any(part.plain.strip() for part in parts):
        # Parts cut so small that none reads as text alone ("+" of "+++"): read them together.
        first, last = parts[0], parts[-1]
        plain = reread(first.char_start, last.char_end, first.line_start - 1, last.line_end - 1)
        if not plain.strip():
            return []
        whole = replace(
            first,
            text=text[first.char_start : last.char_end],
            char_end=last.char_end,
            line_end=last.line_end,
            plain=plain,
        )
        return [whole]
    kept: list[Chunk] = []
    carry: Chunk | None = None  # empty parts waiting for the next part with text
    for part in parts:
        if not part.plain.strip():
            carry = carry or part
            continue
        if carry is not None:
            part = replace(
                part,
                text=text[carry.char_start : part.char_end],
                char_start=carry.char_start,
                line_start=carry.line_start,
            )
            carry = None
        kept.append(part)
    if carry is not None and kept:
        last = kept[-1]
        end = parts[-1]
        kept[-1] = replace(
            last,
            text=text[last.char_start : end.char_end],
            char_end=end.char_end,
            line_end=end.line_end,
        )
    return [replace(part, ordinal=k) for k, part in enumerate(kept)]


def _fold_empty(
    sections: list[_Section],
    emit: Callable[[_Section], list[Chunk]],
    text: str,
    reread: Callable[[int, int, int, int], str],
) -> list[Chunk]:
    """Chunks of every section; a section with no clean text is no result of its own.

    Its heading is not carried into later sections: a heading followed directly by a
    subheading is already in that subheading's path (an open ancestor), and any other
    section is closed once a heading of its level or above starts (``# T / ## A / text /
    ### B / ### C / ## D`` gives ``T > D`` for D, as the page's breadcrumb does).
    """
    out: list[Chunk] = []
    for section in sections:
        out.extend(_merge_empty_parts(emit(section), text, reread))
    return out


_NUMBER_PREFIX = re.compile(r"^\d+[-_. ]+(?=\S)")
_INDEX_NAMES = frozenset({"index", "readme", "_index"})


def humanised_name(source: str) -> str:
    """A page title from a file name: ``docs/getting-started.md`` → ``Getting started``.

    ``index``/``README`` pages take their folder's name (``Home`` at the root); a number
    prefix (``01-``) and the extension go; ``-`` and ``_`` read as spaces.

    Example:
        >>> humanised_name("guide/02_first-steps.mdx"), humanised_name("api/README.md")
        ('First steps', 'Api')
    """
    parts = [p for p in source.split("/") if p]
    name = parts[-1].rsplit(".", 1)[0] if parts else ""
    if name.lower() in _INDEX_NAMES:
        name = parts[-2] if len(parts) > 1 else "Home"
    words = " ".join(_NUMBER_PREFIX.sub("", name).replace("_", " ").replace("-", " ").split())
    return (words[:1].upper() + words[1:]) if words else "Home"
