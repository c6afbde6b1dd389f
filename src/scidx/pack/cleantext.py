"""Clean text: the plain text of Markdown that snippets show and BM25 and the embedder read.

Derived from markdown-it's token stream (:mod:`scidx.pack.markdown`); code blocks are kept as
code between :data:`CODE_START` and :data:`CODE_END`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

from scidx.index.highlight import CODE_END, CODE_START
from scidx.pack.flavours import flavour_for, rewrite
from scidx.pack.frontmatter import normalize_source
from scidx.pack.markdown import CUSTOM_ID, INLINE_SPECIAL, TEXT_TYPES, markdown_parser

__all__ = ["Leaf", "join_leaves", "plain_leaves", "plain_text"]

# In clean text, a code block is ``CODE_START + code + CODE_END``. Both are C0 control
# characters that the cleaner removes from everything else, so they mark code unambiguously.
# They are defined by the reader that interprets them (scidx.index.highlight).

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
# The inline specials other than the line break: content with none of them parses to its lines
# (markdown-it's `newline` rule drops the spaces before a line break and the spaces and tabs
# after it), so it needs no token per line (issue 39: 2.8 M short lines took 2 GB of tokens).
_INLINE_MARKUP = re.compile(r"[\\`*_\[\]!<&]")
_LINE_BREAK = re.compile(r" *\n[ \t]*")
_BLANK_RUNS = re.compile(r"[ \t]*\n[ \t\n]*\n")


class Leaf(NamedTuple):
    """One text-bearing block of a document as clean text, with where it sits."""

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
    if INLINE_SPECIAL.search(content) is None:
        return content
    if _INLINE_MARKUP.search(content) is None:
        return _LINE_BREAK.sub("\n", content)
    children: list[Token] = []
    md.inline.parse(content, md, env, children)
    pieces: list[str] = []
    stack = children[::-1]
    while stack:
        child = stack.pop()
        kind = child.type
        if kind in TEXT_TYPES:
            pieces.append(child.content)
        elif kind in ("softbreak", "hardbreak"):
            pieces.append("\n")
        elif kind == "image" and child.children:
            stack.extend(child.children[::-1])  # its alt text, itself inline tokens
        elif kind == "html_inline":
            # A tag is dropped; a one-line comment or tag pair with text keeps the text.
            pieces.append(_strip_html(child.content))
    return "".join(pieces)


def plain_leaves(
    tokens: list[Token], offset: int, md: MarkdownIt, env: dict[str, object]
) -> list[Leaf]:
    """The text-bearing blocks of a document in order, each as clean text."""
    leaves: list[Leaf] = []
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
                match = CUSTOM_ID.search(text)
                if match is not None:
                    text = text[: match.start()]
            in_cell = tok.level > 0 and cell_row >= 0 and tok.map[0] + offset == cell_row
            leaves.append(
                Leaf(
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
            leaves.append(Leaf(start, end, "code", -1, outer if lists else 0, code))
        elif kind == "html_block":
            text = _strip_html(_PROSE_DIRECTIVE.sub(_directive, tok.content))
            start, end = tok.map[0] + offset, tok.map[1] + offset
            leaves.append(Leaf(start, end, "text", -1, outer if lists else 0, text))
    return leaves


def join_leaves(leaves: Iterable[Leaf]) -> str:
    """Clean text of consecutive leaves: code marked, blocks, list items and cells separated."""
    out: list[str] = []
    prev: Leaf | None = None
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


def plain_text(markdown: str, *, generator: str = "commonmark", mdx: bool = False) -> str:
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
        generator: Read the generator's syntax first (see :mod:`scidx.pack.flavours`).
        mdx: The text is MDX (no indented code blocks; ESM and JSX lines).

    Returns:
        The clean text.

    Example:
        >>> plain_text("Use **[pip](https://pip.pypa.io)** <!-- not npm -->: `pip install x`")
        'Use pip : pip install x'
    """
    md = markdown_parser(mdx)
    env: dict[str, object] = {}
    tokens: list[Token] = []
    text = normalize_source(markdown).replace("\0", "\ufffd")
    text = rewrite(text, flavour_for(generator), mdx=mdx)
    md.block.parse(text, md, env, tokens)
    return join_leaves(plain_leaves(tokens, 0, md, env))
