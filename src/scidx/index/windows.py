"""The window rows of long chunks (``window.*``, FORMAT.md §2.11) and their MaxP scoring.

A chunk longer than the embedding model's input limit has its first window in ``vectors`` (the
model's truncated input) and each later window as one row of ``window.vectors`` (or
``window.vectors.i8`` + ``window.vectors.scale``), ``window.chunk`` naming its chunk row. A
chunk's vector score is the best cosine over its main row and its windows, a later window
counting ``meta.windows.margin`` less than its cosine, so a passage in a long chunk's tail is
found as well as one at its head, but a tail window that is barely better than the head does
not lift a long chunk over short ones (the head carries the title and headings; the windows
after it do not).

Scoring costs one more product over the ``W`` window rows and a segmented maximum
(``np.maximum.reduceat`` over the sorted map) per vector or hybrid query; the map is checked
(non-decreasing, every row ``< N``) once, on the first such query, so opening stays O(1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError, UnsupportedFormatVersionError
from scidx.index.format import REBUILD_HINT, Header, array_view
from scidx.index.vectors import Float32Vectors, Int8Vectors, VectorStore

__all__ = ["WINDOW_SCORES", "Windows", "open_windows"]

#: The ways of scoring a chunk from its windows this reader knows (``meta.windows.score``).
WINDOW_SCORES = ("max",)

_F32 = np.float32


def _corrupt(source: str, what: str) -> CorruptIndexError:
    return CorruptIndexError(f"{source}: {what}. {REBUILD_HINT}")


class Windows:
    """The extra window rows of one index and the chunk each belongs to.

    Args:
        store: The window vectors (float32 or int8), ``W`` rows.
        chunk: ``window.chunk``, ``W`` chunk rows, unchecked until first used.
        n: Chunks in the index.
        policy: ``meta.windows``, validated.
        source: The index path, for messages.
    """

    def __init__(
        self,
        store: VectorStore,
        chunk: npt.NDArray[np.uint32],
        n: int,
        policy: Mapping[str, Any],
        source: str,
    ) -> None:
        self.store = store
        self.chunk = chunk
        self.n = n
        self.policy = dict(policy)
        self.source = source
        self.margin = float(policy.get("margin", 0.0))
        self._segments: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | None = None

    def __len__(self) -> int:
        return int(self.chunk.shape[0])

    def segments(self) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """``(starts, rows)``: where each chunk's run of windows starts, and that chunk's row.

        Raises:
            CorruptIndexError: ``window.chunk`` decreases or names a row ``>= N``.
        """
        # Computed once; two threads racing here compute the same arrays (no lock: the
        # runtime imports no threading for keyword search).
        if self._segments is not None:
            return self._segments
        chunk = self.chunk
        if chunk.shape[0] and bool(np.any(chunk[1:] < chunk[:-1])):
            at = int(np.flatnonzero(chunk[1:] < chunk[:-1])[0]) + 1
            raise _corrupt(
                self.source, f"array `window.chunk` decreases at row {at} (must be sorted)"
            )
        if chunk.shape[0] and int(chunk[-1]) >= self.n:
            raise _corrupt(
                self.source,
                f"array `window.chunk` names chunk row {int(chunk[-1])}, but the index "
                f"has {self.n} chunks",
            )
        changes = np.r_[True, chunk[1:] != chunk[:-1]] if len(self) else np.zeros(0, bool)
        first = np.flatnonzero(changes).astype(np.intp)
        self._segments = (first, chunk[first].astype(np.intp))
        return self._segments

    def best(self, scores: npt.NDArray[np.float32], q: npt.NDArray[np.float32]) -> None:
        """Raise each chunk's score in ``scores`` (in place) to its best window's.

        A later window's score is its cosine less ``meta.windows.margin``.
        """
        if not len(self):
            return
        starts, rows = self.segments()
        cos = np.asarray(self.store @ q, dtype=_F32)
        best = np.maximum.reduceat(cos, starts)
        if self.margin:
            best -= _F32(self.margin)
        scores[rows] = np.maximum(scores[rows], best)

    def verify(self) -> None:
        """The full check of ``verify=True``: the map, then every window row's values."""
        self.segments()
        try:
            self.store.verify()
        except CorruptIndexError as exc:
            # The stores name the main arrays; these rows are the windows'.
            raise CorruptIndexError(str(exc).replace("`vectors", "`window.vectors")) from None


def _policy(header: Header) -> dict[str, Any] | None:
    """``meta.windows``, validated; None when the index has no window rows."""
    src = header.source
    spec = header.meta.get("windows")
    has_arrays = any(name.startswith("window.") for name in header.arrays)
    if spec is None:
        if has_arrays:
            raise _corrupt(src, "the index has `window.*` arrays but no meta `windows`")
        return None
    if not isinstance(spec, Mapping):
        raise _corrupt(src, f"meta `windows` is {type(spec).__name__}, not a map")
    tokens, overlap, score = spec.get("tokens"), spec.get("overlap"), spec.get("score")
    for key, value, low in (("tokens", tokens, 2), ("overlap", overlap, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise _corrupt(src, f"meta `windows.{key}` is {value!r}, not an integer >= {low}")
    margin = spec.get("margin", 0.0)
    if (
        isinstance(margin, bool)
        or not isinstance(margin, (int, float))
        or not 0.0 <= float(margin) < 1.0
    ):
        raise _corrupt(src, f"meta `windows.margin` is {margin!r}, not a number in [0, 1)")
    if score not in WINDOW_SCORES:
        raise UnsupportedFormatVersionError(
            f"{src}: meta `windows.score` is {score!r}, a window scoring this scidx does not "
            f"know (it knows {', '.join(WINDOW_SCORES)}); upgrade scidx or rebuild the index "
            "with `toolup-rag pack-docs`."
        )
    return dict(spec)


def _view(buf: Any, header: Header, name: str, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    info = header.arrays.get(name)
    if info is None:
        raise _corrupt(header.source, f"meta `windows` is set but the index has no array `{name}`")
    if info.shape != shape:
        raise _corrupt(
            header.source, f"array `{name}` has shape {list(info.shape)}, expected {list(shape)}"
        )
    return array_view(buf, header, name, dtype=dtype, ndim=len(shape))


def open_windows(buf: Any, header: Header, n: int, dims: int, encoding: str) -> Windows | None:
    """The index's window rows, shapes checked in O(1); None for an index without them.

    ``encoding`` is ``meta.vectors.encoding``: float32 indexes store ``window.vectors``, the
    others ``window.vectors.i8`` and ``window.vectors.scale``.

    Raises:
        CorruptIndexError: ``meta.windows`` and the ``window.*`` arrays disagree, or an array
            has the wrong dtype or shape.
        UnsupportedFormatVersionError: A window scoring this reader does not know.
    """
    policy = _policy(header)
    if policy is None:
        return None
    info = header.arrays.get("window.chunk")
    if info is None or len(info.shape) != 1:
        shape = "missing" if info is None else f"of shape {list(info.shape)}"
        raise _corrupt(header.source, f"array `window.chunk` is {shape}; expected [W]")
    chunk = array_view(buf, header, "window.chunk", dtype="<u4", ndim=1)
    w = int(chunk.shape[0])
    store: VectorStore
    if encoding == "float32":
        store = Float32Vectors(
            _view(buf, header, "window.vectors", "<f4", (w, dims)), header.source
        )
    else:
        codes = _view(buf, header, "window.vectors.i8", "<u1", (w, dims))
        scale = _view(buf, header, "window.vectors.scale", "<f4", (w,))
        store = Int8Vectors(codes, scale, header.source)
    return Windows(store, chunk, n, policy, header.source)
