"""The word dictionary (``dict.words``, format 10): the corpus's words by prefix and by spelling.

The index stores its BM25 terms as hashes (``bm25.term_hash``), which can only say whether a
term is known, and terms are stems (``configur``), which a typo'd or half-typed word does not
reliably stem to (``prduction`` stays ``prduction``, ``configura`` is no prefix of
``configur``). So the packer also stores the *words* its chunks are written with
(FORMAT.md §2.14): every case-folded alphabetic ``\\w+`` run of the clean texts that makes
exactly one term (no stop words), at most :data:`MAX_WORD_CHARS` long, sorted by code point,
each with a one-byte log frequency, in one deflated array, ``dict.words``. A correction or a
completion is such a word, searched as its term (the tokenizer's, at query time). Measured on
the development questions' typos (``../shared/docs-questions/robustness.jsonl``, seven English
corpora): matching the typed word against stems finds the intended term for 88 of 116
eligible typos, against these words for more (docs/search.md has the figures), and the words
take less room than the stems with a shown form each (fastapi: 22 KB against 30 KB).

Everything else is derived once per process, on the first look-up: the words starting with
``p`` are one range of the sorted list (two binary searches), the words ending with ``s``
one range of the sorted reversed words.

Near spellings without a scan: a word ``T`` within one edit (insert, delete, substitute,
swap of neighbours) of a word ``W`` of ``L`` letters keeps either ``W``'s first
``a = floor(L / 2)`` letters or its last ``b = L - 1 - a`` letters, since one edit touches at
most two neighbouring positions and ``a + b = L - 1``. So the candidates are the prefix range
of ``W[:a]`` and the suffix range of ``W[-b:]``, each read only when it covers at most
:data:`MAX_KEY_RANGE` words, then checked with the exact (optimal string alignment) distance.
For two edits the same two ranges are read: both edits in one half of the word are found, one
in each half is not (docs/search.md). The bundle's reader (``scidx-bundle.js``) reads the same
ranges, so both find the same neighbours.

On first use the stream is inflated to exactly ``meta.dictionary.bytes`` bytes (checked on
open against the deflate bound, as §2.2's tables); it must hold ``meta.dictionary.words``
frequency bytes, then that many valid UTF-8 words, strictly ascending: anything else is a
``CorruptIndexError``. A forged word can only propose a term the postings then do not find.
The work per query is bounded by :data:`MAX_KEY_RANGE` and :data:`MAX_WORD_CHARS`.

Runtime module: numpy and the stdlib only.
"""

from __future__ import annotations

import bisect
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError
from scidx.index.bm25 import BM25Arrays, term_hash

__all__ = [
    "DICTIONARY_VERSION",
    "MAX_COMPLETIONS",
    "MAX_DICTIONARY_BYTES",
    "encode_dictionary",
    "open_dictionary",
    "word_frequency",
    "MAX_KEY_RANGE",
    "MAX_WORD_CHARS",
    "TermDictionary",
    "char_mask",
    "edit_distance",
    "key_lengths",
]

#: ``meta.dictionary.version``: what the ``dict.*`` arrays mean. A reader that does not know the
#: value ignores them (no typo tolerance, no completions), so a change never gives wrong terms.
DICTIONARY_VERSION = "scidx-dict-1"

MAX_KEY_RANGE = 4096
"""The most terms one prefix or suffix key may cover to be read for neighbours (bounds work)."""

MAX_WORD_CHARS = 32
"""Words longer than this are never corrected or completed (no term of an index is this long
in honest docs; a 10,000-letter word costs nothing)."""

MAX_MEMO = 1 << 16
"""The most terms (and query words) whose look-ups :class:`TermDictionary` remembers."""

MAX_COMPLETIONS = 64
"""The most completions of one prefix a look-up returns (the most frequent)."""

MAX_DICTIONARY_BYTES = 1 << 30
"""The largest inflated ``dict.terms`` a reader accepts (a hostile length is refused on open)."""

_TOP = "\U0010ffff"
_UNSEEN: Any = object()
_T = TypeVar("_T")  # above every code point: [p, p + _TOP) holds every string starting with p

_REBUILD = "The file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."


def key_lengths(length: int) -> tuple[int, int]:
    """The prefix and suffix key lengths ``(a, b)`` of a word of ``length`` letters."""
    a = length // 2  # ceil((L - 1) / 2)
    return a, length - 1 - a


def char_mask(word: str) -> int:
    """The set of ``word``'s characters as 64 bits: bit ``ord(c) % 64`` for each."""
    mask = 0
    for c in word:
        mask |= 1 << (ord(c) & 63)
    return mask


def edit_distance(a: str, b: str, limit: int) -> int:
    """The optimal string alignment distance of ``a`` and ``b``, or ``limit + 1`` if above.

    Insertions, deletions, substitutions and swaps of two neighbouring letters each cost 1
    (Damerau's restricted form: no letter is edited twice). Banded: O(len * limit).
    """
    la, lb = len(a), len(b)
    if abs(la - lb) > limit:
        return limit + 1
    if a == b:
        return 0
    # Common prefix and suffix never change the distance.
    i = 0
    while i < la and i < lb and a[i] == b[i]:
        i += 1
    a, b = a[i:], b[i:]
    j = 0
    while j < len(a) and j < len(b) and a[-1 - j] == b[-1 - j]:
        j += 1
    if j:
        a, b = a[:-j], b[:-j]
    la, lb = len(a), len(b)
    if not la or not lb:
        d = la + lb
        return d if d <= limit else limit + 1
    if limit == 1:
        # What one edit leaves between the common prefix and suffix: one changed character,
        # or two swapped ones.
        return 1 if la == lb == 1 or (la == lb == 2 and a == b[::-1]) else 2
    if limit == 2:
        # The first characters differ, so an alignment edits there first: substitute,
        # delete, insert or swap, then at most one more edit (OSA's recurrence from the front).
        rest = [(a[1:], b[1:]), (a[1:], b), (a, b[1:])]
        if la > 1 and lb > 1 and a[0] == b[1] and a[1] == b[0]:
            rest.append((a[2:], b[2:]))
        if edit_distance(a, b, 1) <= 1:
            return 1
        return 2 if any(edit_distance(x, y, 1) <= 1 for x, y in rest) else 3
    big = limit + 1
    prev2: list[int] = []
    prev = list(range(lb + 1))
    for x in range(1, la + 1):
        cur = [x] + [big] * lb
        lo, hi = max(1, x - limit), min(lb, x + limit)
        ca = a[x - 1]
        best = cur[0] if lo == 1 else big
        for y in range(lo, hi + 1):
            cb = b[y - 1]
            cost = 0 if ca == cb else 1
            v = min(prev[y] + 1, cur[y - 1] + 1, prev[y - 1] + cost)
            if x > 1 and y > 1 and ca == b[y - 2] and a[x - 2] == cb:
                v = min(v, prev2[y - 2] + 1)
            cur[y] = v
            best = min(best, v)
        if best > limit:
            return big
        prev2, prev = prev, cur
    d = prev[lb]
    return d if d <= limit else big


@dataclass(frozen=True)
class _Tables:
    words: list[str]
    freq: npt.NDArray[np.uint8]
    rev_keys: list[str]  # the reversed words, sorted
    rev: npt.NDArray[np.int64]  # rev_keys[i] is words[rev[i]] reversed
    lengths: npt.NDArray[np.int64]  # each word's length in code points
    masks: npt.NDArray[np.uint64]  # each word's set of characters, a bit per code point % 64


class TermDictionary:
    """The ``dict.words`` array of an open index (O(1) at load, decoded once on first use).

    Args:
        data: ``dict.words`` (a raw deflate stream).
        count: ``meta.dictionary.words``, the number of words.
        size: ``meta.dictionary.bytes``, the inflated length (checked against the bound).
        bm25: The index's BM25 arrays (each term's document frequency).
        source: The index's name, for messages.
    """

    def __init__(
        self,
        data: npt.NDArray[np.uint8],
        count: int,
        size: int,
        bm25: BM25Arrays,
        source: str = "<index>",
    ) -> None:
        self._data = data
        self._count = count
        self._size = size
        self._bm25 = bm25
        self.source = source
        self._tables: _Tables | None = None
        self._df_memo: dict[str, int] = {}
        self._memo: dict[tuple[str, str], Any] = {}

    def __len__(self) -> int:
        return self._count

    def _open(self) -> _Tables:
        found = self._tables
        if found is None:
            # No lock (a keyword search imports no threading): a race only decodes twice.
            found = self._tables = self._decode()
        return found

    def _decode(self) -> _Tables:
        w = self._count
        inflater = zlib.decompressobj(-15)
        try:
            raw = inflater.decompress(self._data.tobytes(), self._size + 1)
            complete = inflater.eof and not inflater.unused_data and not inflater.unconsumed_tail
            text = raw[w:].decode("utf-8")
        except (zlib.error, UnicodeDecodeError) as exc:
            raise self._corrupt(f"array `dict.words` is not a deflated word list ({exc})") from None
        if len(raw) != self._size or not complete:
            raise self._corrupt(
                f"array `dict.words` does not inflate to exactly `meta.dictionary.bytes` "
                f"({self._size})"
            )
        words = text.split("\n") if w else []
        if len(words) != w or (w and text.count("\n") != w - 1):
            raise self._corrupt(f"array `dict.words` holds {len(words)} words, not {w}")
        if any(x >= y for x, y in zip(words, words[1:], strict=False)) or (w and not words[0]):
            raise self._corrupt("array `dict.words` is not strictly ascending")
        freq = np.frombuffer(raw, dtype=np.uint8, count=w).copy()
        rev = sorted(range(w), key=lambda i: words[i][::-1])
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=w)
        masks = np.fromiter(map(char_mask, words), dtype=np.uint64, count=w)
        return _Tables(
            words, freq, [words[i][::-1] for i in rev], np.array(rev, np.int64), lengths, masks
        )

    def _corrupt(self, what: str) -> CorruptIndexError:
        return CorruptIndexError(f"{self.source}: {what}. {_REBUILD}")

    def verify(self) -> None:
        """Decode and check the whole dictionary now (what ``verify=True`` runs).

        Raises:
            CorruptIndexError: As on first use (see the module docstring).
        """
        self._open()

    def entries(self) -> tuple[list[str], list[int]]:
        """Every word, in order, with its frequency byte (for exporters: the web bundle)."""
        t = self._open()
        return list(t.words), t.freq.tolist()

    # -- look-ups ----------------------------------------------------------------------------

    def find(self, word: str) -> int:
        """The word's number, or -1 when the dictionary does not hold it."""
        t = self._open().words
        i = bisect.bisect_left(t, word)
        return i if i < len(t) and t[i] == word else -1

    def term_df(self, term: str) -> int:
        """The document frequency of BM25 term ``term`` (0 when the index does not have it).

        Remembered (at most :data:`MAX_MEMO` terms, then the memo starts over): a search box
        and a typo check see the same terms again and again.

        Raises:
            CorruptIndexError: The term's ``bm25.term_df`` row is out of bounds.
        """
        memo = self._df_memo
        found = memo.get(term)
        if found is None:
            found = self._term_df(term)
            if len(memo) >= MAX_MEMO:
                memo.clear()
            memo[term] = found
        return found

    def remember(self, key: tuple[str, str], make: Callable[[], _T]) -> _T:
        """``make()``, remembered under ``key`` (at most :data:`MAX_MEMO` entries, then anew).

        For what a query word expands to (:mod:`scidx.index.expand`): a search box sends the
        same words key after key, and the answer depends on the word and the index alone.
        """
        memo = self._memo
        found = memo.get(key, _UNSEEN)
        if found is _UNSEEN:
            found = make()
            if len(memo) >= MAX_MEMO:
                memo.clear()
            memo[key] = found
        out: _T = found
        return out

    def _term_df(self, term: str) -> int:
        arrays = self._bm25
        th = arrays.term_hash
        h = np.uint64(term_hash(term))
        pos = int(th.searchsorted(h))
        if pos >= th.shape[0] or th[pos] != h:
            return 0
        k = int(arrays.term_df[pos])
        if k >= arrays.df_values.shape[0]:
            raise self._corrupt(f"array `bm25.term_df` points at entry {k}, past `bm25.df_values`")
        return int(arrays.df_values[k])

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        """``[lo, hi)``: the numbers of the words starting with ``prefix``."""
        t = self._open().words
        return bisect.bisect_left(t, prefix), bisect.bisect_left(t, prefix + _TOP)

    def completions(self, prefix: str) -> list[str]:
        """The words starting with ``prefix``, most frequent first (then in word order).

        At most :data:`MAX_COMPLETIONS` of them: the range's frequencies are one numpy slice,
        so its most frequent words are exact however long it is.
        """
        if not prefix or len(prefix) > MAX_WORD_CHARS:
            return []
        t = self._open()
        lo, hi = self.prefix_range(prefix)
        if hi <= lo:
            return []
        freq = t.freq[lo:hi].astype(np.int64)
        order = np.argsort(-freq, kind="stable")[:MAX_COMPLETIONS]
        return [t.words[lo + int(i)] for i in order]

    def neighbours(self, word: str, limit: int) -> list[tuple[str, int]]:
        """The words within ``limit`` edits of ``word``, itself left out: ``(word, distance)``.

        Found through the prefix and suffix keys of :func:`key_lengths` (see the module
        docstring), each read only when it covers at most :data:`MAX_KEY_RANGE` words.
        Ordered by word.
        """
        if not word or len(word) > MAX_WORD_CHARS or limit <= 0:
            return []
        t = self._open()
        a, b = key_lengths(len(word))
        parts = []
        if a:
            lo, hi = self.prefix_range(word[:a])
            if hi - lo <= MAX_KEY_RANGE:
                parts.append(np.arange(lo, hi, dtype=np.int64))
        if b:
            key = word[::-1][:b]
            lo = bisect.bisect_left(t.rev_keys, key)
            hi = bisect.bisect_left(t.rev_keys, key + _TOP)
            if hi - lo <= MAX_KEY_RANGE:
                parts.append(t.rev[lo:hi])
        if not parts:
            return []
        seen = np.unique(np.concatenate(parts)) if len(parts) > 1 else parts[0]
        # Necessary conditions, for the whole range at once: the length differs by at most one
        # per edit, and each edit adds or removes at most two characters from the word's set.
        keep = np.abs(t.lengths[seen] - len(word)) <= limit
        differ = np.bitwise_count(t.masks[seen] ^ np.uint64(char_mask(word)))
        keep &= differ <= 2 * limit
        out = []
        for i in seen[keep].tolist():
            other = t.words[i]
            if other != word:
                d = edit_distance(word, other, limit)
                if d <= limit:
                    out.append((other, d))
        return sorted(out)


def open_dictionary(
    found: tuple[Any, int, int] | None, bm25: BM25Arrays, source: str
) -> TermDictionary | None:
    """The dictionary of ``(dict.words, words, bytes)`` checked on open, or None."""
    if found is None:
        return None
    data, count, size = found
    return TermDictionary(data, count, size, bm25, source)


def word_frequency(count: int) -> int:
    """The stored frequency byte of a word written ``count`` times: ``round(8 * log2(count))``.

    Capped at 255; computed with integers only (the bundle's reader agrees bit for bit).
    """
    byte = 0
    # 8 * log2(count) >= k + 0.5  <=>  count ** 16 >= 2 ** (2k + 1)
    while byte < 255 and count**16 >= 1 << (2 * byte + 1):
        byte += 1
    return byte


def encode_dictionary(counts: dict[str, int]) -> tuple[bytes, int, int]:
    """``dict.words`` for words and their counts: ``(deflated, words, inflated length)``.

    Deflated with zlib level 9, memLevel 9, raw (``wbits = -15``), as §2.2's tables.
    """
    words = sorted(counts)
    raw = bytes(word_frequency(counts[w]) for w in words) + "\n".join(words).encode("utf-8")
    packer = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
    return packer.compress(raw) + packer.flush(), len(words), len(raw)
