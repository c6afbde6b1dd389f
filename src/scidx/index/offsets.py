"""Where a chunk's query words are, for snippets: a byte per posting and a table of needles.

A snippet shows the best window of a chunk's flat text (:func:`scidx.index.highlight.flatten`)
and marks every ``\\w+`` run whose tokenizer terms include a query term. Format 9 stores no
position of any word. Instead:

- ``snippet.where`` holds one byte per BM25 posting (in the postings' order): bit ``e``
  is set when a run making the posting's term starts in the ``e``-th eighth of the chunk's
  flat text (``start * 8 // len(flat) == e``). A page of hits picks, per hit, the window
  overlapping the eighths that hold the most distinct query terms from these bytes
  (:func:`window_start`), and only the window's text is scanned.
- The scan looks for each query term's **needles** at word starts (after a non-alphanumeric
  character, so also after ``_`` inside an identifier) in the folded text
  (:func:`scidx.index.highlight.fold`), and the tokenizer confirms each candidate run.
  :func:`~scidx.index.highlight.needle` gives every term one needle derived
  from it (a Snowball stem minus its last letter is a prefix of nearly every word it comes
  from: "dos" finds "dosing" for "dose"); ``snippet.needle`` lists the others the packer found
  necessary (the folded run itself, e.g. "dying" for "die", "ﬁle" for "file"), so that every
  run of the corpus that makes a term is found by one of the term's needles. The marks are
  therefore exactly those of a tokenizer pass over the shown text.

Every byte is only a hint: a forged ``snippet.where`` changes which part of the text is shown,
and the shown part is always scanned in full, so its marks stay exact; a forged needle can
only add candidates, which the tokenizer rejects. Measured on the Kubernetes docs: 0.64 MB for
``snippet.where`` where format 5's four bytes per indexed word took 4.06 MB.

The packer's side is :func:`scidx.pack.arrays.where_block`. Runtime module: numpy and scidx
runtime modules only.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError, ScidxError
from scidx.index.bm25 import BM25Arrays, term_hash
from scidx.index.highlight import needle

__all__ = [
    "EIGHTHS",
    "NEEDLE_CHARS",
    "OFFSETS_VERSION",
    "SnippetHints",
    "eighth",
    "open_hints",
    "region",
    "regions",
    "span_of",
]

#: ``meta["snippets"]["offsets"]``: what the arrays mean. A reader that does not know the value
#: ignores them (its snippets scan the whole text), so a change here never gives wrong marks.
OFFSETS_VERSION = "scidx-where-1"

EIGHTHS = 8
"""The parts of a flat text one ``snippet.where`` byte tells apart (one bit each)."""

NEEDLE_CHARS = 32
"""A stored needle is at most this many characters of the folded run (a prefix finds it)."""

# More stored needles than this are not read (an honest corpus has a few hundred at most;
# this bounds what a forged table costs the first snippet).
_MAX_NEEDLES = 1 << 20
_SEP = "\x00"


def eighth(start: int, length: int) -> int:
    """The ``snippet.where`` bit of a run starting at ``start`` of a ``length``-long text."""
    return start * EIGHTHS // length


class SnippetHints:
    """``snippet.where`` and ``snippet.needle`` of an open index (O(1) at load).

    Args:
        where: ``snippet.where`` (``<u1 [P]``), or None (the index has none: whole scans).
        needles: ``snippet.needle`` (a string table: ``term NUL needle`` rows), or None.
        bm25: The index's BM25 arrays (a posting's place is found from them).
    """

    __slots__ = ("_bm25", "_firsts", "_needles", "_pages", "_starts", "_table", "_where", "p")

    def __init__(self, where: npt.NDArray[np.uint8] | None, needles: Any, bm25: BM25Arrays) -> None:
        self._where = where
        self._table = needles
        self._needles: dict[str, tuple[str, ...]] | None = None
        self._pages: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._bm25 = bm25
        self._starts: dict[str, int] = {}
        self._firsts: npt.NDArray[np.int64] | None = None
        self.p = int(where.shape[0]) if where is not None else 0

    @property
    def has_where(self) -> bool:
        """Whether the index stores ``snippet.where`` (else snippets scan the whole text)."""
        return self._where is not None

    def verify(self, source: str) -> None:
        """The full check behind ``verify=True``: the lengths and the needle rows.

        One ``snippet.where`` byte per posting, and every ``snippet.needle`` row decodes (any
        byte is a valid hint, so none is checked).

        Raises:
            CorruptIndexError: ``snippet.where`` has another length, or a needle row is out
                of bounds or not UTF-8.
        """
        total = int(_first_postings(self._bm25)[-1])
        if self._where is not None and self.p != total:
            raise CorruptIndexError(
                f"{source}: array `snippet.where` has {self.p} bytes, expected one per posting "
                f"({total}). The file is truncated or corrupt; rebuild it with "
                "`toolup-rag pack-docs`."
            )
        if self._table is not None:
            for _ in self._table:
                pass

    def needles(self, term: str) -> tuple[str, ...]:
        """Every needle of ``term``: :func:`needle`'s, then the stored ones."""
        table = self._needles
        if table is None:
            table = self._needles = self._read_needles()
        extra = table.get(term)
        return (needle(term), *extra) if extra else (needle(term),)

    def needles_of(self, terms: tuple[str, ...]) -> tuple[str, ...]:
        """Every needle of every one of ``terms``, sorted (memoised: a page's query repeats)."""
        memo = self._pages
        found = memo.get(terms)
        if found is None:
            found = tuple(sorted({n for t in terms for n in self.needles(t)}))
            if len(memo) >= 4096:
                memo.clear()  # bounded; a dict op is atomic, so threads may share it
            memo[terms] = found
        return found

    def _read_needles(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        table = self._table
        if table is None or len(table) > _MAX_NEEDLES:
            return {}
        try:
            rows = list(table)
        except ScidxError:
            return {}  # a corrupt table finds fewer words; `verify=True` names it
        for row in rows:
            term, sep, found = row.partition(_SEP)
            if sep and found:  # a row without both parts finds nothing; it is skipped
                out.setdefault(term, []).append(found[:NEEDLE_CHARS])
        return {t: tuple(v) for t, v in out.items()}

    def start(self, term: str) -> int:
        """The index of ``term``'s first posting (-1: the index does not have it; memoised).

        Postings are in term order, so it is the sum of the earlier terms' document
        frequencies (summed once, on the first snippet: O(V)). A forged ``bm25.term_df`` can
        only move it, and every read of ``snippet.where`` is bounds-checked.
        """
        found = self._starts.get(term)
        if found is None:
            firsts = self._firsts
            if firsts is None:
                firsts = self._firsts = _first_postings(self._bm25)
            th = self._bm25.term_hash
            h = np.uint64(term_hash(term))
            pos = int(th.searchsorted(h))
            found = int(firsts[pos]) if pos < th.shape[0] and th[pos] == h else -1
            if len(self._starts) >= 4096:
                self._starts.clear()  # bounded; a dict op is atomic, so threads may share it
            self._starts[term] = found
        return found

    def regions(
        self, posts: npt.NDArray[np.int64], sizes: Sequence[int], budget: int
    ) -> list[tuple[int, int] | None]:
        """:func:`region` of a page's rows at once.

        Args:
            posts: ``[terms, rows]`` posting indexes of each query term in each row (-1: the
                row does not have the term; one out of range, forged, counts as -1).
            sizes: Each row's flat text length.
            budget: The window's characters.
        """
        where = self._where
        if where is None:
            return [None] * len(sizes)  # no bytes: the whole texts
        if not self.p:
            return [None] * len(sizes)  # no postings: every bit clear, the whole texts
        inside = (posts >= 0) & (posts < self.p)
        # A clipped read of an outside posting is masked out: one gather, no index rewrite.
        return regions(where.take(posts, mode="clip") * inside, sizes, budget)


def _first_postings(bm25: BM25Arrays) -> npt.NDArray[np.int64]:
    """Each term's first posting index (and the total last), from the document frequencies."""
    v, k = int(bm25.term_hash.shape[0]), int(bm25.df_values.shape[0])
    out = np.zeros(v + 1, dtype=np.int64)
    if v and k and int(bm25.term_df.shape[0]) == v:
        df = bm25.df_values[np.minimum(bm25.term_df, k - 1)]
        np.cumsum(df, dtype=np.int64, out=out[1:])
    return out


def open_hints(
    where: npt.NDArray[np.uint8] | None, needles: Any, snippets: Any, bm25: BM25Arrays
) -> SnippetHints | None:
    """The reader of an index's snippet hints, or None for a version it does not know.

    Args:
        where: ``snippet.where`` (its shape was checked by the loader), or None.
        needles: ``snippet.needle``'s string table, or None.
        snippets: The header's ``meta.snippets`` value.
        bm25: The index's BM25 arrays.
    """
    if not isinstance(snippets, Mapping) or snippets.get("offsets") != OFFSETS_VERSION:
        return None
    return SnippetHints(where, needles, bm25)


def span_of(length: int, budget: int) -> int:
    """How many eighths of a ``length``-byte text a region for ``budget`` characters spans.

    Enough to hold any window of ``budget`` bytes (``ceil(budget * 8 / length) + 1``); 8 or
    more means the whole text.
    """
    return -(-budget * EIGHTHS // length)


def region(bits: Sequence[int], length: int, budget: int) -> tuple[int, int] | None:
    """The bytes of a ``length``-byte clean text a snippet of ``budget`` characters comes from.

    ``bits`` are the chunk's ``snippet.where`` bytes of the query terms. Of the runs of
    :func:`span_of` consecutive eighths, the one holding the most distinct terms (then the
    most set bits, then the earliest) is chosen, as ``[e * length // 8, (e + w) * length // 8)``
    bytes. None: the whole text (it is short, or every bit is clear).
    """
    w = span_of(length, budget) if length > 0 else EIGHTHS
    if w >= EIGHTHS:
        return None
    best = (0, 0)
    pick = -1
    full = (1 << w) - 1
    for e in range(EIGHTHS - w + 1):
        mask = full << e
        distinct = count = 0
        for b in bits:
            m = b & mask
            if m:
                distinct += 1
                count += m.bit_count()
        if (distinct, count) > best:
            best, pick = (distinct, count), e
    if pick < 0:
        return None
    return _part(pick, w, length)


def _part(e: int, w: int, length: int) -> tuple[int, int]:
    """The bytes of eighths ``e`` to ``e + w - 1``."""
    return e * length // EIGHTHS, (e + w) * length // EIGHTHS


# A term's part of a run's score from its byte's overlap with the run of eighths: 1024 for
# having any (distinct terms first), plus one per eighth (then the most bits).
_DISTINCT = 1024


@functools.cache
def _score_table() -> npt.NDArray[np.int32]:
    """``table[w, b, e]``: the score of byte ``b`` for the run of ``w`` eighths from ``e``.

    A page's region scores are then one gather and one sum (:func:`regions`). Starts that
    leave fewer than ``w`` eighths, and ``w`` 0 or 8 (no part is chosen), score 0.
    """
    table = np.zeros((EIGHTHS + 1, 256, EIGHTHS), dtype=np.int32)
    byte = np.arange(256, dtype=np.int32)
    for w in range(1, EIGHTHS):
        full = (1 << w) - 1
        for e in range(EIGHTHS - w + 1):
            overlap = byte & (full << e)
            count = sum((overlap >> k) & 1 for k in range(EIGHTHS))
            table[w, :, e] = np.where(overlap != 0, _DISTINCT + count, 0)
    table.setflags(write=False)
    return table


def regions(
    bits: Sequence[Sequence[int]] | npt.NDArray[Any], sizes: Sequence[int], budget: int
) -> list[tuple[int, int] | None]:
    """:func:`region` of each row (``bits[t][r]`` of each term ``t``, ``sizes[r]``).

    Each term's byte gives its score at every start (:func:`_score_table`); a row's part
    starts at the first start with the best sum. A page is ~10 rows x ~9 terms: a handful of
    numpy calls, where a Python loop over the bytes and starts cost about 4 times as much.
    """
    n = len(sizes)
    if not n or budget < 1:  # a budget below 1 (a caller's) chooses no part
        return [None] * n
    if isinstance(bits, np.ndarray) and bits.dtype == np.uint8:
        grid = bits.reshape(-1, n)  # the bytes as read: already table rows
    else:
        grid = np.asarray(bits, dtype=np.int64).reshape(-1, n) & 0xFF
    if not grid.shape[0]:
        return [None] * n
    # Capped at 8 (the whole text); budget >= 1 and size > 0 make every span at least 1.
    spans = [min(span_of(size, budget), EIGHTHS) if size > 0 else EIGHTHS for size in sizes]
    sums = _score_table()[spans, grid].sum(axis=0, dtype=np.int64)
    picks = sums.argmax(axis=1).tolist()  # the first best start
    bests = sums.max(axis=1).tolist()
    return [
        _part(e, w, size) if best else None  # 0: every bit clear, or the whole text
        for e, w, size, best in zip(picks, spans, sizes, bests, strict=True)
    ]
