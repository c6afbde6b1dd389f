"""Per-chunk string columns stored once per distinct value (``chunk.heading``, ``chunk.anchor``).

Since format 5 the packer stores such a column as a string table of its distinct values
(sorted, FORMAT.md §2.2) and a row index ``<name>.row`` (``<u2`` while there are at most 65,536
distinct values, else ``<u4``): every chunk of one section repeats its heading path and anchor,
so the Kubernetes docs' 1.42 MB of headings and anchors (tables and offsets) become 0.94 MB. A
column without ``<name>.row`` is a plain per-row table, as records packed by older code were.

Since format 7 the heading paths are a *path column* (:class:`PathColumn`): each distinct
path prefix is one node, stored as its last heading and its parent node (``<name>.parent``),
because the sections of a page share their ancestors ("Page > Section > Sub"): Kubernetes
docs' 8,610 distinct paths (585,906 bytes) are 9,000 nodes of 256,248 bytes. A path is read by
walking up its parents (2.2 on average there), each step bounds-checked.

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
    read_string_table,
    string_table_arrays,
    uint_dtype,
)

__all__ = [
    "PATH_SEPARATOR",
    "IndexedStrings",
    "PathColumn",
    "checked_row",
    "encode_column",
    "encode_path_column",
    "read_column",
]

PATH_SEPARATOR = "\x1f"
"""Joins the headings of a path in the strings a column returns (unit separator)."""


def encode_column(name: str, values: Sequence[str]) -> dict[str, np.ndarray]:
    """The arrays of column ``name``: its distinct values (sorted) and each row's index."""
    distinct = sorted(set(values))
    at = {v: i for i, v in enumerate(distinct)}
    dtype = uint_dtype(len(distinct) - 1, at_least=2)
    return {
        **string_table_arrays(name, distinct),
        f"{name}.row": np.array([at[v] for v in values], dtype=dtype),
    }


def encode_path_column(name: str, paths: Sequence[str]) -> dict[str, np.ndarray]:
    """The arrays of path column ``name`` for each row's path (headings joined by ``\x1f``).

    Nodes are every distinct non-empty prefix of a path, sorted by their headings (code point
    order, headings compared in turn), so a parent always comes before its children and the
    same paths give the same arrays. ``row`` and ``parent`` hold a node's number plus one; 0
    is the empty path (a chunk without headings, or a top-level heading's parent).
    """
    split = {p: tuple(p.split(PATH_SEPARATOR)) if p else () for p in set(paths)}
    nodes = sorted({path[:depth] for path in split.values() for depth in range(1, len(path) + 1)})
    number = {node: i + 1 for i, node in enumerate(nodes)}
    number[()] = 0
    dtype = uint_dtype(len(nodes), at_least=2)
    return {
        **string_table_arrays(name, [node[-1] for node in nodes]),
        f"{name}.parent": np.array([number[node[:-1]] for node in nodes], dtype=dtype),
        f"{name}.row": np.array([number[split[p]] for p in paths], dtype=dtype),
    }


def checked_row(i: int, n: int, what: str = "row") -> int:
    """``i`` as a row of ``n`` (negative counts from the end), or :class:`IndexError`."""
    at = i + n if i < 0 else i
    if not 0 <= at < n:
        raise IndexError(f"{what} {i} is out of range for {n} {what}s")
    return at


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
        i = checked_row(i, len(self))
        at = int(self.rows[i])
        if at >= len(self.table):
            raise self._past(at)
        return self.table[at]

    def take(self, rows: Sequence[int]) -> list[str]:
        """The strings of ``rows``, in order (a page's: one gather, one table pass).

        Raises:
            IndexError: A row is out of range (as for ``[]``; negative rows count from the end).
            CorruptIndexError: A row index points past the table.
        """
        n = len(self)
        if len(rows) == 0 or min(rows) < 0 or max(rows) >= n:
            return [self[int(i)] for i in rows]  # the checked path: names the bad row
        at = self.rows[np.asarray(rows, dtype=np.intp)].tolist()
        top = max(at)
        if top >= len(self.table):
            raise self._past(top)
        return self.table.take(at)

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


class PathColumn:
    """A path column: row ``i`` is its node's headings, walked up from ``row[i]`` to the root.

    Every step is checked: a node number inside the table, a parent number below the node's
    own, so a walk always ends (in at most as many steps as there are nodes) and a forged
    file raises :class:`~scidx.errors.CorruptIndexError` naming the array.
    """

    def __init__(
        self,
        table: StringTable,
        parents: npt.NDArray[np.unsignedinteger[Any]],
        rows: npt.NDArray[np.unsignedinteger[Any]],
        name: str,
        source: str,
    ) -> None:
        self.table = table
        self.parents = parents
        self.rows = rows
        self.name = name
        self.source = source
        self._nodes = len(table)
        # Python ints for the walk (a numpy scalar per step costs more than the step).
        self._parent = parents.tolist() if parents.shape[0] <= _PARENTS_AS_LIST else parents
        # Paths already walked: a results page repeats a site's few thousand paths, and a
        # cached one costs a dict lookup instead of a walk (bounded; a race only repeats one).
        self._memo: dict[int, str] = {}

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def __getitem__(self, i: int) -> str:
        i = checked_row(i, len(self))
        return self.node(int(self.rows[i]))

    def node(self, at: int) -> str:
        """The path of node number ``at`` (0: the empty path), headings joined by ``\x1f``."""
        found = self._memo.get(at)
        if found is not None:
            return found
        if at > self._nodes:
            raise self._error(
                f"array `{self.name}.row` points at node {at}, but `{self.name}` has {self._nodes}"
            )
        parts: list[str] = []
        start = at
        table, parent = self.table, self._parent
        while at:
            parts.append(table[at - 1])
            up = int(parent[at - 1])
            if up >= at:
                raise self._error(
                    f"array `{self.name}.parent` gives node {at} the parent {up}, not an "
                    "earlier node"
                )
            at = up
        parts.reverse()
        joined = PATH_SEPARATOR.join(parts)
        if len(self._memo) >= _MEMO_PATHS:
            self._memo.clear()
        self._memo[start] = joined
        return joined

    def take(self, rows: Sequence[int]) -> list[str]:
        """The strings of ``rows``, in order."""
        memo, node, n = self._memo, self.node, len(self)
        out = []
        for i in rows:
            if not 0 <= i < n:
                out.append(self[int(i)])  # negative rows, or the IndexError
                continue
            at = int(self.rows[i])
            found = memo.get(at)
            out.append(found if found is not None else node(at))
        return out

    def validate_all(self) -> None:
        """Every row and parent number in range and earlier, and the table (``verify=True``)."""
        if len(self) and int(self.rows.max()) > self._nodes:
            raise self._error(
                f"array `{self.name}.row` points at node {int(self.rows.max())}, but "
                f"`{self.name}` has {self._nodes}"
            )
        own = np.arange(1, self._nodes + 1, dtype=np.int64)
        late = np.flatnonzero(self.parents.astype(np.int64) >= own)
        if late.shape[0]:
            at = int(late[0]) + 1
            raise self._error(
                f"array `{self.name}.parent` gives node {at} the parent "
                f"{int(self.parents[at - 1])}, not an earlier node"
            )
        self.table.validate_all()

    def _error(self, what: str) -> CorruptIndexError:
        return CorruptIndexError(f"{self.source}: {what}. {REBUILD_HINT}")


_MEMO_PATHS = 1 << 14
"""How many walked paths a :class:`PathColumn` keeps (then it starts again)."""

_PARENTS_AS_LIST = 1 << 20
"""Path columns of at most this many nodes keep their parents as a Python list."""


def read_column(
    buf: Any, header: Header, name: str, n: int
) -> StringTable | IndexedStrings | PathColumn:
    """Column ``name`` of ``n`` rows, in the form the header shows.

    A path column when ``<name>.parent`` exists (format 7), indexed when ``<name>.row``
    exists, else a plain table of ``n`` strings.

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
    rows = array_view(buf, header, f"{name}.row", dtype=("<u2", "<u4"), ndim=1)
    if rows.shape[0] != n:
        raise CorruptIndexError(
            f"{header.source}: array `{name}.row` has {rows.shape[0]} rows, expected {n}. "
            f"{REBUILD_HINT}"
        )
    if f"{name}.parent" not in header.arrays:
        return IndexedStrings(table, rows, name, header.source)
    parents = array_view(buf, header, f"{name}.parent", dtype=("<u2", "<u4"), ndim=1)
    if parents.shape[0] != len(table):
        raise CorruptIndexError(
            f"{header.source}: array `{name}.parent` has {parents.shape[0]} rows, expected "
            f"{len(table)} (one per node of `{name}`). {REBUILD_HINT}"
        )
    return PathColumn(table, parents, rows, name, header.source)
