"""The flavour engine: rewrite a generator's Markdown into CommonMark, line for line.

A :class:`Flavour` is a list of block rules (tried on each line outside code), inline rules
(applied to the parts of a line outside code spans) and code rules (applied to lines inside
fenced code). The rewrite keeps the number of lines, so the parser's line maps still point into
the author's text: chunk spans and ``text`` stay the original Markdown, only the clean text and
block structure come from the rewrite.

Why a rewrite and not markdown-it plugins: every generator's container is a line-level
construct (an opener line, a body, a closer), and a line-preserving rewrite keeps one parser and
one set of line maps. A construct no rule understands is left as it is (text, never dropped).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "BlockRule",
    "Flavour",
    "InlineRule",
    "Scan",
    "dedent_body",
    "outside_code_spans",
    "rewrite",
]

# A fence opener at any indentation, after blockquote markers: its marker run and info string.
_FENCE = re.compile(r"^((?:[ \t]*>)*[ \t]*)(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_CODE_SPAN = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)")


@dataclass
class Scan:
    """The mutable state of one rewrite: the lines and what rules recorded about them."""

    lines: list[str]
    #: Open MyST backtick directives: the fence marker each one closes with.
    directives: list[str] = field(default_factory=list)
    #: Reference-link labels the document defines (lower-cased, blanks collapsed).
    labels: frozenset[str] = frozenset()
    #: The line the inline rules are looking at is an ATX heading (its ``{#id}`` is an anchor).
    heading: bool = False


#: A block rule looks at line ``i`` (outside code) and returns how many lines it handled (it may
#: rewrite them, and may rewrite lines further down, such as a body it dedents), or 0.
BlockRule = Callable[[Scan, int], int]
#: An inline rule rewrites a piece of a line that holds no code span.
InlineRule = Callable[[str, Scan], str]
#: A code rule rewrites one line inside fenced code (given the fence's info string).
CodeRule = Callable[[str, str], str]


@dataclass(frozen=True)
class Flavour:
    """One generator's Markdown dialect, as rules over lines.

    Attributes:
        name: The generator name used in ``staticcorpus.json``'s ``"generator"``.
        block: Block rules, tried in order on each line outside code.
        inline: Inline rules, applied in order to each line's text outside code spans.
        code: Rules for lines inside fenced code.
        mdx: Parse every file as MDX (Docusaurus 3 reads ``.md`` as MDX); ``.mdx`` files are
            MDX under every flavour.
        mdx_rules: The MDX block rules (ESM lines, JSX tags, comments) this flavour applies to
            MDX files.
    """

    name: str
    block: Sequence[BlockRule] = ()
    inline: Sequence[InlineRule] = ()
    code: Sequence[CodeRule] = ()
    mdx: bool = False
    mdx_rules: Sequence[BlockRule] = ()


def outside_code_spans(line: str, fn: Callable[[str], str]) -> str:
    """``fn`` applied to the parts of ``line`` that are not inline code spans."""
    if "`" not in line:
        return fn(line)
    out: list[str] = []
    pos = 0
    for match in _CODE_SPAN.finditer(line):
        out.append(fn(line[pos : match.start()]))
        out.append(match.group(0))
        pos = match.end()
    out.append(fn(line[pos:]))
    return "".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def dedent_body(scan: Scan, opener: int, indent: int) -> int:
    """Dedent the indented body after line ``opener`` by four columns; return its last line.

    The body is every following line that is blank or indented at least ``indent + 4``; trailing
    blank lines are not part of it. Each body line loses the four columns after ``indent`` (a
    tab counts as four), so an admonition's prose is no longer an indented code block and its
    fences, lists and nested containers parse as they render.
    """
    lines = scan.lines
    last = opener
    j = opener + 1
    while j < len(lines):
        line = lines[j]
        if line.strip():
            if _indent(line.expandtabs(4)) < indent + 4:
                break
            last = j
        j += 1
    for k in range(opener + 1, last + 1):
        line = lines[k]
        if not line.strip():
            continue
        head = line[indent : indent + 4]
        if head == "    ":
            lines[k] = line[:indent] + line[indent + 4 :]
        elif head[:1] == "\t":
            lines[k] = line[:indent] + line[indent + 1 :]
        else:  # mixed tabs and spaces: expand, then cut
            expanded = line.expandtabs(4)
            lines[k] = expanded[:indent] + expanded[indent + 4 :]
    return last


def _fence_close(line: str, marker: str) -> bool:
    stripped = line.strip().lstrip(">").strip()
    return (
        len(stripped) >= len(marker)
        and stripped[0] == marker[0]
        and stripped == stripped[0] * len(stripped)
    )


def rewrite(text: str, flavour: Flavour, *, mdx: bool = False) -> str:
    """``text`` with ``flavour``'s constructs rewritten to CommonMark; same number of lines.

    Args:
        text: Normalised Markdown (LF line ends).
        flavour: The generator's rules.
        mdx: The file is MDX (``.mdx``, or every file of an MDX flavour).

    Returns:
        The rewritten text; ``text`` itself when no rule applies.
    """
    block = [*(flavour.mdx_rules if mdx or flavour.mdx else ()), *flavour.block]
    if not block and not flavour.inline and not flavour.code:
        return text
    scan = Scan(text.split("\n"))
    scan.labels = _labels(scan.lines) if flavour.inline else frozenset()
    lines = scan.lines
    fence: str | None = None  # the marker that closes the open code fence
    info = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if fence is not None:
            if _fence_close(line, fence):
                fence = None
            elif flavour.code:
                for code_rule in flavour.code:
                    line = code_rule(line, info)
                lines[i] = line
            i += 1
            continue
        handled = 0
        for rule in block:
            handled = rule(scan, i)
            if handled:
                break
        if handled:
            i += handled
            continue
        line = lines[i]  # a rule may have rewritten it and left it to the inline rules
        match = _FENCE.match(line)
        if match is not None and not (match.group(2)[0] == "`" and "`" in match.group(3)):
            fence, info = match.group(2), match.group(3).strip()
            i += 1
            continue
        if flavour.inline and line.strip():
            scan.heading = _ATX.match(line) is not None
            lines[i] = outside_code_spans(line, lambda part: _inline(part, flavour, scan))
        i += 1
    return "\n".join(lines)


def _inline(part: str, flavour: Flavour, scan: Scan) -> str:
    for rule in flavour.inline:
        part = rule(part, scan)
    return part


_LABEL_DEF = re.compile(r"^[ \t]{0,3}\[([^\]]+)\]:")


def _labels(lines: list[str]) -> frozenset[str]:
    found: set[str] = set()
    for line in lines:
        if "]:" in line:
            match = _LABEL_DEF.match(line)
            if match is not None:
                found.add(" ".join(match.group(1).lower().split()))
    return frozenset(found)
