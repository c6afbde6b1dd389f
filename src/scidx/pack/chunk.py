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

* **Sections.** Top-level H1, H2 and H3 headings start sections; H4-H6 stay in the enclosing
  section. Every H1-H3 heading yields at least one chunk, even with an empty body (``text`` is
  ``""``), so that every heading is citable. A chunk's ``heading_path`` ends with its own
  heading: an H2 chunk has ``(H1, H2)``, the H1 chunk (the "intro") has ``(H1,)``.
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
* **Title.** The first top-level H1's text, else the front-matter ``title``, else ``""``.
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
import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Literal, NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

from scidx.errors import ConfigError
from scidx.pack.slug import GithubSlugger, MkdocsSlugger, make_slugger

__all__ = [
    "CHUNKER_VERSION",
    "CODE_END",
    "CODE_START",
    "Chunk",
    "Metadata",
    "chunk_markdown",
    "normalize_source",
    "parse_front_matter",
    "plain_text",
]

#: Bump whenever the same input could produce different chunks (stored in the index header).
#: 2: a paragraph over the budget (or any block over HARD_LIMIT_FACTOR times it) is split inside.
#: 3: chunks carry their clean text (:attr:`Chunk.plain`).
CHUNKER_VERSION = "scidx-chunk-3"

#: In clean text, a code block is ``CODE_START + code + CODE_END``. Both are C0 control
#: characters that the cleaner removes from everything else, so they mark code unambiguously.
CODE_START = "\x02"
CODE_END = "\x03"


class Metadata(Mapping[str, str]):
    """A read-only, hashable ``str → str`` mapping (front-matter scalars), keys sorted.

    Example:
        >>> m = Metadata({"title": "Install", "weight": "10"})
        >>> dict(m), hash(m) == hash(Metadata({"weight": "10", "title": "Install"}))
        ({'title': 'Install', 'weight': '10'}, True)
    """

    __slots__ = ("_data",)

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        """Copy ``items`` (a mapping or key/value pairs); the copy is sorted by key.

        Args:
            items: the fields; keys and values must be strings.
        """
        pairs = items.items() if isinstance(items, Mapping) else items
        self._data: dict[str, str] = dict(sorted(pairs))

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(tuple(self._data.items()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return self._data == dict(other.items())

    def __repr__(self) -> str:
        return f"Metadata({self._data!r})"


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
        title: the document title (H1, else front-matter title, else ``""``).
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
        return f"{self.source}:{self.anchor}:{self.ordinal}"


# --------------------------------------------------------------------------------------------
# Normalisation and front matter
# --------------------------------------------------------------------------------------------


def normalize_source(text: str) -> str:
    """Return ``text`` as the chunker sees it: leading BOM removed, CRLF/CR turned into LF.

    All chunk spans are offsets into this string.

    Args:
        text: decoded file content.

    Returns:
        The normalised text (``text`` itself when nothing needed changing).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


# Linear time: the bare key runs greedily to the first ":" (it cannot contain one) and its
# trailing blanks are stripped afterwards. The lazy form ``[^:]*?\s*:`` took O(n^2) on a line
# like "a<200k spaces>b:" (31 s).
_YAML_KEY = re.compile(r"""("[^"]*"\s*|'[^']*'\s*|[^\s#'"\-?:][^:]*):(?:[ \t]+(.*))?$""")
_TOML_KEY = re.compile(r"""("[^"]*"|'[^']*'|[A-Za-z0-9_.\-]+)\s*=\s*(.*)$""")
_DQ_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r", "0": "\0"}
_DQ_ESCAPE = re.compile(r"\\(.)")


def _unquote_double(body: str) -> str:
    return _DQ_ESCAPE.sub(lambda m: _DQ_ESCAPES.get(m.group(1), m.group(0)), body)


def _scalar(raw: str, single_quote_doubling: bool) -> str | None:
    """Interpret one inline scalar value; ``None`` if it is not a scalar (list, map, ...)."""
    value = raw.strip()
    if not value:
        return None
    first = value[0]
    if first == '"':
        end = value.find('"', 1)
        while end != -1 and value[end - 1] == "\\" and not value[: end - 1].endswith("\\"):
            end = value.find('"', end + 1)
        return _unquote_double(value[1:end] if end != -1 else value[1:])
    if first == "'":
        if single_quote_doubling:
            match = re.match(r"'((?:[^']|'')*)'", value)
            inner = match.group(1) if match else value[1:]
            return inner.replace("''", "'")
        end = value.find("'", 1)
        return value[1:end] if end != -1 else value[1:]
    if first in "[{":
        return None
    # An unquoted value ends at a comment introduced by whitespace + "#".
    hash_at = value.find(" #")
    if hash_at != -1:
        value = value[:hash_at].rstrip()
    return value or None


def _yaml_block_scalar(style: str, lines: list[str]) -> str:
    texts = [line.strip() for line in lines]
    while texts and not texts[-1]:
        texts.pop()
    if style.startswith("|"):
        return "\n".join(texts)
    # Folded: single newlines become spaces, blank lines become newlines.
    paragraphs: list[str] = []
    current: list[str] = []
    for line in texts:
        if line:
            current.append(line)
        else:
            paragraphs.append(" ".join(current))
            current = []
    paragraphs.append(" ".join(current))
    return "\n".join(paragraphs).strip()


def _parse_yaml_scalars(lines: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        # Indented lines belong to nested structures, "-" starts a sequence, "#" a comment.
        if not line or line[0] in " \t#-":
            continue
        match = _YAML_KEY.match(line.rstrip())
        if match is None:
            continue
        key = match.group(1).rstrip()
        if key[0] in "\"'":
            key = key[1:-1]
        raw = (match.group(2) or "").strip()
        if raw[:1] in ("|", ">"):
            block: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
                block.append(lines[i])
                i += 1
            fields[key] = _yaml_block_scalar(raw, block)
            continue
        value = _scalar(raw, single_quote_doubling=True)
        if value is not None:
            fields[key] = value
    return fields


def _parse_toml_scalars(lines: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            break  # keys after a [table] header are not top-level
        match = _TOML_KEY.match(stripped)
        if match is None:
            continue
        key = match.group(1)
        if key[0] in "\"'":
            key = key[1:-1]
        raw = match.group(2)
        if raw.startswith(('"""', "'''")):
            continue  # multi-line strings are not worth a TOML parser here
        value = _scalar(raw, single_quote_doubling=False)
        if value is not None:
            fields[key] = value
    return fields


def parse_front_matter(text: str) -> tuple[int, dict[str, str]]:
    """Find YAML (``---``) or TOML (``+++``) front matter at the very start of ``text``.

    Only top-level scalar fields are kept (strings, numbers, booleans, dates, as their literal
    text; quoted strings unquoted; YAML ``|``/``>`` block scalars joined). Lists and mappings are
    skipped. This is deliberately not a full YAML/TOML parser and never raises.

    Args:
        text: normalised text (see :func:`normalize_source`).

    Returns:
        ``(end, fields)``: ``end`` is the offset just past the closing delimiter line (``0``
        when there is no closed front matter), ``fields`` the scalar fields.
    """
    if text.startswith("---"):
        closers: tuple[str, ...] = ("---", "...")
    elif text.startswith("+++"):
        closers = ("+++",)
    else:
        return 0, {}
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].rstrip() != text[:3]:
        return 0, {}
    pos = first_nl + 1
    body: list[str] = []
    while pos <= len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl == -1 else nl
        line = text[pos:line_end]
        if line.rstrip() in closers:
            end = len(text) if nl == -1 else nl + 1
            parser = _parse_toml_scalars if closers == ("+++",) else _parse_yaml_scalars
            return end, parser(body)
        body.append(line)
        if nl == -1:
            break
        pos = nl + 1
    return 0, {}


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Building a MarkdownIt instance compiles its rule chains: do it once per process.
    md = MarkdownIt("commonmark")
    try:
        md.enable("table")
    except (KeyError, ValueError):  # pragma: no cover - only on a markdown-it without tables
        pass
    return md


# Characters that can start a non-text inline token in CommonMark; a heading without any of
# them is its own plain text and needs no inline parse.
_INLINE_SPECIAL = re.compile(r"[\n\\`*_\[\]!<&]")
_TEXT_TYPES = frozenset({"text", "text_special", "code_inline"})
_CUSTOM_ID = re.compile(r"[ \t]*\{:?[ \t]*#([^\s{}#]+)(?:[ \t]+[^{}]*)?\}$")


def _heading_text(content: str, md: MarkdownIt, env: dict[str, object]) -> tuple[str, str | None]:
    """Plain text (untrimmed) of a heading's inline content, and its explicit ``{#id}``."""
    if _INLINE_SPECIAL.search(content) is None:
        pieces = [content]
        last_is_text = True
    else:
        children: list[Token] = []
        md.inline.parse(content, md, env, children)
        pieces = []
        last_is_text = False
        for child in children:
            kind = child.type
            if kind in _TEXT_TYPES:
                pieces.append(child.content)
                last_is_text = kind != "code_inline"
            elif kind in ("softbreak", "hardbreak"):
                pieces.append(" ")
                last_is_text = False
    custom: str | None = None
    if last_is_text and pieces:
        match = _CUSTOM_ID.search(pieces[-1])
        if match is not None:
            custom = match.group(1)
            pieces[-1] = pieces[-1][: match.start()]
    # Not stripped: GitHub slugs the heading's textContent as is (a trailing image leaves a
    # trailing space, hence a trailing "-"); the caller strips it for display.
    return "".join(pieces), custom


class _RawHeading(NamedTuple):
    level: int
    start: int  # first line (absolute, 0-based)
    end: int  # line after the heading (absolute, 0-based)
    text: str  # plain text, untrimmed
    custom_id: str | None  # explicit {#id}
    top: bool  # a top-level heading (not inside a blockquote or list)


class _Heading(NamedTuple):
    level: int
    start: int
    end: int
    text: str  # plain text, stripped
    anchor: str
    top: bool


class _Block(NamedTuple):
    start: int  # absolute 0-based line
    sticky: bool  # an H4-H6 heading: keep it with the next block
    items: list[int]  # item start lines for a top-level list, else empty
    prose: bool = False  # a paragraph: split inside it when it alone is over the budget


def _scan(
    tokens: list[Token], offset: int, md: MarkdownIt, env: dict[str, object]
) -> tuple[list[_RawHeading], list[_Block]]:
    """One pass over the block tokens: headings (any depth) and top-level blocks."""
    headings: list[_RawHeading] = []
    blocks: list[_Block] = []
    current_items: list[int] | None = None
    n = len(tokens)
    for i in range(n):
        tok = tokens[i]
        if tok.nesting == -1:
            continue
        level = tok.level
        if level == 0:
            tmap = tok.map
            if tmap is None:
                continue
            kind = tok.type
            if kind == "heading_open":
                hlevel = int(tok.tag[1])
                inline = tokens[i + 1] if i + 1 < n else None
                content = inline.content if inline is not None else ""
                text, custom = _heading_text(content, md, env)
                start, end = tmap[0] + offset, tmap[1] + offset
                headings.append(_RawHeading(hlevel, start, end, text, custom, True))
                if hlevel > 3:
                    blocks.append(_Block(start, True, []))
                current_items = None
                continue
            if kind in ("bullet_list_open", "ordered_list_open"):
                current_items = []
                blocks.append(_Block(tmap[0] + offset, False, current_items))
            else:
                current_items = None
                blocks.append(_Block(tmap[0] + offset, False, [], kind == "paragraph_open"))
        elif tok.type == "heading_open" and tok.map is not None:
            # Nested headings are not section breaks, but they do take a slug on the page.
            inline = tokens[i + 1] if i + 1 < n else None
            content = inline.content if inline is not None else ""
            text, custom = _heading_text(content, md, env)
            hlevel = int(tok.tag[1])
            start, end = tok.map[0] + offset, tok.map[1] + offset
            headings.append(_RawHeading(hlevel, start, end, text, custom, False))
        elif level == 1 and current_items is not None and tok.type == "list_item_open":
            if tok.map is not None:
                current_items.append(tok.map[0] + offset)
    return headings, blocks


# --------------------------------------------------------------------------------------------
# Clean text
# --------------------------------------------------------------------------------------------

# Template directives of the common generators; they are build instructions, never prose:
# mdBook ({{#include f.rs}}, {{#rustdoc_include ...}}, {{#playground ...}}, {{#title ...}}),
# FastAPI's {* ../docs_src/x.py hl[3] *}, Hugo shortcodes ({{< note >}}, {{% tab %}}) and
# Jinja/Liquid tags ({% include "x.md" %}). The first two also appear inside code fences.
_CODE_DIRECTIVE = re.compile(r"\{\{#[A-Za-z_][^{}\n]*\}\}|\{\*[^{}\n]*\*\}")
_PROSE_DIRECTIVE = re.compile(
    r"\{\{#[A-Za-z_][^{}\n]*\}\}|\{\*[^{}\n]*\*\}|\{\{[<%].*?[%>]\}\}|\{%.*?%\}", re.DOTALL
)
# A Hugo shortcode's visible text (glossary_tooltip text="Pod" ...) is rendered on the page.
_SHORTCODE_TEXT = re.compile(r"""\btext\s*=\s*(?:"([^"\n]*)"|'([^'\n]*)')""")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_HTML_HIDDEN = re.compile(
    r"<(script|style|template)\b[^>]*>.*?(?:</\1\s*>|$)", re.DOTALL | re.IGNORECASE
)
# CommonMark's open/closing tag grammar: attribute values may hold "<" or ">" when quoted.
_HTML_TAG = re.compile(
    r"""</?[A-Za-z][A-Za-z0-9-]*(?:\s+[^\s"'=<>`/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*"""
    r"""\s*/?>|<![^<>]*>|<\?.*?\?>""",
    re.DOTALL,
)
# C0 controls other than tab and newline (and DEL) never carry meaning in Markdown; removing
# them leaves CODE_START/CODE_END free to mark code.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_BLANK_RUNS = re.compile(r"[ \t]*\n[ \t\n]*\n")


class _Leaf(NamedTuple):
    line: int  # absolute 0-based start line
    end: int  # absolute line after the block
    kind: Literal["text", "cell", "code"]
    row: int  # table row (its line) for cells, else -1
    listed: int  # the top-level list it is in (1, 2, ... in document order), 0 for none
    text: str


def _directive(match: re.Match[str]) -> str:
    found = _SHORTCODE_TEXT.search(match.group(0)) if match.group(0)[:3] == "{{<" else None
    return (found.group(1) or found.group(2) or "") if found else ""


def _strip_html(html: str) -> str:
    """Visible text of raw HTML: comments, scripts and tags removed, entities decoded."""
    import html as html_lib

    text = _HTML_HIDDEN.sub("", _HTML_COMMENT.sub("", html))
    return html_lib.unescape(_HTML_TAG.sub("", text))


def _inline_plain(content: str, md: MarkdownIt, env: dict[str, object]) -> str:
    """Plain text of an inline run: markers, URLs and raw HTML dropped; code spans as text."""
    content = _PROSE_DIRECTIVE.sub(_directive, content)
    if _INLINE_SPECIAL.search(content) is None:
        return content
    children: list[Token] = []
    md.inline.parse(content, md, env, children)
    pieces: list[str] = []
    stack = children[::-1]
    while stack:
        child = stack.pop()
        kind = child.type
        if kind in _TEXT_TYPES:
            pieces.append(child.content)
        elif kind in ("softbreak", "hardbreak"):
            pieces.append("\n")
        elif kind == "image" and child.children:
            stack.extend(child.children[::-1])  # its alt text, itself inline tokens
        elif kind == "html_inline":
            # A tag is dropped; a one-line comment or tag pair with text keeps the text.
            pieces.append(_strip_html(child.content))
    return "".join(pieces)


def _plain_leaves(
    tokens: list[Token], offset: int, md: MarkdownIt, env: dict[str, object]
) -> list[_Leaf]:
    """The text-bearing blocks of a document in order, each as clean text."""
    leaves: list[_Leaf] = []
    lists = 0
    outer = 0  # top-level lists seen so far
    cell_row = -1
    heading = False
    for tok in tokens:
        kind = tok.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            outer += lists == 0
            lists += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists -= 1
        elif kind == "tr_open" and tok.map is not None:
            cell_row = tok.map[0] + offset
        elif kind == "heading_open":
            heading = True
        elif kind == "heading_close":
            heading = False
        elif tok.map is None:
            continue
        elif kind == "inline":
            text = _inline_plain(tok.content, md, env)
            if heading:
                match = _CUSTOM_ID.search(text)
                if match is not None:
                    text = text[: match.start()]
            in_cell = tok.level > 0 and cell_row >= 0 and tok.map[0] + offset == cell_row
            leaves.append(
                _Leaf(
                    tok.map[0] + offset,
                    tok.map[1] + offset,
                    "cell" if in_cell else "text",
                    cell_row if in_cell else -1,
                    outer if lists else 0,
                    text,
                )
            )
        elif kind in ("fence", "code_block"):
            code = _CODE_DIRECTIVE.sub("", tok.content)
            start, end = tok.map[0] + offset, tok.map[1] + offset
            leaves.append(_Leaf(start, end, "code", -1, outer if lists else 0, code))
        elif kind == "html_block":
            text = _strip_html(_PROSE_DIRECTIVE.sub(_directive, tok.content))
            start, end = tok.map[0] + offset, tok.map[1] + offset
            leaves.append(_Leaf(start, end, "text", -1, outer if lists else 0, text))
    return leaves


def _join_leaves(leaves: Iterable[_Leaf]) -> str:
    out: list[str] = []
    prev: _Leaf | None = None
    for leaf in leaves:
        if leaf.kind == "code":
            # Blank lines inside code are kept; only the fence's ends are trimmed.
            body = _CONTROLS.sub("", leaf.text).strip("\n")
            if not body.strip():
                continue
            text = CODE_START + body + CODE_END
        else:
            text = _CONTROLS.sub("", leaf.text).strip()
            if not text:
                continue
            text = _BLANK_RUNS.sub("\n", text) if "\n" in text else text
        if prev is not None:
            if leaf.kind == "cell" and prev.kind == "cell":
                out.append("\t" if leaf.row == prev.row else "\n")
            elif (
                leaf.listed and leaf.listed == prev.listed and "code" not in (leaf.kind, prev.kind)
            ):
                out.append("\n")
            else:
                out.append("\n\n")
        out.append(text)
        prev = leaf
    return "".join(out)


def plain_text(markdown: str) -> str:
    """The clean text of a Markdown document, as the packer stores it for every chunk.

    Derived from markdown-it's token stream, never with regexes over the Markdown: HTML
    comments, raw HTML tags and template directives (mdBook ``{{#include ...}}``, Hugo
    shortcodes, Jinja tags, FastAPI ``{* ... *}``) are removed; link and image text is kept
    without the URLs; emphasis markers and backslash escapes are dropped and entities decoded;
    inline code is kept as its text; code blocks are kept as code between :data:`CODE_START`
    and :data:`CODE_END`. Blocks are separated by a blank line, list items and table rows by a
    newline, table cells by a tab.

    Args:
        markdown: Any Markdown text (front matter is not special here).

    Returns:
        The clean text.

    Example:
        >>> plain_text("Use **[pip](https://pip.pypa.io)** <!-- not npm -->: `pip install x`")
        'Use pip : pip install x'
    """
    md = _parser()
    env: dict[str, object] = {}
    tokens: list[Token] = []
    text = normalize_source(markdown).replace("\0", "\ufffd")
    md.block.parse(text, md, env, tokens)
    return _join_leaves(_plain_leaves(tokens, 0, md, env))


# --------------------------------------------------------------------------------------------
# Chunking
# --------------------------------------------------------------------------------------------


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
    blocks: list[_Block], block_starts: list[int], first: int, end: int, budget: int, lines: _Lines
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
    blocks: list[_Block],
    block_starts: list[int],
    budget: int,
    source: str,
    title: str,
    metadata: Metadata,
    leaves: list[_Leaf],
    leaf_lines: list[int],
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
            plain = _join_leaves(leaves[first:last]) if whole else plain_text(text[lo:hi])
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
    anchor_style: Literal["github", "mkdocs"] = "github",
) -> list[Chunk]:
    """Split one Markdown document into section chunks (see the module docstring for the rules).

    Args:
        text: the decoded file content (any ``str``; BOM and CRLF are normalised).
        source: the file's path relative to the corpus root, ``/`` separators; used in ids.
        max_chunk_chars: budget for a chunk's text; larger sections are split between blocks.
        anchor_style: ``"github"`` or ``"mkdocs"`` anchors.

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
    if anchor_style not in ("github", "mkdocs"):
        raise ConfigError(f"anchor_style must be 'github' or 'mkdocs', got {anchor_style!r}")

    norm = normalize_source(text)
    fm_end, fields = parse_front_matter(norm)
    metadata = Metadata(fields)
    fm_title = fields.get("title", "").strip()
    lines = _Lines(norm)
    # First body line; past the end when the closing delimiter is the last, unterminated line.
    fm_lines = norm.count("\n", 0, fm_end)
    if fm_end and norm[fm_end - 1] != "\n":
        fm_lines = lines.count

    md = _parser()
    env: dict[str, object] = {}
    tokens: list[Token] = []
    body = norm[fm_end:] if fm_end else norm
    if "\0" in body:
        body = body.replace("\0", "\ufffd")  # as markdown-it's normalize rule; same length
    md.block.parse(body, md, env, tokens)
    raw_headings, blocks = _scan(tokens, fm_lines, md, env)
    leaves = _plain_leaves(tokens, fm_lines, md, env)
    leaf_lines = [leaf.line for leaf in leaves]
    block_starts = [b.start for b in blocks]

    slugger: GithubSlugger | MkdocsSlugger = make_slugger(anchor_style)
    pre_end = next((h.start for h in raw_headings if h.top and h.level <= 3), lines.count)
    if _trim(lines, fm_lines, pre_end) is not None:
        slugger.reserve("")  # the preamble chunk owns anchor ""; no heading may take it

    headings: list[_Heading] = []
    for level, start, end, htext, custom, is_top in raw_headings:
        anchor = slugger.unique(custom) if custom is not None else slugger.slug(htext)
        headings.append(_Heading(level, start, end, htext.strip(), anchor, is_top))

    title = next((h.text for h in headings if h.top and h.level == 1), "") or fm_title

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
        nxt = section_heads[idx + 1].start if idx + 1 < len(section_heads) else lines.count
        sections.append(_Section(path, head.anchor, head.end - 1, head.end, nxt))

    out: list[Chunk] = []
    for section in sections:
        _emit(
            out,
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
        )
    return out
