"""The loaded indexes a server answers from, and their hot reload.

Each index is a :class:`ServedIndex` with a name (its vector-store id) and, when it was loaded
from a path, a watcher that reloads it after the file is replaced. Requests *lease* the current
generation (:meth:`ServedIndex.lease`), so a swap never closes an index under a running search:
the old generation is closed when its last lease ends.

Reload rules:

* the file is checked every ``interval`` seconds by ``os.stat`` (device, inode, size, mtime), so
  an atomic rename (``toolup-rag pack-docs`` writes that way) is seen as one change;
* the new file is loaded (and by default verified: every checksum) in the watcher thread, while
  requests go on using the old generation; only then is the current generation swapped;
* a replacement that fails to load (corrupt, truncated, foreign, unreadable) is logged and the old
  generation keeps serving; the same file is not retried until it changes again;
* each generation answers from its own private bytes (:mod:`scidx.web.snapshot`: in memory, or
  a private copy for large files), so rewriting the file *in place* (``cp``, ``rsync
  --inplace``, a truncation) never reaches a running search: it is one more change to reload.
* ``--load map`` maps the file itself, so it is safe only when files are replaced by rename.
  Each request then stats the path first (device, inode, size, mtime): a replaced file is
  reloaded at once rather than at the next watcher tick, and a file rewritten *in place* (same
  inode, another size or mtime) is reloaded too, or, while it does not load (half written),
  refused with ``503 index_rewritten`` instead of reading its pages (a truncated mapping kills
  the process with SIGBUS). A rewrite that lands *during* a search can still do that: the
  check narrows the window, it cannot close it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scidx.errors import ConfigError, ScidxError
from scidx.index.index import Index
from scidx.web.common import ApiError
from scidx.web.snapshot import DEFAULT_MEMORY_MAX, Snapshot, check_load_mode, load_snapshot

__all__ = ["IndexSet", "ServedIndex", "store_name"]

logger = logging.getLogger("scidx.web")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_Signature = tuple[int, int, int, int]


def store_name(path: str | os.PathLike[str]) -> str:
    """The default store id of an index file: its file name without ``.scidx``, made URL-safe.

    Example:
        >>> store_name("site/docs.v2.scidx")
        'docs.v2'
    """
    stem = Path(path).name
    if stem.endswith(".scidx"):
        stem = stem[: -len(".scidx")]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-.") or "index"
    if not name[0].isalnum():
        name = "x" + name
    return name[:64]


def _signature(path: str) -> _Signature:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class _Generation:
    """One loaded file; closed when it is retired and no request holds it."""

    index: Index
    signature: _Signature | None
    size: int
    snapshot: Snapshot | None = None
    users: int = 0
    retired: bool = False

    def close(self) -> None:
        if self.snapshot is not None:
            self.snapshot.close()
        else:
            self.index.close()


class ServedIndex:
    """One named index, reloadable when it came from a path.

    Args:
        name: The store id (``[A-Za-z0-9][A-Za-z0-9_.-]*``, at most 64 characters).
        index: An index already loaded by the caller (never reloaded, never closed here).
        path: Or the file to load (and reload).
        verify: Check every checksum when loading from ``path``.
        embedder_options: Passed to :func:`scidx.load` for the query embedder.
        load_mode: How a generation holds its bytes: ``auto`` (default), ``memory``, ``copy``
            or ``map`` (see :mod:`scidx.web.snapshot`).
        memory_max: ``auto`` reads files up to this many bytes into memory, copies larger ones.

    Raises:
        ConfigError: A bad name, load mode, or neither/both of ``index`` and ``path``.
        IndexFormatError: The file is not a valid index.
        OSError: The file cannot be read.
    """

    def __init__(
        self,
        name: str,
        *,
        index: Index | None = None,
        path: str | os.PathLike[str] | None = None,
        verify: bool = True,
        embedder_options: Mapping[str, Any] | None = None,
        load_mode: str = "auto",
        memory_max: int = DEFAULT_MEMORY_MAX,
    ) -> None:
        check_load_mode(load_mode, memory_max)
        if not _NAME.fullmatch(name):
            raise ConfigError(
                f"index name {name!r}: use 1-64 letters, digits, '_', '.' or '-', starting with "
                "a letter or digit"
            )
        if (index is None) == (path is None):
            raise ConfigError(f"index {name!r}: give either a loaded index or a path")
        self.name = name
        self._lock = threading.Lock()
        self._verify = verify
        self._options = dict(embedder_options or {})
        self._mode = load_mode
        self._memory_max = memory_max
        self._failed: _Signature | None = None
        self._reloading = threading.Lock()  # one reload at a time (watcher or a request)
        self._missing_logged = False
        self.reloads = 0
        self.reload_failures = 0
        if path is not None:
            self.path: str | None = os.fspath(path)
            sig = _signature(self.path)
            self._owned = True
            snap = self._load()
            self._current = _Generation(snap.index, sig, sig[2], snap)
        else:
            assert index is not None
            self.path = None
            self._owned = False
            size = os.stat(index.source).st_size if os.path.isfile(index.source) else 0
            self._current = _Generation(index, None, size)

    def _load(self) -> Snapshot:
        assert self.path is not None
        return load_snapshot(
            self.path,
            mode=self._mode,
            memory_max=self._memory_max,
            verify=self._verify,
            embedder_options=self._options or None,
        )

    def __repr__(self) -> str:
        return f"<ServedIndex {self.name!r} {self._current.index!r}>"

    @property
    def index(self) -> Index:
        """The current generation's index (for metadata; searches should :meth:`lease`)."""
        return self._current.index

    @property
    def size(self) -> int:
        """The current file's size in bytes (0 for an in-memory index)."""
        return self._current.size

    @contextlib.contextmanager
    def lease(self) -> Iterator[Index]:
        """Use the current generation; a reload meanwhile does not close it under you.

        Raises:
            ApiError: ``503 index_rewritten`` (``--load map`` only): the mapped file was
                rewritten in place and its new content does not load (yet).
        """
        if self._mode == "map" and self.path is not None:
            self._guard_mapped(self.path)
        with self._lock:
            gen = self._current
            gen.users += 1
        try:
            yield gen.index
        finally:
            with self._lock:
                gen.users -= 1
                done = gen.retired and gen.users == 0
            if done:
                gen.close()

    def _guard_mapped(self, path: str) -> None:
        """Before a request touches a mapped file: reload a changed one, refuse a torn one."""
        try:
            sig = _signature(path)
        except OSError:
            return  # gone or mid-rename: the mapped inode itself is intact
        if sig == self._current.signature:
            return
        self.check()
        current = self._current.signature
        if current is not None and sig[:2] == current[:2] and sig != current:
            raise ApiError(
                503,
                f"index {self.name!r} was rewritten in place while the server maps it (--load "
                "map) and its new content does not load yet; retry shortly. Deploy index files "
                "by renaming over the old one (as pack-docs does), or serve with --load auto",
                code="index_rewritten",
                type="server_error",
            )

    def check(self) -> bool:
        """Reload if the file changed since the last (attempted) load.

        Returns:
            True when a new generation was swapped in.
        """
        if self.path is None:
            return False
        with self._reloading:
            return self._check(self.path)

    def _check(self, path: str) -> bool:
        try:
            sig = _signature(path)
        except OSError as exc:
            # Mid-replacement by a non-atomic writer, or deleted: keep serving what we have.
            if not self._missing_logged:
                logger.warning(
                    "%s: cannot stat %s (%s); still serving the loaded index",
                    self.name,
                    self.path,
                    exc.strerror or exc,
                )
                self._missing_logged = True
            return False
        self._missing_logged = False
        if sig == self._current.signature or sig == self._failed:
            return False
        try:
            fresh = self._load()
        except (ScidxError, OSError) as exc:
            self._failed = sig
            self.reload_failures += 1
            logger.error(
                "%s: the replaced file %s cannot be loaded, still serving the previous index: %s",
                self.name,
                self.path,
                exc,
            )
            return False
        # `sig` was read before loading: if the file moved on meanwhile, the next check sees a
        # different signature and loads again, so a fast second replacement is never missed.
        with self._lock:
            old = self._current
            self._current = _Generation(fresh.index, sig, sig[2], fresh)
            old.retired = True
            idle = old.users == 0
        self._failed = None
        self.reloads += 1
        if idle:
            old.close()
        logger.info("%s: reloaded %s (%d chunks)", self.name, self.path, len(fresh.index))
        return True

    def close(self) -> None:
        """Close the current generation if this object loaded it (idempotent)."""
        with self._lock:
            gen = self._current
            gen.retired = True
            idle = gen.users == 0
        if idle and self._owned:
            gen.close()


class IndexSet:
    """The named indexes of one app, in the order given, and their watcher thread.

    Args:
        indexes: ``{name: path or Index}``, or a sequence of paths / indexes / ``(name, item)``
            pairs (names default to :func:`store_name` of the path).
        verify: Check every checksum when loading (and reloading) from a path.
        embedder_options: Passed to :func:`scidx.load` for query embedders.
        load_mode: As for :class:`ServedIndex`.
        memory_max: As for :class:`ServedIndex`.

    Raises:
        ConfigError: No index, two with the same name, or a bad load mode.
        IndexFormatError: A file is not a valid index (the message names it).
        OSError: A file cannot be read.
    """

    def __init__(
        self,
        indexes: Mapping[str, str | os.PathLike[str] | Index]
        | Sequence[str | os.PathLike[str] | Index | tuple[str, str | os.PathLike[str] | Index]],
        *,
        verify: bool = True,
        embedder_options: Mapping[str, Any] | None = None,
        load_mode: str = "auto",
        memory_max: int = DEFAULT_MEMORY_MAX,
    ) -> None:
        pairs: list[tuple[str, str | os.PathLike[str] | Index]] = []
        if isinstance(indexes, Mapping):
            pairs = list(indexes.items())
        else:
            for item in indexes:
                if isinstance(item, tuple):
                    pairs.append(item)
                elif isinstance(item, Index):
                    pairs.append((store_name(item.source), item))
                else:
                    pairs.append((store_name(item), item))
        if not pairs:
            raise ConfigError("no index to serve; pass at least one .scidx file")
        self._entries: dict[str, ServedIndex] = {}
        try:
            for name, item in pairs:
                if name in self._entries:
                    raise ConfigError(
                        f"two indexes are named {name!r}; name them apart with NAME=PATH"
                    )
                if isinstance(item, Index):
                    entry = ServedIndex(name, index=item)
                else:
                    entry = ServedIndex(
                        name,
                        path=item,
                        verify=verify,
                        embedder_options=embedder_options,
                        load_mode=load_mode,
                        memory_max=memory_max,
                    )
                self._entries[name] = entry
        except BaseException:
            self.close()
            raise
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[ServedIndex]:
        return iter(self._entries.values())

    def get(self, name: str) -> ServedIndex | None:
        """The index named ``name``, or None."""
        return self._entries.get(name)

    @property
    def names(self) -> list[str]:
        """The store ids, in the order given."""
        return list(self._entries)

    def check(self) -> int:
        """Reload every index whose file changed; returns how many were swapped."""
        return sum(entry.check() for entry in self._entries.values())

    def watch(self, interval: float) -> None:
        """Start the watcher thread (once): :meth:`check` every ``interval`` seconds."""
        if self._thread is not None or interval <= 0:
            return

        def run() -> None:
            while not self._stop.wait(interval):
                try:
                    self.check()
                except Exception:  # never let the watcher die silently
                    logger.exception("index watcher failed; reloading continues")

        self._thread = threading.Thread(target=run, name="scidx-web-watch", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop watching and close the indexes loaded from paths."""
        stop = getattr(self, "_stop", None)
        if stop is not None:
            stop.set()
        thread = getattr(self, "_thread", None)
        if thread is not None:
            thread.join(timeout=5)
            self._thread = None
        for entry in self._entries.values():
            entry.close()
