"""VitePress: ``::: tip Title`` containers, ``[[toc]]``, ``<<< @/file`` imports, ``{{ }}``.

Container openers become their title (``::: details Click me`` → ``Click me``; ``::: tip`` and
``::: code-group`` → nothing) and ``:::`` closers go; ``[[toc]]`` and code snippet imports
(``<<< @/snippets/x.js``) go; ``{{ expression }}`` keeps the expression's text; GitHub alerts
lose their marker; code notations (``// [!code highlight]``) leave code blocks. ``<script>``
and ``<style>`` blocks are already hidden by the clean-text rules.
"""

from __future__ import annotations

import re

from scidx.pack.flavours.base import Flavour, Scan
from scidx.pack.flavours.rules import (
    MDX_RULES,
    alert,
    blank_lines_matching,
    colon_container,
    emoji,
    footnotes,
)

__all__ = ["VITEPRESS", "interpolation"]

_TOC = re.compile(r"^[ \t]*\[\[toc\]\][ \t]*$", re.IGNORECASE)
_SNIPPET_IMPORT = re.compile(r"^[ \t]*<<<[ \t]+\S")
_INTERPOLATION = re.compile(r"\{\{(.*?)\}\}")
_NOTATION = re.compile(
    r"[ \t]*(?://|#|<!--|/\*|--|;)[ \t]*\[!code(?:[ \t][^\]]*)?\](?:[ \t]*(?:-->|\*/))?"
)


def interpolation(part: str, scan: Scan) -> str:
    """``{{ expr }}`` (Vue, MyST substitutions) keeps the expression's text."""
    if "{{" not in part:
        return part
    return _INTERPOLATION.sub(lambda m: m.group(1).strip(), part)


def _notation(line: str, info: str) -> str:
    return _NOTATION.sub("", line) if "[!code" in line else line


VITEPRESS = Flavour(
    "vitepress",
    block=(
        colon_container,
        alert,
        blank_lines_matching(_TOC),
        blank_lines_matching(_SNIPPET_IMPORT),
    ),
    inline=(interpolation, emoji, footnotes),
    code=(_notation,),
    mdx_rules=MDX_RULES,
)
