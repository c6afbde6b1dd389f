"""A disk cache of embeddings that wraps any :class:`~scidx.embed.base.Embedder`.

Contract:

* Entries are keyed by :func:`cache_key` (xxh3-128 over provider, model, dimensions and text);
  the text itself, and anything else a caller passes to a provider, is never stored.
* Vectors are stored as raw little-endian float32 bytes in one SQLite file in WAL mode. Every
  batch is committed as soon as it is embedded, so a run that fails or is killed keeps what it
  had finished, and several packers may share one cache at the same time.
* The cache never fails a pack: a folder that cannot be created, a locked or corrupt file, or a
  bad row is logged (``logging``, never printed) and treated as a miss; a corrupt file is renamed
  aside and rebuilt.
"""

from __future__ import annotations

import logging
import math
import os
import sqlite3
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import numpy as np
import numpy.typing as npt
import xxhash

from scidx.embed.base import Embedder, Vectors
from scidx.embed.hashing import PROVIDER_ID as HASHING_PROVIDER_ID
from scidx.errors import ProviderError
from scidx.tokenize import TOKENIZER_VERSION

__all__ = [
    "CACHE_FILENAME",
    "CachedEmbedder",
    "EmbeddingCache",
    "cache_key",
    "default_cache_dir",
]

log = logging.getLogger(__name__)

CACHE_FILENAME = "embeddings-v1.sqlite3"
_SCHEMA_VERSION = 1
# Seconds a writer waits for another process's transaction before giving up on that batch.
_BUSY_TIMEOUT = 30.0
# Stay well below SQLite's historical limit of 999 bound parameters per statement.
_LOOKUP_CHUNK = 500
# Hits are handed out in slices of this many rows so that a huge cached corpus is not copied into
# one temporary array before the caller scatters it.
_HIT_BATCH = 1024
_KEY_DOMAIN = b"scidx-embedding-cache-v1\x00"


def default_cache_dir(config_cache_dir: Path | None = None) -> Path:
    """The folder of the embedding cache.

    Args:
        config_cache_dir: ``Config.cache_dir``; it wins when set.

    Returns:
        ``config_cache_dir``, else ``$SCIDX_CACHE_DIR``, else the platform's user cache folder
        for ``scidx`` (e.g. ``~/.cache/scidx``).
    """
    if config_cache_dir is not None:
        return Path(config_cache_dir)
    env = os.environ.get("SCIDX_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    import platformdirs  # build-time dependency; imported lazily (ruff TID253)

    return Path(platformdirs.user_cache_dir("scidx"))


def cache_key(provider_id: str, model_id: str, dimensions: int, text: str) -> bytes:
    """The 16-byte cache key of one text under one embedding model.

    Every field is length-prefixed, so no two different field tuples share an encoding
    (``("ab", "c")`` and ``("a", "bc")`` differ).

    Args:
        provider_id: ``Embedder.provider_id``.
        model_id: ``Embedder.model_id``.
        dimensions: ``Embedder.dimensions``.
        text: The exact text sent to the provider.

    Returns:
        The xxh3-128 digest.
    """
    if provider_id == HASHING_PROVIDER_ID:
        # Hashing vectors are made from the tokenizer's terms, so a vector cached under another
        # tokenizer version must not be found (the hashing model id did not change with it).
        model_id = f"{model_id}/{TOKENIZER_VERSION}"
    h = xxhash.xxh3_128(_KEY_DOMAIN)
    for field in (provider_id, model_id, str(dimensions), text):
        # surrogatepass: a lone surrogate must hash, not crash the pack.
        data = field.encode("utf-8", "surrogatepass")
        h.update(struct.pack("<Q", len(data)))
        h.update(data)
    return h.digest()


def _is_corruption(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` means the file is damaged (rather than busy, locked or read-only)."""
    name = getattr(exc, "sqlite_errorname", None)  # Python >= 3.11
    if name is not None:
        return str(name).startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    # Before 3.11: "file is not a database" and "database disk image is malformed" are plain
    # DatabaseError; busy/locked/read-only are its OperationalError subclass.
    return type(exc) is sqlite3.DatabaseError


@contextmanager
def _opening_lock(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``<cache>.lock`` while held; nothing where that cannot be had.

    POSIX only (``fcntl``); elsewhere, or when the lock file cannot be made (a read-only
    folder), opening goes on unlocked, as before.
    """
    try:
        import fcntl
    except ImportError:  # Windows: no flock
        yield
        return
    try:
        fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass  # e.g. a file system without locks: open unlocked
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextmanager
def _immediate_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction: committed on success, rolled back on any exception (even Ctrl-C).

    IMMEDIATE takes the write lock up front, so two writers queue on busy_timeout instead of
    deadlocking on a read-to-write upgrade.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class EmbeddingCache:
    """An SQLite file mapping :func:`cache_key` digests to float32 vectors.

    The cache degrades instead of failing: if the folder cannot be created or the file cannot be
    opened, :attr:`enabled` is ``False`` and every lookup misses. It is safe to share between
    threads and between processes.

    Args:
        directory: The cache folder; the file is ``<directory>/embeddings-v1.sqlite3``.
        timeout: Seconds to wait for another process's write before skipping a batch.
    """

    def __init__(self, directory: Path, *, timeout: float = _BUSY_TIMEOUT) -> None:
        self.directory = Path(directory)
        self.path = self.directory / CACHE_FILENAME
        self.timeout = timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            log.warning(
                "embedding cache disabled: cannot create %s (%s); set cacheDir or "
                "SCIDX_CACHE_DIR to a writable folder",
                self.directory,
                exc.strerror or exc,
            )
            return
        self._conn = self._open()

    @property
    def enabled(self) -> bool:
        """Whether the cache file is open (``False`` after a failure: every lookup misses)."""
        return self._conn is not None

    def _open(self) -> sqlite3.Connection | None:
        # Processes opening one new cache file at once: a process that connects while another
        # is still creating it can read a half-written header as a damaged file and move the
        # other's rows aside (seen once in tests/test_cache.py under load), so opening, with
        # its corruption check, runs one process at a time.
        with _opening_lock(self.path):
            return self._open_unlocked()

    def _open_unlocked(self) -> sqlite3.Connection | None:
        try:
            return self._connect()
        except sqlite3.Error as exc:
            if not _is_corruption(exc):
                log.warning("embedding cache disabled: cannot open %s (%s)", self.path, exc)
                return None
            aside = self._move_aside()
            log.warning(
                "embedding cache %s is corrupt (%s); moved it to %s and starting a new one",
                self.path,
                exc,
                aside,
            )
        try:
            return self._connect()
        except sqlite3.Error as exc:
            log.warning("embedding cache disabled: cannot recreate %s (%s)", self.path, exc)
            return None

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so each batch is one short
        # transaction. check_same_thread=False: the lock below serialises access instead.
        conn = sqlite3.connect(
            str(self.path), timeout=self.timeout, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            # WAL lets readers run beside one writer and survives a kill at any point.
            conn.execute("PRAGMA journal_mode = WAL")
            # NORMAL loses at most the last commits on power loss, never consistency, and
            # committed data survives a killed process.
            conn.execute("PRAGMA synchronous = NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, _SCHEMA_VERSION):
                raise sqlite3.DatabaseError(
                    f"unknown cache schema version {version} (expected {_SCHEMA_VERSION})"
                )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embeddings ("
                "key BLOB PRIMARY KEY, dim INTEGER NOT NULL, vec BLOB NOT NULL) WITHOUT ROWID"
            )
            if version == 0:
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            # Reading one row proves the table has the columns we expect (and touches a page,
            # which catches many corrupt files early).
            conn.execute("SELECT key, dim, vec FROM embeddings LIMIT 1").fetchall()
        except BaseException:
            conn.close()
            raise
        return conn

    def _move_aside(self) -> Path:
        stamp = f"corrupt-{int(time.time())}-{os.getpid()}"
        aside = self.path.with_name(f"{self.path.name}.{stamp}")
        for suffix in ("", "-wal", "-shm"):
            src = Path(str(self.path) + suffix)
            try:
                os.replace(src, str(aside) + suffix)
            except FileNotFoundError:
                pass
            except OSError as exc:  # e.g. another process renamed it first
                log.debug("could not move %s aside: %s", src, exc)
        return aside

    def _disable(self, exc: sqlite3.Error, action: str) -> None:
        """Stop using a file found corrupt mid-run, and move it aside so the next run rebuilds."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None
        aside = self._move_aside()
        log.warning(
            "embedding cache disabled for this run: %s %s failed (%s); moved it to %s",
            action,
            self.path,
            exc,
            aside,
        )

    def get_many(self, keys: Iterable[bytes]) -> dict[bytes, Vectors]:
        """Look up vectors.

        Rows whose stored length is not ``dim * 4`` bytes or that hold non-finite values are
        a miss, and are deleted so that the next :meth:`put_many` can store a good value.

        Args:
            keys: :func:`cache_key` digests.

        Returns:
            The found keys mapped to float32 vectors; missing keys are absent.
        """
        wanted = list(dict.fromkeys(keys))
        found: dict[bytes, Vectors] = {}
        bad: list[bytes] = []
        with self._lock:
            if self._conn is None:
                return found
            try:
                for start in range(0, len(wanted), _LOOKUP_CHUNK):
                    chunk = wanted[start : start + _LOOKUP_CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = self._conn.execute(
                        f"SELECT key, dim, vec FROM embeddings WHERE key IN ({marks})", chunk
                    ).fetchall()
                    for key, dim, blob in rows:
                        vector = _decode(dim, blob)
                        if vector is None:
                            bad.append(bytes(key))
                            continue
                        found[bytes(key)] = vector
            except sqlite3.Error as exc:
                if _is_corruption(exc):
                    self._disable(exc, "reading")
                else:
                    log.warning("embedding cache lookup in %s failed (%s)", self.path, exc)
        if bad:
            log.warning("embedding cache %s: %d invalid rows ignored", self.path, len(bad))
            self.discard(bad)
        return found

    def discard(self, keys: Iterable[bytes]) -> None:
        """Delete entries (used for rows that failed validation); failures are only logged.

        Args:
            keys: :func:`cache_key` digests.
        """
        doomed = list(dict.fromkeys(keys))
        with self._lock:
            if self._conn is None or not doomed:
                return
            conn = self._conn
            try:
                with _immediate_transaction(conn):
                    conn.executemany("DELETE FROM embeddings WHERE key = ?", [(k,) for k in doomed])
            except sqlite3.Error as exc:
                if _is_corruption(exc):
                    self._disable(exc, "cleaning")
                else:
                    log.warning(
                        "embedding cache %s: could not delete invalid rows (%s)", self.path, exc
                    )

    def put_many(self, items: Iterable[tuple[bytes, npt.ArrayLike]]) -> int:
        """Store vectors in one transaction; keys already present keep their value.

        Args:
            items: ``(key, vector)`` pairs; vectors must be 1-D and finite (others are skipped).

        Returns:
            The number of rows written (0 if the cache is disabled or busy).
        """
        rows: list[tuple[bytes, int, bytes]] = []
        for key, vector in items:
            array = np.asarray(vector, dtype=np.float32)
            if array.ndim != 1 or array.size == 0 or not np.isfinite(array).all():
                continue
            rows.append((bytes(key), int(array.size), array.astype("<f4").tobytes()))
        if not rows:
            return 0
        with self._lock:
            if self._conn is None:
                return 0
            conn = self._conn
            try:
                with _immediate_transaction(conn):
                    before = conn.total_changes
                    conn.executemany(
                        "INSERT OR IGNORE INTO embeddings (key, dim, vec) VALUES (?, ?, ?)", rows
                    )
                    written = conn.total_changes - before
            except sqlite3.Error as exc:
                if _is_corruption(exc):
                    self._disable(exc, "writing")
                else:
                    log.warning(
                        "embedding cache write to %s skipped (%s); the vectors are still used",
                        self.path,
                        exc,
                    )
                return 0
        return written

    def __len__(self) -> int:
        with self._lock:
            if self._conn is None:
                return 0
            try:
                return int(self._conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])
            except sqlite3.Error:
                return 0

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _decode(dim: object, blob: object) -> Vectors | None:
    if not isinstance(dim, int) or dim <= 0 or not isinstance(blob, bytes):
        return None
    if len(blob) != dim * 4:
        return None
    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    if not np.isfinite(vector).all():
        return None
    return vector


def _valid_row(vector: np.ndarray, dimensions: int, tolerance: float = 1e-3) -> bool:
    """A usable embedding: right length, finite, and unit length (or all zero, see l2_normalize)."""
    if vector.shape != (dimensions,) or not np.isfinite(vector).all():
        return False
    norm = float(np.linalg.norm(vector))
    return norm == 0.0 or math.isclose(norm, 1.0, abs_tol=tolerance)


# Seed rows decoded from an int8 or binary index are off unit length by the quantisation error
# (up to ~0.5% for a peaky row); they are re-encoded to the same codes, so they are accepted.
_SEED_NORM_TOLERANCE = 0.02


def _spread(
    pairs: Sequence[tuple[int, int]], vectors: Vectors
) -> Iterator[tuple[list[int], Vectors]]:
    """``(positions, rows)`` for the ``(position, vector row)`` pairs, a bounded slice at a time.

    A text repeated across many chunks is embedded once but stored at each of its positions;
    copying its vector that many times in one piece could take more memory than the index.
    """
    for start in range(0, len(pairs), _SPREAD_ROWS):
        part = pairs[start : start + _SPREAD_ROWS]
        take = [row for _, row in part]
        yield [p for p, _ in part], np.ascontiguousarray(vectors[take], dtype=np.float32)


_SPREAD_ROWS = 8192


class CachedEmbedder(Embedder):
    """An :class:`Embedder` that answers from a cache and sends only misses to ``inner``.

    It has the same identity (``provider_id``, ``model_id``, ``dimensions``, stamp) as ``inner``,
    so an index built through it is indistinguishable from one built without it.

    ``hits`` and ``misses`` count *distinct* texts: a text found in the seed or the cache is a
    hit, a text sent to ``inner`` is a miss. Repeats of a text within one call are embedded once
    and counted once.

    Args:
        inner: The provider that embeds misses.
        cache: The disk cache, or ``None`` to pass everything through (``--no-cache``).
        seed: Extra known vectors by :func:`cache_key` (e.g. from the previous index); consulted
            before the cache and never written to it.
        labels: ``labels(position)`` names the input at ``position`` (a chunk id); a provider
            with a ``describe_input`` attribute gets a lookup of its texts' names.
    """

    def __init__(
        self,
        inner: Embedder,
        cache: EmbeddingCache | None,
        *,
        seed: Mapping[bytes, np.ndarray] | None = None,
        labels: Callable[[int], str] | None = None,
    ) -> None:
        self.inner = inner
        self.labels = labels
        self.cache = cache
        self.seed: Mapping[bytes, np.ndarray] = seed if seed is not None else {}
        self.provider_id = inner.provider_id
        self.model_id = inner.model_id
        self.dimensions = inner.dimensions
        self.normalization = inner.normalization
        self.batch_size = inner.batch_size
        self.hits = 0
        self.misses = 0

    def stamp(self) -> dict[str, object]:
        """The inner provider's stamp."""
        return self.inner.stamp()

    def key(self, text: str) -> bytes:
        """The cache key of ``text`` for the inner provider."""
        return cache_key(self.provider_id, self.model_id, self.dimensions, text)

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed one batch through the cache (see :meth:`embed_iter`)."""
        return self.embed(texts)

    def embed_iter(self, texts: Sequence[str]) -> Iterator[tuple[list[int], Vectors]]:
        """Yield ``(positions, vectors)``: cached texts first, then the inner provider's batches.

        Each batch from ``inner`` is committed to the cache before it is yielded, so a failure
        later in the run keeps every finished batch.

        Raises:
            ProviderError: ``inner`` returned vectors of the wrong shape, non-finite values, or
                did not answer for every text.
            EmbeddingError: Whatever ``inner`` raises.
        """
        positions_of: dict[bytes, list[int]] = {}
        for position, text in enumerate(texts):
            positions_of.setdefault(self.key(text), []).append(position)
        known = self._known(positions_of)
        self.hits += len(known)
        hit_keys = list(known)
        for start in range(0, len(hit_keys), _HIT_BATCH):
            batch = hit_keys[start : start + _HIT_BATCH]
            table = np.ascontiguousarray(np.stack([known[key] for key in batch]), dtype=np.float32)
            pairs = [(p, row) for row, key in enumerate(batch) for p in positions_of[key]]
            yield from _spread(pairs, table)

        miss_keys = [k for k in positions_of if k not in known]
        if not miss_keys:
            return
        self.misses += len(miss_keys)
        miss_texts = [texts[positions_of[k][0]] for k in miss_keys]
        if self.labels is not None and hasattr(self.inner, "describe_input"):
            # Only the texts the provider sees; a repeated text is named by its last chunk.
            label = self.labels
            names = (label(positions_of[k][-1]) for k in miss_keys)
            self.inner.describe_input = dict(zip(miss_texts, names, strict=True)).get
        done = [False] * len(miss_keys)
        for batch_positions, raw in self.inner.embed_iter(miss_texts):
            vectors = self._checked_batch(raw, len(batch_positions))
            for i in batch_positions:
                done[i] = True
            if self.cache is not None:
                self.cache.put_many(
                    (miss_keys[i], vectors[row]) for row, i in enumerate(batch_positions)
                )
            # A text repeated in the input gets its vector at each of its positions.
            pairs = [
                (position, row)
                for row, i in enumerate(batch_positions)
                for position in positions_of[miss_keys[i]]
            ]
            yield from _spread(pairs, vectors)
        if not all(done):
            raise ProviderError(
                f"{self.provider_id} model {self.model_id} returned no vector for "
                f"{done.count(False)} of {len(miss_keys)} texts"
            )

    def _known(self, positions_of: Mapping[bytes, list[int]]) -> dict[bytes, Vectors]:
        """Vectors already at hand for these keys: the seed (previous index), then the cache."""
        dims = self.dimensions
        known: dict[bytes, Vectors] = {}
        for key in positions_of:
            vector = self.seed.get(key)
            if vector is not None:
                array = np.asarray(vector, dtype=np.float32)
                if _valid_row(array, dims, _SEED_NORM_TOLERANCE):
                    known[key] = array
        if self.cache is None:
            return known
        remaining = [k for k in positions_of if k not in known]
        rejected: list[bytes] = []
        for key, vector in self.cache.get_many(remaining).items():
            if _valid_row(vector, dims):
                known[key] = vector
            else:
                rejected.append(key)
        if rejected:
            log.warning(
                "embedding cache: %d rows with the wrong size or norm ignored", len(rejected)
            )
            self.cache.discard(rejected)
        return known

    def _checked_batch(self, raw: object, count: int) -> Vectors:
        """The provider's batch as float32, after checking its shape and that it is finite."""
        vectors = np.asarray(raw, dtype=np.float32)
        if vectors.shape != (count, self.dimensions):
            raise ProviderError(
                f"{self.provider_id} model {self.model_id} returned vectors of shape "
                f"{vectors.shape} for {count} texts; expected ({count}, {self.dimensions})"
            )
        if not np.isfinite(vectors).all():
            raise ProviderError(
                f"{self.provider_id} model {self.model_id} returned non-finite values "
                "(NaN or infinity); retry, or report the failing provider"
            )
        return vectors
