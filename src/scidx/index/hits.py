"""Search results: the :class:`Hit` type, its snippet (the best-matching passage) and rendering.

:class:`HitRenderer` turns ranked chunk rows into :class:`Hit` objects, reading the string
tables of the :class:`~scidx.index.corpus.Corpus`; the snippet is computed on first access.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from scidx.errors import CorruptIndexError
from scidx.index.highlight import Snippet, build_snippet
from scidx.index.urls import render_url

if TYPE_CHECKING:
    from scidx.index.corpus import Corpus

__all__ = ["DEFAULT_SNIPPET_CHARS", "Hit", "HitRenderer", "make_snippet"]
_WORD_TAIL = re.compile(r"\w*")

#: The default length of :attr:`Hit.snippet` (the passage a search box shows), in characters.
DEFAULT_SNIPPET_CHARS = 240


@dataclass(frozen=True)
class Hit:
    """One search result.

    Hits returned by a search read their text fields from the index on first access (most
    callers show a few fields of a few hits), then keep them. A hit holds a reference to the
    index's arrays, so it stays valid after ``Index.close()``: the memory map is released when
    the last hit (or other view of it) is garbage-collected; reading never touches freed memory.

    Attributes:
        id: The chunk id (``source:anchor:ordinal`` for Markdown chunks).
        score: The mode's score (BM25, cosine, or the fused hybrid score in [0, 1]).
        source: The source path, relative to the config root.
        anchor: The heading anchor slug ("" for text before the first heading).
        heading_path: Ancestor headings, outermost first.
        title: The document title ("" if none).
        text: The chunk's full Markdown body.
        url: The link made from the index's URL template, or ``None`` when it has none.
        plain: The chunk's clean text (code between ``CODE_START``/``CODE_END``), or ``None``
            when the index has none (snippets then come from ``text``).
        sections: With ``group="page"``: the page's other best sections (not this hit's),
            each a :class:`Hit`; else empty.
        snippet: The best-matching passage as plain text, at most ``snippet_chars``
            characters. Computed on first access (most of the cost of a hit), so callers that
            need only ids and scores do not pay for it.
        highlights: ``[start, end)`` offsets into :attr:`snippet` of the words matching the
            query (same tokenizer as the search: stem-aware).
        snippet_code: ``[start, end)`` offsets into :attr:`snippet` of text from code blocks.
    """

    id: str
    score: float
    source: str
    anchor: str
    heading_path: list[str] = field(default_factory=list)
    title: str = ""
    text: str = ""
    url: str | None = None
    plain: str | None = field(default=None, repr=False, compare=False)
    sections: tuple[Hit, ...] = field(default=(), repr=False, compare=False)
    query_terms: tuple[str, ...] = field(default=(), repr=False, compare=False)
    snippet_chars: int = field(default=DEFAULT_SNIPPET_CHARS, repr=False, compare=False)

    if not TYPE_CHECKING:  # a typo'd attribute must still be a type error for mypy

        def __getattr__(self, name: str) -> Any:
            # Only reached for an attribute the instance does not have: the not-yet-read fields
            # of a hit made by HitRenderer (they are not class attributes, see below).
            lazy = self.__dict__.get("_lazy")
            if lazy is None or name not in _LAZY_FIELDS:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            value = lazy.read(self, name)
            self.__dict__[name] = value
            return value

    def __getstate__(self) -> dict[str, Any]:
        """Every field, read (a pickled or deep-copied hit does not refer to the index)."""
        state = {f.name: getattr(self, f.name) for f in fields(self)}
        if "snippet_parts" in self.__dict__:
            state["snippet_parts"] = self.__dict__["snippet_parts"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore from :meth:`__getstate__`."""
        self.__dict__.update(state)

    @functools.cached_property
    def snippet_parts(self) -> Snippet:
        """The snippet with its highlight and code ranges (see :mod:`scidx.index.highlight`)."""
        body = self.plain if self.plain is not None else self.text
        return build_snippet(body, self.query_terms, self.snippet_chars)

    @property
    def snippet(self) -> str:
        """The best-matching passage of the chunk's clean text for the query terms."""
        return self.snippet_parts.text

    @property
    def highlights(self) -> list[tuple[int, int]]:
        """Offsets into :attr:`snippet` of the words that match the query."""
        return list(self.snippet_parts.highlights)

    @property
    def snippet_code(self) -> list[tuple[int, int]]:
        """Offsets into :attr:`snippet` of code-block text."""
        return list(self.snippet_parts.code)

    def snippet_html(self) -> str:
        """The snippet as HTML: ``<mark>`` around matches, ``<code>`` around code, rest escaped."""
        return self.snippet_parts.html()

    @property
    def link(self) -> str:
        """The URL when the index has a URL template, else ``source#anchor`` (or ``source``)."""
        if self.url:
            return self.url
        return f"{self.source}#{self.anchor}" if self.anchor else self.source

    @property
    def heading(self) -> str:
        """The heading path joined with " > " (the title when the chunk has no heading)."""
        parts = list(self.heading_path)
        if self.title and (not parts or parts[0] != self.title):
            parts.insert(0, self.title)
        return " > ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Return the hit as JSON-ready data with camelCase keys (``headingPath``).

        ``highlights`` and ``snippetCode`` are ``[start, end]`` pairs of character offsets
        into ``snippet``; ``sections`` holds the sub-results of a ``group="page"`` hit (the
        same keys, without ``text`` and ``sections``), else ``[]``.
        """
        parts = self.snippet_parts
        return {
            "id": self.id,
            "score": self.score,
            "source": self.source,
            "anchor": self.anchor,
            "headingPath": list(self.heading_path),
            "title": self.title,
            "text": self.text,
            "snippet": parts.text,
            "highlights": [list(r) for r in parts.highlights],
            "snippetCode": [list(r) for r in parts.code],
            "url": self.url,
            "sections": [_section_dict(h) for h in self.sections],
        }


def _section_dict(hit: Hit) -> dict[str, Any]:
    data = hit.to_dict()
    del data["text"], data["sections"]
    return data


_LAZY_FIELDS = frozenset(
    ("id", "source", "anchor", "heading_path", "title", "text", "url", "plain")
)
# Dataclass defaults live on as class attributes, which would answer before __getattr__ and hide
# a lazy hit's fields; the generated __init__ keeps its own copy of the defaults.
for _name in _LAZY_FIELDS:
    if _name in Hit.__dict__:
        delattr(Hit, _name)


def _needles(terms: Sequence[str]) -> list[str]:
    # Stems are (nearly) prefixes of the words they come from, so "a word starting with a stem"
    # finds the query's words in raw text; y→i stems ("happi") also look for the y form.
    out: set[str] = set()
    for t in terms:
        if not t:
            continue
        out.add(t)
        if t.endswith("i") and len(t) > 2:
            out.add(t[:-1] + "y")
    return sorted(out)


def _find_matches(flat: str, needles: Sequence[str]) -> list[tuple[int, int, str]]:
    """``(start, end, needle)`` of each word in ``flat`` that starts with a needle, in order."""
    lower = flat.lower()
    if len(lower) != len(flat):  # a rare character changes length when lowered
        lower = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in flat)
    found: dict[int, tuple[int, int, str]] = {}
    for needle in needles:
        pos = lower.find(needle)
        while pos != -1:
            if pos == 0 or not (lower[pos - 1].isalnum() or lower[pos - 1] == "_"):
                end = _WORD_TAIL.match(lower, pos + len(needle)).end()  # type: ignore[union-attr]
                prev = found.get(pos)
                if prev is None or len(needle) > len(prev[2]):
                    found[pos] = (pos, end, needle)
            pos = lower.find(needle, pos + 1)
    return [found[p] for p in sorted(found)]


def _cut_to_words(raw: str, start: int, end: int) -> str:
    """``raw[start:end]`` trimmed to whole words, whitespace collapsed, "…" where cut.

    ``raw`` is stripped, so text exists before ``start > 0`` and after ``end < len(raw)``.
    """
    piece = raw[start:end]
    if start > 0 and not raw[start - 1].isspace() and not piece[:1].isspace():
        parts = piece.split(None, 1)
        if len(parts) == 2:
            piece = parts[1]
    if end < len(raw) and not raw[end].isspace() and not piece[-1:].isspace():
        parts = piece.rsplit(None, 1)
        if len(parts) == 2:
            piece = parts[0]
    piece = " ".join(piece.split())
    return ("…" if start > 0 else "") + piece + ("…" if end < len(raw) else "")


def make_snippet(text: str, terms: Sequence[str], limit: int = DEFAULT_SNIPPET_CHARS) -> str:
    """Return the passage of ``text`` (whitespace collapsed) that best covers the query terms.

    The window of at most ``limit`` characters that contains the most distinct query terms (then
    the most occurrences, then the earliest) is chosen, placed with a short lead-in before its
    first match and cut on word boundaries; "…" marks a cut (and counts towards ``limit``).
    Without matches the text's start is returned.

    Args:
        text: The chunk text.
        terms: Query terms from :func:`scidx.tokenize.tokenize`.
        limit: Maximum snippet length in characters (>= 1).

    Returns:
        The snippet; the whole collapsed text when it fits.
    """
    raw = text.strip()
    if len(raw) <= 3 * limit:  # collapsing whitespace may make it fit
        flat = " ".join(raw.split())
        if len(flat) <= limit:
            return flat
        if limit < 8:  # too short for ellipses and whole words to make sense
            return flat[:limit]
    elif limit < 8:
        return " ".join(raw[: 2 * limit].split())[:limit]
    # Work on the raw text (no full copy with collapsed whitespace): a window of `budget` raw
    # characters collapses to at most `budget` characters.
    budget = limit - 2  # room for the two ellipses
    matches = _find_matches(raw, _needles(terms))
    if not matches:
        return _cut_to_words(raw, 0, budget)
    # Two pointers over the matches: the window [i, j] spans at most `budget` characters; a
    # counter of needles inside it gives the distinct-term count incrementally.
    counts: dict[str, int] = {}
    best = (-1, -1, 0)  # (distinct, occurrences, -i)
    best_ij = (0, 0)
    j = 0
    for i in range(len(matches)):
        if j < i:
            j = i
        if j == i:
            counts = {matches[i][2]: 1}
        while j + 1 < len(matches) and matches[j + 1][1] - matches[i][0] <= budget:
            j += 1
            key = matches[j][2]
            counts[key] = counts.get(key, 0) + 1
        cand = (len(counts), j - i + 1, -i)
        if cand > best:
            best, best_ij = cand, (i, j)
        key = matches[i][2]
        counts[key] -= 1
        if not counts[key]:
            del counts[key]
    i0, j0 = best_ij
    lo, hi = matches[i0][0], matches[j0][1]
    slack = max(budget - (hi - lo), 0)
    start = max(0, lo - min(slack // 3, 60))  # a short lead-in; most room after the matches
    end = min(len(raw), start + budget)
    start = max(0, end - budget)
    return _cut_to_words(raw, start, end)


class HitRenderer:
    """Builds :class:`Hit` objects for chunk rows of one corpus; their fields are read lazily.

    Args:
        corpus: The index's arrays.
    """

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._sources_checked = False

    def hit(self, row: int, score: float, terms: Sequence[str], snippet_chars: int) -> Hit:
        """Build the :class:`Hit` for chunk ``row``.

        Raises:
            CorruptIndexError: ``row`` or its source row is out of range.
        """
        return self.hits([row], [score], terms, snippet_chars)[0]

    def hits(
        self, rows: Sequence[int], scores: Sequence[float], terms: Sequence[str], snippet_chars: int
    ) -> list[Hit]:
        """Build the hits for ranked ``rows`` with their ``scores`` (fields read on access).

        Raises:
            CorruptIndexError: A row, or its source row, is out of range.
        """
        c = self.corpus
        n = c.n
        if not self._sources_checked:
            c.check_sources()  # once: every later source row read is in range
            self._sources_checked = True
        terms = tuple(terms)
        new = object.__new__
        set_state = object.__setattr__  # Hit is frozen; its state is set in one step
        out = []
        for row, score in zip(rows, scores, strict=True):
            if not 0 <= row < n:
                raise CorruptIndexError(
                    f"{c.source}: a posting points at chunk {row}, but the index has {n}. The "
                    "file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."
                )
            hit = new(Hit)
            set_state(
                hit,
                "__dict__",
                {
                    "score": float(score),
                    "query_terms": terms,
                    "snippet_chars": snippet_chars,
                    "_row": row,
                    "_lazy": self,
                },
            )
            out.append(hit)
        return out

    def read(self, hit: Hit, name: str) -> Any:
        """Read field ``name`` of a lazy ``hit`` from the index."""
        c = self.corpus
        row: int = hit.__dict__["_row"]
        if name == "id":
            return c.chunk_id[row]
        if name == "anchor":
            return c.chunk_anchor[row]
        if name == "text":
            return c.chunk_text[row]
        if name == "heading_path":
            heading = c.chunk_heading[row]
            return heading.split("\x1f") if heading else []
        if name == "source":
            return c.source_path[int(c.chunk_source[row])]
        if name == "title":
            return c.source_title[int(c.chunk_source[row])]
        if name == "plain":
            return c.chunk_plain[row] if c.chunk_plain is not None else None
        return render_url(c.url_template, hit.source, hit.anchor, c.source_root)  # "url"
