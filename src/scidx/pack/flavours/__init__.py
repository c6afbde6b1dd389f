"""Generator flavours: what each docs generator adds to Markdown, rewritten to CommonMark.

One small profile per generator (:mod:`.mkdocs`, :mod:`.docusaurus`, :mod:`.vitepress`,
:mod:`.starlight`, :mod:`.myst`, :mod:`.github`), run by :func:`~.base.rewrite` before
parsing; :mod:`.detect` finds the generator from its config file.
"""

from __future__ import annotations

from scidx.pack.flavours.base import Flavour, rewrite
from scidx.pack.flavours.docusaurus import DOCUSAURUS
from scidx.pack.flavours.github import COMMONMARK, GITHUB
from scidx.pack.flavours.mkdocs import MKDOCS
from scidx.pack.flavours.myst import MYST
from scidx.pack.flavours.starlight import STARLIGHT
from scidx.pack.flavours.vitepress import VITEPRESS

__all__ = ["FLAVOURS", "GENERATORS", "Flavour", "flavour_for", "rewrite"]

#: Generator name → flavour. Hugo and mdBook read as CommonMark (their template directives are
#: clean-text rules), as before flavours existed.
FLAVOURS: dict[str, Flavour] = {
    "mkdocs": MKDOCS,
    "docusaurus": DOCUSAURUS,
    "vitepress": VITEPRESS,
    "starlight": STARLIGHT,
    "myst": MYST,
    "github": GITHUB,
    "mdbook": COMMONMARK,
    "hugo": COMMONMARK,
    "commonmark": COMMONMARK,
}
#: The names ``staticcorpus.json``'s ``"generator"`` accepts.
GENERATORS = tuple(FLAVOURS)


def flavour_for(generator: str) -> Flavour:
    """The flavour of a generator name (one of :data:`GENERATORS`; unknown: CommonMark)."""
    return FLAVOURS.get(generator, COMMONMARK)
