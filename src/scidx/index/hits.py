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
    from scidx.index.expand import Correction
    from scidx.index.highlight import Part, Snippet
    from scidx.index.offsets import SnippetHints
    from scidx.index.texts import TextStore
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
        version: The docs version of the hit's page (:mod:`scidx.index.versions`), or
            ``None`` when the index is unversioned or the page has no version.
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
    version: str | None = None

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
        page = state.get("_page")
        if page is not None and self.query_terms:
            # Every snippet of the page at once: one look at the postings, one file check.
            page.snippets(self.snippet_chars)
            made: Snippet | None = state.get("snippet_parts")
            if made is not None:
                return made
        if lazy is not None and lazy.check is not None:
            lazy.check()  # the snippet reads the text from the file
        if lazy is not None and "plain" not in state and "text" not in state:
            body = lazy.corpus.plain(state["_row"])  # one read, without filling two fields
        else:
            body = self.plain if self.plain is not None else self.text
        langs = snippet_languages(lazy.corpus) if lazy is not None else ()
        scanned: Snippet = _highlight().build_snippet(
            body, self.query_terms, self.snippet_chars, langs
        )
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

    @property
    def corrections(self) -> tuple[Correction, ...]:
        """What the search corrected or completed in the query (the same for every hit).

        Each a :class:`~scidx.index.expand.Correction` (``word`` as typed, ``shown`` as
        searched, ``kind`` ``"typo"`` or ``"prefix"``); empty when the query was taken as is.
        """
        found: tuple[Correction, ...] = self.__dict__.get("_corrections", ())
        return found

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
            # Only for a versioned page, so unversioned indexes answer as before.
            **({"version": self.version} if self.version is not None else {}),
            **(
                {"corrections": [c.to_dict() for c in fixed]} if (fixed := self.corrections) else {}
            ),
        }


def _section_dict(hit: Hit) -> dict[str, Any]:
    data = hit.to_dict()
    del data["text"], data["sections"]
    data.pop("corrections", None)  # the query's, told once by the hit itself
    return data


#: The fields a results list shows, decoded for a whole page of hits on the first read of any.
PAGE_FIELDS = frozenset(("id", "source", "anchor", "heading_path", "title", "url", "version"))
_LAZY_FIELDS = PAGE_FIELDS | {"text", "plain"}
# Dataclass defaults live on as class attributes, which would answer before __getattr__ and hide
# a lazy hit's fields; the generated __init__ keeps its own copy of the defaults.
for _name in _LAZY_FIELDS:
    if _name in Hit.__dict__:
        delattr(Hit, _name)


def snippet_languages(corpus: Any) -> tuple[str, ...]:
    """The analyzers a snippet confirms its marks with (issue 42); () for English pages only."""
    from scidx.tokenize import analyzer_language

    found = tuple(dict.fromkeys(analyzer_language(lang) for lang in corpus.languages.languages))
    return () if found == ("en",) else found


@functools.cache
def _highlight() -> Any:
    """:mod:`scidx.index.highlight`, imported by the first snippet (a ranking needs none)."""
    from scidx.index import highlight

    return highlight


class _Page:
    """The hits of one search: which query terms each of their chunks contains, and where.

    A word can only match a query term that the chunk's BM25 postings hold (the postings were
    made from the same clean text by the same tokenizer), so a snippet looks for those terms
    alone; the index's ``snippet.where`` byte of each such posting says which eighths of the
    text hold the term (:mod:`scidx.index.offsets`), so only that part is scanned for the
    window. Worked out for every live hit of the page at once, when the first snippet is read.
    """

    __slots__ = ("corpus", "done", "hits", "postings", "renderer", "rows", "terms")

    def __init__(
        self,
        rows: Sequence[int],
        terms: tuple[str, ...],
        postings: PostingLookup,
        renderer: HitRenderer,
        hits: list[weakref.ref[Hit]],
    ):
        self.rows = rows
        self.terms = terms
        self.postings = postings
        self.renderer = renderer
        self.corpus = renderer.corpus
        self.hits = hits  # weakly held: a hit must not keep its page's others alive
        self.done = False

    def snippets(self, chars: int) -> None:
        """Give every live hit of the page without one its snippet (``snippet_parts``).

        A hit whose text cannot be read is left without: its own read then raises.

        Raises:
            CorruptIndexError: The mapped file was changed in place since it was loaded.
        """
        if self.done:
            return
        self.done = True
        renderer, corpus = self.renderer, self.corpus
        if renderer.check is not None:
            renderer.check()
        todo = []
        for ref in self.hits:
            hit = ref()
            if hit is not None:
                state = hit.__dict__
                if "snippet_parts" not in state and state.get("snippet_chars") == chars:
                    todo.append(state)
        if not todo:
            return
        terms = tuple(dict.fromkeys(self.terms))  # a search's are already distinct
        if "" in terms:
            terms = tuple(t for t in terms if t)
        hints = corpus.hints
        needles = hints.needles_of(terms) if hints is not None else _default_needles(terms)
        wanted = frozenset(terms)
        rows = [state["_row"] for state in todo]
        store: TextStore | None = getattr(corpus.chunk_text, "store", None)
        parts: list[tuple[int, int] | None] = [None] * len(todo)
        sizes: list[int] = []
        if hints is not None and hints.has_where and store is not None and chars >= 8:
            sizes = store.clean_sizes(rows)
            parts = self._regions(hints, rows, sizes, terms, chars - 2)
        hl = _highlight()
        made = self._parts(hl, store, rows, parts, sizes, chars) if store is not None else None
        ready: list[dict[str, Any]] = []
        texts: list[Part] = []
        for i, state in enumerate(todo):
            part = made[i] if made is not None else None
            if part is None:  # no window hint, or the text is short: the whole text
                try:
                    part = hl.whole_part(corpus.plain(rows[i]))
                except ScidxError:
                    continue  # this hit's own read raises
            ready.append(state)
            texts.append(part)
        if texts:
            made_all = hl.snippets_of_parts(
                texts, needles, wanted, chars, snippet_languages(corpus)
            )
            for state, snippet in zip(ready, made_all, strict=True):
                state["snippet_parts"] = snippet

    @staticmethod
    def _parts(
        hl: Any,
        store: TextStore,
        rows: list[int],
        spans: list[tuple[int, int] | None],
        sizes: list[int],
        chars: int,
    ) -> list[Part | None]:
        """The part of each row's text its snippet comes from (None: the whole text).

        The bytes of the page's parts are inflated in one pass, each only up to its part (and
        the rest of its last word, when that fits in 64 bytes; else the whole text is read).
        See :func:`~scidx.index.highlight.parts_of`. A row whose bytes cannot be read gets
        None: its own read of the whole text then raises.
        """
        out: list[Part | None] = [None] * len(rows)
        at = [i for i, span in enumerate(spans) if span is not None]
        if not at:
            return out
        chosen: list[tuple[int, int]] = [span for span in spans if span is not None]
        try:
            datas = store.prefixes([rows[i] for i in at], [span[1] + 64 for span in chosen])
        except ScidxError:
            return out
        totals = [sizes[i] for i in at]
        for i, data, span, total, part in zip(
            at, datas, chosen, totals, hl.parts_of(datas, chosen, totals, chars), strict=True
        ):
            if part is None and len(data) < total:  # a long last word, or much whitespace
                try:
                    part = hl.part_of(store.prefix(rows[i], total), *span, total, chars)
                except ScidxError:
                    part = None
            out[i] = part
        return out

    def _regions(
        self,
        hints: SnippetHints,
        rows: list[int],
        sizes: list[int],
        terms: tuple[str, ...],
        budget: int,
    ) -> list[tuple[int, int] | None]:
        """Each row's part to show, from its postings' ``snippet.where`` bytes (None: all).

        Rows whose postings cannot be read (a corrupt run) get None (the whole text).
        """
        at = np.asarray(rows, dtype=np.int64)
        places: list[Any] = []  # per term with postings: where each row would be among them
        found_rows: list[Any] = []  # and the row found there
        firsts: list[int] = []
        try:
            found = self.postings.postings(terms)
        except ScidxError:
            return [None] * len(rows)
        # Both omit the terms the index does not have (the same binary search of term_hash).
        begins = [begin for begin in map(hints.start, terms) if begin >= 0]
        if len(begins) != len(found):
            return [None] * len(rows)
        typed: dict[Any, Any] = {}
        for (docs, _, _), begin in zip(found, begins, strict=True):
            if not docs.shape[0]:
                continue  # no chunk has the term: it adds nothing to any row
            # Rows in the postings' own dtype: a mixed-type search would convert all of them.
            mine = typed.get(docs.dtype)
            if mine is None:
                mine = typed[docs.dtype] = at.astype(docs.dtype)
            # One binary search and one gather per term, for the page's rows at once.
            pos = docs.searchsorted(mine)
            places.append(pos)
            found_rows.append(docs.take(pos, mode="clip"))
            firsts.append(begin)
        if not places:
            return [None] * len(rows)
        has = np.asarray(found_rows, dtype=np.int64) == at
        posts = np.where(has, np.asarray(places) + np.asarray(firsts)[:, None], -1)
        return hints.regions(posts, sizes, budget)


def _default_needles(terms: Sequence[str]) -> tuple[str, ...]:
    """The needles of ``terms`` in an index without stored ones, sorted."""
    needle = _highlight().needle
    return tuple(sorted({needle(t) for t in terms}))


@functools.cache
def _offsets() -> Any:
    """:mod:`scidx.index.offsets`, imported by the first snippet."""
    from scidx.index import offsets

    return offsets


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
        fixed = getattr(terms, "corrections", ())  # scidx.index.expand.QueryTerms
        terms = tuple(terms)
        fields = _FieldPage(rows)
        refs = fields.hits
        page = (
            _Page(rows, terms, self.postings, self, refs)
            if terms and self.postings is not None
            else None
        )
        new = object.__new__
        set_state = object.__setattr__  # Hit is frozen; its state is set in one step
        out = []
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
                    "_corrections": fixed,
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
        table = c.versions
        versions = [table.name(s) for s in sources] if table is not None else [None] * len(rows)
        columns = zip(
            c.chunk_id.take(rows), anchors, headings, paths, titles, urls, versions, strict=True
        )
        return [
            {
                "id": i,
                "anchor": a,
                "heading_path": h,
                "source": p,
                "title": t,
                "url": u,
                "version": v,
            }
            for i, a, h, p, t, u, v in columns
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
