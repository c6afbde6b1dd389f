"""Atomic file output (temp file, fsync, rename) and content hashing of files."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import xxhash

from scidx.errors import OutputError

__all__ = [
    "HashingWriter",
    "atomic_write",
    "check_output_path",
    "file_bytes",
    "file_hash",
    "fsync_dir",
    "remove_stale_temps",
    "unlink_quietly",
]


def check_output_path(path: Path) -> None:
    """Refuse an output path that is a folder or has no writable parent (OutputError)."""
    if path.is_dir():
        raise OutputError(
            f"output path {path} is a directory; set 'output' to a file path such as "
            f"{path / 'docs.scidx'}"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot create the output folder {path.parent}: {exc.strerror or exc}; "
            "choose a writable 'output' path"
        ) from None


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> int:
    """Write a file atomically: temp file in the same folder, fsync, rename.

    A failure (or a kill) at any point leaves the previous file untouched.

    Returns:
        The number of bytes written.

    Raises:
        OutputError: The file could not be written (permissions, disk full, path is a folder).
    """
    check_output_path(path)
    remove_stale_temps(path)
    tmp = path.parent / f".{path.name}.tmp.{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
            size = fh.tell()
        os.replace(tmp, path)
    except OSError as exc:
        unlink_quietly(tmp)
        reason = exc.strerror or str(exc)
        raise OutputError(
            f"cannot write {path}: {reason}; the previous file (if any) is unchanged. "
            "Check that the folder is writable and the disk has space."
        ) from None
    except BaseException:
        unlink_quietly(tmp)
        raise
    fsync_dir(path.parent)
    return size


def remove_stale_temps(path: Path) -> None:
    """Delete temp files left by packs that were killed mid-write (their process is gone)."""
    prefix = f".{path.name}.tmp."
    try:
        names = [n for n in os.listdir(path.parent) if n.startswith(prefix)]
    except OSError:
        return
    for name in names:
        pid_text = name[len(prefix) :]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            unlink_quietly(path.parent / name)
        except (OSError, OverflowError):
            # Alive but not ours (EPERM), or not a valid pid: leave it alone.
            continue


def unlink_quietly(path: Path) -> None:
    """Remove path if it exists; a failure to do so is not an error."""
    try:
        path.unlink()
    except OSError:
        pass


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries to disk (makes a rename durable) where the platform allows."""
    # Makes the rename itself durable; not possible on every platform/file system.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def file_hash(path: Path) -> str | None:
    """The xxh3-128 hex digest of a file's bytes, or None if it cannot be read."""
    try:
        h = xxhash.xxh3_128()
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                h.update(block)
        return h.hexdigest()
    except OSError:
        return None


def file_bytes(path: Path) -> bytes | None:
    """A file's bytes, or None if it cannot be read."""
    try:
        return path.read_bytes()
    except OSError:
        return None


class HashingWriter:
    """A write-only file wrapper that hashes what passes through (no second read of the output)."""

    def __init__(self, fh: BinaryIO, hasher: Any) -> None:
        self._fh = fh
        self._hasher = hasher

    def write(self, data: bytes | memoryview) -> int:
        """Hash data, then write it through."""
        self._hasher.update(data)
        return self._fh.write(data)

    def tell(self) -> int:
        """The wrapped file's position."""
        return self._fh.tell()

    def flush(self) -> None:
        """Flush the wrapped file."""
        self._fh.flush()
