"""Search results: the :class:`Hit` type, its snippet (the best-matching passage) and rendering.

:class:`HitRenderer` turns ranked chunk rows into :class:`Hit` objects, reading the string
tables of the :class:`~scidx.index.corpus.Corpus`; the snippet is computed on first access.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from scidx.errors import CorruptIndexError, ScidxError

if TYPE_CHECKING:
    from scidx.index.bm25 import PostingLookup
    from scidx.index.corpus import Corpus
    from scidx.index.highlight import Snippet
    from scidx.index.offsets import RowMatches
    from scidx.index.urls import UrlRenderer

__all__ = ["DEFAULT_SNIPPET_CHARS", "PAGE_FIELDS", "Hit", "HitRenderer"]

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

    @property
    def snippet_parts(self) -> Snippet:
        """The snippet with its highlight and code ranges (see :mod:`scidx.index.highlight`)."""
        # Kept in the instance dict once made (cached_property's lock costs more than the
        # lookup; a race only computes the same value twice).
        made: Snippet | None = self.__dict__.get("snippet_parts")
        if made is None:
            made = self.__dict__["snippet_parts"] = self._snippet()
        return made

    def _snippet(self) -> Snippet:
        state = self.__dict__
        lazy = state.get("_lazy")
        if lazy is not None and lazy.check is not None:
            lazy.check()  # the snippet reads the text and the offsets from the file
        if lazy is not None and "plain" not in state and "text" not in state:
            body = lazy.corpus.plain(state["_row"])  # one read, without filling two fields
        else:
            body = self.plain if self.plain is not None else self.text
        terms = self.query_terms
        page = state.get("_page")
        if page is not None and terms:
            row = self.__dict__["_row"]
            found = page.matches(row)
            if found is not None:
                # The index says where this chunk's words are: no scan of the text.
                snippet: Snippet | None = _highlight().snippet_from_offsets(
                    body,
                    found.is_flat,
                    found.matches,
                    found.spans,
                    found.terms,
                    page.distinct,
                    self.snippet_chars,
                )
                if snippet is not None:
                    return snippet
            terms = page.present(row)
        scanned: Snippet = _highlight().build_snippet(body, terms, self.snippet_chars)
        return scanned

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


#: The fields a results list shows, decoded for a whole page of hits on the first read of any.
PAGE_FIELDS = frozenset(("id", "source", "anchor", "heading_path", "title", "url"))
_LAZY_FIELDS = PAGE_FIELDS | {"text", "plain"}
# Dataclass defaults live on as class attributes, which would answer before __getattr__ and hide
# a lazy hit's fields; the generated __init__ keeps its own copy of the defaults.
for _name in _LAZY_FIELDS:
    if _name in Hit.__dict__:
        delattr(Hit, _name)


@functools.cache
def _highlight() -> Any:
    """:mod:`scidx.index.highlight`, imported by the first snippet (a ranking needs none)."""
    from scidx.index import highlight

    return highlight


class _Page:
    """The hits of one search: which query terms each of their chunks contains, and where.

    A word can only match a query term that the chunk's BM25 postings hold (the postings were
    made from the same clean text by the same tokenizer), so a snippet looks for those terms
    alone. With the index's snippet offsets (:mod:`scidx.index.offsets`) the words themselves
    are looked up, and the text is not scanned at all. Worked out for every row of the page at
    once, when the first snippet is read.
    """

    __slots__ = ("_matches", "_present", "corpus", "distinct", "postings", "rows", "terms")

    def __init__(
        self,
        rows: Sequence[int],
        terms: tuple[str, ...],
        postings: PostingLookup,
        corpus: Corpus | None = None,
    ):
        self.rows = rows
        self.terms = terms
        self.postings = postings
        self.corpus = corpus  # its snippet offsets are looked up when a snippet is read
        self._present: dict[int, tuple[str, ...]] | None = None
        self._matches: dict[int, RowMatches] | None = None
        self.distinct: tuple[str, ...] = ()  # "" and the terms the stored matches index into

    def present(self, row: int) -> tuple[str, ...]:
        """The query terms that chunk ``row`` contains (all of them if that cannot be told)."""
        present = self._present
        if present is None:
            present = self._present = self._compute()
        return present.get(row, self.terms)

    def matches(self, row: int) -> RowMatches | None:
        """Chunk ``row``'s stored candidate words for the query terms, or None: scan it."""
        found = self._matches
        if found is None:
            found = {}
            offsets = self.corpus.offsets if self.corpus is not None else None
            if offsets is not None:
                distinct = tuple(dict.fromkeys(t for t in self.terms if t))
                self.distinct = ("", *distinct)  # the stored matches count terms from 1
                found = offsets.page(self.rows, distinct)
            self._matches = found
        return found.get(row)

    def _compute(self) -> dict[int, tuple[str, ...]]:
        rows = np.asarray(self.rows, dtype=np.int64)
        found: dict[int, list[str]] = {int(r): [] for r in rows}
        for term in dict.fromkeys(self.terms):
            try:
                postings = self.postings.postings([term])
            except ScidxError:
                return {}  # a corrupt run: look for every term (a snippet never raises)
            if not postings:
                continue  # no chunk has the term
            docs = postings[0][0]
            at = docs.searchsorted(rows)
            hit = at < docs.shape[0]
            hit[hit] = docs[at[hit]] == rows[hit]
            for r in rows[hit].tolist():
                found[r].append(term)
        return {r: tuple(t) for r, t in found.items()}


class HitRenderer:
    """Builds :class:`Hit` objects for chunk rows of one corpus; their fields are read lazily.

    Args:
        corpus: The index's arrays.
        postings: The index's posting lookup; with it, a snippet only looks for the query
            terms its chunk contains (see :class:`_Page`).
    """

    def __init__(self, corpus: Corpus, postings: PostingLookup | None = None) -> None:
        self.corpus = corpus
        self.postings = postings
        self._sources_checked = False
        self._url_renderer: UrlRenderer | None = None
        #: Called before any field read from the corpus (the in-place-change check of a
        #: memory-mapped file, :meth:`~scidx.index.opening.MappedFile.check`); None: nothing.
        self.check: Callable[[], None] | None = None

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
        page = _Page(rows, terms, self.postings, c) if terms and self.postings is not None else None
        new = object.__new__
        set_state = object.__setattr__  # Hit is frozen; its state is set in one step
        out = []
        fields = _FieldPage(rows)
        refs = fields.hits
        ref = weakref.ref
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
                    "_page": page,
                    "_fields": fields,  # the page: its fields are decoded together
                },
            )
            out.append(hit)
            refs.append(ref(hit))
        return out

    def _urls(self) -> UrlRenderer:
        """The corpus's URL template, parsed once (the module loads with the first URL)."""
        made = self._url_renderer
        if made is None:
            from scidx.index.urls import UrlRenderer

            made = self._url_renderer = UrlRenderer(
                self.corpus.url_template, self.corpus.source_root
            )
        return made

    def read(self, hit: Hit, name: str) -> Any:
        """Read field ``name`` of a lazy ``hit`` from the index (the one place fields are read).

        The fields a results list shows (:data:`PAGE_FIELDS`) are decoded for every hit of
        ``hit``'s page at once (:meth:`page_fields`) and stored in each of them, so the other
        hits' reads are plain attribute lookups; ``text`` and ``plain`` (whole chunk bodies)
        are read for this hit alone.

        Raises:
            CorruptIndexError: The mapped file was changed in place since it was loaded.
        """
        if self.check is not None:
            self.check()
        state = hit.__dict__
        if name in PAGE_FIELDS:
            page: _FieldPage = state["_fields"]
            if not page.filled:
                page.filled = True
                for ref, values in zip(page.hits, self.page_fields(page.rows), strict=True):
                    other = ref()
                    if other is not None:  # a hit the caller dropped needs nothing
                        other.__dict__.update(values)
            if name not in state:  # a page filled before this hit's state was made (unpickled)
                state.update(self.page_fields([state["_row"]])[0])
            return state[name]
        c = self.corpus
        row: int = state["_row"]
        if name == "text":
            return c.chunk_text[row]
        return c.chunk_plain[row] if c.chunk_plain is not None else None  # "plain"

    def page_fields(self, rows: Sequence[int]) -> list[dict[str, Any]]:
        """:data:`PAGE_FIELDS` of chunk ``rows``, one dict per row.

        One string-table pass per field for a whole page instead of one lookup per field per
        hit. Rows were range-checked when the hits were made, source rows by
        :meth:`~scidx.index.corpus.Corpus.check_sources`.
        """
        c = self.corpus
        anchors = c.chunk_anchor.take(rows)
        sources = c.chunk_source[list(rows)].tolist() if rows else []
        paths = c.source_path.take(sources)
        if c.url_template:
            render = self._urls().render
            pages = c.pages(sources)
            if pages is None:
                urls = [render(p, a) for p, a in zip(paths, anchors, strict=True)]
            else:
                urls = [render(*v) for v in zip(paths, anchors, pages, strict=True)]
        else:
            urls = [None] * len(rows)
        headings = [h.split("\x1f") if h else [] for h in c.chunk_heading.take(rows)]
        titles = c.source_title.take(sources)
        columns = zip(c.chunk_id.take(rows), anchors, headings, paths, titles, urls, strict=True)
        return [
            {"id": i, "anchor": a, "heading_path": h, "source": p, "title": t, "url": u}
            for i, a, h, p, t, u in columns
        ]


class _FieldPage:
    """One page of hits (weakly held: a hit must not keep its page's others alive) and its rows.

    ``filled`` is set once any hit's field was read, when every live hit got its fields.
    """

    __slots__ = ("filled", "hits", "rows")

    def __init__(self, rows: Sequence[int]) -> None:
        self.rows = rows
        self.hits: list[weakref.ref[Hit]] = []
        self.filled = False
