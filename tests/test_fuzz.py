"""Bounded fuzzing of the index reader (a few seconds); the long run is benchmarks/fuzz_long.py.

Both drive ``tests/fuzz/harness.py``: a mutated seed index (header edits, array contents with
recomputed checksums, dtypes and shapes, meta values, truncations, byte flips) is loaded with and
without ``verify`` and, when it loads, searched in every mode with filters and read hit field by
hit field. Only :class:`scidx.errors.ScidxError` may come out; the suite's ``filterwarnings =
error`` also makes any numpy ``RuntimeWarning`` a failure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.harness import MUTATIONS, RandomChooser, run_case, seeds
from scidx.index.index import load_bytes


class _DataChooser:
    """A harness Chooser backed by Hypothesis, so a failing case shrinks."""

    def __init__(self, data: st.DataObject) -> None:
        self._data = data

    def integer(self, lo: int, hi: int) -> int:
        return int(self._data.draw(st.integers(lo, hi)))

    def choice(self, options: Sequence[Any]) -> Any:
        return self._data.draw(st.sampled_from(list(options)))


def test_seeds_are_valid_indexes() -> None:
    for data in seeds():
        load_bytes(data, verify=True).close()


@settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_hypothesis_driven_cases_raise_only_scidx_errors(data: st.DataObject) -> None:
    run_case(_DataChooser(data))


def test_seeded_random_cases_raise_only_scidx_errors() -> None:
    """1,500 cases of the long run's stream (seed 11): every mutation kind, loads and refusals."""
    outcomes: Counter[str] = Counter()
    for i in range(1500):
        outcomes[run_case(RandomChooser(11 * 2**32 + i))] += 1
    # The stream reaches both sides: files that load (and are searched) and files refused.
    assert outcomes["loaded"] > 150 and outcomes["refused"] > 150, outcomes
    assert set(MUTATIONS) == {"header", "array", "reshape", "meta", "truncate", "flip"}
