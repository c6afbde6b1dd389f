"""Per-chunk string columns stored once per distinct value (``chunk.heading``, ``chunk.anchor``).

Since format 5 the packer stores such a column as a string table of its distinct values
(sorted, FORMAT.md §2.2) and a row index ``<name>.row`` (``<u2`` while there are at most 65,536
distinct values, else ``<u4``): every chunk of one section repeats its heading path and anchor,
so the Kubernetes docs' 1.42 MB of headings and anchors (tables and offsets) become 0.94 MB. A
column without ``<name>.row`` is a plain per-row table, as records packed by older code were.

Runtime module: numpy, msgpack, xxhash and the stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError
from scidx.index.format import (
    REBUILD_HINT,
    Header,
    StringTable,
    array_view,
    encode_strings,
    read_string_table,
)

__all__ = ["IndexedStrings", "encode_column", "read_column"]


def encode_column(name: str, values: Sequence[str]) -> dict[str, np.ndarray]:
    """The arrays of column ``name``: its distinct values (sorted) and each row's index."""
    distinct = sorted(set(values))
    at = {v: i for i, v in enumerate(distinct)}
    offsets, data = encode_strings(distinct)
    dtype = "<u2" if len(distinct) <= 1 << 16 else "<u4"
    return {
        f"{name}.offsets": offsets,
        f"{name}.data": data,
        f"{name}.row": np.array([at[v] for v in values], dtype=dtype),
    }


class IndexedStrings:
    """A column read through its row index: row ``i`` is ``table[row[i]]``, bounds-checked."""

    def __init__(
        self, table: StringTable, rows: npt.NDArray[np.unsignedinteger[Any]], name: str, source: str
    ) -> None:
        self.table = table
        self.rows = rows
        self.name = name
        self.source = source

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def __getitem__(self, i: int) -> str:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"row {i} is out of range for {n} rows")
        at = int(self.rows[i])
        if at >= len(self.table):
            raise self._past(at)
        return self.table[at]

    def take(self, rows: Sequence[int]) -> list[str]:
        """The strings of ``rows``, in order."""
        return [self[int(i)] for i in rows]

    def validate_all(self) -> None:
        """Every row index inside the table, and the table itself (``verify=True``)."""
        if len(self) and int(self.rows.max()) >= len(self.table):
            raise self._past(int(self.rows.max()))
        self.table.validate_all()

    def _past(self, at: int) -> CorruptIndexError:
        return CorruptIndexError(
            f"{self.source}: array `{self.name}.row` points at value {at}, but `{self.name}` "
            f"has {len(self.table)}. {REBUILD_HINT}"
        )


def read_column(buf: Any, header: Header, name: str, n: int) -> StringTable | IndexedStrings:
    """Column ``name`` of ``n`` rows: indexed when ``<name>.row`` exists, else a plain table.

    Raises:
        CorruptIndexError: An array is missing, of the wrong dtype, or of the wrong length.
    """
    table = read_string_table(buf, header, name)
    info = header.arrays.get(f"{name}.row")
    if info is None:
        if len(table) != n:
            raise CorruptIndexError(
                f"{header.source}: array `{name}.offsets` has {len(table) + 1} entries, "
                f"expected {n + 1}. {REBUILD_HINT}"
            )
        return table
    dtype = info.dtype if info.dtype in ("<u2", "<u4") else "<u4"
    rows = array_view(buf, header, f"{name}.row", dtype=dtype, ndim=1)
    if rows.shape[0] != n:
        raise CorruptIndexError(
            f"{header.source}: array `{name}.row` has {rows.shape[0]} rows, expected {n}. "
            f"{REBUILD_HINT}"
        )
    return IndexedStrings(table, rows, name, header.source)
