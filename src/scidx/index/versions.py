"""Docs versions of an index: ``meta.versions`` and the ``source.version`` array (FORMAT.md §2.3).

A versioned index names its versions and the default one (what the site publishes at its
root) in the header, and stores each source's version as a row into those names
(:data:`NO_VERSION`: the source has none, such as a blog post). A search names a version, or
``"*"`` for all; without one it searches the default version, so a section is found once, not
once per version. A source without a version is found whatever version is searched.

Runtime module: numpy and the stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError, QueryError
from scidx.index.format import array_view

__all__ = ["ALL_VERSIONS", "NO_VERSION", "VersionTable", "read_versions"]

#: ``source.version`` of a source with no version.
NO_VERSION = 0xFFFF
#: The ``version`` that searches every version.
ALL_VERSIONS = "*"
_MAX_NAME_CHARS = 100
_REBUILD = "The file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."


@dataclass
class VersionTable:
    """The versions of one index and each source's version row.

    Attributes:
        names: The version names, as the packer listed them.
        default: The version searched when a search names none.
        rows: ``source.version``: a row into ``names`` per source, or :data:`NO_VERSION`.
        source: The index file, for error messages.
    """

    names: tuple[str, ...]
    default: str
    rows: npt.NDArray[np.uint16]
    source: str = ""
    _checked: bool = field(default=False, repr=False)

    def checked_rows(self) -> npt.NDArray[np.uint16]:
        """``rows``, checked once (one vectorised pass on first use, not at load).

        Raises:
            CorruptIndexError: A row names no version.
        """
        if not self._checked:
            bad = (self.rows >= len(self.names)) & (self.rows != NO_VERSION)
            if bool(bad.any()):
                row = int(np.flatnonzero(bad)[0])
                raise CorruptIndexError(
                    f"{self.source}: `source.version` row {row} is {int(self.rows[row])}, but "
                    f"the index has {len(self.names)} versions. {_REBUILD}"
                )
            self._checked = True
        return self.rows

    def row_of(self, version: str | None) -> int | None:
        """The row a search for ``version`` keeps (None: every version, ``"*"``).

        Raises:
            QueryError: ``version`` is none of the index's versions.
        """
        name = self.default if version is None else version
        if name == ALL_VERSIONS:
            return None
        try:
            return self.names.index(name)
        except ValueError:
            raise QueryError(
                f"unknown version {name!r}; this index has "
                f"{', '.join(repr(n) for n in self.names)} (or '*' for all versions)"
            ) from None

    def keep(self, version: str | None) -> npt.NDArray[np.bool_] | None:
        """A boolean per source: what a search for ``version`` keeps (None: every source)."""
        row = self.row_of(version)
        if row is None:
            return None
        rows = self.checked_rows()
        keep: npt.NDArray[np.bool_] = (rows == row) | (rows == NO_VERSION)
        return keep

    def name(self, source_row: int) -> str | None:
        """The version of source ``source_row``, or None when it has none."""
        value = int(self.checked_rows()[source_row])
        return None if value == NO_VERSION else self.names[value]


def _name_ok(name: object) -> bool:
    return (
        isinstance(name, str)
        and bool(name)
        and name != ALL_VERSIONS
        and len(name) <= _MAX_NAME_CHARS
        and not any(ord(ch) < 32 for ch in name)
    )


def read_versions(buf: Any, header: Any, n_sources: int) -> VersionTable | None:
    """The index's versions (None for an unversioned index), checked in O(1) + the names.

    Args:
        buf: The file's buffer.
        header: Its decoded :class:`~scidx.index.format.Header`.
        n_sources: The number of sources.

    Raises:
        CorruptIndexError: ``meta.versions`` or ``source.version`` is malformed, or only one
            of them is present.
    """
    src = header.source
    meta = header.meta.get("versions")
    has_array = "source.version" in header.arrays
    if meta is None and not has_array:
        return None
    if meta is None or not has_array:
        missing = "array `source.version`" if meta is not None else "meta `versions`"
        raise CorruptIndexError(f"{src}: the index has no {missing}. {_REBUILD}")
    names = meta.get("names") if isinstance(meta, dict) else None
    default = meta.get("default") if isinstance(meta, dict) else None
    if (
        not isinstance(names, list)
        or not names
        or len(names) >= NO_VERSION
        or not all(_name_ok(n) for n in names)
        or len(set(names)) != len(names)
        or default not in names
    ):
        raise CorruptIndexError(
            f"{src}: meta `versions` is not a list of distinct version names with a default "
            f"among them. {_REBUILD}"
        )
    rows = array_view(buf, header, "source.version", dtype=("<u2",), ndim=1)
    if rows.shape != (n_sources,):
        raise CorruptIndexError(
            f"{src}: array `source.version` has shape {list(rows.shape)}, expected "
            f"[{n_sources}]. {_REBUILD}"
        )
    return VersionTable(tuple(names), str(default), rows, src)
