"""Heading anchor slugs as GitHub, MkDocs (``toc``), VitePress and docutils (Sphinx) make them.

Both sluggers are per-document and stateful: they remember every slug they have handed out so
that a repeated heading gets a unique anchor, exactly as the renderer would number it. Feed
*every* heading of a document (all levels, in document order) through one slugger, otherwise
the numbering of later duplicates drifts from what the rendered page uses.

Pure stdlib, no I/O; deterministic for identical inputs (modulo the Unicode database of the
running Python, see :class:`GithubSlugger`).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal, Protocol

__all__ = [
    "DocutilsSlugger",
    "GithubSlugger",
    "MkdocsSlugger",
    "Slugger",
    "VitepressSlugger",
    "docutils_make_id",
    "make_slugger",
    "vitepress_slugify",
]

# github-slugger strips the Unicode general categories No, Pc-less punctuation (Pd, Ps, Pe, Pi,
# Pf, Po), all symbols, Cc, Co, Cf, Cn and separators (Zs, Zl, Zp), then puts back the
# code points with the Alphabetic property, the ASCII space (turned into "-") and "-".
# Connector punctuation ("_" and friends), letters, marks and Nd/Nl numbers survive.
_GITHUB_STRIP_CATEGORIES = frozenset(
    {"No", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Cc", "Co", "Cf", "Cn"}
    | {"Zs", "Zl", "Zp"}
)
# The only code points that are both in a stripped category (So) and Alphabetic
# (Other_Alphabetic): circled and squared Latin letters. Python exposes no Alphabetic property,
# so they are listed here (stable since Unicode 6).
_OTHER_ALPHABETIC_SYMBOLS = (
    (0x24B6, 0x24E9),
    (0x1F130, 0x1F149),
    (0x1F150, 0x1F169),
    (0x1F170, 0x1F189),
)


def _github_keeps(char: str) -> bool:
    if char in " -":
        return True
    if unicodedata.category(char) not in _GITHUB_STRIP_CATEGORIES:
        return True
    code = ord(char)
    return any(lo <= code <= hi for lo, hi in _OTHER_ALPHABETIC_SYMBOLS)


# Most headings are ASCII; caching the per-character verdict keeps slugging cheap on big corpora.
_github_verdicts: dict[str, bool] = {}


def github_slugify(text: str) -> str:
    """Slugify ``text`` like github-slugger's ``slug()`` helper, without de-duplication.

    Lowercases, drops punctuation, symbols, control/format/unassigned code points and
    separators other than the ASCII space, then turns each space into ``-`` (runs of spaces are
    *not* collapsed, matching GitHub).

    Args:
        text: the plain text of a heading.

    Returns:
        The slug; may be empty (e.g. for a heading made only of punctuation).
    """
    out: list[str] = []
    verdicts = _github_verdicts
    for char in text.lower():
        keep = verdicts.get(char)
        if keep is None:
            keep = verdicts[char] = _github_keeps(char)
        if keep:
            out.append(char)
    return "".join(out).replace(" ", "-")


class Slugger(Protocol):
    """A per-document anchor generator."""

    def slug(self, text: str) -> str:
        """Return the unique anchor for a heading whose plain text is ``text``."""
        ...

    def unique(self, anchor: str) -> str:
        """Register an already-made anchor (e.g. an explicit ``{#id}``), de-duplicating it."""
        ...

    def reserve(self, anchor: str) -> None:
        """Mark ``anchor`` as taken without handing it out."""
        ...


class GithubSlugger:
    """Anchors as GitHub renders them (a port of github-slugger 2.x).

    Duplicates get ``-1``, ``-2``, ... appended; a generated suffix never collides with an
    earlier literal slug (``echo``, ``echo``, ``echo 1`` gives ``echo``, ``echo-1``,
    ``echo-1-1``).

    Characters are classified with the running Python's Unicode database, whereas
    github-slugger's table is Unicode 13; code points assigned after Unicode 13 may therefore
    differ (GitHub strips them as unassigned).

    Example:
        >>> s = GithubSlugger()
        >>> s.slug("Install"), s.slug("Install")
        ('install', 'install-1')
    """

    def __init__(self) -> None:
        """Create an empty slugger for one document."""
        self._occurrences: dict[str, int] = {}

    def slug(self, text: str) -> str:
        """Return the unique GitHub anchor for the heading text ``text``.

        Args:
            text: the heading's plain text (markup already removed).

        Returns:
            The slug, de-duplicated against every slug this instance returned before.
        """
        return self.unique(github_slugify(text))

    def unique(self, anchor: str) -> str:
        """Register ``anchor`` as used and return it, suffixed with ``-N`` if already taken.

        Args:
            anchor: a ready-made anchor, such as an explicit ``{#custom-id}``.

        Returns:
            ``anchor`` itself when unused, else the next free ``anchor-N``.
        """
        occurrences = self._occurrences
        result = anchor
        while result in occurrences:
            occurrences[anchor] += 1
            result = f"{anchor}-{occurrences[anchor]}"
        occurrences[result] = 0
        return result

    def reserve(self, anchor: str) -> None:
        """Mark ``anchor`` as taken, so a later heading with that slug gets ``anchor-1``.

        Args:
            anchor: the anchor to block (e.g. ``""``, owned by text before the first heading).
        """
        self._occurrences.setdefault(anchor, 0)


# @mdit-vue/shared's slugify, VitePress's default for heading anchors.
_VITEPRESS_CONTROL = re.compile(r"[\u0000-\u001f]")
_VITEPRESS_SPECIAL = re.compile(r"""[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:"'“”‘’<>,.?/]+""")
_VITEPRESS_COMBINING = re.compile(r"[\u0300-\u036f]")


def vitepress_slugify(text: str) -> str:
    """Slugify ``text`` as VitePress does (``@mdit-vue/shared`` ``slugify``), no de-duplication.

    NFKD with combining marks removed, control characters dropped, each run of spaces and
    ASCII punctuation made one ``-``, ``-`` trimmed at both ends, a leading digit prefixed with
    ``_``, lower-cased: ``What's Next?`` is ``what-s-next`` (GitHub: ``whats-next``).

    Example:
        >>> vitepress_slugify("Vite, Vue & Markdown Config")
        'vite-vue-markdown-config'
    """
    text = _VITEPRESS_COMBINING.sub("", unicodedata.normalize("NFKD", text))
    text = _VITEPRESS_SPECIAL.sub("-", _VITEPRESS_CONTROL.sub("", text))
    text = re.sub(r"-{2,}", "-", text).strip("-")
    return re.sub(r"^(\d)", r"_\1", text).lower()


class VitepressSlugger(GithubSlugger):
    """Anchors as VitePress renders them: :func:`vitepress_slugify`, duplicates ``-1``, ``-2``.

    markdown-it-anchor numbers a repeated slug from 1, as github-slugger does.
    """

    def slug(self, text: str) -> str:
        """Return the unique VitePress anchor for the heading text ``text``."""
        return self.unique(vitepress_slugify(text))


# docutils.nodes.make_id: letters that NFKD does not reduce to ASCII, mapped as docutils does.
_DOCUTILS_LETTERS = str.maketrans(
    {"ß": "sz", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ħ": "h", "ı": "i", "ł": "l"}
    | {"ŀ": "l", "ŧ": "t", "ƀ": "b", "ƈ": "c", "ɗ": "d", "ȷ": "j", "þ": "th", "ð": "d"}
)


def docutils_make_id(text: str) -> str:
    """``docutils.nodes.make_id``: the id Sphinx gives a section (MyST headings included).

    Lower-cased, a few letters spelled out (``ß`` → ``sz``), NFKD reduced to ASCII, each run
    of other characters one ``-``, leading digits and hyphens and trailing hyphens removed:
    ``1. Directives - a block-level extension`` is ``directives-a-block-level-extension``.

    Example:
        >>> docutils_make_id("C++ API & Café")
        'c-api-cafe'
    """
    text = text.lower().translate(_DOCUTILS_LETTERS)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]+", "-", " ".join(text.split()))
    return re.sub(r"^[-0-9]+|-+$", "", text)


class DocutilsSlugger(GithubSlugger):
    """Section ids as Sphinx writes them: :func:`docutils_make_id`, always the primary HTML id.

    MyST's ``myst_heading_anchors`` slugs are extra ids, and only to its configured depth; the
    docutils id exists for every heading. A title whose id is empty or already taken gets the
    automatic ``id1``, ``id2``, ... (docutils numbers these per document, so a page with other
    automatic ids may number them differently).
    """

    def __init__(self) -> None:
        """Create an empty slugger for one document."""
        super().__init__()
        self._auto = 0

    def slug(self, text: str) -> str:
        """Return the section id of the heading text ``text``."""
        made = docutils_make_id(text)
        while not made or made in self._occurrences:
            self._auto += 1
            made = f"id{self._auto}"
        return self.unique(made)


_MKDOCS_STRIP = re.compile(r"[^\w\s-]")
_MKDOCS_SEP = re.compile(r"[-\s]+")
_MKDOCS_IDCOUNT = re.compile(r"^(.*)_([0-9]+)$")


def mkdocs_slugify(text: str) -> str:
    """Slugify ``text`` like Python-Markdown's ``toc.slugify(text, "-")`` (MkDocs' default).

    Args:
        text: the plain text of a heading.

    Returns:
        ASCII-folded, lowercased slug with runs of ``-``/whitespace collapsed to one ``-``.
    """
    value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    value = _MKDOCS_STRIP.sub("", value).strip().lower()
    return _MKDOCS_SEP.sub("-", value)


class MkdocsSlugger:
    """Anchors as MkDocs renders them (Python-Markdown ``toc``: ``slugify`` + ``unique``).

    Duplicates get ``_1``, ``_2``, ...; an empty slug becomes ``_1`` (Python-Markdown never
    emits an empty id).

    Example:
        >>> s = MkdocsSlugger()
        >>> s.slug("Install"), s.slug("Install")
        ('install', 'install_1')
    """

    def __init__(self) -> None:
        """Create an empty slugger for one document."""
        self._ids: set[str] = set()
        self._full: dict[str, int] = {}

    def slug(self, text: str) -> str:
        """Return the unique MkDocs anchor for the heading text ``text``.

        Args:
            text: the heading's plain text (markup already removed).

        Returns:
            The slug, de-duplicated against every id this instance returned before.
        """
        return self.unique(mkdocs_slugify(text))

    def unique(self, anchor: str) -> str:
        """Register ``anchor`` as used and return it, de-duplicated like ``toc.unique``.

        Args:
            anchor: a ready-made anchor, such as an explicit ``{#custom-id}``.

        Returns:
            ``anchor`` when unused and non-empty, else the next free ``anchor_N``.
        """
        ids = self._ids
        if anchor and anchor not in ids:
            ids.add(anchor)
            return anchor
        match = _MKDOCS_IDCOUNT.match(anchor)
        base, count = (match.group(1), int(match.group(2))) if match else (anchor, 0)
        # _full[base] = n means base_1 .. base_n are all taken, so a page with thousands of
        # identical headings does not rescan every suffix (quadratic in toc's naive loop).
        known = self._full.get(base, 0)
        contiguous = count <= known
        count = max(count, known) + 1
        while f"{base}_{count}" in ids:
            count += 1
        if contiguous:
            self._full[base] = count
        result = f"{base}_{count}"
        ids.add(result)
        return result

    def reserve(self, anchor: str) -> None:
        """Mark ``anchor`` as taken, so a later heading with that slug gets ``anchor_1``.

        Args:
            anchor: the anchor to block (``""`` is never handed out anyway).
        """
        self._ids.add(anchor)


def make_slugger(
    style: Literal["github", "mkdocs", "vitepress", "docutils"],
) -> GithubSlugger | MkdocsSlugger:
    """Return a fresh per-document slugger for ``style``.

    Args:
        style: ``"github"`` (github-slugger), ``"mkdocs"`` (Python-Markdown ``toc``),
            ``"vitepress"`` or ``"docutils"`` (Sphinx section ids).

    Returns:
        A new, empty slugger.

    Raises:
        ValueError: if ``style`` is not one of the two supported styles.
    """
    if style == "github":
        return GithubSlugger()
    if style == "mkdocs":
        return MkdocsSlugger()
    if style == "vitepress":
        return VitepressSlugger()
    if style == "docutils":
        return DocutilsSlugger()
    raise ValueError(
        f"unknown anchor style {style!r}; use 'github', 'mkdocs', 'vitepress' or 'docutils'"
    )
