"""Rules several flavours share: colon containers, GitHub alerts, footnotes and MDX (ESM, JSX).

Each block rule follows :data:`~scidx.pack.flavours.base.BlockRule`: it looks at one line
outside code and returns how many lines it handled (0: not its construct). A rule that rewrites
its line and returns 0 lets the inline rules and fence detection see the rewritten line.
"""

from __future__ import annotations

import re

from scidx.pack.flavours.base import BlockRule, Scan

__all__ = [
    "MDX_RULES",
    "PATH_ARGUMENT",
    "alert",
    "blank_options",
    "container_title",
    "blank_lines_matching",
    "colon_container",
    "footnotes",
    "mdx_comment",
    "mdx_esm",
    "emoji",
    "mdx_inline_tags",
    "mdx_jsx",
]

# ---------------------------------------------------------------------------------------------
# Colon containers: Docusaurus admonitions, VitePress containers, Starlight asides, MyST
# colon fences. ":::name[Title]", "::: name Title", ":::{name} argument", and ":::" closes.

_COLON = re.compile(r"^((?:[ \t]*>)*[ \t]*)(:{3,})[ \t]*(\{[\w:.+-]+\}|[A-Za-z][\w-]*)?(.*)$")
# "[Title]" (Docusaurus, Starlight) and a trailing "{attr=...}" (Starlight icon, Docusaurus id).
_BRACKET_TITLE = re.compile(r"^\[(.*)\](.*)$")
_TRAILING_ATTRS = re.compile(r"[ \t]*\{[^{}]*\}[ \t]*$")
#: Directives whose argument is a path or a name, never visible text.
PATH_ARGUMENT = frozenset(
    {"figure", "image", "include", "literalinclude", "toctree", "bibliography", "code-cell"}
)
# MyST option lines right after a directive opener (":name: value").
_OPTION = re.compile(r"^[ \t]*:[\w-]+:(?:[ \t].*)?$")


def container_title(name: str, rest: str) -> str:
    """The visible title of a container opener: ``[Title]`` or the text after the name."""
    rest = rest.strip()
    bracket = _BRACKET_TITLE.match(rest)
    if bracket is not None:
        rest = bracket.group(1)
    rest = _TRAILING_ATTRS.sub("", rest).strip()
    bare = name.strip("{}")
    if bare.split(":")[-1] in PATH_ARGUMENT:
        return ""
    return rest


def blank_options(scan: Scan, first: int, prefix: str) -> int:
    """Blank MyST option lines (``:key: value``, or a ``---`` YAML block) from ``first``.

    Returns:
        How many lines were blanked.
    """
    lines = scan.lines
    j = first
    if j < len(lines) and lines[j][len(prefix) :].strip() == "---":
        end = next(
            (k for k in range(j + 1, min(len(lines), j + 200)) if lines[k].strip() == "---"), -1
        )
        if end > 0:
            for k in range(j, end + 1):
                lines[k] = prefix.rstrip()
            return end + 1 - j
    while j < len(lines) and _OPTION.match(lines[j][len(prefix) :]) is not None:
        lines[j] = prefix.rstrip()
        j += 1
    return j - first


def colon_container(scan: Scan, i: int) -> int:
    """A colon-fenced container's opener becomes its title (or a blank), its closer a blank."""
    line = scan.lines[i]
    if ":::" not in line:
        return 0
    match = _COLON.match(line)
    if match is None:
        return 0
    prefix, _, name, rest = match.groups()
    if name is None:
        if rest.strip():
            return 0  # "::: text" with no name: not a container, left as text
        scan.lines[i] = prefix.rstrip()
        return 1
    if name.startswith("{") or rest[:1] in ("", " ", "\t", "[", "{"):
        scan.lines[i] = prefix + container_title(name, rest)
        return 1 + blank_options(scan, i + 1, prefix)
    return 0


# ---------------------------------------------------------------------------------------------
# GitHub alerts: "> [!NOTE]" (also VitePress and MyST's alert extension).

_ALERT = re.compile(r"^([ \t]*>[ \t]*)\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*(.*)$", re.I)


def alert(scan: Scan, i: int) -> int:
    """``> [!NOTE]`` loses its marker; text on the marker line stays (GitHub shows it)."""
    line = scan.lines[i]
    if "[!" not in line:
        return 0
    match = _ALERT.match(line)
    if match is None:
        return 0
    scan.lines[i] = match.group(1) + match.group(3)
    return 0


# ---------------------------------------------------------------------------------------------
# Footnotes (GFM, pymdownx, MyST, remark-gfm): "[^1]: text" keeps its text, "[^1]" goes.

_FOOTNOTE_DEF = re.compile(r"^([ \t]{0,3})\[\^[^\]\s]+\]:[ \t]?")
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\s]+\]:?")


def footnotes(part: str, scan: Scan) -> str:
    """Footnote definitions keep their text; references (``[^1]``) are removed."""
    if "[^" not in part:
        return part
    part = _FOOTNOTE_DEF.sub(r"\1", part)
    return _FOOTNOTE_REF.sub("", part)


def blank_lines_matching(pattern: re.Pattern[str]) -> BlockRule:
    """A block rule that blanks a line matching ``pattern`` (a build instruction)."""

    def rule(scan: Scan, i: int) -> int:
        if pattern.match(scan.lines[i]) is None:
            return 0
        scan.lines[i] = ""
        return 1

    return rule


# ---------------------------------------------------------------------------------------------
# MDX: ESM lines, JSX component tags and {/* comments */}.

_ESM = re.compile(r"^(?:import|export)(?=[\s{*'\"])")


def mdx_esm(scan: Scan, i: int) -> int:
    """An ``import``/``export`` statement is code, never prose: blank it to the blank line."""
    lines = scan.lines
    if _ESM.match(lines[i]) is None:
        return 0
    j = i
    while j < len(lines) and lines[j].strip():
        lines[j] = ""
        j += 1
    return j - i


# A JSX tag opening a line: a component (capitalised) or any tag with a {...} expression.
_JSX_START = re.compile(r"^([ \t]*)<(/?)([A-Za-z][\w.:-]*)")
_VISIBLE_ATTR = re.compile(r"""\b(?:title|label|text|description)=(?:"([^"]*)"|'([^']*)')""")
_MAX_TAG_LINES = 400


def _tag_end(text: str, start: int) -> int:
    """Index just past the ``>`` closing the tag at ``text[start]``, or -1 (quotes, braces)."""
    depth = 0
    quote = ""
    k = start + 1
    while k < len(text):
        ch = text[k]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'`":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ">" and depth <= 0:
            return k + 1
        k += 1
    return -1


def mdx_jsx(scan: Scan, i: int) -> int:
    """A line of JSX tags keeps only its visible text (``title``/``label``/``text`` values)."""
    lines = scan.lines
    match = _JSX_START.match(lines[i])
    if match is None:
        return 0
    name = match.group(3)
    if not (name[0].isupper() or "={" in lines[i]):
        return 0  # a plain HTML tag: CommonMark's HTML rules handle it
    indent = match.group(1)
    last = min(len(lines), i + _MAX_TAG_LINES)
    text = "\n".join(lines[i:last])
    pos = len(indent)
    visible: list[str] = []
    # Consume tags (and the blanks between them) from the line start.
    while pos < len(text) and text[pos] == "<":
        end = _tag_end(text, pos)
        if end < 0:
            return 0  # unclosed: not understood, left as text
        tag = text[pos:end]
        visible.extend(a or b for a, b in _VISIBLE_ATTR.findall(tag))
        pos = end
        while pos < len(text) and text[pos] in " \t":
            pos += 1
    used = text.count("\n", 0, pos)
    rest_of_line = text[pos:].split("\n", 1)[0]
    for k in range(i, i + used + 1):
        lines[k] = ""
    shown = " ".join(v for v in visible if v.strip())
    lines[i + used] = indent + " ".join(p for p in (shown, rest_of_line) if p.strip())
    if lines[i + used].strip():
        return 0 if used == 0 else used  # the text left on the line gets inline rules
    return used + 1


_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}")


def mdx_comment(scan: Scan, i: int) -> int:
    """``{/* comment */}`` is removed (also over several lines)."""
    lines = scan.lines
    line = lines[i]
    if "{/*" not in line:
        return 0
    line = _MDX_COMMENT.sub("", line)
    if "{/*" not in line:
        lines[i] = line
        return 0 if line.strip() else 1
    start = line.index("{/*")
    end = next(
        (k for k in range(i + 1, min(len(lines), i + _MAX_TAG_LINES)) if "*/}" in lines[k]), -1
    )
    if end < 0:
        return 0
    lines[i] = line[:start]
    for k in range(i + 1, end):
        lines[k] = ""
    lines[end] = lines[end].split("*/}", 1)[1]
    return 0 if lines[i].strip() else 1


# An inline JSX tag whose attributes hold {expressions} (<ins style={{...}} />): not HTML.
_JSX_INLINE = re.compile(
    r"""</?[A-Za-z][\w.:-]*(?:\s+[\w:-]+(?:=(?:"[^"]*"|'[^']*'|\{(?:[^{}]|\{[^{}]*\})*\}))?)*"""
    r"""\s*/?>"""
)


def mdx_inline_tags(scan: Scan, i: int) -> int:
    """Inline JSX tags with ``{expression}`` attributes go (their text content stays).

    Code spans are kept verbatim: ```<Provider store={store}>``` shows the tag, it renders none.
    """
    line = scan.lines[i]
    if "={" in line:
        # A tag that starts inside a code span is code; one whose {`template`} holds
        # backticks is still a tag (the span the backticks seem to make is inside it).
        spans = [m.span() for m in _CODE_SPAN.finditer(line)] if "`" in line else []

        def drop(m: re.Match[str]) -> str:
            if "={" not in m.group(0) or any(a <= m.start() < b for a, b in spans):
                return m.group(0)
            return ""

        scan.lines[i] = _JSX_INLINE.sub(drop, line)
    return 0


_CODE_SPAN = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)")


#: The MDX block rules, in the order they are tried.
MDX_RULES: tuple[BlockRule, ...] = (mdx_comment, mdx_esm, mdx_jsx, mdx_inline_tags)

# Emoji and icon shortcodes (":smile:", ":material-x:", ":octicons-x-16:"), MkDocs and VitePress.
_EMOJI = re.compile(
    r":(?:material|octicons|fontawesome|simple|twemoji)-[\w-]+:"
    r"|(?<![A-Za-z0-9:/]):[a-z0-9][a-z0-9_]*(?:[-+][a-z0-9_]+)*:(?![A-Za-z0-9:/])"
)


def emoji(part: str, scan: Scan) -> str:
    """Emoji and icon shortcodes go (the page shows a picture, not the name)."""
    return _EMOJI.sub("", part) if ":" in part else part
