"""Atomic file output (temp file, fsync, rename) and content hashing of files."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import xxhash

from scidx.errors import OutputError
from scidx.index.format import MAGIC

__all__ = [
    "HashingWriter",
    "atomic_write",
    "check_output_path",
    "check_output_writable",
    "check_output_target",
    "check_replaceable",
    "file_bytes",
    "file_hash",
    "fsync_dir",
    "remove_stale_temps",
    "unlink_quietly",
]


def check_output_target(path: Path) -> None:
    """Refuse an output path that exists but is not a regular file, before anything reads it.

    A character device (``/dev/null``), a FIFO or a socket is never replaced: renaming over a
    device node would replace the node itself (as root, ``/dev/null``), and reading a FIFO as
    the "previous index" would block forever. A symlink is judged by what it points to.

    Raises:
        OutputError: The path is a folder or a special file, or cannot be examined (a name
            longer than the file system allows, a permission problem).
    """
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return  # absent: it will be created (a parent that is a file fails when writing)
    except OSError as exc:
        raise OutputError(
            f"cannot use the output path {path}: {exc.strerror or exc}; choose a shorter, "
            "writable 'output' path"
        ) from None
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(
            f"output path {path} is a directory; set 'output' to a file path such as "
            f"{path / 'docs.scidx'}"
        )
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a character device"
            if stat.S_ISCHR(st.st_mode)
            else "a block device"
            if stat.S_ISBLK(st.st_mode)
            else "a socket"
            if stat.S_ISSOCK(st.st_mode)
            else "not a regular file"
        )
        raise OutputError(
            f"output path {path} is {kind}; scidx writes only regular files and never replaces "
            "a special file. Set 'output' to a file path such as docs.scidx"
        )


def check_replaceable(path: Path, *, config_path: Path | None, force: bool) -> None:
    """Refuse an ``output`` that would replace the config or a file that is not an index.

    Packing replaces ``output`` whole, so a typo (``"output": "README.md"``, the config's own
    name, ``".git/HEAD"``) would destroy that file. An existing file is replaced only when it
    is a scidx index or empty, or with ``force``; the config file never. (A matched input file
    is refused by input discovery, which knows the matches.)

    Raises:
        OutputError: ``path`` is the config file, or an existing file that is not an index
            (without ``force``).
    """
    try:
        real = os.path.realpath(path)
        if config_path is not None and real == os.path.realpath(config_path):
            raise OutputError(
                f'"output" is the config file itself ({config_path}); packing would replace '
                'it with an index. Set "output" to a path such as "docs.scidx"'
            )
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC))
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError:
        return  # unreadable: writing reports it
    if head in (b"", MAGIC) or force:
        return
    raise OutputError(
        f"output path {path} exists and is not a scidx index; packing would replace it. Set "
        '"output" to a new path such as "docs.scidx", or pass --force to replace it anyway'
    )


def check_output_path(path: Path) -> None:
    """Refuse an output path that is a folder, a special file or has no writable parent."""
    check_output_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot create the output folder {path.parent}: {exc.strerror or exc}; "
            "choose a writable 'output' path"
        ) from None


def check_output_writable(path: Path) -> None:
    """Refuse, before any input is read or embedded, an output whose folder takes no new file.

    A real probe (a temp file created and removed in the output's folder, or in the nearest
    folder that exists when it is still to be made) rather than ``os.access``, which trusts
    permission bits that a read-only mount, an ACL or a full disk contradict.

    Raises:
        OutputError: Naming the folder and the fix (exit 3).
    """
    folder = path.parent
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(
            f"cannot create the output folder {path.parent}: {folder} is not a folder; "
            "choose a writable 'output' path"
        )
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.probe.", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(
            f"cannot write {path}: the folder {folder} does not take new files "
            f"({exc.strerror or exc}); nothing was read or embedded. Choose a writable "
            "'output' or make the folder writable"
        ) from None


def atomic_write(
    path: Path,
    write: Callable[[BinaryIO], object],
    *,
    check: Callable[[Path], None] | None = None,
) -> int:
    """Write a file atomically: temp file in the same folder, fsync, rename.

    A failure (or a kill) at any point leaves the previous file untouched. ``check``, if given,
    reads the finished temp file before the rename (the packer verifies its own index there), so
    a file that fails it never replaces the previous one.

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
        if check is not None:
            check(tmp)
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
