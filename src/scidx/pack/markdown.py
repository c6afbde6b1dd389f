"""The shared markdown-it parser, heading plain text and the one-pass block scan of a document.

Structure comes from markdown-it-py's CommonMark block parser (plus GFM tables), never from
regexes over the Markdown; the clean-text and chunking stages both read its tokens.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = [
    "CUSTOM_ID",
    "INLINE_SPECIAL",
    "TEXT_TYPES",
    "Block",
    "Heading",
    "RawHeading",
    "heading_text",
    "markdown_parser",
    "scan_blocks",
]


@functools.lru_cache(maxsize=2)
def markdown_parser(mdx: bool = False) -> MarkdownIt:
    """The process-wide CommonMark + tables parser (``mdx``: without indented code blocks).

    MDX has no indented code blocks: text indented inside a component is prose.
    """
    # Building a MarkdownIt instance compiles its rule chains: do it once per process.
    md = MarkdownIt("commonmark")
    try:
        md.enable("table")
    except (KeyError, ValueError):  # pragma: no cover - only on a markdown-it without tables
        pass
    if mdx:
        md.disable("code")
    return md


# Characters that can start a non-text inline token in CommonMark; a heading without any of
# them is its own plain text and needs no inline parse.
INLINE_SPECIAL = re.compile(r"[\n\\`*_\[\]!<&]")
TEXT_TYPES = frozenset({"text", "text_special", "code_inline"})
CUSTOM_ID = re.compile(r"[ \t]*\{:?[ \t]*#([^\s{}#]+)(?:[ \t]+[^{}]*)?\}$")
# Python-Markdown's attr_list on a heading (MkDocs): "{", an optional ":", anything but "}",
# "}", after at least one space, at the end. Its words are `#id`, `.class`, `key="v"`,
# `key='v'`, `key=v` or a bare `key`; `id=...` sets the id as `#id` does.
ATTR_LIST = re.compile(r"[ \t]+\{:?([^}\n]*)\}[ \t]*$")
_ATTR_WORD = re.compile(r"""([^ =}]+)=(?:"([^"]*)"|'([^']*)'|([^ =}]+))|([^ =}]+)""")


def _attr_list_id(content: str) -> str | None:
    """The id an attr_list's words set (the last one wins, as in Python-Markdown), if any."""
    found: str | None = None
    for match in _ATTR_WORD.finditer(content):
        key, dq, sq, bare, word = match.groups()
        if word is not None:
            if word.startswith("#") and len(word) > 1:
                found = word[1:]
        elif key == "id":
            found = next(v for v in (dq, sq, bare) if v is not None)
    return found or None


def heading_text(
    content: str, md: MarkdownIt, env: dict[str, object], *, attr_lists: bool = False
) -> tuple[str, str | None]:
    """Plain text (untrimmed) of a heading's inline content, and its explicit ``{#id}``.

    With ``attr_lists`` (the MkDocs flavour), a trailing Python-Markdown attribute list
    (``{ #id .class key="value" flag }``) is removed too; its ``#id`` or ``id=`` is the id.
    """
    if INLINE_SPECIAL.search(content) is None:
        pieces = [content]
        last_is_text = True
    else:
        children: list[Token] = []
        md.inline.parse(content, md, env, children)
        pieces = []
        last_is_text = False
        for child in children:
            kind = child.type
            if kind in TEXT_TYPES:
                pieces.append(child.content)
                last_is_text = kind != "code_inline"
            elif kind in ("softbreak", "hardbreak"):
                pieces.append(" ")
                last_is_text = False
    custom: str | None = None
    if last_is_text and pieces:
        match = CUSTOM_ID.search(pieces[-1])
        if match is not None:
            custom = match.group(1)
            pieces[-1] = pieces[-1][: match.start()]
        elif attr_lists and (match := ATTR_LIST.search(pieces[-1])) is not None:
            custom = _attr_list_id(match.group(1))
            pieces[-1] = pieces[-1][: match.start()]
    # Not stripped: GitHub slugs the heading's textContent as is (a trailing image leaves a
    # trailing space, hence a trailing "-"); the caller strips it for display.
    return "".join(pieces), custom


class RawHeading(NamedTuple):
    """A heading as scanned: lines, untrimmed plain text and explicit id."""

    level: int
    start: int  # first line (absolute, 0-based)
    end: int  # line after the heading (absolute, 0-based)
    text: str  # plain text, untrimmed
    custom_id: str | None  # explicit {#id}
    top: bool  # a top-level heading (not inside a blockquote or list)


class Heading(NamedTuple):
    """A heading with its stripped text and final anchor."""

    level: int
    start: int
    end: int
    text: str  # plain text, stripped
    anchor: str
    top: bool


class Block(NamedTuple):
    """A top-level block: where a chunk part may begin."""

    start: int  # absolute 0-based line
    sticky: bool  # an H4-H6 heading: keep it with the next block
    items: list[int]  # item start lines for a top-level list, else empty
    prose: bool = False  # a paragraph: split inside it when it alone is over the budget


def scan_blocks(
    tokens: list[Token],
    offset: int,
    md: MarkdownIt,
    env: dict[str, object],
    *,
    attr_lists: bool = False,
) -> tuple[list[RawHeading], list[Block]]:
    """One pass over the block tokens: headings (any depth) and top-level blocks.

    ``attr_lists``: headings may end in a Python-Markdown attribute list (:func:`heading_text`).
    """
    headings: list[RawHeading] = []
    blocks: list[Block] = []
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
                text, custom = heading_text(content, md, env, attr_lists=attr_lists)
                start, end = tmap[0] + offset, tmap[1] + offset
                headings.append(RawHeading(hlevel, start, end, text, custom, True))
                if hlevel > 3:
                    blocks.append(Block(start, True, []))
                current_items = None
                continue
            if kind in ("bullet_list_open", "ordered_list_open"):
                current_items = []
                blocks.append(Block(tmap[0] + offset, False, current_items))
            else:
                current_items = None
                blocks.append(Block(tmap[0] + offset, False, [], kind == "paragraph_open"))
        elif tok.type == "heading_open" and tok.map is not None:
            # Nested headings are not section breaks, but they do take a slug on the page.
            inline = tokens[i + 1] if i + 1 < n else None
            content = inline.content if inline is not None else ""
            text, custom = heading_text(content, md, env, attr_lists=attr_lists)
            hlevel = int(tok.tag[1])
            start, end = tok.map[0] + offset, tok.map[1] + offset
            headings.append(RawHeading(hlevel, start, end, text, custom, False))
        elif level == 1 and current_items is not None and tok.type == "list_item_open":
            if tok.map is not None:
                current_items.append(tok.map[0] + offset)
    return headings, blocks
