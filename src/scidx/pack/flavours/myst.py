"""MyST (Sphinx): directives, targets, roles, comments, substitutions, definition lists.

* ```` ```{note} ```` and ``:::{note}`` directives are Markdown containers, not code: the opener
  becomes its argument (``{admonition} Title`` → ``Title``; a path argument, as of ``{figure}``
  or ``{include}``, is not text), option lines (``:name: value`` or a ``---`` block) go, and the
  closing fence goes. ``{code-block} python`` / ``{code}`` / ``{sourcecode}`` stay code blocks.
  A ``{toctree}`` body is navigation and goes.
* ``(label)=`` targets and ``% comments`` go, ``+++`` block breaks go; roles keep their text
  (``{ref}`Text <target>` `` → ``Text``); ``{{ name }}`` keeps the name; ``<project:#x>`` links
  keep the target; ``: definition`` lines lose the colon; block attributes (``{#id}`` alone on a
  line) go. GitHub alerts (the ``alert`` extension) lose their marker.
"""

from __future__ import annotations

import re

from scidx.pack.flavours.base import Flavour, Scan
from scidx.pack.flavours.rules import (
    MDX_RULES,
    alert,
    blank_lines_matching,
    blank_options,
    colon_container,
    container_title,
    footnotes,
)
from scidx.pack.flavours.vitepress import interpolation

__all__ = ["MYST"]

_DIRECTIVE = re.compile(r"^((?:[ \t]*>)*[ \t]*)(`{3,}|~{3,})[ \t]*\{([\w:.+-]+)\}(.*)$")
_CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "code-cell"})
_SKIP_BODY = frozenset({"toctree"})


def _directive_close(scan: Scan, i: int) -> int:
    if not scan.directives:
        return 0
    marker = scan.directives[-1]
    stripped = scan.lines[i].strip().lstrip(">").strip()
    if len(stripped) >= len(marker) and stripped == marker[0] * len(stripped):
        scan.directives.pop()
        scan.lines[i] = ""
        return 1
    return 0


def _directive(scan: Scan, i: int) -> int:
    line = scan.lines[i]
    if "{" not in line:
        return 0
    match = _DIRECTIVE.match(line)
    if match is None:
        return 0
    prefix, marker, name, rest = match.groups()
    if name.split(":")[-1] in _CODE_DIRECTIVES:
        language = rest.split()[0] if rest.split() else ""
        scan.lines[i] = f"{prefix}{marker}{language}"
        blank_options(scan, i + 1, prefix)
        return 0  # now an ordinary fence: the engine tracks it as code
    scan.lines[i] = prefix + container_title(name, rest)
    used = 1 + blank_options(scan, i + 1, prefix)
    if name in _SKIP_BODY:
        j = i + used
        while j < len(scan.lines):
            stripped = scan.lines[j].strip()
            if len(stripped) >= len(marker) and stripped == marker[0] * len(stripped):
                scan.lines[j] = ""
                return j + 1 - i
            scan.lines[j] = ""
            j += 1
        return j - i
    scan.directives.append(marker)
    return used


_TARGET = re.compile(r"^[ \t]*\([^()\s]+\)=[ \t]*$")
_COMMENT = re.compile(r"^[ \t]*%")
_BREAK = re.compile(r"^[ \t]*\+\+\+(?:[ \t].*)?$")
_BLOCK_ATTRS = re.compile(r"^[ \t]*\{[#.][^{}]*\}[ \t]*$")
_ROLE = re.compile(r"\{[\w:+.-]+\}(`+)(.+?)\1")
_ROLE_TARGET = re.compile(r"^(.*?)\s*<[^<>]*>$")
_PROJECT_LINK = re.compile(r"<(?:project|inv|path):([^<>\s]*)>")
_DEFINITION = re.compile(r"^([ \t]*):[ \t]+")
# The fieldlist extension: ":name: body" reads "name: body".
_FIELD = re.compile(r"^([ \t]*):([\w-]+):(?=[ \t]|$)")
_INLINE_ATTRS = re.compile(r"\{[#.][\w-]+(?:[ \t]+[^{}]*)?\}")


def _field(scan: Scan, i: int) -> int:
    line = scan.lines[i]
    if line.lstrip()[:1] == ":":
        scan.lines[i] = _FIELD.sub(r"\1\2:", line)
    return 0


def _inline_attrs(part: str, scan: Scan) -> str:
    if "{" not in part or scan.heading:
        return part
    return _INLINE_ATTRS.sub("", part)


def _role_text(match: re.Match[str]) -> str:
    text = match.group(2).strip()
    named = _ROLE_TARGET.match(text)
    if named is not None and named.group(1):
        return named.group(1)
    return text.lstrip("~!")


def _roles(line: str) -> str:
    return _ROLE.sub(_role_text, line) if "}`" in line else line


def _roles_rule(scan: Scan, i: int) -> int:
    # Roles hold a code span, so they are rewritten before the inline rules split code off.
    scan.lines[i] = _roles(scan.lines[i])
    line = scan.lines[i]
    if "<" in line:
        scan.lines[i] = _PROJECT_LINK.sub(lambda m: m.group(1).lstrip("#"), line)
    match = _DEFINITION.match(scan.lines[i])
    if match is not None:
        scan.lines[i] = match.group(1) + scan.lines[i][match.end() :]
    return 0


MYST = Flavour(
    "myst",
    block=(
        _directive_close,
        _directive,
        colon_container,
        _field,
        alert,
        blank_lines_matching(_TARGET),
        blank_lines_matching(_COMMENT),
        blank_lines_matching(_BREAK),
        blank_lines_matching(_BLOCK_ATTRS),
        _roles_rule,
    ),
    inline=(interpolation, _inline_attrs, footnotes),
    mdx_rules=MDX_RULES,
)
