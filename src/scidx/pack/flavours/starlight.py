"""Astro Starlight: asides ``:::note[Title]`` in every file, MDX components in ``.mdx`` files.

``.md`` pages are plain Markdown with asides; ``.mdx`` pages add ESM lines and components
(``<Tabs>``, ``<TabItem label>``, ``<Steps>``, ``<Card title>``, ``<Aside>``, ``<Badge text>``):
a line of tags keeps only its visible ``title``/``label``/``text``/``description``.
"""

from __future__ import annotations

from scidx.pack.flavours.base import Flavour
from scidx.pack.flavours.rules import MDX_RULES, colon_container, footnotes

__all__ = ["STARLIGHT"]

STARLIGHT = Flavour("starlight", block=(colon_container,), inline=(footnotes,), mdx_rules=MDX_RULES)
