"""A served index's private bytes: what a server searches can never change under it.

``scidx.load(path)`` memory-maps the file, so a deploy tool that rewrites it *in place*
(``cp new.scidx docs.scidx``, ``rsync --inplace``, a truncation) changes or removes the pages a
running search reads: a lost page kills the process with SIGBUS. A server therefore loads each
generation from bytes nobody else can reach:

* ``memory``: the file is read into one private buffer (its size in RAM per generation, two
  generations while a reload swaps);
* ``copy``: the file is copied into an anonymous temporary file (already unlinked: no path
  reaches it) that is then memory-mapped; the bytes live in the page cache, which the kernel may
  evict and re-read, at the cost of the copy's disk space and write time;
* ``auto`` (the default): ``memory`` up to :data:`DEFAULT_MEMORY_MAX` bytes, ``copy`` above;
* ``map``: the file itself is mapped (no copy; only safe when files are replaced by rename, as
  ``pack-docs`` does).

Either private form is read once, from the descriptor opened at load time: a writer racing the
read gives a torn copy, which the loader's checks (and ``verify``'s checksums) refuse, so the old
generation keeps serving until a whole, valid file is read.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile
from collections.abc import Mapping
from typing import Any

from scidx.errors import ConfigError, CorruptIndexError
from scidx.index.index import Index, load, load_bytes
from scidx.index.opening import open_regular

__all__ = ["DEFAULT_MEMORY_MAX", "LOAD_MODES", "Snapshot", "check_load_mode", "load_snapshot"]

LOAD_MODES = ("auto", "memory", "copy", "map")
DEFAULT_MEMORY_MAX = 256 * 1024 * 1024
"""``auto`` reads files up to this size into memory (a typical docs index is a few MB)."""

_BLOCK = 1 << 20


def check_load_mode(mode: str, memory_max: int) -> None:
    """Raise :class:`ConfigError` for an unknown mode or a negative threshold."""
    if mode not in LOAD_MODES:
        raise ConfigError(f"load mode {mode!r}: use one of {', '.join(LOAD_MODES)}")
    if memory_max < 0:
        raise ConfigError(f"memory_max (--memory-max) must not be negative, got {memory_max}")


class Snapshot:
    """A loaded generation and what holds its bytes (closed together)."""

    def __init__(self, index: Index, mode: str, mm: mmap.mmap | None = None) -> None:
        self.index = index
        self.mode = mode
        self._mm = mm

    def close(self) -> None:
        """Close the index, then release the private mapping (once no view remains)."""
        self.index.close()
        mm, self._mm = self._mm, None
        if mm is not None:
            # A search still running holds views; the mapping goes with the last of them.
            with contextlib.suppress(BufferError):
                mm.close()


def load_snapshot(
    path: str,
    *,
    mode: str = "auto",
    memory_max: int = DEFAULT_MEMORY_MAX,
    verify: bool = True,
    embedder_options: Mapping[str, Any] | None = None,
) -> Snapshot:
    """Load ``path`` as ``mode`` says (see the module docstring).

    Raises:
        IndexFormatError: The file (as read) is not a valid index.
        OSError: It cannot be read, or the private copy cannot be written.
    """
    options = dict(embedder_options) if embedder_options else None
    if mode == "map":
        return Snapshot(load(path, verify=verify, embedder_options=options), "map")
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if mode == "memory" or (mode == "auto" and size <= memory_max) or size == 0:
            data = _read_into(fd, bytearray(size), path)
            index = load_bytes(data, verify=verify, source=path, embedder_options=options)
            return Snapshot(index, "memory")
        mm = _private_copy(fd, size, path)
    finally:
        os.close(fd)
    try:
        index = load_bytes(memoryview(mm), verify=verify, source=path, embedder_options=options)
    except BaseException:
        with contextlib.suppress(BufferError):
            mm.close()
        raise
    return Snapshot(index, "copy", mm)


def _read_into(fd: int, buf: bytearray, path: str) -> bytearray:
    """Fill ``buf`` from ``fd`` (a file shrunk meanwhile is an error, not a short buffer)."""
    view = memoryview(buf)
    done = 0
    while done < len(buf):
        got = os.readv(fd, [view[done : done + _BLOCK]])
        if got == 0:
            raise _shrunk(path, done, len(buf))
        done += got
    return buf


def _private_copy(fd: int, size: int, path: str) -> mmap.mmap:
    """Copy ``size`` bytes of ``fd`` into an unlinked temporary file and map it read-only."""
    with tempfile.TemporaryFile(prefix="scidx-serve-") as tmp:
        out = tmp.fileno()
        done = 0
        buf = bytearray(_BLOCK)
        view = memoryview(buf)
        while done < size:
            got = os.readv(fd, [view[: min(_BLOCK, size - done)]])
            if got == 0:
                raise _shrunk(path, done, size)
            written = 0
            while written < got:
                written += os.write(out, view[written:got])
            done += got
        # The mapping keeps the (already unlinked) file alive after the descriptor closes.
        return mmap.mmap(out, size, access=mmap.ACCESS_READ)


def _shrunk(path: str, got: int, want: int) -> CorruptIndexError:
    return CorruptIndexError(
        f"{path}: the file shrank while it was read ({got} of {want} bytes); it is being "
        "rewritten in place. It is loaded again once it stops changing."
    )
