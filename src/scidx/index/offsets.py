"""Term offsets for snippets: where each indexed word of a chunk's text is, saved at pack time.

Lucene's highlighters read the offsets stored in its postings instead of re-analysing the text;
this is the same idea, kept per chunk. For every chunk the packer records each ``\\w+`` run of
its flattened snippet text (:func:`scidx.index.highlight.flatten`) that makes a term, with a
key of that term, so reading a snippet needs no scan of the text: a page of hits looks up its
rows' occurrences of the query terms in a few array operations (:class:`SnippetOffsets`).
Exactly the words :func:`scidx.index.highlight.build_snippet` would mark: same runs, same
tokenizer, same "first query term of the run" rule; a word whose stem is not a prefix of it
("dying" for "die") is found here where the text scan can miss it.

Arrays (see docs/FORMAT.md, "Snippet offsets"; all optional, as a group)::

    snippet.row   <u8 [N+1]  chunk i's occurrences are [row[i], row[i+1])
    snippet.word  <u2 [M]    the word's term key (1-65535; 0: a filler)
    snippet.gap   <u1 [M]    its start minus the previous occurrence's start in the chunk (the
                             first: minus 0); a filler only moves the start on
    snippet.len   <u1 [M]    min(its length in code points, 255)
    snippet.flat  <u1 [N]    bit 0: the chunk's text is already flat

Four bytes per occurrence (six in format 4.0's ``snippet.occ``, eight in format 2's): starts
are rebuilt with one cumulative sum per page. A word that makes several terms has one
occurrence per distinct term, in the order the tokenizer makes them (a gap of 0 after the
first). A gap of more than 255 is preceded by filler occurrences of gap 255. A 16-bit key only
finds candidates: two terms can share one, so the reader checks every word it shows with the
tokenizer (a memoised lookup), which also makes a forged occurrence harmless: it can only mark
a real word of the real text. (Three bytes, a 12-bit key and a 4-bit length, measured 8.5% of
SciFact's hits showing another term's word and 8% of its rows on the careful path: slower.)

The packer's side (:func:`scidx.pack.arrays.offsets_block`) writes them. Runtime module:
numpy, xxhash and scidx runtime modules only.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError
from scidx.index.bm25 import term_hash

__all__ = [
    "ARRAY_NAMES",
    "IS_FLAT",
    "LONG_WORD",
    "MAX_GAP",
    "OFFSETS_VERSION",
    "RowMatches",
    "SnippetOffsets",
    "open_offsets",
    "word_key",
]

#: ``meta["snippets"]["offsets"]``: what the arrays mean. A reader that does not know the value
#: ignores the arrays (its snippets scan), so a change here never gives wrong marks.
OFFSETS_VERSION = "scidx-offsets-3"

ARRAY_NAMES = ("snippet.flat", "snippet.gap", "snippet.len", "snippet.row", "snippet.word")

IS_FLAT = 1
"""``snippet.flat`` bit: the chunk's snippet text needs no flattening (it is its flat text)."""

_KEYS_MAX = 65535
"""An occurrence's key is ``term_hash(term) % 65535 + 1`` (0 marks a filler)."""
LONG_WORD = 255
"""The stored length of a word of 255 or more code points (the reader measures the run)."""
MAX_GAP = 255
"""The largest gap a ``snippet.gap`` byte holds; longer ones are made of fillers."""

_REBUILD = "The file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."
# A page whose rows claim more occurrences than this in all is treated as corrupt (an honest
# page holds its rows' words; this bounds the work a forged `snippet.row` can cause).
_MAX_PAGE_OCCURRENCES = 1 << 22
# Query terms a page looks up at once (a term's index + 1 is stored in a byte).
_MAX_TERMS = 255


def word_key(term: str) -> int:
    """The key of ``term`` in ``snippet.word`` (1-65535; memoised)."""
    key = _KEYS.get(term)
    if key is None:
        if len(_KEYS) >= 4096:
            _KEYS.clear()  # bounded; a dict op is atomic, so threads may share it
        key = _KEYS[term] = term_hash(term) % _KEYS_MAX + 1
    return key


_KEYS: dict[str, int] = {}


class RowMatches(NamedTuple):
    """The stored candidates of one chunk for a query (see :meth:`SnippetOffsets.page`)."""

    is_flat: bool
    #: ``(start, end, k)`` of each candidate, its term ``("", *terms)[k]`` (k >= 1), or None
    #: when the row needs the careful path (a run with several query-term candidates).
    matches: list[tuple[int, int, int]] | None
    #: ``matches`` None: start << 8 | length of each candidate (LONG_WORD: "255 or more");
    #: else the indexes into ``matches`` of the words of 255 or more characters, whose stored
    #: end is provisional (the reader measures the run).
    spans: list[int]
    terms: list[int]  # indexes into ``("", *terms)`` (when ``matches`` is None)


def _odd_rows(starts: npt.NDArray[np.int64], cuts: list[int]) -> set[int]:
    """The rows (indexes into ``cuts``) whose candidates need the careful path.

    A row's candidates are ``[cuts[j - 1], cuts[j])``, their starts non-decreasing (sums of
    bytes). The careful path is for a run with several query-term candidates (the same start
    twice); one pass over the page finds them.
    """
    odd: set[int] = set()
    # A start not above the one before it: a row's first candidate (the starts begin again)
    # or one of those rows.
    for p in (np.flatnonzero(starts[1:] <= starts[:-1]) + 1).tolist():
        j = bisect_right(cuts, p)
        if p != (cuts[j - 1] if j else 0):
            odd.add(j)
    return odd


def _bytes_of(arr: npt.NDArray[Any], dtype: type[np.generic]) -> memoryview:
    """A byte view of ``arr`` as native ``dtype`` (no copy for a mapped little-endian array)."""
    native: Any = np.ascontiguousarray(arr, dtype=dtype).reshape(-1)
    return memoryview(native).cast("B")


class SnippetOffsets:
    """The ``snippet.*`` arrays of an open index (O(1) checks at load; every read is checked).

    Args:
        row: ``snippet.row`` (``row[0] == 0`` and ``row[-1] == len(word)`` were checked by
            the loader).
        word: ``snippet.word``.
        gap: ``snippet.gap`` (as long as ``word``).
        length: ``snippet.len`` (as long as ``word``).
        flat: ``snippet.flat``.
    """

    __slots__ = ("_flat", "_gap", "_len", "_ptr", "_word", "m", "n")

    def __init__(
        self,
        row: npt.NDArray[np.uint64],
        word: npt.NDArray[np.uint16],
        gap: npt.NDArray[np.uint8],
        length: npt.NDArray[np.uint8],
        flat: npt.NDArray[np.uint8],
    ) -> None:
        # Memoryviews: a page reads a few entries per row, where numpy's per-call cost
        # would dominate; the occurrence runs are read as bytes and viewed once per page.
        self._ptr = _bytes_of(row, np.uint64).cast("Q")
        self._flat = _bytes_of(flat, np.uint8)
        self._word = _bytes_of(word, np.uint16)
        self._gap = _bytes_of(gap, np.uint8)
        self._len = _bytes_of(length, np.uint8)
        self.n = int(flat.shape[0])
        self.m = int(gap.shape[0])

    def verify(self, source: str) -> None:
        """The full check behind ``verify=True``: ``snippet.row`` ascends, flags are known.

        The occurrences themselves need no check: a snippet checks each word it shows.

        Raises:
            CorruptIndexError: Either array is out of order or holds an unknown value.
        """
        ptr = np.frombuffer(self._ptr, dtype=np.uint64)
        if ptr.shape[0] > 1 and bool(np.any(ptr[1:] < ptr[:-1])):
            raise CorruptIndexError(f"{source}: array `snippet.row` is not monotonic. {_REBUILD}")
        flat = np.frombuffer(self._flat, dtype=np.uint8)
        if flat.shape[0] and int(flat.max()) > IS_FLAT:
            raise CorruptIndexError(
                f"{source}: array `snippet.flat` has a value other than 0 or 1. {_REBUILD}"
            )

    def page(self, rows: Sequence[int], terms: Sequence[str]) -> dict[int, RowMatches]:
        """The stored occurrences of ``terms`` (distinct query terms) in chunks ``rows``.

        Candidates only: a key is 16 bits, so the caller checks the words it shows with the
        tokenizer (:func:`scidx.index.highlight.snippet_from_offsets`). A row missing from the
        result has no usable offsets, and its snippet scans the text. Never raises for bad
        data: a row whose arrays are out of bounds is left out.
        """
        if len(terms) > _MAX_TERMS:
            return {}  # a term index must fit the table's bytes: scan
        # Each query term gets a slot in a 65536-entry table indexed by its key: one lookup
        # finds every candidate and its term. The few candidates whose term only shares the
        # key are words of other terms, and the tokenizer check of the shown words drops them.
        low = [word_key(t) for t in terms]
        # Two query terms sharing a key: every row takes the careful path, where the tokenizer
        # tells which term each candidate run makes.
        shared = len(set(low)) != len(low)
        ptr, flat, n, m = self._ptr, self._flat, self.n, self.m
        good: list[tuple[int, bool]] = []
        words: list[memoryview] = []
        gaps: list[memoryview] = []
        lens: list[memoryview] = []
        begins: list[int] = []
        total = 0
        word_view, gap_view, len_view = self._word, self._gap, self._len
        for row in rows:
            if not 0 <= row < n:
                continue
            lo, hi = ptr[row], ptr[row + 1]
            if not lo <= hi <= m:
                continue
            begins.append(total)
            total += hi - lo
            if total > _MAX_PAGE_OCCURRENCES:
                return {}  # more than the rows can honestly hold: a forged `snippet.row`
            good.append((row, bool(flat[row] & IS_FLAT)))
            words.append(word_view[2 * lo : 2 * hi])
            gaps.append(gap_view[lo:hi])
            lens.append(len_view[lo:hi])
        if not good:
            return {}
        word = np.frombuffer(b"".join(words), dtype=np.uint16)
        table = np.zeros(_KEYS_MAX + 1, dtype=np.uint8)
        # Term i is i + 1 (the last of a shared key wins: the careful path rechecks); 0: no
        # query term, or a filler.
        table[low] = range(1, len(low) + 1)
        slot = table[word]
        cand = slot.nonzero()[0]
        # Inclusive sums: occurrence p of a row starting at b starts at pos[p] - pos[b - 1].
        pos = np.frombuffer(b"".join(gaps), dtype=np.uint8).cumsum(dtype=np.int64)
        at = np.array(begins, dtype=np.int64)
        base = pos[at - 1] if total else np.zeros_like(at)
        base[at == 0] = 0
        cuts = np.searchsorted(cand, at[1:]).tolist()
        cuts.append(int(cand.shape[0]))
        row_of = np.searchsorted(at, cand, side="right") - 1
        starts = pos[cand] - base[row_of]
        lengths = np.frombuffer(b"".join(lens), dtype=np.uint8)[cand].astype(np.int64)
        start_list = starts.tolist()
        stops = (starts + lengths).tolist()
        tid_list = slot[cand].tolist()
        odd = set(range(len(good))) if shared else _odd_rows(starts, cuts)
        long_at = np.flatnonzero(lengths == LONG_WORD).tolist() if lengths.shape[0] else []
        out: dict[int, RowMatches] = {}
        begin = 0
        new = tuple.__new__  # a NamedTuple's own constructor is a Python function
        for j, ((row, is_flat), cut) in enumerate(zip(good, cuts, strict=True)):
            if j in odd:
                spans = [
                    (a << 8) | (b - a)
                    for a, b in zip(start_list[begin:cut], stops[begin:cut], strict=True)
                ]
                out[row] = new(RowMatches, (is_flat, None, spans, tid_list[begin:cut]))
            else:
                triples = list(
                    zip(start_list[begin:cut], stops[begin:cut], tid_list[begin:cut], strict=True)
                )
                out[row] = new(RowMatches, (is_flat, triples, [], []))
            begin = cut
        for p in long_at:  # the fast path measures these words (the index of each in its row)
            j = bisect_right(cuts, p)
            found = out[good[j][0]]
            if found.matches is not None:
                found.spans.append(p - (cuts[j - 1] if j else 0))
        return out


def open_offsets(
    row: npt.NDArray[np.uint64],
    word: npt.NDArray[np.uint16],
    gap: npt.NDArray[np.uint8],
    length: npt.NDArray[np.uint8],
    flat: npt.NDArray[np.uint8],
    snippets: Any,
) -> SnippetOffsets | None:
    """The reader of an index's ``snippet.*`` arrays, or None for a version it does not know.

    Args:
        row: ``snippet.row`` (checked in O(1) by the loader, as the others).
        word: ``snippet.word``.
        gap: ``snippet.gap``.
        length: ``snippet.len``.
        flat: ``snippet.flat``.
        snippets: The header's ``meta.snippets`` value.
    """
    if not isinstance(snippets, Mapping) or snippets.get("offsets") != OFFSETS_VERSION:
        return None
    return SnippetOffsets(row, word, gap, length, flat)
