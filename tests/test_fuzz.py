"""Bounded fuzzing of the index reader (a few seconds); the long run is benchmarks/fuzz_long.py.

Both drive ``tests/fuzz/harness.py``: a mutated seed index (header edits, array contents with
recomputed checksums, dtypes and shapes, meta values, truncations, byte flips) is loaded with and
without ``verify`` and, when it loads, searched in every mode with filters and read hit field by
hit field. Only :class:`scidx.errors.ScidxError` may come out; the suite's ``filterwarnings =
error`` also makes any numpy ``RuntimeWarning`` a failure.

The export cases (issue 39) run the exporters over mutants instead: llms.txt, the web bundle
and the PostgreSQL export into a real server (a modest sample here; ``fuzz_long.py
--exporters`` runs more). A refused PostgreSQL export must leave its table as it was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.harness import MUTATIONS, RandomChooser, run_case, run_export_case, seeds
from fuzz.harness import _encode as encode_arrays
from fuzz.harness import _m_array as mutate_array
from scidx.index import format as fmt
from scidx.index.index import load_bytes
from support.pg_server import PgServer


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


def _arrays(data: bytes) -> dict[str, np.ndarray]:
    header = fmt.read_header(data)
    return {name: np.array(fmt.array_view(data, header, name)) for name in header.arrays}


def test_array_mutations_reach_every_array_of_the_file_including_new_ones() -> None:
    """Arrays are enumerated from the file, so one a later format adds is mutated too."""
    meta = fmt.read_header(seeds()[0]).meta
    arrays = _arrays(seeds()[0])
    arrays["zz.future.table"] = np.arange(64, dtype="<u4")
    data = encode_arrays(arrays, meta)
    assert data is not None
    changed: set[str] = set()
    for i in range(800):
        out = mutate_array(data, RandomChooser(i))
        if out is None:
            continue
        after = _arrays(out)
        changed |= {n for n, a in arrays.items() if not np.array_equal(a, after[n], equal_nan=True)}
    assert changed == {n for n, a in arrays.items() if a.size}


def test_export_cases_raise_only_scidx_errors(tmp_path: Path) -> None:
    """llms.txt and the web bundle over 500 mutants (PostgreSQL: the next test)."""
    outcomes: Counter[str] = Counter()
    for i in range(500):
        outcomes[run_export_case(RandomChooser(12 * 2**32 + i), tmp_path)] += 1
    assert outcomes["exported"] > 60 and outcomes["refused"] > 300, outcomes


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    pytest.importorskip("psycopg", reason="the PostgreSQL export needs the postgres extra")
    server = PgServer().start()
    try:
        yield server
    finally:
        server.stop()


def test_postgres_export_cases_raise_only_scidx_errors(tmp_path: Path, pg: PgServer) -> None:
    """120 mutants through all three exporters, PostgreSQL into a real server."""
    outcomes: Counter[str] = Counter()
    for i in range(120):
        outcomes[run_export_case(RandomChooser(13 * 2**32 + i), tmp_path, pg.dsn)] += 1
    assert outcomes["exported"] > 10, outcomes
