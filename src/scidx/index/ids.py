"""Chunk ids: stored in the ``chunk.id`` string table, or derived from the chunk's fields.

A Markdown chunk's id is ``"{source}:{anchor}:{ordinal}"`` (FORMAT.md §2.3). Since format 5 the
packer leaves ``chunk.id`` out when every id is exactly that, and a reader derives each from
``source.path[chunk.source[i]]``, ``chunk.anchor[i]`` and ``chunk.ordinal[i]``: the same
strings, without their bytes (1.35 MB of a 24.7 MB Kubernetes docs index, 0.10x its
Markdown). Records packed with ids of their own keep the table.

Runtime module: numpy, msgpack, xxhash and the stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError
from scidx.index.columns import checked_row, read_column
from scidx.index.format import REBUILD_HINT, Header, StringTable, array_view, read_string_table

__all__ = ["DerivedIds", "derived_id", "read_chunk_ids"]


def derived_id(source: str, anchor: str, ordinal: int) -> str:
    """The id of a Markdown chunk (what the packer gives it, and what a reader derives)."""
    return f"{source}:{anchor}:{ordinal}"


class DerivedIds:
    """The ``chunk.id`` column of an index that does not store it: each id made on access.

    Each access is bounds-checked (``chunk.source`` against the sources) and reads one row of
    each table it joins, so it is as lazy as a stored table.
    """

    def __init__(
        self,
        paths: Any,
        anchors: Any,
        source_rows: npt.NDArray[np.unsignedinteger[Any]],
        ordinals: npt.NDArray[np.unsignedinteger[Any]],
        source: str = "<index>",
    ) -> None:
        self.paths = paths
        self.anchors = anchors
        self.source_rows = source_rows
        self.ordinals = ordinals
        self.source = source

    def __len__(self) -> int:
        return int(self.source_rows.shape[0])

    def __getitem__(self, i: int) -> str:
        i = checked_row(i, len(self), "chunk")
        row = int(self.source_rows[i])
        if row >= len(self.paths):
            raise CorruptIndexError(
                f"{self.source}: array `chunk.source` points past the {len(self.paths)} sources "
                f"at row {i}. {REBUILD_HINT}"
            )
        return derived_id(self.paths[row], self.anchors[i], int(self.ordinals[i]))

    def take(self, rows: Sequence[int]) -> list[str]:
        """The ids of ``rows``, in order."""
        return [self[int(i)] for i in rows]

    def validate_all(self) -> None:
        """Every row's source in range (the joined tables are validated on their own)."""
        if len(self) and int(self.source_rows.max()) >= len(self.paths):
            raise CorruptIndexError(
                f"{self.source}: array `chunk.source` points past the {len(self.paths)} "
                f"sources. {REBUILD_HINT}"
            )


def read_chunk_ids(buf: Any, header: Header) -> StringTable | DerivedIds:
    """The chunk ids of an index: its ``chunk.id`` table, or derived when it has none.

    Raises:
        CorruptIndexError: One of the two ``chunk.id`` arrays without the other, or a table
            the ids are derived from is missing or malformed.
    """
    arrays = header.arrays
    present = [
        "chunk.id.offsets" in arrays,
        "chunk.id.data" in arrays or "chunk.id.zdata" in arrays,
    ]
    if all(present):
        return read_string_table(buf, header, "chunk.id")
    if any(present):
        missing = "chunk.id.data" if present[0] else "chunk.id.offsets"
        raise CorruptIndexError(
            f"{header.source}: the index has no array `{missing}` (the chunk ids are stored "
            f"in both `chunk.id` arrays or derived without either). {REBUILD_HINT}"
        )
    rows = array_view(buf, header, "chunk.source", dtype=("<u2", "<u4"), ndim=1)
    n = int(rows.shape[0])
    return DerivedIds(
        read_string_table(buf, header, "source.path"),
        read_column(buf, header, "chunk.anchor", n),
        rows,
        array_view(buf, header, "chunk.ordinal", dtype=("<u2", "<u4"), ndim=1),
        header.source,
    )
