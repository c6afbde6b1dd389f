"""Docusaurus 3 (MDX): admonitions ``:::note[Title]``, ESM lines, JSX components, comments.

Docusaurus 3 reads ``.md`` files as MDX too, so the MDX rules apply to every file: ``import``/
``export`` statements go, a line of JSX tags (``<Tabs>``, ``<TabItem value="npm">``) keeps only
its visible ``label``/``title`` text, ``{/* comments */}`` go, and indented text is never an
indented code block. ``:::type[Title]`` / ``:::type Title`` openers become their title and
``:::`` closers go. Magic comments (``// highlight-next-line``) leave code blocks.
"""

from __future__ import annotations

import re

from scidx.pack.flavours.base import Flavour
from scidx.pack.flavours.rules import (
    MDX_RULES,
    colon_container,
    footnotes,
)

__all__ = ["DOCUSAURUS"]

_MAGIC = re.compile(
    r"^[ \t]*(?://|#|/\*|<!--|\{/\*)[ \t]*highlight-(?:next-line|start|end)"
    r"[ \t]*(?:\*/\}?|-->)?[ \t]*$"
)


def _magic_comment(line: str, info: str) -> str:
    return "" if "highlight-" in line and _MAGIC.match(line) else line


DOCUSAURUS = Flavour(
    "docusaurus",
    block=(colon_container,),
    inline=(footnotes,),
    code=(_magic_comment,),
    mdx=True,
    mdx_rules=MDX_RULES,
)
