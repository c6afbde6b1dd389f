"""Bit-packed posting runs (format 6, FORMAT.md §2.4): exact bytes, round trips, refusals."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scidx.index.postings import MAX_WIDTH, bit_lengths, decode_runs, encode_runs, run_bytes


def test_the_worked_example_of_format_md() -> None:
    """Rows 3 and 5 with codes 1 and 0: gaps 3, 2 in 2 bits, codes in 1 bit, one byte 0x1b."""
    widths, lengths, data = encode_runs(np.array([2]), np.array([3, 5]), np.array([1, 0]))
    assert widths.tolist() == [[2, 1]] and lengths.tolist() == [1]
    # LSB first: gap 3 = bits 1,1; gap 2 = bits 0,1; codes 1, 0; two zero padding bits.
    assert data.tobytes() == bytes([0b00011011])
    rows, codes = decode_runs(data, [0], np.array([2]), np.array([2]), np.array([1]))
    assert rows.tolist() == [3, 5] and codes.tolist() == [1, 0]


def test_bit_lengths() -> None:
    values = [0, 1, 2, 3, 4, 255, 256, (1 << 32) - 1, 1 << 32, (1 << 52) + 1]
    assert bit_lengths(np.array(values)).tolist() == [v.bit_length() for v in values]


def _random_terms(rnd: random.Random, terms: int, n: int) -> tuple[np.ndarray, ...]:
    df, rows, codes = [], [], []
    for _ in range(terms):
        count = min(n, rnd.choice([1, 1, 2, 3, rnd.randrange(1, min(n, 400) + 1)]))
        rows += sorted(rnd.sample(range(n), count))
        top = rnd.choice([0, 1, 7, 300, (1 << 32) - 1])
        codes += [rnd.randrange(top + 1) for _ in range(count)]
        df.append(count)
    return np.array(df), np.array(rows, dtype=np.int64), np.array(codes, dtype=np.int64)


@pytest.mark.parametrize("n", [1, 300, 70_000, 1 << 32])
def test_runs_round_trip_term_by_term_and_all_at_once(n: int) -> None:
    rnd = random.Random(n)
    df, rows, codes = _random_terms(rnd, 120, n)
    widths, lengths, data = encode_runs(df, rows, codes)
    assert int(widths.max()) <= MAX_WIDTH and data.shape == (int(lengths.sum()),)
    bd, bt = widths[:, 0].astype(np.int64), widths[:, 1].astype(np.int64)
    assert np.array_equal(lengths, run_bytes(df, bd, bt))
    offsets = np.cumsum(lengths) - lengths
    got_rows, got_codes = decode_runs(data, offsets, df, bd, bt)
    assert np.array_equal(got_rows, rows) and np.array_equal(got_codes, codes)
    starts = np.cumsum(df) - df
    for t in range(df.shape[0]):  # the one-term path a query takes
        one = slice(int(starts[t]), int(starts[t] + df[t]))
        r, c = decode_runs(data, [int(offsets[t])], df[t : t + 1], bd[t : t + 1], bt[t : t + 1])
        assert np.array_equal(r, rows[one]) and np.array_equal(c, codes[one])
        # Widths are the least that hold the term's largest gap and code.
        gaps = np.diff(rows[one], prepend=0)
        assert int(bd[t]) == int(gaps.max()).bit_length()
        assert int(bt[t]) == int(codes[one].max()).bit_length()


def test_padding_bits_are_zero_and_encoding_is_deterministic() -> None:
    df, rows, codes = _random_terms(random.Random(7), 60, 5000)
    first = encode_runs(df, rows, codes)
    again = encode_runs(df.copy(), rows.copy(), codes.copy())
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    widths, lengths, data = first
    used = (df * widths.astype(np.int64).sum(axis=1)) % 8
    last = np.cumsum(lengths) - 1
    assert not np.any(data[last[used > 0]] >> used[used > 0].astype(np.uint8))


def test_zero_width_runs_take_no_bytes() -> None:
    widths, lengths, data = encode_runs(np.array([1, 1]), np.array([0, 0]), np.array([0, 0]))
    assert widths.tolist() == [[0, 0], [0, 0]] and lengths.tolist() == [0, 0]
    assert data.shape == (0,)
    rows, codes = decode_runs(data, [0, 0], np.array([1, 1]), np.array([0, 0]), np.array([0, 0]))
    assert rows.tolist() == [0, 0] and codes.tolist() == [0, 0]


@pytest.mark.parametrize(
    ("df", "rows", "codes"),
    [
        ([2], [5, 3], [0, 0]),  # descending rows: a negative gap
        ([1], [1 << 33], [0]),  # a row past 32 bits
        ([1], [0], [1 << 33]),  # a code past 32 bits
        ([2], [1], [0]),  # fewer rows than postings
        ([0], [], []),  # an empty term
    ],
)
def test_what_no_run_can_hold_is_refused(df: list[int], rows: list[int], codes: list[int]) -> None:
    with pytest.raises(ValueError):
        encode_runs(np.array(df), np.array(rows, dtype=np.int64), np.array(codes, dtype=np.int64))
