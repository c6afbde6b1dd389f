"""Chunk bodies (raw Markdown and clean text), one raw-deflate stream per chunk (FORMAT.md §2.9).

A chunk's *record* (format 9) is its clean text (``chunk.plain`` in format 1) followed by its raw
Markdown (``chunk.text``), UTF-8. Each record is compressed on its own with raw deflate (RFC 1951,
``zlib`` with ``wbits=-15``) against one preset dictionary shared by the whole index, so reading
a hit inflates only that hit's record (about 1-3 KB), and the second copy of the same words
costs little: the deflate window sees the first just before it. A snippet needs the clean text
alone, so it inflates only the record's first part (``max_length``), about half the work;
formats 2-8 put the Markdown first.

Measured on the Kubernetes docs (14,293 chunks, 11.8 MiB Markdown + 9.0 MiB clean text;
``/tmp`` script, zlib level 9): blocks of whole records compress to 5.6 MiB at 2 KiB per block,
4.5 MiB at 16 KiB and 4.0 MiB at 64 KiB without a dictionary, and a hit then inflates its whole
block (tens to hundreds of microseconds); one record per stream with a 32 KiB preset
dictionary gives 4.8 MiB and inflates 1-3 KB per hit. Separate streams for the Markdown and the
clean text cost 7.9 MiB: the clean text is cheap only next to its Markdown.

Untrusted input: every pointer is bounds-checked on access, a record's declared length is
capped by deflate's maximum expansion of its compressed bytes (:data:`MAX_RATIO`), inflating
stops at the declared length (a zlib bomb gets no further), and a stream that is not exactly
the declared bytes is a :class:`~scidx.errors.CorruptIndexError` naming the array and row.

Runtime module: numpy, zlib and the stdlib only.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError
from scidx.index.format import Buffer, Header, array_view

__all__ = [
    "ARRAY_NAMES",
    "DICT_BYTES",
    "MAX_RATIO",
    "TextColumn",
    "TextStore",
    "encode_texts",
    "make_dictionary",
    "open_texts",
    "text_columns",
]

ARRAY_NAMES = ("text.data", "text.dict", "text.len", "text.ptr")

DICT_BYTES = 32768
"""Largest preset dictionary (deflate's window): a reader refuses a longer ``text.dict``."""

MAX_RATIO = 1032
"""Deflate's largest expansion (a 258-byte match per 2 bits, rounded up): a record declared
longer than ``MAX_RATIO * compressed + 64`` bytes is corrupt, whatever its stream says."""

LEVEL = 9
"""The packer's zlib level (memLevel 9, default strategy): the smallest output; packing the
Kubernetes docs' records takes about a second."""

DICT_TARGET = 16384
"""The packer's dictionary size: on the Kubernetes docs 16 KiB gives 4.88 MiB and 6.0 us per
record inflated, 32 KiB 4.64 MiB and 8.1 us (setting a dictionary copies it into the window of
every inflate), none 6.14 MiB and 6.6 us."""

DICT_SAMPLES = 128
"""Chunks the packer samples, evenly by row, for the preset dictionary."""

DICT_SAMPLE_BYTES = 256
"""Bytes of each sampled record that go into the dictionary."""

_REBUILD = "The file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."
# Memoryview formats of native unsigned integers (a little-endian machine's <u2/<u4/<u8).
_UNSIGNED = ("H", "I", "L", "Q")

#: Records above this size are not remembered by :class:`TextStore`'s small memo.
_MEMO_RECORD_BYTES = 1 << 16
_MEMO_RECORDS = 256


def make_dictionary(records: Sequence[bytes]) -> bytes:
    """The preset dictionary: the first bytes of evenly spaced records, the last 32 KiB.

    Rows ``i * N // DICT_SAMPLES`` for ``i < min(N, DICT_SAMPLES)``, the first
    :data:`DICT_SAMPLE_BYTES` bytes of each, concatenated, then cut to the last
    :data:`DICT_TARGET` bytes (deflate codes near matches shorter: the end of a dictionary).
    """
    n = len(records)
    picks = min(n, DICT_SAMPLES)
    joined = b"".join(records[i * n // picks][:DICT_SAMPLE_BYTES] for i in range(picks))
    return joined[-DICT_TARGET:]


def _compressor(zdict: bytes) -> Any:
    if zdict:
        return zlib.compressobj(LEVEL, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, zdict)
    return zlib.compressobj(LEVEL, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY)


def encode_texts(texts: Sequence[str], plains: Sequence[str] | None) -> dict[str, npt.NDArray[Any]]:
    """The ``text.*`` arrays for chunk ``texts`` and their clean texts (``None``: the same).

    Deterministic for a given zlib build (the stream bytes are zlib's; the reader only needs
    them to inflate to the declared record).

    Raises:
        ValueError: ``plains`` has another length, or a text is not encodable as UTF-8.
    """
    n = len(texts)
    if plains is not None and len(plains) != n:
        raise ValueError(f"{n} texts but {len(plains)} clean texts")
    width = 1 if plains is None else 2
    lengths = np.zeros((n, width), dtype=np.int64)

    def record(i: int) -> bytes:
        raw = texts[i].encode("utf-8")
        if plains is None:
            lengths[i, 0] = len(raw)
            return raw
        clean = plains[i].encode("utf-8")
        lengths[i] = (len(raw), len(clean))
        return clean + raw  # the clean text first: a snippet inflates only that part

    # The dictionary needs a sample of records first; each record is encoded again when
    # compressed (cheap next to deflate) so the whole corpus is never held uncompressed.
    picks = min(n, DICT_SAMPLES)
    zdict = make_dictionary([record(i * n // picks) for i in range(picks)]) if n else b""
    pieces: list[bytes] = []
    ptr = np.zeros(n + 1, dtype="<u8")
    total = 0
    for i in range(n):
        data = record(i)
        if len(data) > 0xFFFFFFFF:
            raise ValueError(f"chunk {i} is {len(data)} bytes; a chunk holds at most 4 GiB")
        c = _compressor(zdict)
        z = c.compress(data) + c.flush()
        pieces.append(z)
        total += len(z)
        ptr[i + 1] = total
    blob = np.frombuffer(b"".join(pieces), dtype="<u1") if total else np.zeros(0, "<u1")
    # The narrowest of the allowed dtypes that holds them (format 9): on the Kubernetes docs
    # 110,880 bytes of pointers and lengths instead of 221,768.
    longest = int(lengths.max()) if n else 0
    return {
        "text.data": blob,
        "text.dict": np.frombuffer(zdict, dtype="<u1") if zdict else np.zeros(0, "<u1"),
        "text.len": lengths.astype("<u2" if longest < 1 << 16 else "<u4"),
        "text.ptr": ptr.astype("<u4" if total < 1 << 32 else "<u8"),
    }


class TextStore:
    """Lazy, bounds-checked reader of the ``text.*`` arrays (opening costs O(1)).

    Args:
        zdict: ``text.dict`` (``<u1``, at most :data:`DICT_BYTES`).
        ptr: ``text.ptr`` (``<u8 [N+1]``): record ``i`` is ``data[ptr[i]:ptr[i+1]]``.
        data: ``text.data`` (``<u1``).
        lengths: ``text.len`` (``<u4 [N, C]``): UTF-8 byte lengths of the Markdown and the
            clean text (C = 2; the record holds the clean text first) or of the Markdown
            (C = 1: the clean text is the Markdown).
        source: The file, for messages.

    Raises:
        CorruptIndexError: A wrong dtype, shape, dictionary size or end pointer.
    """

    def __init__(
        self,
        zdict: npt.NDArray[Any],
        ptr: npt.NDArray[Any],
        data: npt.NDArray[Any],
        lengths: npt.NDArray[Any],
        *,
        source: str = "<buffer>",
    ) -> None:
        self.source = source
        n = int(ptr.shape[0]) - 1 if ptr.ndim == 1 else -1
        if ptr.dtype not in (np.dtype("<u4"), np.dtype("<u8")) or n < 0:
            raise self._error(
                "array `text.ptr` must be a non-empty 1-D <u4 or <u8 array, not "
                f"{ptr.dtype.str} {list(ptr.shape)}"
            )
        if data.dtype != np.dtype("<u1") or data.ndim != 1:
            raise self._error(f"array `text.data` must be a 1-D <u1 array, not {data.dtype.str}")
        if zdict.dtype != np.dtype("<u1") or zdict.ndim != 1 or zdict.shape[0] > DICT_BYTES:
            raise self._error(
                f"array `text.dict` must be 1-D <u1 of at most {DICT_BYTES} bytes, not "
                f"{zdict.dtype.str} {list(zdict.shape)}"
            )
        if (
            lengths.dtype not in (np.dtype("<u2"), np.dtype("<u4"))
            or lengths.ndim != 2
            or lengths.shape[0] != n
            or lengths.shape[1] not in (1, 2)
        ):
            raise self._error(
                f"array `text.len` has {lengths.dtype.str} {list(lengths.shape)}, expected "
                f"<u2 or <u4 [{n}, 1] or [{n}, 2]"
            )
        first, last = int(ptr[0]), int(ptr[-1])
        if first != 0 or last != data.shape[0]:
            raise self._error(
                f"array `text.ptr` runs from {first} to {last}, expected 0 to "
                f"{data.shape[0]} (the length of `text.data`)"
            )
        self.n = n
        self.width = int(lengths.shape[1])
        self._ptr = ptr
        self._data = data
        self._lengths = lengths
        self._nbytes = int(data.shape[0])
        self._dict = zdict.tobytes()
        # Native memoryviews: Python ints without numpy scalars (as StringTable's fast path).
        off = ptr.data if ptr.flags.c_contiguous else None
        self._fast_ptr = off if off is not None and off.format in _UNSIGNED else None
        lens = lengths.reshape(-1).data if lengths.flags.c_contiguous else None
        self._fast_len = lens if lens is not None and lens.format in _UNSIGNED else None
        self._view = data.data if data.flags.c_contiguous else None
        self._memo: dict[int, bytes] = {}
        self._firsts: dict[int, bytes] = {}  # records' clean texts inflated alone

    def _error(self, what: str) -> CorruptIndexError:
        return CorruptIndexError(f"{self.source}: {what}. {_REBUILD}")

    def parts(self, row: int) -> tuple[int, int]:
        """UTF-8 byte lengths of chunk ``row``'s Markdown and clean text (equal: no clean text)."""
        lens = self._fast_len
        w = self.width
        if lens is not None:
            a = lens[row * w]
            return (a, lens[row * w + 1]) if w == 2 else (a, a)
        a = int(self._lengths[row, 0])
        return (a, int(self._lengths[row, 1])) if w == 2 else (a, a)

    def record(self, row: int) -> bytes:
        """The inflated record of chunk ``row`` (``0 <= row < N``: a caller's error otherwise).

        Raises:
            IndexError: ``row`` is out of range.
            CorruptIndexError: A pointer out of order or bounds, a declared length deflate
                cannot produce from the stored bytes, or a stream that does not inflate to
                exactly the declared bytes.
        """
        memo = self._memo
        found = memo.get(row)
        if found is not None:
            return found
        start, end = self._bounds(row)
        a, b = self.parts(row)
        want = a + b if self.width == 2 else a
        if want > MAX_RATIO * (end - start) + 64:
            raise self._too_long(row, want, end - start)
        view = self._view
        stored = view[start:end] if view is not None else self._data[start:end].tobytes()
        out = self._inflate(stored, want, row)
        if want <= _MEMO_RECORD_BYTES:
            if len(memo) >= _MEMO_RECORDS:
                memo.clear()  # bounded; a race only inflates a record twice
            memo[row] = out
        return out

    def _bounds(self, row: int) -> tuple[int, int]:
        """``text.ptr[row]``, ``text.ptr[row + 1]``, checked against each other and the data."""
        if not 0 <= row < self.n:
            raise IndexError(f"chunk row {row} is out of range (the index has {self.n})")
        ptr = self._fast_ptr
        if ptr is not None:
            start, end = ptr[row], ptr[row + 1]
        else:
            start, end = int(self._ptr[row]), int(self._ptr[row + 1])
        if not start <= end <= self._nbytes:
            raise self._error(
                f"array `text.ptr` gives chunk {row} the bytes {start}..{end}, out of order or "
                f"past `text.data` ({self._nbytes} bytes)"
            )
        return start, end

    def _too_long(self, row: int, want: int, stored: int) -> CorruptIndexError:
        return self._error(
            f"array `text.len` says chunk {row} is {want} bytes, more than its "
            f"{stored} compressed bytes can hold"
        )

    def _decompressor(self) -> Any:
        """A decompressor at the start of a stream, the dictionary in its window.

        A new one per record: setting the packer's 16 KiB dictionary copies 16 KiB, where
        ``copy()`` of a primed decompressor copies its whole 32 KiB window and its state.
        cachegrind, 2,000 SciFact records inflated up to 900 bytes each: 60k instructions
        per record against 77k with ``copy()``.
        """
        zdict = self._dict
        return zlib.decompressobj(-15, zdict=zdict) if zdict else zlib.decompressobj(-15)

    def _inflate(self, stored: Any, want: int, row: int) -> bytes:
        over = b""
        try:
            d = self._decompressor()
            # max_length 0 would mean "no limit": an empty record may inflate 1 byte, no more.
            out: bytes = d.decompress(stored, want or 1)
            if len(out) == want and not d.eof:  # the end code may follow the last output byte
                over = d.decompress(d.unconsumed_tail, 1)
        except zlib.error as exc:
            raise self._error(
                f"array `text.data` holds a bad stream for chunk {row} ({exc})"
            ) from None
        if over or len(out) != want or not d.eof or d.unused_data or d.unconsumed_tail:
            raise self._error(
                f"array `text.data` does not inflate to the {want} bytes `text.len` declares "
                f"for chunk {row}"
            )
        return out

    def _decode(self, raw: bytes, row: int, part: str) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._error(
                f"the {part} of chunk {row} is not valid UTF-8 ({exc.reason})"
            ) from None

    def text(self, row: int) -> str:
        """Chunk ``row``'s raw Markdown."""
        rec = self.record(row)
        if self.width == 1:
            return self._decode(rec, row, "Markdown")
        _, b = self.parts(row)
        return self._decode(rec[b:], row, "Markdown")

    def plain(self, row: int) -> str:
        """Chunk ``row``'s clean text (its Markdown when the index stores no clean text).

        Inflates only the record's first part (the whole record when it is already in the
        memo); the rest of the stream is checked when the Markdown is read (or by
        ``verify=True``).
        """
        if self.width == 1:
            return self._decode(self.record(row), row, "Markdown")
        whole = self._memo.get(row)
        _, b = self.parts(row) if 0 <= row < self.n else (0, 0)
        if whole is not None:
            return self._decode(whole[:b], row, "clean text")
        return self._decode(self.first(row), row, "clean text")

    def clean_size(self, row: int) -> int:
        """UTF-8 bytes of chunk ``row``'s clean text (its Markdown when C = 1)."""
        a, b = self.parts(row)
        return b if self.width == 2 else a

    def clean_sizes(self, rows: Sequence[int]) -> list[int]:
        """:meth:`clean_size` of each of ``rows``."""
        lens, w = self._fast_len, self.width
        if lens is None or not rows or min(rows) < 0 or max(rows) >= self.n:
            return [self.clean_size(row) for row in rows]
        return [lens[row * w + w - 1] for row in rows]  # C = 1: the Markdown is the clean text

    def prefix(self, row: int, size: int) -> bytes:
        """The first ``min(size, clean_size(row))`` bytes of chunk ``row``'s clean text.

        Inflates no more than that (a snippet's window is usually well inside the text).

        Raises:
            IndexError: ``row`` is out of range.
            CorruptIndexError: As :meth:`first`.
        """
        return self.prefixes([row], [size])[0]

    def prefixes(self, rows: Sequence[int], sizes: Sequence[int]) -> list[bytes]:
        """:meth:`prefix` of each of ``rows`` (a page of snippets), in one loop.

        Raises:
            IndexError: A row is out of range.
            CorruptIndexError: As :meth:`first`.
        """
        width = self.width
        memo = self._firsts if width == 2 else self._memo
        # Native memoryviews give Python ints; other layouts (never made by the packer) numpy
        # scalars, made ints (a sum of two <u2 scalars would wrap).
        ptr: Any = self._fast_ptr if self._fast_ptr is not None else _Ints(self._ptr)
        lens: Any = self._fast_len
        if lens is None:
            lens = _Ints(self._lengths.reshape(-1))
        view = self._view
        fresh = self._decompressor
        n, nbytes = self.n, self._nbytes
        out: list[bytes] = []
        for row, size in zip(rows, sizes, strict=True):
            found = memo.get(row)
            if found is not None:
                out.append(found[:size])
                continue
            if not 0 <= row < n:
                self._bounds(row)  # raises IndexError
            start, end = ptr[row], ptr[row + 1]
            if not start <= end <= nbytes:
                self._bounds(row)  # raises, naming the row
            if width == 2:
                a, clean = lens[row * 2], lens[row * 2 + 1]
                total = a + clean  # the whole record's declared bytes
            else:
                total = clean = lens[row]
            if total > MAX_RATIO * (end - start) + 64:
                raise self._too_long(row, total, end - start)
            want = size if size < clean else clean
            stored = view[start:end] if view is not None else self._data[start:end].tobytes()
            try:
                data: bytes = fresh().decompress(stored, want) if want > 0 else b""
            except zlib.error as exc:
                raise self._error(
                    f"array `text.data` holds a bad stream for chunk {row} ({exc})"
                ) from None
            if len(data) != want:
                raise self._error(
                    f"array `text.data` inflates to fewer bytes than the {want} of the clean "
                    f"text `text.len` declares for chunk {row}"
                )
            out.append(data)
        return out

    def first(self, row: int) -> bytes:
        """The clean text's bytes of chunk ``row`` (C = 2), inflated without the Markdown.

        Raises:
            IndexError: ``row`` is out of range.
            CorruptIndexError: As :meth:`record`, or a stream that ends before the clean text.
        """
        memo = self._firsts
        found = memo.get(row)
        if found is not None:
            return found
        b = self.clean_size(row) if 0 <= row < self.n else 0
        out = self.prefixes([row], [b])[0]  # raises IndexError for a row out of range
        if b <= _MEMO_RECORD_BYTES:
            if len(memo) >= _MEMO_RECORDS:
                memo.clear()  # bounded; a race only inflates a record twice
            memo[row] = out
        return out

    def validate_all(self) -> None:
        """Inflate and decode every record (for ``verify=True``).

        Raises:
            CorruptIndexError: Names the first bad chunk.
        """
        ptr = self._ptr
        if self.n and bool((ptr[1:] < ptr[:-1]).any()):
            row = int(np.flatnonzero(ptr[1:] < ptr[:-1])[0])
            raise self._error(f"array `text.ptr` is out of order at chunk {row}")
        for row in range(self.n):
            self.text(row)
            if self.width == 2:
                self.plain(row)
        self._memo.clear()
        self._firsts.clear()


class _Ints:
    """A 1-D numpy array read as Python ints."""

    __slots__ = ("array",)

    def __init__(self, array: npt.NDArray[Any]) -> None:
        self.array = array

    def __getitem__(self, i: int) -> int:
        return int(self.array[i])


def _dtype(header: Header, name: str, *allowed: str) -> str:
    """The array's dtype if ``allowed`` (else the first, which :func:`array_view` then names)."""
    entry = header.arrays.get(name)
    return entry.dtype if entry is not None and entry.dtype in allowed else allowed[0]


def open_texts(buf: Buffer, header: Header, n: int) -> TextStore:
    """The :class:`TextStore` of an index's ``text.*`` arrays, checked in O(1) for ``n`` chunks.

    Raises:
        CorruptIndexError: An array is missing or malformed, or does not have ``n`` rows.
    """
    store = TextStore(
        array_view(buf, header, "text.dict", dtype="<u1", ndim=1),
        array_view(buf, header, "text.ptr", dtype=_dtype(header, "text.ptr", "<u4", "<u8"), ndim=1),
        array_view(buf, header, "text.data", dtype="<u1", ndim=1),
        array_view(buf, header, "text.len", dtype=_dtype(header, "text.len", "<u2", "<u4"), ndim=2),
        source=header.source,
    )
    if store.n != n:
        raise store._error(f"array `text.ptr` has {store.n + 1} entries, expected {n + 1}")
    return store


def text_columns(store: TextStore) -> tuple[TextColumn, TextColumn | None]:
    """The Markdown column and (when stored) the clean-text column of ``store``."""
    plain = TextColumn(store, plain=True) if store.width == 2 else None
    return TextColumn(store, plain=False), plain


class TextColumn:
    """One part of every record (``chunk.text`` or ``chunk.plain``) as a string lookup."""

    def __init__(self, store: TextStore, plain: bool) -> None:
        self.store = store
        self._read = store.plain if plain else store.text

    def __len__(self) -> int:
        """Number of chunks."""
        return self.store.n

    def __getitem__(self, i: int) -> str:
        """The text of chunk ``i`` (negative indices count from the end)."""
        i = int(i)
        if i < 0:
            i += self.store.n
        return self._read(i)

    def take(self, rows: Sequence[int]) -> list[str]:
        """The texts of ``rows``, in order."""
        read = self._read
        return [read(i) for i in rows]

    def __iter__(self) -> Iterator[str]:
        """Every chunk's text in row order."""
        for i in range(self.store.n):
            yield self._read(i)
