"""Out-of-range stored values (issue 24 #13, #14): verify bounds them, searches never emit them.

An int8 ``vectors.scale`` of 3e38 or a ``bm25.post_weight`` of 3e38 passed ``verify``; scores
became ``inf`` (``search --json`` printed ``Infinity``, ``serve`` answered 500), and without
``verify`` NaN and -inf flowed the same way. Format 4 computes impacts from the frequency and
idf tables (``bm25.tf_values``, ``bm25.idf_values``): the same holds for theirs.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from scidx.errors import CorruptIndexError
from scidx.index.bm25 import idf_limit, posting_impacts
from scidx.index.format import array_view, read_header
from scidx.index.index import load_bytes
from scidx.index.verify import max_bm25_weight
from scidx.pack.packer import pack_records
from support.indexes import fixture_records as _records
from support.indexes import replace_arrays as _rewrite

QUERY = "install the package"


@pytest.fixture(scope="module")
def int8() -> bytes:
    data = pack_records(_records(), None, dimensions=64, use_cache=False, vectors="int8").data
    assert data is not None
    return data


def _with(data: bytes, name: str, row: int, value: float) -> bytes:
    array = np.array(array_view(data, read_header(data), name))
    array[row] = value
    return _rewrite(data, **{name.replace(".", "__"): array})


def _searches_are_finite_or_refused(data: bytes) -> int:
    """Every mode and read: finite scores, or CorruptIndexError; never a numpy warning."""
    refused = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        idx = load_bytes(data)
        for mode in ("keyword", "vector", "hybrid"):
            for k in (1, 10, 1000):
                try:
                    hits = idx.search(QUERY, k=k, mode=mode)
                    ranked = idx.rank(QUERY, k=k, mode=mode)
                    batch = idx.rank_batch([QUERY, "logs"], k=k, mode=mode)
                except CorruptIndexError as exc:
                    assert "holds values no packer writes" in str(exc) or "_values` holds" in str(
                        exc
                    )
                    refused += 1
                    continue
                scores = [h.score for h in hits] + [s for _, s in ranked]
                scores += [s for row in batch for _, s in row]
                assert all(math.isfinite(s) for s in scores), (mode, k, scores[:5])
                json.dumps([h.to_dict() for h in hits], allow_nan=False)
        try:
            assert bool(np.all(np.isfinite(idx.vectors)))
        except CorruptIndexError:
            refused += 1
    return refused


def test_verify_bounds_int8_scales(int8: bytes) -> None:
    load_bytes(int8, verify=True).close()
    huge = _with(int8, "vectors.scale", 0, 3e38)
    with pytest.raises(CorruptIndexError, match="vectors.scale` holds a scale outside"):
        load_bytes(huge, verify=True)
    assert _searches_are_finite_or_refused(huge) > 0
    # A scale that keeps the codes in range but makes the row no unit vector.
    scale = float(np.array(array_view(int8, read_header(int8), "vectors.scale"))[3])
    half = _with(int8, "vectors.scale", 3, scale / 2)
    with pytest.raises(CorruptIndexError, match=r"row 3 decodes to L2 norm 0\.49"):
        load_bytes(half, verify=True)


@pytest.mark.parametrize("value", [-3e38, -1e-3, -math.inf, math.nan, 3e38])
def test_lazy_int8_decode_checks_both_scale_bounds(int8: bytes, value: float) -> None:
    """Issue 39 L4: without verify, ``Index.vectors`` refuses a negative scale, no warning."""
    bad = _with(int8, "vectors.scale", 2, value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow RuntimeWarning was the defect
        with load_bytes(bad) as idx:
            with pytest.raises(CorruptIndexError, match=r"array `vectors\.scale` holds a scale"):
                idx.vectors  # noqa: B018
            with pytest.raises(CorruptIndexError, match=r"`vectors\.scale`"):
                idx.vector_store[2]
            assert bool(np.all(np.isfinite(idx.vector_store[0:2])))


@pytest.mark.parametrize("value", [3e38, math.inf, -math.inf, math.nan, 0.0])
@pytest.mark.parametrize("table", ["bm25.tf_values", "bm25.idf_values"])
def test_bm25_weights_never_reach_a_hit_unless_finite(
    int8: bytes, table: str, value: float
) -> None:
    if table == "bm25.idf_values" and value == 0.0:
        value = -1e-3  # an idf of 0 is possible (a term in every chunk); below is not
    bad = _with(int8, table, slice(None), value)  # type: ignore[arg-type]
    with pytest.raises(CorruptIndexError, match=table):
        load_bytes(bad, verify=True)
    assert _searches_are_finite_or_refused(bad) > 0
    # Every impact of the real file is within what verify allows.
    idx = load_bytes(int8)
    weights = posting_impacts(idx._live().corpus.bm25, len(idx))  # noqa: SLF001
    assert float(weights.max()) <= max_bm25_weight(len(idx), 1.2)


def test_verify_bounds_idf_by_what_the_packer_writes(int8: bytes) -> None:
    n = len(load_bytes(int8))
    limit = idf_limit(n)
    just_over = _with(int8, "bm25.idf_values", -1, limit * 1.01)
    with pytest.raises(CorruptIndexError, match=r"holds a value outside \[0, "):
        load_bytes(just_over, verify=True)
    load_bytes(_with(int8, "bm25.idf_values", -1, limit * 0.99), verify=True).close()


def test_cli_search_json_never_prints_infinity(int8: bytes, tmp_path: Path) -> None:
    path = tmp_path / "bad.scidx"
    # inf frequencies: in format 3, inf impacts were what `search --json` printed as Infinity
    # (3e38 weights summed in float32 did the same).
    path.write_bytes(_with(int8, "bm25.tf_values", slice(None), math.inf))  # type: ignore[arg-type]
    proc = subprocess.run(
        [sys.executable, "-m", "scidx", "search", str(path), QUERY, "--mode", "keyword", "--json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 4, (proc.returncode, proc.stdout, proc.stderr)
    assert "Infinity" not in proc.stdout and "NaN" not in proc.stdout
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
