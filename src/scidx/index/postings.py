"""Posting runs: each BM25 term's chunk rows and frequency codes, bit-packed (format 6).

A term's *run* (FORMAT.md §2.4) holds its ``df`` chunk rows as gaps, the first row itself and
then each row minus the one before, in ``bd`` bits each, then its ``df`` term-frequency codes
(rows of ``bm25.tf_values``) in ``bt`` bits each. Bits are read least significant first: bit
``k`` of a run is bit ``k % 8`` of its byte ``k // 8``, and a value of width ``w`` at bit ``p`` is
``sum(bit(p + i) << i for i < w)``. A run starts on a byte and its last byte's unused high bits
are 0. ``bd`` and ``bt`` are the bit lengths of the term's largest gap and largest code (0 when
that is 0: a term whose every posting has code 0 stores no code bits).

Why bits and not bytes: Kubernetes docs' 642,568 postings have gaps of 1 to 13,859 rows and
codes of 0 to 57; as ``<u2`` rows and ``<u1`` codes they took 1,927,704 bytes, packed to each
term's widths 1,099,087 (a plain vbyte of the gaps would be 728,583 for the rows alone, but
decodes a byte at a time). Decoding a run is a handful of whole-array numpy operations (five
byte gathers at most, shifts, one ``cumsum``), and a term is decoded once per process
(:class:`scidx.index.bm25.PostingLookup` keeps it).

Runtime module: numpy and the stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "MAX_WIDTH",
    "bit_lengths",
    "decode_runs",
    "encode_runs",
    "run_bytes",
]

MAX_WIDTH = 32
"""The widest gap or code a run may hold, in bits (rows and codes are below 2**32)."""

_I64 = npt.NDArray[np.int64]
_POWERS = np.left_shift(np.int64(1), np.arange(MAX_WIDTH, dtype=np.int64))


def bit_lengths(values: npt.ArrayLike) -> _I64:
    """Each non-negative integer's bit length (0 for 0), for values below 2**53."""
    v = np.asarray(values, dtype=np.float64)
    # frexp's exponent of an integer x > 0 is its bit length, exactly while x < 2**53.
    return np.frexp(v)[1].astype(np.int64)


def run_bytes(df: _I64, bd: _I64, bt: _I64) -> _I64:
    """The byte length of runs of ``df`` postings at widths ``bd`` and ``bt``."""
    return (df * (bd + bt) + 7) // 8


def encode_runs(
    df: _I64, docs: _I64, codes: _I64
) -> tuple[npt.NDArray[np.uint8], _I64, npt.NDArray[np.uint8]]:
    """Pack consecutive terms' postings into runs.

    Args:
        df: Each term's posting count (all > 0), in term order.
        docs: The terms' chunk rows, term after term, ascending within a term.
        codes: Their frequency codes, in the same order.

    Returns:
        ``(widths, lengths, data)``: ``uint8 [v, 2]`` (``bd``, ``bt``) per term, each run's byte
        length, and the runs concatenated.

    Raises:
        ValueError: A row or code does not fit in 32 bits, or the lengths disagree.
    """
    df = np.asarray(df, dtype=np.int64)
    docs = np.asarray(docs, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    p = int(df.sum())
    if docs.shape != (p,) or codes.shape != (p,) or bool(np.any(df <= 0)):
        raise ValueError(f"{df.shape[0]} terms with {p} postings, but {docs.shape[0]} rows given")
    if not p:
        return np.zeros((0, 2), np.uint8), np.zeros(0, np.int64), np.zeros(0, np.uint8)
    starts = np.cumsum(df) - df
    gaps = docs.copy()
    gaps[1:] -= docs[:-1]
    gaps[starts] = docs[starts]
    bd = bit_lengths(np.maximum.reduceat(gaps, starts))
    bt = bit_lengths(np.maximum.reduceat(codes, starts))
    if int(bd.max()) > MAX_WIDTH or int(bt.max()) > MAX_WIDTH or bool(np.any(gaps < 0)):
        raise ValueError("a posting's row or code does not fit in a run (32 bits, ascending)")
    lengths = run_bytes(df, bd, bt)
    base = 8 * (np.cumsum(lengths) - lengths)  # each run's first bit
    index = np.arange(p, dtype=np.int64) - np.repeat(starts, df)
    wd, wt = np.repeat(bd, df), np.repeat(bt, df)
    bits = np.zeros(8 * int(lengths.sum()), dtype=np.uint8)
    _put(bits, np.repeat(base, df) + index * wd, gaps, wd)
    _put(bits, np.repeat(base + df * bd, df) + index * wt, codes, wt)
    widths = np.stack([bd, bt], axis=1).astype(np.uint8)
    return widths, lengths, np.packbits(bits, bitorder="little")


def _put(bits: npt.NDArray[np.uint8], pos: _I64, values: _I64, widths: _I64) -> None:
    """Write each value's ``widths`` low bits at ``pos``, least significant first."""
    for i in range(int(widths.max(initial=0))):
        on = widths > i
        bits[pos[on] + i] = (values[on] >> i) & 1


def decode_runs(
    data: npt.NDArray[np.uint8],
    offsets: Sequence[int] | _I64,
    df: _I64,
    bd: _I64,
    bt: _I64,
) -> tuple[_I64, _I64]:
    """The chunk rows and frequency codes of runs in ``data``, term after term.

    ``offsets`` are each run's first byte in ``data``; the caller has checked that each run
    lies inside ``data`` with the length :func:`run_bytes` gives and widths of at most
    :data:`MAX_WIDTH`. Rows come back as the running sums of the gaps within each term.
    """
    df = np.asarray(df, dtype=np.int64)
    if df.shape[0] == 1:  # one query term: its bits unpacked, then one product per field
        count, w_d, w_t = int(df[0]), int(bd[0]), int(bt[0])
        first = int(offsets[0])
        run = data[first : first + (count * (w_d + w_t) + 7) // 8]
        bits = np.unpackbits(run, bitorder="little")
        gaps = bits[: count * w_d].reshape(count, w_d) @ _POWERS[:w_d]
        codes = bits[count * w_d : count * (w_d + w_t)].reshape(count, w_t) @ _POWERS[:w_t]
        return np.cumsum(gaps), np.asarray(codes, dtype=np.int64)
    bd = np.asarray(bd, dtype=np.int64)
    bt = np.asarray(bt, dtype=np.int64)
    base = 8 * np.asarray(offsets, dtype=np.int64)
    starts = np.cumsum(df) - df
    index = np.arange(int(df.sum()), dtype=np.int64) - np.repeat(starts, df)
    wd, wt = np.repeat(bd, df), np.repeat(bt, df)
    gaps = _get(data, np.repeat(base, df) + index * wd, wd)
    codes = _get(data, np.repeat(base + df * bd, df) + index * wt, wt)
    rows = np.cumsum(gaps)
    if rows.shape[0]:
        # Restart the running sum at each term: subtract what the terms before it added.
        before = rows[starts] - gaps[starts]
        rows -= np.repeat(before, df)
    return rows, codes


def _get(data: npt.NDArray[np.uint8], pos: _I64, widths: int | _I64) -> _I64:
    """The values of ``widths`` bits at bit positions ``pos`` (least significant bit first)."""
    if not pos.shape[0]:
        return np.zeros(0, dtype=np.int64)
    top = int(np.max(widths))
    if top == 0:
        return np.zeros(pos.shape[0], dtype=np.int64)
    byte = pos >> 3
    shift = pos & 7
    span = (7 + top + 7) // 8  # bytes a value can touch: at most 5 for 32 bits
    last = int(byte.max()) + span
    padded = data
    if last > data.shape[0]:
        # The final values' windows may reach past the data: read zeros there.
        padded = np.zeros(last, dtype=np.uint8)
        padded[: data.shape[0]] = data
    word = padded[byte].astype(np.int64)
    for i in range(1, span):
        word |= padded[byte + i].astype(np.int64) << (8 * i)
    mask = (np.int64(1) << np.asarray(widths, dtype=np.int64)) - 1
    return np.asarray((word >> shift) & mask, dtype=np.int64)
