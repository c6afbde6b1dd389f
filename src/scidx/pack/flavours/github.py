"""GitHub-flavoured Markdown: alerts (``> [!NOTE]``) and footnotes; ``<details>`` is HTML.

Also the flavour of a folder with no generator config. Hugo and mdBook use
:data:`COMMONMARK` (their template directives are handled by the clean-text rules).
"""

from __future__ import annotations

from scidx.pack.flavours.base import Flavour
from scidx.pack.flavours.rules import MDX_RULES, alert, footnotes

__all__ = ["COMMONMARK", "GITHUB"]

GITHUB = Flavour("github", block=(alert,), inline=(footnotes,), mdx_rules=MDX_RULES)
COMMONMARK = Flavour("commonmark", mdx_rules=MDX_RULES)
