"""Vector encodings of an index: ``float32``, ``int8`` and ``binary`` (encode, validate, score).

An index stores one embedding per chunk in one of three encodings, named by the header key
``meta.vectors.encoding`` (``docs/FORMAT.md`` §2.6 specifies the bytes):

* ``float32`` — the array ``vectors`` (``<f4 [N, D]``), L2-normalised rows. Scores are exact
  cosines, one BLAS matrix-vector product over the memory map.
* ``int8`` — per-row symmetric scalar quantisation: ``vectors.i8`` (``[N, D]`` int8 codes in
  [-127, 127], stored as ``<u1`` two's-complement bytes) and ``vectors.scale`` (``<f4 [N]``); row
  ``i`` decodes to ``scale[i] * codes[i]``. 0.25x the float32 bytes (+4 bytes a row). A row's
  scale is ``max|v_i| / 127``, so quantising a decoded row again gives the same codes: vectors
  taken from an int8 index re-encode to the same bytes.
* ``binary`` — one bit per dimension in ``vectors.bits`` (``<u1 [N, W]``, ``W = 8 *
  ceil(D / 64)`` bytes, ``np.packbits`` order, padding bits 0), plus the ``int8`` arrays for
  rescoring. The bits are SimHash signs: bit ``i`` is set iff ``(R @ codes)[i] > 0`` for a
  fixed random +-1 matrix ``R`` (:func:`projection`), so the Hamming distance of two rows
  estimates their angle. Vector-mode search ranks every row by Hamming distance to the query's
  bits, then rescores the :data:`DEFAULT_RESCORE` closest rows (at least ``k``) with the int8
  codes and returns the best of those.

  Why projected signs and not the signs of the vector itself: hashing-embedder vectors are
  sparse (a SciFact query has ~115 non-zero dimensions of 512), so most raw sign bits are
  noise. On SciFact (5,183 chunks, 300 train queries, hashing 512 dims) the recall@10 of the
  rescored pool against exact float32 search was 0.19 / 0.51 with raw signs for pools of 200 /
  800 rows, and 0.79 / 0.955 with projected signs.

Scoring int8 without a float32 copy of the matrix: rows are converted to float32 in blocks of
:data:`SCORE_BLOCK` rows (a 512 KiB buffer at 512 dims, cache resident) and each block is
multiplied by the query with BLAS. Measured with numpy 2.4 on the 2-core machine at 1M x 512:
integer arithmetic (``int8 @ int16``/``int32`` matmul, which numpy runs without BLAS) took
2.5-3.8 s against 0.3-0.5 s for the blocked conversion and 0.4-0.5 s for the float32 matvec.
Blocks of 1024 rows or more make OpenBLAS start its threads for every block, which on a busy
machine was 10-30x slower; 256 rows stay single-threaded.

Runtime module: numpy and the stdlib only (plus :mod:`scidx.index.format`).
"""

from __future__ import annotations

import functools
import math
import os
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError, QueryError, UnsupportedFormatVersionError
from scidx.index.format import REBUILD_HINT, Buffer, Header, array_view

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = [
    "DEFAULT_ENCODING",
    "DEFAULT_RESCORE",
    "ENCODINGS",
    "SCORE_BLOCK",
    "VectorEncoder",
    "VectorStore",
    "bits_width",
    "encode_vectors",
    "open_vectors",
    "projection",
    "query_bits",
    "quantize_int8",
    "sign_bits",
    "vectors_meta",
    "vectors_meta_of",
]

ENCODINGS = ("float32", "int8", "binary")
"""The vector encodings an index may declare in ``meta.vectors.encoding``."""

DEFAULT_ENCODING = "int8"
"""Used when a config or ``pack_records`` names none (packer 7+). int8 loses nothing a user would
notice (SciFact train: hybrid nDCG@10 -0.0001, keyword unchanged, vector top 10 0.990 shared
with float32's) and, with the texts compressed, float32 vectors would be most of a docs index
(Kubernetes docs: 29.3 MB of float32 vectors next to a 29.7 MB int8 file); its cost is vector
search time at scale (1M x 512: 157 against 108 ms, docs/performance.md)."""

UNDECLARED_ENCODING = "float32"
"""The encoding of a file without ``meta.vectors`` (written before encodings existed)."""

DEFAULT_RESCORE = 1000
"""Binary indexes: rows rescored with the int8 codes per vector query (at least ``k``)."""

SCORE_BLOCK = 256
"""Rows converted to float32 at a time when scoring int8 codes (see the module docstring)."""

_F32 = np.float32
_Scores = npt.NDArray[np.float32]
_Rows = npt.NDArray[np.int64]
_FloatMatrix = npt.NDArray[np.float32]

# Byte-sum helpers for the popcount of a row (see BinaryVectors.hamming).
_LOW_BYTES = np.uint64(0x00FF00FF00FF00FF)
_ONES16 = np.uint64(0x0001000100010001)
_SHIFT8 = np.uint64(8)
_SHIFT48 = np.uint64(48)


def bits_width(dims: int) -> int:
    """Bytes per row of ``vectors.bits``: ``D`` bits rounded up to whole 64-bit words."""
    return 8 * -(-int(dims) // 64)


# ---------------------------------------------------------------------------------------------
# Encoding (the packer's side; pure numpy so the rules live next to the reader's)
# ---------------------------------------------------------------------------------------------


def quantize_int8(block: npt.ArrayLike) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Per-row symmetric int8 codes and scales of float vectors.

    ``scale = float32(max|v| / 127)`` and ``codes = clip(rint(v / scale), -127, 127)``, both
    computed in float64 from the float32 input, so the result is the same on every IEEE-754
    platform. An all-zero row gets scale 0 and zero codes.

    Args:
        block: ``[B, D]`` float vectors.

    Returns:
        ``(codes int8 [B, D], scales float32 [B])``.
    """
    v = np.asarray(block, dtype=_F32).astype(np.float64)
    if v.ndim != 2:
        raise ValueError(f"expected a [rows, dims] matrix, got shape {list(v.shape)}")
    peak = np.abs(v).max(axis=1) if v.shape[1] else np.zeros(v.shape[0])
    scale = (peak / 127.0).astype(_F32)
    divisor = scale.astype(np.float64)
    divisor[divisor == 0] = 1.0  # zero rows: codes 0 whatever the divisor
    codes = np.clip(np.rint(v / divisor[:, None]), -127, 127).astype(np.int8)
    return codes, scale


def _splitmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64's output function over uint64 counters (wrapping arithmetic)."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return np.asarray(z ^ (z >> np.uint64(31)), dtype=np.uint64)


@functools.lru_cache(maxsize=4)
def projection(dims: int) -> npt.NDArray[np.float32]:
    """The binary encoding's ``[D, D]`` random +-1 projection (SimHash hyperplanes).

    ``R[i, j] = +1`` if the top bit of ``splitmix64(i * D + j)`` is 0, else ``-1``: fixed by
    the format, identical on every platform, never stored.
    """
    d = int(dims)
    counters = np.arange(d * d, dtype=np.uint64)
    top = (_splitmix64(counters) >> np.uint64(63)).astype(np.float32)
    matrix: npt.NDArray[np.float32] = (1.0 - 2.0 * top).reshape(d, d).astype(np.float32)
    matrix.flags.writeable = False
    return matrix


def _pack_signs(positive: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint8]:
    rows, dims = positive.shape
    out = np.zeros((rows, bits_width(dims)), dtype=np.uint8)
    if rows and dims:
        packed = np.packbits(positive, axis=1)
        out[:, : packed.shape[1]] = packed
    return out


def sign_bits(codes: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """The binary encoding's bits of int8 codes: signs of the projected codes, packed.

    Bit ``i`` of a row is set iff ``(R @ codes)[i] > 0`` (:func:`projection`). The product of
    +-1 and integers of at most 127 is exact in float32 for any summation order (|sum| <
    2**24 for D < 132,000), so the bits are the same on every machine and BLAS.

    Args:
        codes: ``[B, D]`` int8 codes (from :func:`quantize_int8`).

    Returns:
        ``[B, bits_width(D)]`` bytes, ``np.packbits`` order, padding bits 0.
    """
    c = np.asarray(codes)
    if c.ndim != 2:
        raise ValueError(f"expected a [rows, dims] matrix, got shape {list(c.shape)}")
    projected = c.astype(np.float32) @ projection(c.shape[1]).T
    return _pack_signs(projected > 0)


def query_bits(q: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """The bits of a float query vector, as :func:`sign_bits` makes them for rows."""
    v = np.asarray(q, dtype=_F32).reshape(-1)
    r = projection(v.shape[0])
    projected = np.empty(r.shape[0], dtype=_F32)
    # In blocks of SCORE_BLOCK rows: one 1536 x 1536 product makes OpenBLAS start its threads,
    # which took 20-40 ms instead of 0.3 ms on a busy machine (see the module docstring).
    for start in range(0, r.shape[0], SCORE_BLOCK):
        np.matmul(r[start : start + SCORE_BLOCK], v, out=projected[start : start + SCORE_BLOCK])
    positive = np.asarray(projected > 0, dtype=np.bool_)
    row: npt.NDArray[np.uint8] = _pack_signs(positive[None, :])[0]
    return row


def _check_encoding(encoding: str) -> str:
    if encoding not in ENCODINGS:
        raise ValueError(
            f"unknown vector encoding {encoding!r}; use one of {', '.join(map(repr, ENCODINGS))}"
        )
    return encoding


class VectorEncoder:
    """Encodes float32 vectors block by block into the arrays of one encoding.

    The output arrays are allocated once (by ``allocate``, e.g. ``np.empty`` or a memory-mapped
    file), and each :meth:`put` encodes one block in place, so a caller never holds the whole
    float32 matrix next to its encoding.

    Args:
        encoding: One of :data:`ENCODINGS`.
        n: Number of rows.
        dims: Vector dimensions.
        allocate: ``allocate(name, shape, dtype) -> ndarray`` for each output array; default
            ``np.zeros``.
    """

    def __init__(
        self,
        encoding: str,
        n: int,
        dims: int,
        *,
        allocate: Any = None,
    ) -> None:
        self.encoding = _check_encoding(encoding)
        self.n = int(n)
        self.dims = int(dims)
        alloc = allocate or (lambda name, shape, dtype: np.zeros(shape, dtype=dtype))
        self.arrays: dict[str, np.ndarray] = {}
        if encoding == "float32":
            self.arrays["vectors"] = alloc("vectors", (self.n, self.dims), "<f4")
        else:
            self.arrays["vectors.i8"] = alloc("vectors.i8", (self.n, self.dims), "<u1")
            self.arrays["vectors.scale"] = alloc("vectors.scale", (self.n,), "<f4")
        if encoding == "binary":
            self.arrays["vectors.bits"] = alloc(
                "vectors.bits", (self.n, bits_width(self.dims)), "<u1"
            )

    def put(self, rows: slice | npt.NDArray[np.intp], block: npt.ArrayLike) -> None:
        """Encode float vectors ``block`` into ``rows`` (a slice or row positions)."""
        v = np.asarray(block, dtype=_F32)
        if v.ndim != 2 or v.shape[1] != self.dims:
            raise ValueError(f"expected [rows, {self.dims}] vectors, got shape {list(v.shape)}")
        if self.encoding == "float32":
            self.arrays["vectors"][rows] = v
            return
        if isinstance(rows, slice):
            rows = np.arange(*rows.indices(self.n), dtype=np.intp)
        # A few thousand rows at a time: quantising works in float64, and a provider's batch
        # (with a text repeated across many chunks) can be tens of thousands of rows.
        for lo in range(0, v.shape[0], _PUT_ROWS):
            part = rows[lo : lo + _PUT_ROWS]
            codes, scale = quantize_int8(v[lo : lo + _PUT_ROWS])
            self.arrays["vectors.i8"][part] = codes.view(np.uint8)
            self.arrays["vectors.scale"][part] = scale
            if self.encoding == "binary":
                self.arrays["vectors.bits"][part] = sign_bits(codes)


_PUT_ROWS = 4096


def encode_vectors(vectors: npt.ArrayLike, encoding: str) -> dict[str, np.ndarray]:
    """The named index arrays holding ``vectors`` (float ``[N, D]``) in ``encoding``.

    Encodes in blocks, so the temporaries stay small whatever ``N`` is.
    """
    v = np.asarray(vectors)
    if v.ndim != 2:
        raise ValueError(f"expected a [rows, dims] matrix, got shape {list(v.shape)}")
    if encoding == "float32":
        return {"vectors": np.ascontiguousarray(v, dtype="<f4")}
    enc = VectorEncoder(encoding, v.shape[0], v.shape[1])
    step = 8192
    for start in range(0, v.shape[0], step):
        enc.put(slice(start, start + step), v[start : start + step])
    return enc.arrays


def vectors_meta(encoding: str) -> dict[str, Any]:
    """The ``meta.vectors`` map written for ``encoding``."""
    return {"encoding": _check_encoding(encoding)}


def vectors_meta_of(arrays: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The ``meta.vectors`` map for the vector arrays among ``arrays``."""
    if "vectors.bits" in arrays:
        return vectors_meta("binary")
    if "vectors.i8" in arrays:
        return vectors_meta("int8")
    return vectors_meta("float32")


# ---------------------------------------------------------------------------------------------
# Reading and scoring
# ---------------------------------------------------------------------------------------------


_THREADED_ROWS = 65536
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = allocate_lock()
_BLAS_LOCK = allocate_lock()


def _threads() -> int:
    """Threads for scoring rows: one per core, at most 4."""
    return max(1, min(os.cpu_count() or 1, 4))


def _pool() -> ThreadPoolExecutor:
    """The process-wide scoring pool, created on first use (daemon threads, idle when unused)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            # Imported here: concurrent.futures pulls in logging, a cost every process that
            # loads an index would pay for the few that score large matrices.
            from concurrent.futures import ThreadPoolExecutor

            _POOL = ThreadPoolExecutor(max_workers=_threads(), thread_name_prefix="scidx-score")
        return _POOL


def _split_rows(n: int, score: Callable[[int, int], None]) -> None:
    """Call ``score(first, last)`` over ``n`` rows: split over the pool when there are many.

    numpy releases the GIL in the conversions and products, so the parts run in parallel. The
    split points are multiples of :data:`SCORE_BLOCK`, so every row is scored in the same
    block and at the same alignment, with the same result, however many threads run.
    """
    parts = _threads() if n >= _THREADED_ROWS else 1
    step = -(-n // parts // SCORE_BLOCK) * SCORE_BLOCK if parts > 1 else n
    ranges = [(start, min(start + step, n)) for start in range(0, n, max(step, 1))]
    if len(ranges) > 1:
        list(_pool().map(lambda r: score(*r), ranges))
    else:
        score(0, n)


def _corrupt(source: str, what: str) -> CorruptIndexError:
    return CorruptIndexError(f"{source}: {what}. {REBUILD_HINT}")


class VectorStore(ABC):
    """The stored vectors of an index, whatever their encoding (built by :func:`open_vectors`).

    Behaves enough like the float32 ``[N, D]`` matrix for the searcher: ``store @ q`` gives the
    ``N`` scores, ``store[rows]`` the decoded float32 rows, ``store.shape`` is ``(N, D)``.

    Attributes:
        encoding: One of :data:`ENCODINGS`.
        shape: ``(N, D)``.
        rescore: Binary only: rows rescored per vector query.
    """

    encoding: str = "float32"
    rescore: int = 0

    def __init__(self, n: int, dims: int, source: str) -> None:
        self.shape = (int(n), int(dims))
        self.source = source

    @property
    @abstractmethod
    def nbytes(self) -> int:
        """Bytes of the stored vector arrays."""

    def __len__(self) -> int:
        return self.shape[0]

    @abstractmethod
    def __matmul__(self, q: npt.NDArray[np.float32]) -> _Scores:
        """Scores of every row against the (normalised) float32 query ``q``."""

    @abstractmethod
    def __getitem__(self, rows: Any) -> _FloatMatrix:
        """Decoded float32 rows."""

    def score_rows(self, rows: _Rows, q: npt.NDArray[np.float32]) -> _Scores:
        """Scores of the given rows only."""
        return np.asarray(self[rows] @ q, dtype=_F32)

    def candidates(self, q: npt.NDArray[np.float32], k: int) -> _Rows | None:
        """Rows to rescore for a top-``k`` vector query, or ``None`` to score every row."""
        return None

    def verify(self) -> None:
        """Full scan for ``verify=True``: values a search would trip over."""
        # float32 has nothing to add here (the loader checks norms); compact encodings override.
        return None

    def decode_all(self) -> _FloatMatrix:
        """The whole matrix as float32 (a copy for compact encodings: ``N * D * 4`` bytes)."""
        return self[slice(None)]


class Float32Vectors(VectorStore):
    """``float32``: the matrix itself."""

    encoding = "float32"

    def __init__(self, matrix: _FloatMatrix, source: str) -> None:
        super().__init__(matrix.shape[0], matrix.shape[1], source)
        self.matrix = matrix

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes)

    def __matmul__(self, q: npt.NDArray[np.float32]) -> _Scores:
        # BLAS, one product at a time in the whole process: OpenBLAS gives one product every
        # core (2-3x numpy's einsum loop here), and searches running at once queue for it
        # instead of each starting OpenBLAS's thread pool, which oversubscribed the cores (16
        # threads on 2 cores ran 60x slower than one; benchmarks/bench_threads.py).
        with _BLAS_LOCK:
            return np.asarray(self.matrix @ np.asarray(q, dtype=_F32), dtype=_F32)

    def __getitem__(self, rows: Any) -> _FloatMatrix:
        return np.asarray(self.matrix[rows], dtype=_F32)

    def verify(self) -> None:
        if not bool(np.all(np.isfinite(self.matrix))):
            raise _corrupt(self.source, "array `vectors` holds NaN or infinite values")

    def decode_all(self) -> _FloatMatrix:
        return self.matrix


MAX_INT8_SCALE = 1.001 / 127
"""The largest int8 row scale a packer writes: ``max|v| / 127`` of a unit vector, plus slack."""
_SCALE_RANGE = (
    f"array `vectors.scale` holds a scale outside [0, {MAX_INT8_SCALE:.6g}] (or NaN): no unit "
    "vector quantises to it"
)


class Int8Vectors(VectorStore):
    """``int8``: codes and per-row scales, scored in float32 blocks."""

    encoding = "int8"

    def __init__(
        self, codes: npt.NDArray[np.uint8], scale: npt.NDArray[np.float32], source: str
    ) -> None:
        super().__init__(codes.shape[0], codes.shape[1], source)
        self.codes = codes.view(np.int8)
        self.scale = scale

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scale.nbytes)

    def __matmul__(self, q: npt.NDArray[np.float32]) -> _Scores:
        q = np.asarray(q, dtype=_F32)
        out = np.empty(self.shape[0], dtype=_F32)
        _split_rows(self.shape[0], lambda first, last: self._score_range(q, out, first, last))
        np.multiply(out, self.scale, out=out)
        return out

    def _score_range(self, q: npt.NDArray[np.float32], out: _Scores, first: int, last: int) -> None:
        d = self.shape[1]
        buf = np.empty((min(SCORE_BLOCK, max(last - first, 1)), d), dtype=_F32)
        codes = self.codes
        for start in range(first, last, SCORE_BLOCK):
            stop = min(start + SCORE_BLOCK, last)
            block = buf[: stop - start]
            np.copyto(block, codes[start:stop], casting="unsafe")
            np.matmul(block, q, out=out[start:stop])

    def __getitem__(self, rows: Any) -> _FloatMatrix:
        codes = self.codes[rows].astype(_F32)
        scale = self.scale[rows]
        scale_array = np.asarray(scale)
        # Both bounds (issue 39: -3e38 overflowed float32 in the product); NaN fails either.
        if not bool(np.all((scale_array >= 0) & (scale_array <= MAX_INT8_SCALE))):
            raise _corrupt(self.source, _SCALE_RANGE)
        if codes.ndim == 1:
            return np.asarray(codes * scale, dtype=_F32)
        return np.asarray(codes * np.asarray(scale)[:, None], dtype=_F32)

    def score_rows(self, rows: _Rows, q: npt.NDArray[np.float32]) -> _Scores:
        q = np.asarray(q, dtype=_F32)
        out = np.empty(rows.shape[0], dtype=_F32)
        # Blocks of SCORE_BLOCK rows, as in __matmul__ (a single large product starts
        # OpenBLAS's threads: 16 ms instead of ~2 ms for 1000 x 1536 on a busy machine).
        for start in range(0, rows.shape[0], SCORE_BLOCK):
            part = rows[start : start + SCORE_BLOCK]
            block = self.codes[part].astype(_F32)
            np.matmul(block, q, out=out[start : start + part.shape[0]])
        np.multiply(out, self.scale[rows], out=out)
        return out

    def verify(self) -> None:
        scale = self.scale
        if not bool(np.all(np.isfinite(scale))) or (scale.shape[0] and float(scale.min()) < 0):
            raise _corrupt(
                self.source, "array `vectors.scale` holds negative, NaN or infinite values"
            )
        if scale.shape[0] and float(scale.max()) > MAX_INT8_SCALE:
            raise _corrupt(self.source, _SCALE_RANGE)
        # -128 is outside the symmetric code range a writer produces.
        for start in range(0, self.shape[0], 65536):
            if bool(np.any(self.codes[start : start + 65536] == -128)):
                raise _corrupt(self.source, "array `vectors.i8` holds the code -128")
        self._verify_unit_rows()

    def _verify_unit_rows(self) -> None:
        """Each decoded row is a unit vector (or zero), within its own quantisation error.

        Rounding moves each component by at most ``scale / 2``, so a row decoded from a unit
        vector has a norm within ``sqrt(D) * scale / 2`` of 1 (plus float32 slack).
        """
        d = self.shape[1]
        rows = max(1, (1 << 22) // max(d, 1))  # ~16 MB of float32 a block
        for start in range(0, self.shape[0], rows):
            block = self.codes[start : start + rows].astype(np.float64)
            scale = self.scale[start : start + rows].astype(np.float64)
            norms = np.sqrt(np.einsum("ij,ij->i", block, block)) * scale
            slack = math.sqrt(d) * scale / 2 + 1e-3
            bad = np.flatnonzero((np.abs(norms - 1.0) > slack) & (norms != 0.0))
            if bad.shape[0]:
                row = start + int(bad[0])
                raise _corrupt(
                    self.source,
                    f"array `vectors.i8` row {row} decodes to L2 norm "
                    f"{float(norms[bad[0]]):.6g}; stored vectors must be unit length (or zero)",
                )


class BinaryVectors(Int8Vectors):
    """``binary``: sign bits for a Hamming pre-ranking, int8 codes for the rescoring."""

    encoding = "binary"

    def __init__(
        self,
        bits: npt.NDArray[np.uint8],
        codes: npt.NDArray[np.uint8],
        scale: npt.NDArray[np.float32],
        source: str,
        rescore: int = DEFAULT_RESCORE,
    ) -> None:
        super().__init__(codes, scale, source)
        self.bits = bits
        self.words = bits.view("<u8")  # [N, W/8]: 64-aligned in the file, so a free view
        self.rescore = int(rescore)

    @property
    def nbytes(self) -> int:
        return int(self.bits.nbytes) + super().nbytes

    def hamming(self, q: npt.NDArray[np.float32]) -> npt.NDArray[np.uint16]:
        """Hamming distance of every row's sign bits to those of ``q`` (rows split over cores)."""
        qwords = query_bits(q).view("<u8")
        out = np.empty(self.shape[0], dtype=np.uint16)
        _split_rows(self.shape[0], lambda first, last: self._hamming(qwords, out, first, last))
        return out

    def _hamming(
        self, qwords: npt.NDArray[np.uint64], out: npt.NDArray[np.uint16], first: int, last: int
    ) -> None:
        words = self.words
        nw = words.shape[1]
        step = 16384
        x = np.empty((min(step, last - first), nw), dtype=np.uint64)
        # One popcount byte per word, padded with zero columns to whole u64s (see below).
        counts = np.zeros((min(step, last - first), 8 * -(-nw // 8)), dtype=np.uint8)
        for start in range(first, last, step):
            stop = min(start + step, last)
            xb, cb = x[: stop - start], counts[: stop - start]
            np.bitwise_xor(words[start:stop], qwords, out=xb)
            np.bitwise_count(xb, out=cb[:, :nw])
            # Sum the per-word popcounts (bytes <= 64) of a row: view each 8 of them as one
            # u64, add byte pairs into 16-bit lanes, then sum the lanes with one multiply.
            y = cb.view(np.uint64)
            z = (y & _LOW_BYTES) + ((y >> _SHIFT8) & _LOW_BYTES)
            z = (z * _ONES16) >> _SHIFT48
            out[start:stop] = z[:, 0] if z.shape[1] == 1 else z.sum(axis=1)

    def candidates(self, q: npt.NDArray[np.float32], k: int) -> _Rows | None:
        n, d = self.shape
        pool = max(self.rescore, k)
        if pool >= n:
            return None
        dist = self.hamming(q)
        # The pool is the `pool` smallest distances, ties by row: a histogram gives the
        # cut-off distance without sorting N values.
        hist = np.bincount(dist, minlength=d + 1)
        cut = int(np.searchsorted(np.cumsum(hist), pool))
        below = np.flatnonzero(dist < cut)
        at = np.flatnonzero(dist == cut)[: pool - below.shape[0]]
        return np.sort(np.concatenate([below, at])).astype(np.int64)

    def verify(self) -> None:
        super().verify()
        d = self.shape[1]
        pad = bits_width(d) * 8 - d
        if pad:
            # Padding bits (the low bits of the last bytes) must be 0: they would count in
            # the Hamming distance of every query.
            mask = np.zeros(self.bits.shape[1], dtype=np.uint8)
            tail = np.packbits(np.arange(bits_width(d) * 8) >= d)
            mask[:] = tail
            for start in range(0, self.shape[0], 65536):
                if bool(np.any(self.bits[start : start + 65536] & mask)):
                    raise _corrupt(self.source, "array `vectors.bits` has padding bits set")


def _encoding_of(header: Header) -> str:
    """``meta.vectors.encoding``, validated (files without the key are float32)."""
    src = header.source
    spec = header.meta.get("vectors")
    if spec is None:
        return UNDECLARED_ENCODING
    if not isinstance(spec, Mapping):
        raise _corrupt(src, f"meta `vectors` is {type(spec).__name__}, not a map")
    encoding = spec.get("encoding")
    if not isinstance(encoding, str):
        raise _corrupt(src, f"meta `vectors.encoding` is {encoding!r}, not a string")
    if encoding not in ENCODINGS:
        raise UnsupportedFormatVersionError(
            f"{src}: meta `vectors.encoding` is {encoding!r}, a vector encoding this scidx "
            f"does not read (it reads {', '.join(ENCODINGS)}); upgrade scidx or rebuild the "
            "index with `toolup-rag pack-docs`."
        )
    return encoding


def _shaped(
    buf: Buffer, header: Header, name: str, dtype: str, shape: tuple[int, ...]
) -> np.ndarray:
    info = header.arrays.get(name)
    if info is None:
        raise _corrupt(header.source, f"the index has no array `{name}`")
    if info.shape != shape:
        raise _corrupt(
            header.source,
            f"array `{name}` has shape {list(info.shape)}, expected {list(shape)}",
        )
    return array_view(buf, header, name, dtype=dtype, ndim=len(shape))


def open_vectors(
    buf: Buffer, header: Header, n: int, dims: int, *, rescore: int | None = None
) -> VectorStore:
    """Validate the vector arrays of an index against ``N`` and ``D`` (O(1)) and wrap them.

    Args:
        buf: The whole index.
        header: Its validated header.
        n: Number of chunks.
        dims: ``meta.provider.dimensions``.
        rescore: Binary indexes: rows rescored per vector query (default
            :data:`DEFAULT_RESCORE`).

    Raises:
        CorruptIndexError: A missing array, a wrong dtype or shape (scales that are not one per
            row, a bit matrix whose row width does not match ``D``), a malformed ``meta.vectors``.
        UnsupportedFormatVersionError: An encoding this version does not know.
    """
    src = header.source
    encoding = _encoding_of(header)
    if encoding == "float32":
        return Float32Vectors(_shaped(buf, header, "vectors", "<f4", (n, dims)), src)
    codes = _shaped(buf, header, "vectors.i8", "<u1", (n, dims))
    scale = _shaped(buf, header, "vectors.scale", "<f4", (n,))
    if encoding == "int8":
        return Int8Vectors(codes, scale, src)
    width = bits_width(dims)
    info = header.arrays.get("vectors.bits")
    if info is not None and len(info.shape) == 2 and info.shape[1] != width:
        raise _corrupt(
            src,
            f"array `vectors.bits` has rows of {info.shape[1]} bytes, but {dims} dimensions "
            f"need {width} (one bit each, in whole 64-bit words)",
        )
    bits = _shaped(buf, header, "vectors.bits", "<u1", (n, width))
    pool = DEFAULT_RESCORE if rescore is None else rescore
    if isinstance(pool, bool) or not isinstance(pool, int) or pool < 1:
        raise QueryError(f"rescore must be a positive integer, got {rescore!r}")
    return BinaryVectors(bits, codes, scale, src, rescore=pool)
