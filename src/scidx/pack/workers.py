"""The worker-process pool that chunks, tokenises and hash-embeds large corpora in parallel."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from scidx.embed.base import Embedder
from scidx.embed.hashing import HashingEmbedder
from scidx.errors import ConfigError
from scidx.pack.arrays import (
    BM25_BLOCK,
    TermsAndOffsets,
    _bm25_fields,
    bm25_job,
    record_languages,
    snippet_texts,
)
from scidx.pack.chunk import chunk_markdown
from scidx.pack.config import Config
from scidx.pack.frontmatter import normalize_source
from scidx.pack.includes import (
    IncludeReport,
    IncludeSettings,
    expand_includes,
    include_settings,
    map_chunks,
)
from scidx.pack.progress import Progress
from scidx.pack.records import Record
from scidx.pack.sources import ScannedInput, decode_source, read_scanned

__all__ = ["Pool", "auto_workers", "chunk_all"]

# Below this much Markdown, starting worker processes costs more than it saves.
_PARALLEL_MIN_BYTES = 2 << 20


_CHUNK_JOB_BYTES = 256 << 10


_EMBED_JOB_TEXTS = 1024


def auto_workers() -> int:
    """Worker processes to use: $SCIDX_WORKERS if set, else one per core."""
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
    items: Sequence[tuple[str, str, str]],
    max_chunk_chars: int,
    anchor_style: str,
    generator: str,
    includes: IncludeSettings | None = None,
) -> tuple[list[Record], IncludeReport]:
    out: list[Record] = []
    report = IncludeReport()
    for source, path, digest in items:
        # Read here (in the worker): only one job's files are in memory at once.
        text = decode_source(source, read_scanned(source, path, digest))
        expanded = None
        if includes is not None:
            text = normalize_source(text)
            expanded = expand_includes(text, path, includes)
            report.add(source, expanded)
        chunks = chunk_markdown(
            expanded.text if expanded is not None else text,
            source,
            max_chunk_chars=max_chunk_chars,
            anchor_style=anchor_style,  # type: ignore[arg-type]  # validated by config
            generator=generator,
        )
        if expanded is not None:
            chunks = map_chunks(chunks, expanded, text)
        out.extend(Record.from_chunk(c) for c in chunks)
    return out, report


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


class Pool:
    """An optional process pool; with ``executor`` None everything runs in this process."""

    def __init__(self, executor: Any) -> None:
        self.executor = executor

    @classmethod
    def start(cls, workers: int | None, total_bytes: int) -> Pool:
        """A pool of ``workers`` processes (``None``: automatic) if the corpus is big enough."""
        count = auto_workers() if workers is None else workers
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
        self, records: Sequence[Record], *, snippet_offsets: bool = True
    ) -> Callable[[], Iterator[TermsAndOffsets]] | None:
        """Start hashing the BM25 fields in the workers; call the result to collect them.

        Started before embedding so that both keep the workers busy at once. The collector
        yields one block of consecutive records at a time, in order, and lets go of each
        block's result as it goes (see :func:`scidx.index.bm25.build_arrays_from_blocks`).
        """
        if self.executor is None:
            return None
        headings, bodies = _bm25_fields(records)
        del snippet_offsets  # the blocks always carry the hints; build_bm25 picks what it stores
        texts = snippet_texts(records)
        langs = record_languages(records)
        futures = [
            self.executor.submit(
                bm25_job,
                headings[i : i + BM25_BLOCK],
                bodies[i : i + BM25_BLOCK],
                texts[i : i + BM25_BLOCK],
                langs[i : i + BM25_BLOCK] if langs is not None else None,
            )
            for i in range(0, len(bodies), BM25_BLOCK)
        ]

        def collect() -> Iterator[TermsAndOffsets]:
            while futures:
                yield futures.pop(0).result()

        return collect

    def wrap(self, embedder: Embedder) -> Embedder:
        """Fan the offline hashing embedder out to the pool; other providers pass through."""
        if self.executor is None or type(embedder) is not HashingEmbedder:
            return embedder
        return _PoolHashingEmbedder(embedder, self)

    def close(self) -> None:
        """Shut the worker processes down."""
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None


class _PoolHashingEmbedder(Embedder):
    """The hashing embedder, batches computed in worker processes (same vectors, same order)."""

    def __init__(self, inner: HashingEmbedder, pool: Pool) -> None:
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


def chunk_all(
    files: Sequence[ScannedInput],
    cfg: Config,
    pool: Pool,
    progress: Progress,
    includes: IncludeReport | None = None,
) -> list[Record]:
    """Chunk every input file (in the workers when there are any), in input order.

    Each job reads its own files again and checks them against their scanned hashes. Includes
    are expanded (:mod:`scidx.pack.includes`); ``includes`` collects what they did.
    """
    settings = include_settings(cfg.root, cfg.generator)
    jobs: list[tuple[Any, ...]] = []
    batch: list[tuple[str, str, str]] = []
    size = 0
    for scanned in files:
        batch.append((scanned.item.source, str(scanned.item.path), scanned.digest))
        size += scanned.size
        if size >= _CHUNK_JOB_BYTES:
            jobs.append((batch, cfg.max_chunk_chars, cfg.anchor_style, cfg.generator, settings))
            batch, size = [], 0
    if batch:
        jobs.append((batch, cfg.max_chunk_chars, cfg.anchor_style, cfg.generator, settings))
    records: list[Record] = []
    done = 0
    for job, (result, report) in zip(jobs, pool.map(_chunk_job, jobs), strict=True):
        records.extend(result)
        if includes is not None:
            includes.merge(report)
        done += len(job[0])
        progress("chunk", done, len(files))
    return records
