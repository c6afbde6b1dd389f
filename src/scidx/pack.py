"""Pack stage: Markdown folder (or chunk records) → one deterministic ``.scidx`` file.

Contract:

* Inputs are the files selected by the config's globs (or caller-supplied records). Output is one
  index file written atomically (temp file in the same folder, fsync, rename) plus an
  ``<output>.inputs`` sidecar that records content hashes of everything that went in.
* Same inputs give byte-identical output, independent of file-system order, the checkout's
  absolute path, ``PYTHONHASHSEED``, locale, time zone and thread count. ``builtUtc`` comes from
  ``SOURCE_DATE_EPOCH`` (default 0).
* An unchanged re-pack (same sidecar hash, intact output) writes nothing.
* Every record is validated before anything is embedded or written: a failed pack never replaces
  a good index.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, cast

import numpy as np
import xxhash

from scidx import __version__
from scidx.bm25 import (
    DEFAULT_B,
    DEFAULT_HEADING_WEIGHT,
    DEFAULT_K1,
    build_arrays_from_hashes,
    hash_fields,
)
from scidx.chunk import CHUNKER_VERSION, Chunk, chunk_markdown
from scidx.config import Config, InputFile, collect_inputs, load_config
from scidx.embed.base import Embedder
from scidx.embed.cache import CachedEmbedder, EmbeddingCache, default_cache_dir
from scidx.embed.hashing import HashingEmbedder, embedding_text
from scidx.errors import ChunkError, ConfigError, CorruptIndexError, InputError, OutputError
from scidx.format import encode_strings, write_index
from scidx.search import parse_url_template

__all__ = [
    "PACKER_VERSION",
    "BM25_B",
    "BM25_HEADING_WEIGHT",
    "BM25_K1",
    "PackResult",
    "Progress",
    "Record",
    "build_index_arrays",
    "make_embedder",
    "pack_docs",
    "pack_records",
]

#: Bumped whenever the same inputs would produce different bytes (2: rows in chunk-id order).
PACKER_VERSION = "scidx-pack-2"
SIDECAR_VERSION = 1
GENERATOR = f"scidx {__version__}"

# BM25 parameters: the measured defaults of scidx.bm25 (see its module docstring).
BM25_K1 = DEFAULT_K1
BM25_B = DEFAULT_B
BM25_HEADING_WEIGHT = DEFAULT_HEADING_WEIGHT

#: ``progress(stage, done, total)``; stages: read, chunk, cached (distinct chunk texts found in
#: the cache or the previous index), embed, index, write.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Record:
    """One chunk to index, for producers other than the chunker (BEIR corpus, custom splitter).

    Only ``id`` and ``text`` are required. A record without ``source`` is its own source
    (``source = id``), so its title is kept per record.
    """

    id: str
    text: str
    title: str = ""
    source: str = ""
    anchor: str = ""
    heading_path: tuple[str, ...] = ()
    ordinal: int = 0
    span: tuple[int, int, int, int] = (0, 0, 0, 0)
    metadata: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_chunk(cls, chunk: Chunk) -> Record:
        """Convert a chunker :class:`~scidx.chunk.Chunk` to a record."""
        return cls(
            id=chunk.id,
            text=chunk.text,
            title=chunk.title,
            source=chunk.source,
            anchor=chunk.anchor,
            heading_path=tuple(chunk.heading_path),
            ordinal=chunk.ordinal,
            span=(chunk.char_start, chunk.char_end, chunk.line_start, chunk.line_end),
            metadata=dict(chunk.metadata),
        )


@dataclass
class PackResult:
    """What a pack did.

    Attributes:
        output: The index path (None for an in-memory pack).
        up_to_date: True when nothing was written because the inputs were unchanged.
        files: Number of input files (0 for records).
        chunks: Number of chunks in the index.
        cache_hits: Vectors served by the embedding cache.
        embedded: Vectors computed by the provider.
        output_bytes: Size of the index.
        seconds: Wall time of the pack.
        data: The index bytes, for an in-memory pack only.
        changes: Chunks and sources added/changed/removed against the previous index.
        stale: With ``check``: the output is out of date.
        dry_run: With ``dry_run``: what would be sent to the provider.
    """

    output: Path | None
    up_to_date: bool = False
    files: int = 0
    chunks: int = 0
    cache_hits: int = 0
    embedded: int = 0
    output_bytes: int = 0
    seconds: float = 0.0
    data: bytes | None = None
    changes: dict[str, Any] | None = None
    stale: bool = False
    dry_run: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The summary as a JSON-able dict (``--json``)."""
        out: dict[str, Any] = {
            "output": str(self.output) if self.output is not None else None,
            "upToDate": self.up_to_date,
            "files": self.files,
            "chunks": self.chunks,
            "cacheHits": self.cache_hits,
            "embedded": self.embedded,
            "outputBytes": self.output_bytes,
            "seconds": round(self.seconds, 3),
        }
        if self.changes is not None:
            out["changes"] = self.changes
        if self.stale:
            out["stale"] = True
        if self.dry_run is not None:
            out["dryRun"] = self.dry_run
        return out


def _noop_progress(stage: str, done: int, total: int) -> None:
    return None


# ---------------------------------------------------------------------------------------------
# Records


def _coerce_record(item: Record | Mapping[str, Any], position: int) -> Record:
    if isinstance(item, Record):
        rec = item
    elif isinstance(item, Mapping):
        unknown = set(item) - {
            "id", "text", "title", "source", "anchor", "headingPath", "heading_path",
            "ordinal", "metadata",
        }  # fmt: skip
        if unknown:
            raise ChunkError(
                f"record #{position}: unknown field(s) {sorted(unknown)}; known fields are id, "
                "text, title, source, anchor, headingPath, ordinal, metadata"
            )
        heading = item.get("headingPath", item.get("heading_path", ()))
        if not isinstance(heading, (list, tuple)) or not all(isinstance(h, str) for h in heading):
            raise ChunkError(f"record #{position}: headingPath must be a list of strings")
        metadata = item.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise ChunkError(f"record #{position}: metadata must be an object of strings")
        rec = Record(
            id=item.get("id"),  # type: ignore[arg-type]  # validated below
            text=item.get("text"),  # type: ignore[arg-type]
            title=item.get("title") or "",
            source=item.get("source") or "",
            anchor=item.get("anchor") or "",
            heading_path=tuple(heading),
            ordinal=item.get("ordinal") or 0,
            metadata={str(k): str(v) for k, v in metadata.items()},
        )
    else:
        raise ChunkError(
            f"record #{position}: expected a scidx.Record or a mapping, got {type(item).__name__}"
        )
    if not isinstance(rec.id, str) or not rec.id.strip():
        raise ChunkError(
            f"record #{position}: id is missing or blank; give every record a non-blank string 'id'"
        )
    if not isinstance(rec.text, str):
        raise ChunkError(
            f"record #{position} (id {rec.id!r}): text is missing or not a string; "
            "every record needs a 'text' string"
        )
    for name in ("title", "source", "anchor"):
        if not isinstance(getattr(rec, name), str):
            raise ChunkError(f"record #{position} (id {rec.id!r}): {name} must be a string")
    for name, value in (
        ("id", rec.id),
        ("text", rec.text),
        ("title", rec.title),
        ("source", rec.source),
        ("anchor", rec.anchor),
        *((f"headingPath[{i}]", h) for i, h in enumerate(rec.heading_path)),
        *((f"metadata[{k!r}]", v) for k, v in rec.metadata.items()),
    ):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ChunkError(
                f"record #{position} (id {rec.id!r}): {name} holds a lone surrogate at "
                f"character {exc.start}, which UTF-8 cannot store; clean the text first"
            ) from None
    if not isinstance(rec.ordinal, int) or isinstance(rec.ordinal, bool) or rec.ordinal < 0:
        raise ChunkError(f"record #{position} (id {rec.id!r}): ordinal must be an integer >= 0")
    return rec


def validate_records(records: Iterable[Record | Mapping[str, Any]]) -> list[Record]:
    """Validate chunk records and return them in canonical (deterministic) order.

    Raises:
        ChunkError: Naming the first bad record (position and id): blank id, duplicate id,
            missing text, wrong field types.
    """
    seen: dict[str, int] = {}
    out: list[Record] = []
    for position, item in enumerate(records):
        rec = _coerce_record(item, position)
        if rec.id in seen:
            raise ChunkError(
                f"record #{position}: duplicate id {rec.id!r} (first used by record "
                f"#{seen[rec.id]}); chunk ids must be unique"
            )
        seen[rec.id] = position
        if not rec.source:
            rec = Record(**{**rec.__dict__, "source": rec.id})
        out.append(rec)
    # Canonical row order is the chunk id (code point order), never input order: search breaks
    # score ties by row, which is then by chunk id.
    out.sort(key=lambda r: r.id)
    return out


# ---------------------------------------------------------------------------------------------
# Arrays


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def build_index_arrays(
    records: Sequence[Record],
    vectors: np.ndarray,
    bm25_hashes: tuple[Sequence[np.ndarray], Sequence[np.ndarray]] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Build every named array of an index from validated, ordered records and their vectors.

    Args:
        records: Validated records in canonical order.
        vectors: Their embeddings, row for row.
        bm25_hashes: Per-record heading and body term hashes already computed by
            :func:`scidx.bm25.hash_fields` (in worker processes); computed here when None.

    Returns:
        ``(arrays, meta_part)`` where ``meta_part`` holds the ``bm25`` and ``counts`` meta keys.
    """
    n = len(records)
    sources = sorted({r.source for r in records})
    source_row = {s: i for i, s in enumerate(sources)}
    source_title, source_meta = _source_fields(records)

    arrays: dict[str, np.ndarray] = {}

    def put_strings(name: str, values: Sequence[str]) -> None:
        offsets, data = encode_strings(values)
        arrays[f"{name}.offsets"] = offsets
        arrays[f"{name}.data"] = data

    put_strings("chunk.id", [r.id for r in records])
    put_strings("chunk.text", [r.text for r in records])
    put_strings("chunk.heading", ["\x1f".join(r.heading_path) for r in records])
    put_strings("chunk.anchor", [r.anchor for r in records])
    arrays["chunk.source"] = np.array([source_row[r.source] for r in records], dtype="<u4")
    arrays["chunk.ordinal"] = np.array([r.ordinal for r in records], dtype="<u4")
    arrays["chunk.span"] = np.array(
        [r.span for r in records] if n else np.zeros((0, 4)), dtype="<u8"
    ).reshape(n, 4)
    put_strings("source.path", sources)
    put_strings("source.title", [source_title[s] for s in sources])
    put_strings("source.meta", [source_meta[s] for s in sources])
    arrays["vectors"] = np.ascontiguousarray(vectors, dtype="<f4")

    if bm25_hashes is None:
        bm25_hashes = hash_fields(*_bm25_fields(records))
    bm25_arrays, bm25_meta = build_arrays_from_hashes(
        *bm25_hashes, k1=BM25_K1, b=BM25_B, heading_weight=BM25_HEADING_WEIGHT
    )
    arrays.update(bm25_arrays)
    counts = {
        "chunks": n,
        "sources": len(sources),
        "terms": int(bm25_arrays["bm25.term_hash"].shape[0]),
        "postings": int(bm25_arrays["bm25.post_doc"].shape[0]),
    }
    return arrays, {"bm25": bm25_meta, "counts": counts}


def _source_fields(records: Sequence[Record]) -> tuple[dict[str, str], dict[str, str]]:
    """Per source: its title and its front matter as canonical JSON (stored once per source)."""
    titles: dict[str, str] = {}
    metas: dict[str, str] = {}
    for r in records:
        # The first chunk of a source carries the document's title and front matter.
        if r.source not in titles:
            titles[r.source] = r.title
            metas[r.source] = _canonical_json(dict(r.metadata))
    return titles, metas


def _bm25_fields(records: Sequence[Record]) -> tuple[list[str], list[str]]:
    """The two BM25 fields of each record: its heading text and its body."""
    return ["\n".join(_heading_field(r)) for r in records], [r.text for r in records]


def _heading_field(r: Record) -> list[str]:
    parts = [r.title] if r.title else []
    parts += [h for h in r.heading_path if h != r.title]
    return parts


def _embedding_texts(records: Sequence[Record]) -> list[str]:
    return [embedding_text(r.title, r.heading_path, r.text) for r in records]


# ---------------------------------------------------------------------------------------------
# Embedding


def make_embedder(config: Config) -> Embedder:
    """The provider named by the config (``hashing`` or ``openai``), not yet cached."""
    if config.embedding_provider == "hashing":
        return HashingEmbedder(dimensions=config.dimensions)
    if config.embedding_provider == "openai":
        from scidx.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder.from_config(config)
    raise ConfigError(
        f"{config.path or 'config'}: unknown embeddingProvider {config.embedding_provider!r}; "
        'use "hashing" or "openai"'
    )


def _embed(
    records: Sequence[Record],
    embedder: Embedder,
    *,
    cache_dir: Path | None,
    use_cache: bool,
    progress: Progress,
    seed: Mapping[bytes, np.ndarray] | None = None,
) -> tuple[np.ndarray, int, int]:
    texts = _embedding_texts(records)
    if hasattr(embedder, "describe_input"):
        # Lets the provider name chunks (not list positions) in its warnings.
        embedder.describe_input = dict(zip(texts, (r.id for r in records), strict=True)).get
    cache = EmbeddingCache(default_cache_dir(cache_dir)) if use_cache else None
    try:
        cached = CachedEmbedder(embedder, cache, seed=seed)
        out = np.zeros((len(texts), embedder.dimensions), dtype=np.float32)
        done = 0
        reported_hits = False
        progress("embed", 0, len(texts))
        for positions, vecs in cached.embed_iter(texts):
            if not reported_hits:
                # The cache is consulted before anything is yielded: its hits are known now.
                progress("cached", cached.hits, len(set(texts)))
                reported_hits = True
            out[positions] = vecs
            done += len(positions)
            progress("embed", done, len(texts))
        return out, cached.hits, cached.misses
    finally:
        if cache is not None:
            cache.close()


# ---------------------------------------------------------------------------------------------
# Writing


def built_utc() -> str:
    """``builtUtc`` from ``SOURCE_DATE_EPOCH`` (default 0), as ISO 8601 UTC."""
    raw = os.environ.get("SOURCE_DATE_EPOCH", "0").strip() or "0"
    try:
        seconds = int(raw)
        if seconds < 0:
            raise ValueError(raw)
        stamp = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise ConfigError(
            f"SOURCE_DATE_EPOCH={raw!r} is not a valid Unix timestamp; "
            "set it to whole seconds since 1970 or unset it"
        ) from None
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def _check_output_path(path: Path) -> None:
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
    _check_output_path(path)
    _remove_stale_temps(path)
    tmp = path.parent / f".{path.name}.tmp.{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
            size = fh.tell()
        os.replace(tmp, path)
    except OSError as exc:
        _unlink_quietly(tmp)
        reason = exc.strerror or str(exc)
        raise OutputError(
            f"cannot write {path}: {reason}; the previous file (if any) is unchanged. "
            "Check that the folder is writable and the disk has space."
        ) from None
    except BaseException:
        _unlink_quietly(tmp)
        raise
    _fsync_dir(path.parent)
    return size


def _remove_stale_temps(path: Path) -> None:
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
            _unlink_quietly(path.parent / name)
        except (OSError, OverflowError):
            # Alive but not ours (EPERM), or not a valid pid: leave it alone.
            continue


def _unlink_quietly(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _fsync_dir(folder: Path) -> None:
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


def _file_hash(path: Path) -> str | None:
    try:
        h = xxhash.xxh3_128()
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                h.update(block)
        return h.hexdigest()
    except OSError:
        return None


# ---------------------------------------------------------------------------------------------
# Parallelism: chunking and offline embedding are CPU-bound Python, so they run in processes.

# Below this much Markdown, starting worker processes costs more than it saves.
_PARALLEL_MIN_BYTES = 2 << 20
_CHUNK_JOB_BYTES = 256 << 10
_EMBED_JOB_TEXTS = 1024
_BM25_JOB_CHUNKS = 2048


def _auto_workers() -> int:
    raw = os.environ.get("SCIDX_WORKERS", "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value < 1:
            raise ConfigError(f"SCIDX_WORKERS={raw!r} must be a whole number >= 1")
        return value
    return max(1, min(os.cpu_count() or 1, 8))


def _chunk_job(
    items: Sequence[tuple[str, bytes]], max_chunk_chars: int, anchor_style: str
) -> list[Record]:
    out: list[Record] = []
    for source, data in items:
        text = _decode(source, data)
        chunks = chunk_markdown(
            text,
            source,
            max_chunk_chars=max_chunk_chars,
            anchor_style=anchor_style,  # type: ignore[arg-type]  # validated by config
        )
        out.extend(Record.from_chunk(c) for c in chunks)
    return out


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when the packer dies (SIGKILL, OOM, CI cancel).

    Without it a worker blocked on a full result pipe (its siblings keep the pipe open) would
    outlive a killed packer forever.
    """
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="scidx-parent-watch", daemon=True).start()


_worker_embedders: dict[int, HashingEmbedder] = {}


def _hashing_job(dimensions: int, texts: Sequence[str]) -> np.ndarray:
    embedder = _worker_embedders.get(dimensions)
    if embedder is None:
        embedder = _worker_embedders[dimensions] = HashingEmbedder(dimensions=dimensions)
    return embedder.embed_batch(texts)


class _Pool:
    """An optional process pool; with ``executor`` None everything runs in this process."""

    def __init__(self, executor: Any) -> None:
        self.executor = executor

    @classmethod
    def start(cls, workers: int | None, total_bytes: int) -> _Pool:
        count = _auto_workers() if workers is None else workers
        if count < 1:
            raise ConfigError(f"workers must be >= 1, got {count}")
        if count == 1 or (workers is None and total_bytes < _PARALLEL_MIN_BYTES):
            return cls(None)
        import multiprocessing
        import threading
        from concurrent.futures import ProcessPoolExecutor

        # fork is cheap and needs no __main__ guard in the caller's script, but forking a
        # process that runs other threads is unsafe; then spawn.
        method = "fork"
        if threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
            method = "spawn"
        try:
            executor = ProcessPoolExecutor(
                count,
                mp_context=multiprocessing.get_context(method),
                initializer=_exit_with_parent,
                initargs=(os.getpid(),),
            )
        except (OSError, RuntimeError, ValueError):
            return cls(None)
        return cls(executor)

    def map(self, fn: Callable[..., Any], jobs: Sequence[tuple[Any, ...]]) -> Iterator[Any]:
        """Run ``fn(*job)`` for every job, yielding results in job order."""
        if self.executor is None:
            for job in jobs:
                yield fn(*job)
            return
        futures = [self.executor.submit(fn, *job) for job in jobs]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()

    def start_bm25(
        self, records: Sequence[Record]
    ) -> Callable[[], tuple[list[np.ndarray], list[np.ndarray]]] | None:
        """Start hashing the BM25 fields in the workers; call the result to collect them.

        Started before embedding so that both keep the workers busy at once.
        """
        if self.executor is None:
            return None
        headings, bodies = _bm25_fields(records)
        futures = [
            self.executor.submit(
                hash_fields, headings[i : i + _BM25_JOB_CHUNKS], bodies[i : i + _BM25_JOB_CHUNKS]
            )
            for i in range(0, len(bodies), _BM25_JOB_CHUNKS)
        ]

        def collect() -> tuple[list[np.ndarray], list[np.ndarray]]:
            heads: list[np.ndarray] = []
            texts: list[np.ndarray] = []
            for future in futures:
                h, t = future.result()
                heads.extend(h)
                texts.extend(t)
            return heads, texts

        return collect

    def wrap(self, embedder: Embedder) -> Embedder:
        """Fan the offline hashing embedder out to the pool; other providers pass through."""
        if self.executor is None or type(embedder) is not HashingEmbedder:
            return embedder
        return _PoolHashingEmbedder(embedder, self)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None


class _PoolHashingEmbedder(Embedder):
    """The hashing embedder, batches computed in worker processes (same vectors, same order)."""

    def __init__(self, inner: HashingEmbedder, pool: _Pool) -> None:
        self.inner = inner
        self.pool = pool
        self.provider_id = inner.provider_id
        self.model_id = inner.model_id
        self.dimensions = inner.dimensions
        self.normalization = inner.normalization

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_batch(texts)

    def embed_iter(self, texts: Sequence[str]) -> Iterator[tuple[list[int], np.ndarray]]:
        starts = range(0, len(texts), _EMBED_JOB_TEXTS)
        jobs = [(self.dimensions, list(texts[i : i + _EMBED_JOB_TEXTS])) for i in starts]
        for start, vectors in zip(starts, self.pool.map(_hashing_job, jobs), strict=True):
            yield list(range(start, start + len(vectors))), vectors


def _chunk_all(
    raw: Sequence[tuple[InputFile, bytes]], cfg: Config, pool: _Pool, progress: Progress
) -> list[Record]:
    jobs: list[tuple[Any, ...]] = []
    batch: list[tuple[str, bytes]] = []
    size = 0
    for item, data in raw:
        batch.append((item.source, data))
        size += len(data)
        if size >= _CHUNK_JOB_BYTES:
            jobs.append((batch, cfg.max_chunk_chars, cfg.anchor_style))
            batch, size = [], 0
    if batch:
        jobs.append((batch, cfg.max_chunk_chars, cfg.anchor_style))
    records: list[Record] = []
    done = 0
    for job, result in zip(jobs, pool.map(_chunk_job, jobs), strict=True):
        records.extend(result)
        done += len(job[0])
        progress("chunk", done, len(raw))
    return records


# ---------------------------------------------------------------------------------------------
# Public entry points


def _encode(
    records: Sequence[Record],
    vectors: np.ndarray,
    meta: dict[str, Any],
    bm25_hashes: tuple[Sequence[np.ndarray], Sequence[np.ndarray]] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any], str]:
    arrays, meta_part = build_index_arrays(records, vectors, bm25_hashes)
    return arrays, {**meta, **meta_part}, built_utc()


def pack_records(
    records: Iterable[Record | Mapping[str, Any]],
    output: str | Path | None,
    *,
    embedder: Embedder | None = None,
    dimensions: int = 512,
    use_cache: bool = True,
    cache_dir: str | Path | None = None,
    url_template: str | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
) -> PackResult:
    """Pack already-chunked records into an index.

    Args:
        records: :class:`Record` objects or mappings with ``id``, ``text`` and optional
            ``title``, ``source``, ``anchor``, ``headingPath``, ``ordinal``, ``metadata``.
        output: Where to write the index; ``None`` packs in memory (``PackResult.data``).
        embedder: The provider; default the offline hashing embedder of ``dimensions``.
        dimensions: Dimensions of the default hashing embedder.
        use_cache: Use the disk embedding cache.
        cache_dir: Cache folder (default ``$SCIDX_CACHE_DIR`` or the user cache dir).
        url_template: Stored in the index to turn ``source#anchor`` into a URL.
        progress: ``progress(stage, done, total)`` callback.
        workers: Processes for offline embedding and BM25 tokenising, as for
            :func:`pack_docs`; the bytes never depend on it.

    Returns:
        A :class:`PackResult`.

    Raises:
        ChunkError: A record is invalid; nothing is written.
        EmbeddingError: The provider failed; nothing is written.
        OutputError: The index could not be written; the previous one is intact.

    Example:
        >>> pack_records([{"id": "a", "text": "hello"}], None).chunks
        1
    """
    started = time.perf_counter()
    report = progress or _noop_progress
    if url_template is not None and parse_url_template(url_template) is None:
        raise ConfigError(
            f"url_template {url_template!r} is not valid: use only the placeholders {{source}}, "
            "{path}, {page} and {anchor}"
        )
    valid = validate_records(records)
    emb = embedder or HashingEmbedder(dimensions=dimensions)
    pool = _Pool.start(workers, sum(len(r.text) for r in valid))
    try:
        bm25_pending = pool.start_bm25(valid)
        vectors, hits, misses = _embed(
            valid,
            pool.wrap(emb),
            cache_dir=Path(cache_dir) if cache_dir else None,
            use_cache=use_cache,
            progress=report,
        )
        bm25_hashes = bm25_pending() if bm25_pending is not None else None
    finally:
        pool.close()
    meta: dict[str, Any] = {
        "packer": PACKER_VERSION,
        "provider": emb.stamp(),
        "chunking": None,
        "configHash": None,
        "urlTemplate": url_template,
    }
    report("index", 0, 1)
    arrays, meta, built = _encode(valid, vectors, meta, bm25_hashes)
    report("index", 1, 1)
    result = PackResult(
        output=Path(output) if output is not None else None,
        chunks=len(valid),
        cache_hits=hits,
        embedded=misses,
    )
    if output is None:
        import io

        buf = io.BytesIO()
        write_index(buf, arrays, meta, built_utc=built, generator=GENERATOR)
        result.data = buf.getvalue()
        result.output_bytes = len(result.data)
    else:
        report("write", 0, 1)
        result.output_bytes = atomic_write(
            Path(output),
            lambda fh: write_index(fh, arrays, meta, built_utc=built, generator=GENERATOR),
        )
        report("write", 1, 1)
    result.seconds = time.perf_counter() - started
    return result


def _read_inputs(inputs: Sequence[InputFile], progress: Progress) -> list[tuple[InputFile, bytes]]:
    out = []
    for i, item in enumerate(inputs):
        try:
            data = item.path.read_bytes()
        except OSError as exc:
            raise InputError(
                f"cannot read input file {item.source}: {exc.strerror or exc}; "
                "fix its permissions or exclude it in the config"
            ) from None
        out.append((item, data))
        progress("read", i + 1, len(inputs))
    return out


def _decode(source: str, data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{source}: not valid UTF-8 at byte offset {exc.start} "
            f"(byte 0x{data[exc.start]:02x}); re-save the file as UTF-8 or exclude it"
        ) from None
    return text


def _inputs_digest(config: Config, stamp: Mapping[str, Any], files: Mapping[str, str]) -> str:
    h = xxhash.xxh3_128()
    h.update(
        _canonical_json(
            {
                "packer": PACKER_VERSION,
                "generator": GENERATOR,
                "config": config.canonical(),
                "provider": dict(stamp),
                "files": files,
                "builtUtc": built_utc(),
            }
        ).encode()
    )
    return h.hexdigest()


def sidecar_path(output: Path) -> Path:
    """The ``<output>.inputs`` sidecar path of an index."""
    return output.with_name(output.name + ".inputs")


def _read_sidecar(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def pack_docs(
    config: Config | str | Path,
    *,
    force: bool = False,
    use_cache: bool = True,
    progress: Progress | None = None,
    workers: int | None = None,
    check: bool = False,
    dry_run: bool = False,
    reuse: str | Path | None = None,
) -> PackResult:
    """Pack the Markdown files selected by a ``staticcorpus.json`` config into its output.

    Vectors of unchanged chunk texts are reused from the existing output (or from ``reuse``)
    when it was built with the same provider stamp, so a fresh checkout with a committed index
    rebuilds without calling the provider.

    Args:
        config: A :class:`~scidx.config.Config` or the path of a config file.
        force: Rebuild even when the sidecar says the output is up to date.
        use_cache: Use the disk embedding cache and reuse vectors from the existing output
            (``--no-cache`` turns both off: everything is embedded afresh).
        progress: ``progress(stage, done, total)`` callback.
        workers: Processes for chunking and offline embedding; ``None`` picks one per core
            (``$SCIDX_WORKERS`` overrides) for corpora big enough to gain from it. The output
            bytes never depend on it.
        check: Build in memory and compare with the existing output; write nothing.
            ``PackResult.stale`` tells the outcome.
        dry_run: Chunk and look up the cache, then report what would be embedded
            (``PackResult.dry_run``); no provider request, nothing written.
        reuse: Another index whose vectors may be reused (same provider stamp only).

    Returns:
        A :class:`PackResult`; ``up_to_date`` is True when nothing needed writing, ``changes``
        compares the new index with the previous one.

    Raises:
        ConfigError: The config is invalid or an input file is unusable (exit code 1).
        EmbeddingError: The embedding provider failed (exit code 2).
        OutputError: The index could not be written (exit code 3).

    Example:
        >>> pack_docs("staticcorpus.json").chunks  # doctest: +SKIP
        42
    """
    started = time.perf_counter()
    report = progress or _noop_progress
    cfg = config if isinstance(config, Config) else load_config(config)
    inputs = collect_inputs(cfg)
    raw = _read_inputs(inputs, report)
    file_hashes = {item.source: xxhash.xxh3_128_hexdigest(data) for item, data in raw}
    embedder = make_embedder(cfg)
    stamp = embedder.stamp()
    digest = _inputs_digest(cfg, stamp, file_hashes)
    output = cfg.output
    sidecar = sidecar_path(output)
    result = PackResult(output=output, files=len(raw))

    if not force and not dry_run:
        previous_side = _read_sidecar(sidecar)
        if (
            previous_side is not None
            and previous_side.get("inputsHash") == digest
            and isinstance(previous_side.get("output"), dict)
            and output.is_file()
            and _file_hash(output) == previous_side["output"].get("xxh3")
        ):
            result.up_to_date = True
            result.chunks = int(previous_side.get("chunks", 0))
            result.output_bytes = output.stat().st_size
            result.seconds = time.perf_counter() - started
            return result

    previous = _read_previous(output, embedder)
    # --no-cache means "embed everything afresh": no disk cache, no vectors from the old output.
    seed = dict(previous.seed) if previous is not None and use_cache else {}
    if reuse is not None:
        other = _read_previous(Path(reuse), embedder, required=True)
        if other is not None:
            seed.update(other.seed)

    pool = _Pool.start(workers, sum(len(d) for _, d in raw))
    try:
        records = _chunk_all(raw, cfg, pool, report)
        valid = validate_records(records)
        if dry_run:
            result.chunks = len(valid)
            result.dry_run = _dry_run(valid, embedder, cfg.cache_dir, use_cache, seed)
            result.seconds = time.perf_counter() - started
            return result
        if check:
            changes = _changes(previous, valid, None)
            same_model = previous is not None and previous.stamp == stamp
            if _has_changes(changes) or not same_model:
                # Stale whatever the vectors: decide without calling the provider.
                result.chunks = len(valid)
                result.stale = True
                result.changes = changes
                result.seconds = time.perf_counter() - started
                return result
        bm25_pending = pool.start_bm25(valid)
        vectors, hits, misses = _embed(
            valid,
            pool.wrap(embedder),
            cache_dir=cfg.cache_dir,
            use_cache=use_cache,
            progress=report,
            seed=seed,
        )
        bm25_hashes = bm25_pending() if bm25_pending is not None else None
    finally:
        pool.close()
    meta: dict[str, Any] = {
        "packer": PACKER_VERSION,
        "provider": stamp,
        "chunking": {
            "chunker": CHUNKER_VERSION,
            "maxChunkChars": cfg.max_chunk_chars,
            "anchorStyle": cfg.anchor_style,
        },
        "configHash": cfg.config_hash(),
        "urlTemplate": cfg.url_template,
    }
    report("index", 0, 1)
    arrays, meta, built = _encode(valid, vectors, meta, bm25_hashes)
    report("index", 1, 1)
    result.chunks = len(valid)
    result.cache_hits = hits
    result.embedded = misses

    if check:
        import io

        buf = io.BytesIO()
        size = write_index(buf, arrays, meta, built_utc=built, generator=GENERATOR)
        result.output_bytes = size
        same = (
            previous is not None and previous.size == size and _file_bytes(output) == buf.getvalue()
        )
        result.up_to_date = same
        result.stale = not same
        result.changes = _changes(previous, valid, size)
        result.seconds = time.perf_counter() - started
        return result

    report("write", 0, 1)
    hasher = xxhash.xxh3_128()

    def write(fh: BinaryIO) -> None:
        write_index(
            cast(BinaryIO, _HashingWriter(fh, hasher)),
            arrays,
            meta,
            built_utc=built,
            generator=GENERATOR,
        )

    size = atomic_write(output, write)
    sidecar_doc = {
        "sidecar": SIDECAR_VERSION,
        "packer": PACKER_VERSION,
        "inputsHash": digest,
        "configHash": cfg.config_hash(),
        "provider": stamp,
        "chunks": len(valid),
        "files": file_hashes,
        "output": {"bytes": size, "xxh3": hasher.hexdigest()},
    }
    atomic_write(
        sidecar,
        lambda fh: fh.write((json.dumps(sidecar_doc, indent=1, sort_keys=True) + "\n").encode()),
    )
    report("write", 1, 1)
    result.output_bytes = size
    result.changes = _changes(previous, valid, size)
    result.seconds = time.perf_counter() - started
    return result


def _file_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


# ---------------------------------------------------------------------------------------------
# The previous index: change report and vector reuse


@dataclass
class _Previous:
    """What a pack needs from the index it replaces."""

    size: int
    digests: dict[str, str]  # chunk id -> hash of (heading path, text)
    sources: set[str]
    seed: dict[bytes, np.ndarray]  # cache key -> vector, when the provider stamp matches
    stamp: dict[str, Any] | None  # the old index's provider stamp


def _chunk_digest(title: str, meta: str, heading: str, text: str) -> str:
    """What a chunk contributes to the index, for the change report."""
    joined = "\x00".join((title, meta, heading, text))
    return xxhash.xxh3_64_hexdigest(joined.encode("utf-8", "surrogatepass"))


def _read_previous(path: Path, embedder: Embedder, *, required: bool = False) -> _Previous | None:
    """Read the chunk table (and, for the same provider stamp, the vectors) of an index.

    A missing or unreadable index is simply no previous index, except for an explicit
    ``--reuse`` path (``required``), which must be a valid index.
    """
    from scidx.embed.cache import cache_key
    from scidx.errors import IndexFormatError
    from scidx.format import array_view, read_header, read_string_table, verify_checksums

    try:
        # A plain read, not a mmap: the packer is about to replace this very file.
        mm = path.read_bytes()
        size = len(mm)
    except OSError as exc:
        if required:
            raise ConfigError(f"--reuse {path}: cannot read it ({exc})") from None
        return None
    try:
        header = read_header(mm, source=str(path), file_size=size)
        # Reused vectors must be exactly what was written: check every checksum first.
        verify_checksums(mm, header)
        ids = read_string_table(mm, header, "chunk.id")
        texts = read_string_table(mm, header, "chunk.text")
        headings = read_string_table(mm, header, "chunk.heading")
        paths = read_string_table(mm, header, "source.path")
        titles = read_string_table(mm, header, "source.title")
        metas = read_string_table(mm, header, "source.meta")
        source_rows = array_view(mm, header, "chunk.source")
        n = len(ids)
        if source_rows.shape != (n,) or (n and int(source_rows.max()) >= len(paths)):
            raise CorruptIndexError(f"{path}: chunk.source does not match source.path")
        digests: dict[str, str] = {}
        for i in range(n):
            row = int(source_rows[i])
            digests[ids[i]] = _chunk_digest(titles[row], metas[row], headings[i], texts[i])
        sources = {paths[i] for i in range(len(paths))}
        seed: dict[bytes, np.ndarray] = {}
        old_stamp = header.meta.get("provider")
        new_stamp = embedder.stamp()
        if isinstance(old_stamp, dict) and all(
            old_stamp.get(k) == new_stamp.get(k)
            for k in ("provider", "model", "dimensions", "normalization")
        ):
            vectors = array_view(mm, header, "vectors")
            if vectors.shape == (n, embedder.dimensions) and source_rows.shape == (n,):
                for i in range(n):
                    row = int(source_rows[i])
                    if row >= len(titles):
                        break
                    heading_path = tuple(h for h in headings[i].split("\x1f") if h)
                    text = embedding_text(titles[row], heading_path, texts[i])
                    key = cache_key(
                        embedder.provider_id, embedder.model_id, embedder.dimensions, text
                    )
                    seed[key] = np.array(vectors[i], dtype=np.float32)
        return _Previous(
            size=size,
            digests=digests,
            sources=sources,
            seed=seed,
            stamp=dict(old_stamp) if isinstance(old_stamp, dict) else None,
        )
    except (IndexFormatError, IndexError, ValueError, UnicodeDecodeError) as exc:
        if required:
            raise CorruptIndexError(f"--reuse {path}: not a valid index ({exc})") from None
        return None


def _has_changes(changes: Mapping[str, Any]) -> bool:
    keys = ("chunksAdded", "chunksChanged", "chunksRemoved", "sourcesAdded", "sourcesRemoved")
    return not changes["previous"] or any(changes[k] for k in keys)


def _changes(
    previous: _Previous | None, records: Sequence[Record], size: int | None
) -> dict[str, Any]:
    """Chunks and sources added / changed / removed against the previous index."""
    titles, metas = _source_fields(records)
    new = {
        r.id: _chunk_digest(titles[r.source], metas[r.source], "\x1f".join(r.heading_path), r.text)
        for r in records
    }
    new_sources = {r.source for r in records}
    old = previous.digests if previous is not None else {}
    old_sources = previous.sources if previous is not None else set()
    return {
        "previous": previous is not None,
        "chunksAdded": sorted(k for k in new if k not in old),
        "chunksChanged": sorted(k for k in new if k in old and old[k] != new[k]),
        "chunksRemoved": sorted(k for k in old if k not in new),
        "sourcesAdded": sorted(new_sources - old_sources),
        "sourcesRemoved": sorted(old_sources - new_sources),
        "bytesBefore": previous.size if previous is not None else None,
        "bytesAfter": size,
    }


def _dry_run(
    records: Sequence[Record],
    embedder: Embedder,
    cache_dir: Path | None,
    use_cache: bool,
    seed: Mapping[bytes, np.ndarray],
) -> dict[str, Any]:
    """Which chunks a real pack would send to the provider, and the estimated cost."""
    from scidx.embed.cache import cache_key

    texts = {}
    for text in _embedding_texts(records):
        key = cache_key(embedder.provider_id, embedder.model_id, embedder.dimensions, text)
        if key not in seed:
            texts[key] = text
    if use_cache and texts:
        cache = EmbeddingCache(default_cache_dir(cache_dir))
        try:
            for key in cache.get_many(list(texts)):
                texts.pop(key, None)
        finally:
            cache.close()
    missing = list(texts.values())
    estimate = getattr(embedder, "estimate", None)
    if callable(estimate):
        plan = dict(estimate(missing))
    else:
        plan = {"chunks": len(missing), "requests": 0, "tokens": None, "cost_usd": 0.0}
    plan["cached"] = len(records) - len(missing)
    return plan


class _HashingWriter:
    """A write-only file wrapper that hashes what passes through (no second read of the output)."""

    def __init__(self, fh: BinaryIO, hasher: Any) -> None:
        self._fh = fh
        self._hasher = hasher

    def write(self, data: bytes | memoryview) -> int:
        self._hasher.update(data)
        return self._fh.write(data)

    def tell(self) -> int:
        return self._fh.tell()

    def flush(self) -> None:
        self._fh.flush()
