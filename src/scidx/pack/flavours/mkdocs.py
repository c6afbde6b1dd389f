"""MkDocs + Material (pymdownx) + mkdocstrings: admonitions, tabs, blocks, annotations, autorefs.

* ``!!! type "Title"``, ``??? type``/``???+ type`` and content tabs ``=== "Tab"``: the opener
  becomes its title (an explicit one; ``""`` means none) and the four-space-indented body is
  dedented, so it is prose (and its fences code), not an indented code block.
* ``/// type | Title`` blocks (pymdownx.blocks): the opener becomes the title, its indented
  option lines and the closing ``///`` go.
* mkdocstrings ``::: package.module`` stays as the dotted name (what the page documents); its
  indented ``options:`` block goes. ``[text][package.Name]`` and ``[package.Name][]``
  cross-references keep their text when the page defines no such reference.
* ``--8<--`` snippet lines go (build instructions); ``*[HTML]: text`` abbreviations read
  ``HTML: text``; ``++ctrl+alt++`` keys read ``ctrl+alt``; ``:material-x:`` icons and
  ``{ .class #id }`` attribute lists go; code annotation markers (``# (1)!``) leave the code.
"""

from __future__ import annotations

import re

from scidx.pack.flavours.base import Flavour, Scan, dedent_body
from scidx.pack.flavours.rules import blank_lines_matching, emoji, footnotes

__all__ = ["MKDOCS"]

_ADMONITION = re.compile(
    r'^([ \t]*)(?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?:[ \t]+[\w-]+)*(?:[ \t]+"([^"]*)")?[ \t]*$'
)
_TAB = re.compile(r'^([ \t]*)===[!+]?[ \t]+"(.*)"[ \t]*$')
_BLOCK_OPEN = re.compile(r"^([ \t]*)///[ \t]*[\w-]+(?:[ \t]*\|[ \t]*(.*?))?[ \t]*$")
_BLOCK_CLOSE = re.compile(r"^[ \t]*///[ \t]*$")
_AUTODOC = re.compile(r"^([ \t]*):::[ \t]+([\w.:-]+)[ \t]*$")
_SNIPPET = re.compile(r"^[ \t]*;?-{1,2}8<-{1,2}(?:[ \t]+\S.*)?[ \t]*$")
_ABBR = re.compile(r"^[ \t]*\*\[([^\]]+)\]:[ \t]*(.*)$")


def _container(scan: Scan, i: int) -> int:
    line = scan.lines[i]
    match = _ADMONITION.match(line) if line.lstrip()[:3] in ("!!!", "???") else None
    if match is None and "===" in line:
        match = _TAB.match(line)
    if match is None:
        return 0
    indent = match.group(1)
    scan.lines[i] = indent + (match.group(2) or "")
    dedent_body(scan, i, len(indent.expandtabs(4)))
    return 0 if scan.lines[i].strip() else 1


def _block(scan: Scan, i: int) -> int:
    line = scan.lines[i]
    if "///" not in line:
        return 0
    if _BLOCK_CLOSE.match(line) is not None:
        scan.lines[i] = ""
        return 1
    match = _BLOCK_OPEN.match(line)
    if match is None:
        return 0
    scan.lines[i] = match.group(1) + (match.group(2) or "")
    j = i + 1
    base = len(match.group(1))
    while j < len(scan.lines) and scan.lines[j].strip() and _indented(scan.lines[j], base + 1):
        scan.lines[j] = ""
        j += 1
    return j - i if not scan.lines[i].strip() else 0


def _indented(line: str, at_least: int) -> bool:
    return len(line) - len(line.lstrip(" \t")) >= at_least


def _autodoc(scan: Scan, i: int) -> int:
    line = scan.lines[i]
    if ":::" not in line:
        return 0
    match = _AUTODOC.match(line)
    if match is None:
        return 0
    scan.lines[i] = match.group(1) + match.group(2)
    base = len(match.group(1))
    j = i + 1
    while j < len(scan.lines) and (not scan.lines[j].strip() or _indented(scan.lines[j], base + 2)):
        j += 1
    while j > i + 1 and not scan.lines[j - 1].strip():
        j -= 1
    for k in range(i + 1, j):
        scan.lines[k] = ""
    return j - i


def _abbreviation(scan: Scan, i: int) -> int:
    line = scan.lines[i]
    if not line.lstrip().startswith("*["):
        return 0
    match = _ABBR.match(line)
    if match is None:
        return 0
    scan.lines[i] = f"{match.group(1)}: {match.group(2)}"
    return 1


_ATTR_ITEM = r"""(?:[.#][\w-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s{}"']+))"""
_ATTR_LIST = re.compile(
    r"[ \t]*\{:?[ \t]*" + _ATTR_ITEM + r"(?:[ \t]+" + _ATTR_ITEM + r")*[ \t]*\}"
)
_KEYS = re.compile(r"\+\+([\w][\w+-]*?)\+\+")
_XREF = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])+)\]\[([^\[\]]*)\]")


def _icons_and_attrs(part: str, scan: Scan) -> str:
    part = emoji(part, scan)
    if "{" in part and not scan.heading:  # a heading's "{ #id }" is its anchor
        part = _ATTR_LIST.sub("", part)
    if "++" in part:
        part = _KEYS.sub(r"\1", part)
    return part


def _crossref(scan: Scan, i: int) -> int:
    # On the whole line: the link text often holds a code span ([`handoff()`][agents.x]).
    part = scan.lines[i]
    if "][" not in part:
        return 0

    def fix(match: re.Match[str]) -> str:
        label = match.group(2) or match.group(1)
        if " ".join(label.lower().split()) in scan.labels:
            return match.group(0)  # a real reference link: CommonMark resolves it
        return match.group(1)

    scan.lines[i] = _XREF.sub(fix, part)
    # Link text broken over two lines: "the[" then "`layouts` directory][config.x]".
    tail = _XREF_TAIL.match(scan.lines[i])
    if tail is not None and i and scan.lines[i - 1].count("[") > scan.lines[i - 1].count("]"):
        label = tail.group(2) or ""
        if " ".join(label.lower().split()) not in scan.labels:
            before = scan.lines[i - 1]
            cut = before.rindex("[")
            scan.lines[i - 1] = before[:cut] + " " + before[cut + 1 :]
            scan.lines[i] = tail.group(1) + scan.lines[i][tail.end() :]
    return 0


_XREF_TAIL = re.compile(r"^([^\[\]]*)\]\[([\w.]+)\]")


# pymdownx/def_list: "term" then ":   definition" whose continuation is indented four.
_DEFINITION = re.compile(r"^([ \t]*):[ \t]{1,3}(?=\S)")


def _definition(scan: Scan, i: int) -> int:
    line = scan.lines[i]
    match = _DEFINITION.match(line) if ":" in line[:8] else None
    if match is None:
        return 0
    indent = match.group(1)
    # The definition's first line keeps its text at the term's indent; the body dedents.
    scan.lines[i] = indent + line[match.end() :]
    dedent_body(scan, i, len(indent.expandtabs(4)))
    return 0


_ANNOTATION = re.compile(r"[ \t]*(?:#|//|--|;|%|/\*|<!--)[ \t]*\(\d+\)!?[ \t]*(?:\*/|-->)?[ \t]*$")


def _annotation_marker(line: str, info: str) -> str:
    return _ANNOTATION.sub("", line) if "(" in line else line


MKDOCS = Flavour(
    "mkdocs",
    block=(
        _definition,
        _container,
        _block,
        _autodoc,
        _abbreviation,
        blank_lines_matching(_SNIPPET),
        _crossref,
    ),
    inline=(_icons_and_attrs, footnotes),
    code=(_annotation_marker,),
)
