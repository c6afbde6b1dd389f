"""Term offsets for snippets: where each indexed word of a chunk's text is, saved at pack time.

Lucene's highlighters read the offsets stored in its postings instead of re-analysing the text;
this is the same idea, kept per chunk. For every chunk the packer records each ``\\w+`` run of
its flattened snippet text (:func:`scidx.index.highlight.flatten`) that makes a term, with that
term, so reading a snippet needs no scan of the text: a page of hits looks up its rows'
occurrences of the query terms in a few array operations (:class:`SnippetOffsets`). Exactly the
words :func:`scidx.index.highlight.build_snippet` would mark: same runs, same tokenizer, same
"first query term of the run" rule; a word whose stem is not a prefix of it ("dying" for
"die") is found here where the text scan can miss it.

Arrays (see docs/FORMAT.md, "Snippet offsets"; all optional, as a group)::

    snippet.ptr    <u8 [N+1]  chunk i's occurrences are [ptr[i], ptr[i+1])
    snippet.occ    <u2 [M, 3] the 48-bit start << 24 | min(length, 255) << 16 | key, low word
                              first: the word's offset and length in the flat text, and the
                              low 16 bits of its term's bm25.term_hash; ascending by start
                              within a chunk
    snippet.flags  <u1 [N]    bit 0: the chunk has offsets; bit 1: its text is already flat

A word that makes several terms has one occurrence per distinct term, in the order the
tokenizer makes them. A chunk gets no offsets (bit 0 clear; its snippets scan the text as
before) when its flat text is 2^23 characters or longer. A 16-bit key only finds candidates:
two terms can share one, so the reader checks every word it shows with the tokenizer (a
memoised lookup), which also makes a forged offset harmless: it can only mark a real word of
the real text.

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
    "HAS_OFFSETS",
    "IS_FLAT",
    "KEY_MASK",
    "OFFSETS_VERSION",
    "RowMatches",
    "SnippetOffsets",
    "MAX_START",
    "open_offsets",
]

#: ``meta["snippets"]["offsets"]``: what the arrays mean. A reader that does not know the value
#: ignores the arrays (its snippets scan the text), so a change here never gives wrong marks.
OFFSETS_VERSION = "scidx-offsets-2"

ARRAY_NAMES = ("snippet.ptr", "snippet.occ", "snippet.flags")

HAS_OFFSETS = 1
"""``snippet.flags`` bit: the chunk's occurrences are stored."""
IS_FLAT = 2
"""``snippet.flags`` bit: the chunk's snippet text needs no flattening (it is its flat text)."""

MAX_START = 1 << 23
"""Texts this long or longer get no offsets: a start fits 23 bits of an occurrence's 48."""
KEY_MASK = 0xFFFF
"""An occurrence keeps the low 16 bits of its term's hash (all a page's lookup compares)."""
_REBUILD = "The file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."
# A page whose rows claim more occurrences than this in all is treated as corrupt (an honest
# page holds its rows' words; this bounds the work a forged `snippet.ptr` can cause).
_MAX_PAGE_OCCURRENCES = 1 << 22
# Query terms a page looks up at once (a term's index + 1 is stored in a byte).
_MAX_TERMS = 255


class RowMatches(NamedTuple):
    """The stored candidates of one chunk for a query (see :meth:`SnippetOffsets.page`)."""

    is_flat: bool
    #: ``(start, end, k)`` of each candidate, its term ``("", *terms)[k]`` (k >= 1), or None
    #: when the row needs the careful path (a run with several query terms, a word of 255+
    #: characters, or odd data).
    matches: list[tuple[int, int, int]] | None
    spans: list[int]  # start << 8 | min(length, 255) (when ``matches`` is None)
    terms: list[int]  # indexes into ``("", *terms)`` (when ``matches`` is None)


def _odd_rows(
    starts: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64], cuts: list[int]
) -> set[int]:
    """The rows (indexes into ``cuts``) whose candidates need the careful path.

    A row's candidates are ``[cuts[j - 1], cuts[j])``. The careful path is for a run with
    several query-term candidates (the same start twice), starts out of order or negative (not
    what the packer writes) and words of 255+ characters; one pass over the page finds them.
    """
    odd: set[int] = set()
    # A start not above the one before it: a row's first candidate (the starts begin again)
    # or one of those rows.
    for p in (np.flatnonzero(starts[1:] <= starts[:-1]) + 1).tolist():
        j = bisect_right(cuts, p)
        if p != (cuts[j - 1] if j else 0):
            odd.add(j)
    if starts.shape[0] and (int(lengths.max()) == 255 or int(starts.min()) < 0):
        for p in np.flatnonzero((lengths == 255) | (starts < 0)).tolist():
            odd.add(bisect_right(cuts, p))
    return odd


def _key_of(term: str) -> int:
    """The 16-bit key of ``term`` (memoised: a query's terms recur across its pages)."""
    key = _KEYS.get(term)
    if key is None:
        if len(_KEYS) >= 4096:
            _KEYS.clear()  # bounded; a dict op is atomic, so threads may share it
        key = _KEYS[term] = term_hash(term) & KEY_MASK
    return key


_KEYS: dict[str, int] = {}


def _bytes_of(arr: npt.NDArray[Any], dtype: type[np.generic]) -> memoryview:
    """A byte view of ``arr`` as native ``dtype`` (no copy for a mapped little-endian array)."""
    # Flattened first: memoryview cannot cast a [0, 3] view (an index without any occurrence).
    native: Any = np.ascontiguousarray(arr, dtype=dtype).reshape(-1)
    return memoryview(native).cast("B")


class SnippetOffsets:
    """The ``snippet.*`` arrays of an open index (O(1) checks at load; every read is checked).

    Args:
        ptr: ``snippet.ptr`` (``ptr[0] == 0`` and ``ptr[-1] == len(occ)`` were checked by
            the loader).
        occ: ``snippet.occ`` (``<u2 [M, 3]``).
        flags: ``snippet.flags``.
    """

    __slots__ = ("_flags", "_occ", "_ptr", "m", "n")

    def __init__(
        self,
        ptr: npt.NDArray[np.uint64],
        occ: npt.NDArray[np.uint64],
        flags: npt.NDArray[np.uint8],
    ) -> None:
        # Memoryviews: a page reads a few entries per row, where numpy's per-call cost
        # would dominate; the occurrence runs are read as bytes and viewed once per page.
        self._ptr = _bytes_of(ptr, np.uint64).cast("Q")
        self._flags = _bytes_of(flags, np.uint8)
        self._occ = _bytes_of(occ, np.uint16)
        self.n = int(flags.shape[0])
        self.m = int(occ.shape[0])

    def verify(self, source: str) -> None:
        """The full check behind ``verify=True``: ``snippet.ptr`` ascends, flags are known.

        The occurrences themselves need no check: a snippet checks each word it shows.

        Raises:
            CorruptIndexError: Either array is out of order or holds an unknown value.
        """
        ptr = np.frombuffer(self._ptr, dtype=np.uint64)
        if ptr.shape[0] > 1 and bool(np.any(ptr[1:] < ptr[:-1])):
            raise CorruptIndexError(f"{source}: array `snippet.ptr` is not monotonic. {_REBUILD}")
        flags = np.frombuffer(self._flags, dtype=np.uint8)
        if flags.shape[0] and int(flags.max()) > HAS_OFFSETS | IS_FLAT:
            raise CorruptIndexError(
                f"{source}: array `snippet.flags` has a value other than 0-3. {_REBUILD}"
            )

    def page(self, rows: Sequence[int], terms: Sequence[str]) -> dict[int, RowMatches]:
        """The stored occurrences of ``terms`` (distinct query terms) in chunks ``rows``.

        Candidates only: a key is 16 bits, so the caller checks the words
        it shows with the tokenizer (:func:`scidx.index.highlight.
        snippet_from_offsets`). A row missing from the result has no usable offsets, and its
        snippet scans the text. Never raises for bad data: a row whose arrays are out of
        bounds is left out.
        """
        if len(terms) > _MAX_TERMS:
            return {}  # a term index must fit the table's bytes: scan
        # Each query term gets a slot in a 65536-entry table indexed by the low 16 bits of its
        # key: one lookup finds every candidate and its term (much cheaper than a search of
        # every occurrence). The few candidates whose other key bits differ are words of
        # other terms, and the tokenizer check of the shown words drops them.
        low = [_key_of(t) for t in terms]
        if len(set(low)) != len(low):
            return {}  # two query terms share those bits (rare): scan
        ptr, flags, n, m = self._ptr, self._flags, self.n, self.m
        good: list[tuple[int, bool]] = []
        pieces: list[memoryview] = []
        ends: list[int] = []
        total = 0
        for row in rows:
            if not 0 <= row < n:
                continue
            f = flags[row]
            lo, hi = ptr[row], ptr[row + 1]
            if not f & HAS_OFFSETS or not lo <= hi <= m:
                continue
            total += hi - lo
            if total > _MAX_PAGE_OCCURRENCES:
                return {}  # more than the rows can honestly hold: a forged `snippet.ptr`
            good.append((row, bool(f & IS_FLAT)))
            pieces.append(self._occ[6 * lo : 6 * hi])
            ends.append(total)
        if not good:
            return {}
        # Native words, as _bytes_of made them: key, length | start's low byte << 8, start >> 8.
        occ = np.frombuffer(b"".join(pieces), dtype=np.uint16).reshape(-1, 3)
        table = np.zeros(65536, dtype=np.uint8)
        table[low] = range(1, len(low) + 1)  # term i is i + 1; 0: no query term
        slot = table[occ[:, 0]]
        cand = slot.nonzero()[0]
        found = occ[cand].astype(np.int64)
        mid = found[:, 1]
        starts = (found[:, 2] << 8) | (mid >> 8)
        lengths = mid & 255
        stops = (starts + lengths).tolist()
        start_list = starts.tolist()
        tid_list = slot[cand].tolist()
        cuts = np.searchsorted(cand, ends).tolist()
        odd = _odd_rows(starts, lengths, cuts)
        triples = list(zip(start_list, stops, tid_list, strict=True))
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
                out[row] = new(RowMatches, (is_flat, triples[begin:cut], [], []))
            begin = cut
        return out


def open_offsets(
    ptr: npt.NDArray[np.uint64],
    occ: npt.NDArray[np.uint64],
    flags: npt.NDArray[np.uint8],
    snippets: Any,
) -> SnippetOffsets | None:
    """The reader of an index's ``snippet.*`` arrays, or None for a version it does not know.

    Args:
        ptr: ``snippet.ptr`` (checked in O(1) by the loader, as the others).
        occ: ``snippet.occ``.
        flags: ``snippet.flags``.
        snippets: The header's ``meta.snippets`` value.
    """
    if not isinstance(snippets, Mapping) or snippets.get("offsets") != OFFSETS_VERSION:
        return None
    return SnippetOffsets(ptr, occ, flags)
