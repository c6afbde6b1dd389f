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
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

import xxhash

from scidx.build.arrays import GENERATOR, PACKER_VERSION, encode_records
from scidx.build.chunk import CHUNKER_VERSION
from scidx.build.config import Config, load_config
from scidx.build.embedding import embed_records, make_embedder
from scidx.build.fileio import HashingWriter, atomic_write, file_bytes, file_hash
from scidx.build.incremental import (
    SIDECAR_VERSION,
    change_report,
    dry_run_plan,
    has_changes,
    inputs_digest,
    read_previous,
    read_sidecar,
    sidecar_path,
)
from scidx.build.inputs import collect_inputs
from scidx.build.progress import Progress, noop_progress
from scidx.build.records import Record, validate_records
from scidx.build.sources import read_inputs
from scidx.build.workers import Pool, chunk_all
from scidx.embed.base import Embedder
from scidx.embed.hashing import HashingEmbedder
from scidx.errors import ConfigError
from scidx.index.format import write_index
from scidx.index.urls import parse_url_template

__all__ = ["PackResult", "Progress", "pack_docs", "pack_records"]


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


# ---------------------------------------------------------------------------------------------
# Public entry points


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
    report = progress or noop_progress
    if url_template is not None and parse_url_template(url_template) is None:
        raise ConfigError(
            f"url_template {url_template!r} is not valid: use only the placeholders {{source}}, "
            "{path}, {page} and {anchor}"
        )
    valid = validate_records(records)
    emb = embedder or HashingEmbedder(dimensions=dimensions)
    pool = Pool.start(workers, sum(len(r.text) for r in valid))
    try:
        bm25_pending = pool.start_bm25(valid)
        vectors, hits, misses = embed_records(
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
    arrays, meta, built = encode_records(valid, vectors, meta, bm25_hashes)
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
    report = progress or noop_progress
    cfg = config if isinstance(config, Config) else load_config(config)
    inputs = collect_inputs(cfg)
    raw = read_inputs(inputs, report)
    file_hashes = {item.source: xxhash.xxh3_128_hexdigest(data) for item, data in raw}
    embedder = make_embedder(cfg)
    stamp = embedder.stamp()
    digest = inputs_digest(cfg, stamp, file_hashes)
    output = cfg.output
    sidecar = sidecar_path(output)
    result = PackResult(output=output, files=len(raw))

    if not force and not dry_run:
        previous_side = read_sidecar(sidecar)
        if (
            previous_side is not None
            and previous_side.get("inputsHash") == digest
            and isinstance(previous_side.get("output"), dict)
            and output.is_file()
            and file_hash(output) == previous_side["output"].get("xxh3")
        ):
            result.up_to_date = True
            result.chunks = int(previous_side.get("chunks", 0))
            result.output_bytes = output.stat().st_size
            result.seconds = time.perf_counter() - started
            return result

    previous = read_previous(output, embedder)
    # --no-cache means "embed everything afresh": no disk cache, no vectors from the old output.
    seed = dict(previous.seed) if previous is not None and use_cache else {}
    if reuse is not None:
        other = read_previous(Path(reuse), embedder, required=True)
        if other is not None:
            seed.update(other.seed)

    pool = Pool.start(workers, sum(len(d) for _, d in raw))
    try:
        records = chunk_all(raw, cfg, pool, report)
        valid = validate_records(records)
        if dry_run:
            result.chunks = len(valid)
            result.dry_run = dry_run_plan(valid, embedder, cfg.cache_dir, use_cache, seed)
            result.seconds = time.perf_counter() - started
            return result
        if check:
            changes = change_report(previous, valid, None)
            same_model = previous is not None and previous.stamp == stamp
            if has_changes(changes) or not same_model:
                # Stale whatever the vectors: decide without calling the provider.
                result.chunks = len(valid)
                result.stale = True
                result.changes = changes
                result.seconds = time.perf_counter() - started
                return result
        bm25_pending = pool.start_bm25(valid)
        vectors, hits, misses = embed_records(
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
    arrays, meta, built = encode_records(valid, vectors, meta, bm25_hashes)
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
            previous is not None and previous.size == size and file_bytes(output) == buf.getvalue()
        )
        result.up_to_date = same
        result.stale = not same
        result.changes = change_report(previous, valid, size)
        result.seconds = time.perf_counter() - started
        return result

    report("write", 0, 1)
    hasher = xxhash.xxh3_128()

    def write(fh: BinaryIO) -> None:
        write_index(
            cast(BinaryIO, HashingWriter(fh, hasher)),
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
    result.changes = change_report(previous, valid, size)
    result.seconds = time.perf_counter() - started
    return result
