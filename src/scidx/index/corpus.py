"""The arrays of one open index as the query side reads them (built by ``scidx.load``).

Runtime module: numpy and the stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError
from scidx.fusion import DEFAULT_FUSION
from scidx.index.bm25 import BM25Arrays
from scidx.index.languages import ENGLISH, PageLanguages
from scidx.index.vectors import VectorStore
from scidx.index.windows import Windows

if TYPE_CHECKING:
    from scidx.index.dictionary import TermDictionary
    from scidx.index.offsets import SnippetHints
    from scidx.index.versions import VersionTable

__all__ = ["Corpus", "StringLookup"]

_REBUILD = "The file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."


class StringLookup(Protocol):
    """What the query side needs from a string table: length and lazy item access."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int) -> str: ...

    def take(self, rows: Sequence[int]) -> list[str]:
        """The strings of ``rows``, in order."""
        ...


@dataclass(frozen=True)
class Corpus:
    """Lazy views of one index's arrays (string tables, chunk → source map, vectors, BM25).

    Which arrays a query touches: a keyword query reads ``bm25.term_hash`` (binary search),
    the ``bm25.term_df``, ``bm25.term_width`` and ``bm25.run_ptr`` entries and the
    ``bm25.runs`` bytes of its terms, then, per returned hit, one entry of ``chunk.source``
    and the rows of the ``chunk.*`` and ``source.*`` string tables; reading snippets adds the
    hits' runs of ``snippet.*``.
    ``vectors`` is only read by vector and hybrid queries, so a keyword-only process never
    faults its pages in.
    """

    source: str
    n: int
    chunk_id: StringLookup
    chunk_text: StringLookup
    chunk_heading: StringLookup
    chunk_anchor: StringLookup
    chunk_source: npt.NDArray[np.unsignedinteger[Any]]
    source_path: StringLookup
    source_title: StringLookup
    source_meta: StringLookup
    # The float32 matrix itself, or (int8, binary) a store that scores and decodes like one.
    vectors: npt.NDArray[np.float32] | VectorStore
    bm25: BM25Arrays
    stamp: Mapping[str, Any]
    url_template: str | None = None
    store: VectorStore | None = None
    chunk_plain: StringLookup | None = None
    source_root: str | None = None
    #: The ``snippet.where`` array (or None), the ``snippet.needle`` table (or None) and
    #: ``meta.snippets``, checked in O(1) at load; None when the index has none of them. Read
    #: through :attr:`hints`.
    snippet_arrays: tuple[Any, ...] | None = None
    #: ``source.page``: each source's published page path, decided at pack time (FORMAT.md
    #: §2.3); None when the index has none (URLs then come from the source path alone).
    source_page: StringLookup | None = None
    #: ``window.*``: the later windows of chunks longer than the model's input limit, scored
    #: by their best window (FORMAT.md §2.11); None when the index has none.
    windows: Windows | None = None
    #: ``meta.versions`` and ``source.version``: each source's docs version (FORMAT.md §2.3);
    #: None for an unversioned index.
    versions: VersionTable | None = None
    #: ``static.counts``: the corpus's token counts a ``static`` index weighs query tokens
    #: with (FORMAT.md §2.13); None in other indexes.
    token_counts: npt.NDArray[np.uint32] | None = None
    #: ``dict.words``, its word count and inflated length (format 10, FORMAT.md §2.14),
    #: checked in O(1) at load; None when the index has none. Read through :attr:`dictionary`.
    dictionary_arrays: tuple[Any, int, int] | None = None
    #: The pages' languages (``meta.language``, ``source.lang``; issue 42).
    languages: PageLanguages = ENGLISH
    _readers: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def hints(self) -> SnippetHints | None:
        """Where each chunk's query words are (``snippet.*``, FORMAT.md §2.8), for snippets.

        Made on first use, so a process that shows no snippet never imports the module; None
        when the index has no hints, or hints of a version this reader does not know.
        """
        readers = self._readers
        if "hints" not in readers:
            from scidx.index.offsets import open_hints

            found = self.snippet_arrays
            hints = None
            if found is not None:
                where, needles, meta = found
                hints = open_hints(where, needles, meta, self.bm25)
            readers["hints"] = hints
        reader: SnippetHints | None = readers["hints"]
        return reader

    @property
    def dictionary(self) -> TermDictionary | None:
        """The term dictionary (prefix and near-spelling look-ups), None when absent."""
        readers = self._readers
        if "dictionary" not in readers:
            from scidx.index.dictionary import open_dictionary

            readers["dictionary"] = open_dictionary(self.dictionary_arrays, self.bm25, self.source)
        found: TermDictionary | None = readers["dictionary"]
        return found

    def pages(self, rows: Sequence[int]) -> list[str] | None:
        """The stored page paths of source ``rows`` (None without ``source.page``), checked.

        Raises:
            CorruptIndexError: A row is not a usable page path (``urls.page_problem``).
        """
        if self.source_page is None:
            return None
        from scidx.index.urls import page_problem

        values = self.source_page.take(rows)
        for row, value in zip(rows, values, strict=True):
            problem = page_problem(value)
            if problem:
                raise CorruptIndexError(
                    f"{self.source}: `source.page` row {row} {problem}. {_REBUILD}"
                )
        return values

    def plain(self, row: int) -> str:
        """The clean text of chunk ``row`` (its raw text for an index without ``chunk.plain``)."""
        table = self.chunk_plain if self.chunk_plain is not None else self.chunk_text
        return table[row]

    def check_sources(self) -> None:
        """Check, in one vectorised pass, that every chunk's source row is in range.

        Raises:
            CorruptIndexError: ``chunk.source`` points past the sources.
        """
        if self.n and int(self.chunk_source.max()) >= len(self.source_path):
            raise CorruptIndexError(
                f"{self.source}: array `chunk.source` points past the {len(self.source_path)} "
                f"sources. {_REBUILD}"
            )

    #: Hybrid fusion settings from the header (``meta.fusion``; defaults when absent).
    fusion: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_FUSION))

    def source_of(self, row: int) -> int:
        """The source row of chunk ``row``, bounds-checked against the source tables.

        Raises:
            CorruptIndexError: ``chunk.source`` points past the sources.
        """
        s = int(self.chunk_source[row])
        if s >= len(self.source_title):
            raise CorruptIndexError(
                f"{self.source}: chunk {row} points at source {s}, past the "
                f"{len(self.source_title)} sources. {_REBUILD}"
            )
        return s

    def title(self, row: int) -> str:
        """The document title of chunk ``row``."""
        return self.source_title[self.source_of(row)]
