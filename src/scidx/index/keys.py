"""``vectors.key``: a per-row content hash that binds each stored vector to its chunk.

``vectors.key[i]`` is the xxh3_64 (seed 0) of the row's source title, heading path (joined with
``\\x1f``) and Markdown text, each UTF-8 encoded and followed by a NUL byte, then row ``i`` of
every stored vector array (``vectors`` for float32, ``vectors.i8`` and ``vectors.scale`` for
int8, ...: every array named ``vectors`` or ``vectors.*`` with N rows, except ``vectors.key``)
in name order, as stored (docs/FORMAT.md §2.3), so it binds whatever the encoding. A packer
reuses a stored vector (``pack-docs`` reuses the previous output's; ``--check`` judges a
committed index by them) only
when the key matches the text it is about to embed, so rows swapped between chunks — by a
buggy tool, a bad merge or naive tampering — are never reused for the wrong text, and
``verify=True`` reports them. The hash is not keyed: a forger who recomputes the keys too is not
detected (re-embed with ``--no-cache`` to rule that out).

Runtime module: numpy, xxhash and the stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import xxhash

__all__ = ["VECTOR_KEY_ARRAY", "vector_array_names", "vector_key", "vector_keys"]

VECTOR_KEY_ARRAY = "vectors.key"
"""Name of the array (``<u8 [N]``)."""


def vector_array_names(shapes: Mapping[str, tuple[int, ...]], n: int) -> list[str]:
    """The arrays a row key covers: ``vectors`` and ``vectors.*`` with ``n`` rows, by name."""
    return sorted(
        name
        for name, shape in shapes.items()
        if (name == "vectors" or name.startswith("vectors."))
        and name != VECTOR_KEY_ARRAY
        and len(shape) >= 1
        and shape[0] == n
    )


def vector_key(title: str, heading: str, text: str, rows: Sequence[npt.NDArray[Any]]) -> int:
    """The key of one row.

    Args:
        title: The row's source title.
        heading: Its heading path joined with ``\\x1f`` (as stored in ``chunk.heading``).
        text: Its Markdown text (as stored in ``chunk.text``).
        rows: Its row of each array of :func:`vector_array_names`, in that order.

    Returns:
        The xxh3_64 as an int.
    """
    h = xxhash.xxh3_64()
    for part in (title, heading, text):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    for row in rows:
        h.update(np.ascontiguousarray(row).tobytes())
    return int(h.intdigest())


def vector_keys(
    titles: Sequence[str],
    headings: Sequence[str],
    texts: Sequence[str],
    arrays: Mapping[str, npt.NDArray[Any]],
) -> npt.NDArray[np.uint64]:
    """The ``vectors.key`` array for rows given as parallel sequences and the vector arrays."""
    n = len(texts)
    names = vector_array_names({k: v.shape for k, v in arrays.items()}, n)
    keys = np.zeros(n, dtype="<u8")
    for i, (title, heading, text) in enumerate(zip(titles, headings, texts, strict=True)):
        keys[i] = vector_key(title, heading, text, [arrays[name][i] for name in names])
    return keys
