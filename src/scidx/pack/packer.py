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

import io
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

import xxhash

from scidx.embed.base import Embedder
from scidx.embed.hashing import HashingEmbedder
from scidx.errors import ConfigError, IndexFormatError, OutputError
from scidx.index.format import write_index
from scidx.index.urls import parse_url_template, source_root_problem, url_template_problem
from scidx.index.vectors import DEFAULT_ENCODING, ENCODINGS
from scidx.index.versions import NO_VERSION
from scidx.pack.arrays import (
    GENERATOR,
    PACKER_VERSION,
    build_bm25,
    encode_records,
    record_texts,
    release_freed_memory,
)
from scidx.pack.chunk import CHUNKER_VERSION
from scidx.pack.config import Config, load_config, show_value
from scidx.pack.embedding import embed_records, fit_to_corpus, make_embedder, provider_arrays
from scidx.pack.fileio import (
    HashingWriter,
    atomic_write,
    check_output_target,
    check_output_writable,
    check_replaceable,
    file_bytes,
    file_hash,
)
from scidx.pack.includes import IncludeReport, included_files_changed
from scidx.pack.incremental import (
    SIDECAR_VERSION,
    ChangeReport,
    DryRunPlan,
    Previous,
    change_report,
    dry_run_plan,
    inputs_digest,
    read_previous,
    read_sidecar,
    sidecar_path,
)
from scidx.pack.inputs import collect_inputs
from scidx.pack.pages import retitle, source_pages
from scidx.pack.progress import Progress, noop_progress
from scidx.pack.records import Record, validate_records
from scidx.pack.site import describe_urls
from scidx.pack.sources import ScannedInput, read_input, scan_inputs
from scidx.pack.versions import Versions, describe_versions
from scidx.pack.windows import WindowVectors, embed_windows
from scidx.pack.workers import Pool, chunk_all

_log = logging.getLogger("scidx.pack")

__all__ = ["PackResult", "Progress", "pack_docs", "pack_records"]


@dataclass
class PackResult:
    """What a pack did.

    Attributes:
        output: The index path (None for an in-memory pack).
        up_to_date: True when nothing was written because the inputs were unchanged.
        files: Number of input files (0 for records).
        chunks: Number of chunks in the index.
        cache_hits: Distinct texts whose vector came from the cache or the previous index.
        embedded: Distinct texts the provider embedded.
        duplicates: Chunks whose text another chunk has (embedded once, vector reused).
        output_bytes: Size of the index.
        seconds: Wall time of the pack.
        data: The index bytes, for an in-memory pack only.
        changes: Chunks and sources added/changed/removed against the previous index.
        stale: With ``check``: the output is out of date.
        dry_run: With ``dry_run``: what would be sent to the provider.
        truncated: Chunk ids whose text the provider cut to its input limit (the index keeps
            the whole text).
        embed_seconds: Wall time spent getting vectors (cache and provider).
        urls: Where the index's URLs come from (the template, derived from the generator's
            config or from ``urlTemplate``), or why there are none; ``""`` for records.
        generator: The generator the Markdown was read as and where that came from
            (``mkdocs (from docs/en/mkdocs.yml)``); ``""`` for records.
        detection: The same as JSON (``name``, ``from``, ``config``, ``reason``).
        windows: Extra window rows stored for chunks longer than the provider's input limit
            (FORMAT.md §2.11); 0 for a provider without one.
        window_chunks: Chunks that have extra windows.
        windows_embedded: Distinct window texts the provider embedded.
        windows_cached: Distinct window texts found in the cache.
        versions: The docs versions and the default one, and where they came from (``""``
            for an unversioned site).
        includes: What the include directives did (:mod:`scidx.pack.includes`): expanded,
            and dropped because unresolvable (missing, outside the project, a loop, too big).
    """

    output: Path | None
    up_to_date: bool = False
    files: int = 0
    chunks: int = 0
    cache_hits: int = 0
    embedded: int = 0
    duplicates: int = 0
    output_bytes: int = 0
    seconds: float = 0.0
    data: bytes | None = None
    changes: ChangeReport | None = None
    stale: bool = False
    dry_run: DryRunPlan | None = None
    truncated: list[str] = field(default_factory=list)
    embed_seconds: float = 0.0
    urls: str = ""
    generator: str = ""
    detection: dict[str, str] | None = None
    windows: int = 0
    window_chunks: int = 0
    windows_embedded: int = 0
    windows_cached: int = 0
    includes: IncludeReport = field(default_factory=IncludeReport)
    versions: str = ""
    #: What the user should know about the pack (issue 42: a model that does not cover the
    #: pages' language).
    warnings: list[str] = field(default_factory=list)

    def add_windows(self, found: WindowVectors) -> None:
        """Record what :func:`~scidx.pack.windows.embed_windows` did."""
        self.windows = found.count
        self.window_chunks = found.chunks
        self.windows_embedded = found.embedded
        self.windows_cached = found.hits

    @property
    def distinct(self) -> int:
        """Distinct chunk texts: what the cache and the provider see."""
        return self.chunks - self.duplicates

    @property
    def chunks_per_second(self) -> float | None:
        """Chunks embedded by the provider per second of embedding, or None if none were."""
        if not self.embedded or self.embed_seconds <= 0:
            return None
        return self.embedded / self.embed_seconds

    def to_dict(self) -> dict[str, Any]:
        """The summary as a JSON-able dict (``--json``)."""
        out: dict[str, Any] = {
            "output": str(self.output) if self.output is not None else None,
            "upToDate": self.up_to_date,
            "files": self.files,
            "chunks": self.chunks,
            "cacheHits": self.cache_hits,
            "embedded": self.embedded,
            "duplicates": self.duplicates,
            "outputBytes": self.output_bytes,
            "seconds": round(self.seconds, 3),
        }
        if self.truncated:
            out["truncated"] = list(self.truncated)
        if self.windows:
            out["windows"] = {
                "rows": self.windows,
                "chunks": self.window_chunks,
                "embedded": self.windows_embedded,
                "cacheHits": self.windows_cached,
            }
        rate = self.chunks_per_second
        if rate is not None:
            out["chunksPerSecond"] = round(rate, 1)
        if self.changes is not None:
            out["changes"] = self.changes.to_dict()
        if self.stale:
            out["stale"] = True
        if self.dry_run is not None:
            out["dryRun"] = self.dry_run.to_dict()
        if self.urls:
            out["urls"] = self.urls
        if self.detection is not None:
            out["generator"] = dict(self.detection)
        if self.versions:
            out["versions"] = self.versions
        if self.includes.resolved or self.includes.unresolved:
            out["includes"] = self.includes.to_dict()
        return out


# ---------------------------------------------------------------------------------------------
# Public entry points


def _check_record_options(
    url_template: str | None, vectors: str, output: str | Path | None, source_root: str | None
) -> None:
    """Refuse :func:`pack_records` options that cannot make an index, before any work."""
    if url_template is not None and parse_url_template(url_template) is None:
        problem = url_template_problem(url_template) if isinstance(url_template, str) else ""
        raise ConfigError(
            f"url_template {show_value(url_template)} is not valid"
            + (f": {problem}" if problem else "")
            + "; use only the placeholders {source}, {path}, {page} and {anchor} in an "
            "http(s) or relative URL"
        )
    if vectors not in ENCODINGS:
        raise ConfigError(
            f"vectors={vectors!r} is not a vector encoding; use one of {', '.join(ENCODINGS)}"
        )
    if output is not None:
        check_output_target(Path(output))
    if source_root is not None and source_root_problem(source_root):
        raise ConfigError(f"source_root {source_root!r} {source_root_problem(source_root)}")


def _records_meta(
    emb: Embedder, url_template: str | None, source_root: str | None
) -> dict[str, Any]:
    """The header meta of an index packed from records (no config, so no chunking or hash)."""
    return {
        "packer": PACKER_VERSION,
        "provider": emb.stamp(),
        "chunking": None,
        "configHash": None,
        "urlTemplate": url_template,
        "fusion": emb.fusion(),
        "sourceRoot": source_root,
    }


def pack_records(
    records: Iterable[Record | Mapping[str, Any]],
    output: str | Path | None,
    *,
    embedder: Embedder | None = None,
    dimensions: int = 512,
    use_cache: bool = True,
    cache_dir: str | Path | None = None,
    url_template: str | None = None,
    source_root: str | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    vectors: str = DEFAULT_ENCODING,
    snippet_offsets: bool = True,
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
        source_root: The folder URL placeholders are relative to (``sourceRoot``).
        progress: ``progress(stage, done, total)`` callback.
        workers: Processes for offline embedding and BM25 tokenising, as for
            :func:`pack_docs`; the bytes never depend on it.
        vectors: Vector encoding: ``"float32"``, ``"int8"`` or ``"binary"`` (as the config's
            ``vectors`` key; see :mod:`scidx.index.vectors`).
        snippet_offsets: Store which eighth of each chunk's text holds each of its terms, so
            a snippet reads and scans only that part (as the config's ``snippetOffsets`` key;
            one byte per posting).

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
    _check_record_options(url_template, vectors, output, source_root)
    valid = validate_records(records)
    emb = embedder or HashingEmbedder(dimensions=dimensions)
    if getattr(emb, "counts", True) is None:  # a corpus-weighted provider not yet fitted
        fit_to_corpus(emb, record_texts(valid))
    pool = Pool.start(workers, sum(len(r.text) for r in valid))
    try:
        bm25_pending = pool.start_bm25(valid, snippet_offsets=snippet_offsets)
        embed_started = time.perf_counter()
        vector_arrays, hits, misses, duplicates, found = _embed_with_windows(
            valid, emb, pool, Path(cache_dir) if cache_dir else None, use_cache, report, vectors
        )
        embed_seconds = time.perf_counter() - embed_started
        report("index", 0, 1)
        # Read the workers' term blocks while the pool is open (closing cancels pending jobs).
        pending = bm25_pending() if bm25_pending is not None else None
        bm25 = build_bm25(valid, pending, snippet_offsets=snippet_offsets)
    finally:
        pool.close()
    meta = _records_meta(emb, url_template, source_root)
    warnings: list[str] = []
    meta.update(_model_languages(emb, valid, "en", warnings))
    if found.meta is not None:
        meta["windows"] = found.meta
    arrays, meta, built = encode_records(valid, vector_arrays, meta, bm25)
    del vector_arrays, bm25  # `arrays` holds what is left of them
    report("index", 1, 1)
    result = PackResult(
        output=Path(output) if output is not None else None,
        chunks=len(valid),
        cache_hits=hits,
        embedded=misses,
        duplicates=duplicates,
        truncated=_truncated(emb),
        embed_seconds=embed_seconds,
    )
    result.add_windows(found)
    result.warnings = warnings
    if output is None:
        result.data = _in_memory(arrays, meta, built)
        result.output_bytes = len(result.data)
    else:
        report("write", 0, 1)
        write = _write_once(arrays, meta, built)
        del arrays  # freed once written, before the check maps the new file
        result.output_bytes = atomic_write(Path(output), write, check=verify_written)
        report("write", 1, 1)
    result.seconds = time.perf_counter() - started
    return result


def _embed_with_windows(
    valid: list[Record],
    emb: Embedder,
    pool: Pool,
    cache_dir: Path | None,
    use_cache: bool,
    report: Progress,
    encoding: str,
) -> tuple[dict[str, Any], int, int, int, WindowVectors]:
    """Every record's vector rows and its extra windows': arrays, hits, misses, dups, windows."""
    vector_arrays, hits, misses, duplicates = embed_records(
        valid,
        pool.wrap(emb),
        cache_dir=cache_dir,
        use_cache=use_cache,
        progress=report,
        encoding=encoding,
    )
    found = embed_windows(
        valid, emb, cache_dir=cache_dir, use_cache=use_cache, progress=report, encoding=encoding
    )
    vector_arrays.update(found.arrays)
    vector_arrays.update(provider_arrays(emb))
    return vector_arrays, hits, misses, duplicates, found


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
        config: A :class:`~scidx.pack.config.Config` or the path of a config file.
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
    # --check and --dry-run write nothing, so they replace nothing either.
    run = _gather(config, report, replace=None if check or dry_run else force)
    try:
        return _pack_run(run, report, started, force, use_cache, workers, check, dry_run, reuse)
    finally:
        # The pack made the embedder, so it ends it: a provider's HTTP connection pool
        # (openai) is closed now, not whenever a long-lived process (mkdocs serve) collects it.
        close = getattr(run.embedder, "close", None)
        if callable(close):
            close()


def _pack_run(
    run: _Run,
    report: Progress,
    started: float,
    force: bool,
    use_cache: bool,
    workers: int | None,
    check: bool,
    dry_run: bool,
    reuse: str | Path | None,
) -> PackResult:
    """The body of :func:`pack_docs` once its inputs are gathered (the same arguments)."""
    result = PackResult(output=run.cfg.output, files=len(run.files))
    result.urls = describe_urls(run.cfg.site, run.cfg.url_template, run.cfg.generator)
    detection = run.cfg.detection
    if detection is not None:
        result.generator = detection.describe(run.cfg.root)
        result.detection = detection.to_dict(run.cfg.root)
    result.versions = describe_versions(run.cfg.versions)
    if not force and not dry_run and _mark_up_to_date(run, result):
        if not check:
            _remember_model(run.embedder)
        return _finish(result, started)
    previous = read_previous(run.cfg.output, run.embedder, encoding=run.cfg.vectors)
    seed = _reusable_vectors(
        run.embedder, previous, use_cache=use_cache, reuse=reuse, encoding=run.cfg.vectors
    )
    pool = Pool.start(workers, sum(f.size for f in run.files))
    try:
        valid = validate_records(
            retitle(
                run.cfg.site, chunk_all(run.files, run.cfg, pool, report, includes=result.includes)
            )
        )
        valid, language = _page_languages(run.cfg, valid)
        result.chunks = len(valid)
        if dry_run:
            result.dry_run = dry_run_plan(valid, run.embedder, run.cfg.cache_dir, use_cache, seed)
            return _finish(result, started)
        if check and _stale_before_embedding(run, previous, valid, result):
            return _finish(result, started)
        vector_arrays, bm25 = _embed_and_index(run, valid, pool, use_cache, seed, result, report)
    finally:
        pool.close()
    pages = source_pages(run.cfg.site, valid, run.cfg.root)
    versions = _source_versions(run.cfg.versions, valid)
    header = _header_meta(run)
    header["language"] = language
    if run.cfg.locale is not None:
        header["locale"] = run.cfg.locale
    header.update(_model_languages(run.embedder, valid, language, result.warnings))
    if "window.chunk" in vector_arrays:
        header["windows"] = run.embedder.window_policy()
    arrays, meta, built = encode_records(valid, vector_arrays, header, bm25, pages, versions)
    del vector_arrays, bm25  # `arrays` holds what is left of them
    report("index", 1, 1)
    if check:
        _compare_with_output(run, previous, _in_memory(arrays, meta, built), result)
    else:
        report("write", 0, 1)
        write = _write_once(arrays, meta, built)
        del arrays  # freed once written, before the check maps the new file
        result.output_bytes = _write_output(
            run, write, chunks=len(valid), includes=result.includes.files
        )
        report("write", 1, 1)
        _remember_model(run.embedder)
    result.changes = change_report(previous, valid, result.output_bytes)
    return _finish(result, started)


def _embed_and_index(
    run: _Run,
    valid: list[Record],
    pool: Pool,
    use_cache: bool,
    seed: Any,
    result: PackResult,
    report: Progress,
) -> tuple[Any, Any]:
    """Embed the chunks (cache and reused vectors first) while the pool builds the BM25 terms.

    Fills ``result``'s cache counts, embedding time and truncations; returns the vector arrays
    and the BM25 arrays, read while the pool is still open (closing it cancels pending jobs).
    """
    bm25_pending = pool.start_bm25(valid, snippet_offsets=run.cfg.snippet_offsets)
    embed_started = time.perf_counter()
    vector_arrays, result.cache_hits, result.embedded, result.duplicates = embed_records(
        valid,
        pool.wrap(run.embedder),
        cache_dir=run.cfg.cache_dir,
        use_cache=use_cache,
        progress=report,
        seed=seed,
        encoding=run.cfg.vectors,
    )
    found = embed_windows(
        valid,
        run.embedder,
        cache_dir=run.cfg.cache_dir,
        use_cache=use_cache,
        progress=report,
        encoding=run.cfg.vectors,
        seed=seed,
    )
    vector_arrays.update(found.arrays)
    vector_arrays.update(provider_arrays(run.embedder))
    result.add_windows(found)
    result.embed_seconds = time.perf_counter() - embed_started
    result.truncated = _truncated(run.embedder)
    report("index", 0, 1)
    # Read the workers' term blocks while the pool is open (closing cancels pending jobs).
    bm25 = build_bm25(
        valid,
        bm25_pending() if bm25_pending is not None else None,
        snippet_offsets=run.cfg.snippet_offsets,
    )
    return vector_arrays, bm25


def _remember_model(embedder: Embedder) -> None:
    """Let a provider note, outside the index, where its model is (after a pack succeeded).

    The local provider records the model folder (scidx.embed.model_record), so the index is
    searchable on this machine with no --model-dir; a failed pack changes nothing.
    """
    remember = getattr(embedder, "remember_location", None)
    if callable(remember):
        remember()


def _compare_with_output(
    run: _Run, previous: Previous | None, data: bytes, result: PackResult
) -> None:
    """``--check``: whether the index just built in memory equals the existing output."""
    result.output_bytes = len(data)
    result.up_to_date = (
        previous is not None and previous.size == len(data) and file_bytes(run.cfg.output) == data
    )
    result.stale = not result.up_to_date


@dataclass(frozen=True)
class _Run:
    """What goes into one pack: the config, the input bytes and the provider."""

    cfg: Config
    files: list[ScannedInput]  # sizes and hashes; the bytes are read again by the chunker
    file_hashes: dict[str, str]
    embedder: Embedder
    stamp: dict[str, Any]
    digest: str  # content hash of everything that goes in (the sidecar's inputsHash)


def _gather(config: Config | str | Path, report: Progress, *, replace: bool | None) -> _Run:
    """Read the config and every input.

    ``replace``: check that the output may be replaced (anything with ``--force``, True);
    None when nothing will be written.
    """
    cfg = config if isinstance(config, Config) else load_config(config)
    # Before any work, and before anything reads the previous index: a FIFO would block, a
    # device node would be replaced, the config or a foreign file would be overwritten.
    check_output_target(cfg.output)
    check_output_target(sidecar_path(cfg.output))
    inputs = collect_inputs(cfg)  # refuses an output that is a matched input (exit 1)
    if replace is not None:
        check_replaceable(cfg.output, config_path=cfg.path, force=replace)
        check_output_writable(cfg.output)  # before minutes of model time or money
    files = scan_inputs(inputs, report)
    file_hashes = {f.item.source: f.digest for f in files}
    embedder = make_embedder(cfg)
    # A corpus-weighted provider (static) counts the inputs' tokens before its stamp exists.
    fit_to_corpus(embedder, (read_input(f.item).decode("utf-8", "replace") for f in files))
    stamp = embedder.stamp()
    return _Run(cfg, files, file_hashes, embedder, stamp, inputs_digest(cfg, stamp, file_hashes))


def _finish(result: PackResult, started: float) -> PackResult:
    result.seconds = time.perf_counter() - started
    return result


def _mark_up_to_date(run: _Run, result: PackResult) -> bool:
    """True (and ``result`` filled in) when the sidecar says the output is current and intact."""
    output = run.cfg.output
    side = read_sidecar(sidecar_path(output))
    if (
        side is None
        or side.get("inputsHash") != run.digest
        or not isinstance(side.get("output"), dict)
        or not output.is_file()
        or file_hash(output) != side["output"].get("xxh3")
        or included_files_changed(run.cfg.root, side.get("includes"))
    ):
        return False
    result.up_to_date = True
    result.chunks = int(side.get("chunks", 0))
    result.output_bytes = output.stat().st_size
    return True


def _reusable_vectors(
    embedder: Embedder,
    previous: Previous | None,
    *,
    use_cache: bool,
    reuse: str | Path | None,
    encoding: str,
) -> dict[bytes, Any]:
    """Vectors that need no provider call: the previous output's, then ``reuse``'s."""
    # --no-cache means "embed everything afresh": no disk cache, no vectors from the old output.
    seed = dict(previous.seed) if previous is not None and use_cache else {}
    if reuse is not None:
        other = read_previous(Path(reuse), embedder, required=True, encoding=encoding)
        if other is not None:
            seed.update(other.seed)
    return seed


def _stale_before_embedding(
    run: _Run, previous: Previous | None, valid: list[Record], result: PackResult
) -> bool:
    """``--check``: a changed chunk table or provider is stale at once, with no provider call."""
    changes = change_report(previous, valid, None)
    if changes.any or previous is None or previous.stamp != run.stamp:
        result.stale = True
        result.changes = changes
        return True
    return False


def _header_meta(run: _Run) -> dict[str, Any]:
    return {
        "packer": PACKER_VERSION,
        "provider": run.stamp,
        "chunking": {
            "chunker": CHUNKER_VERSION,
            "maxChunkChars": run.cfg.max_chunk_chars,
            "anchorStyle": run.cfg.anchor_style,
            "generator": run.cfg.generator,
        },
        "configHash": run.cfg.config_hash(),
        "urlTemplate": run.cfg.url_template,
        "fusion": run.embedder.fusion(),
        "sourceRoot": run.cfg.source_root,
        # Only for a versioned site (format 10), so other headers stay as they were.
        **({"versions": run.cfg.versions.meta()} if run.cfg.versions is not None else {}),
    }


def _source_versions(versions: Versions | None, records: list[Record]) -> dict[str, int] | None:
    """Each source's row into ``versions.names`` (``source.version``), or None unversioned."""
    if versions is None:
        return None
    rows = {name: k for k, name in enumerate(versions.names)}
    out: dict[str, int] = {}
    for record in records:
        if record.source not in out:
            version = versions.of(record.source)
            out[record.source] = NO_VERSION if version is None else rows[version]
    return out


def _page_languages(cfg: Config, valid: list[Record]) -> tuple[list[Record], str]:
    """The records with their page languages, and the index's language (issue 42)."""
    from scidx.pack.language import assign_languages, site_languages

    return assign_languages(valid, site_languages(cfg.language, cfg.generator, cfg.root))


def _model_languages(
    embedder: Embedder, valid: list[Record], language: str, warnings: list[str]
) -> dict[str, Any]:
    """``meta.modelLanguages`` and the warning for pages the model does not cover (issue 42)."""
    from scidx.embed.languages import uncovered_warning

    covered = embedder.languages()
    if covered is None:
        return {}
    pages = sorted({r.language or language for r in valid})
    warning = uncovered_warning(embedder.model_id, covered, pages)
    if warning:
        warnings.append(warning)
        _log.warning("%s", warning)
    return {"modelLanguages": list(covered)}


def _truncated(embedder: Embedder) -> list[str]:
    """The chunks a provider cut to its input limit (providers that track it: ``truncated``)."""
    found = getattr(embedder, "truncated", None)
    return sorted(set(found)) if isinstance(found, list) else []


def verify_written(path: Path) -> None:
    """Verify a freshly written index before it replaces the previous one (FORMAT.md §1.7).

    Reads the file back as a reader would, with ``verify=True``: every checksum, string table,
    posting, vector norm and BM25 weight. A failure is a packer bug, so it is reported as an
    output error and the previous index stays in place.

    Raises:
        OutputError: The written file does not verify.
    """
    from scidx.index.index import load

    try:
        load(path, verify=True).close()
    except IndexFormatError as exc:
        raise OutputError(
            f"the index written to {path} failed its own verification ({exc}); the previous "
            "index is unchanged. This is a scidx bug: please report it."
        ) from None


def _in_memory(arrays: Mapping[str, Any], meta: Mapping[str, Any], built: str) -> bytes:
    buf = io.BytesIO()
    write_index(buf, dict(arrays), dict(meta), built_utc=built, generator=GENERATOR)
    return buf.getvalue()


def _write_once(
    arrays: dict[str, Any], meta: Mapping[str, Any], built: str
) -> Callable[[BinaryIO], None]:
    """A writer of the index that lets go of ``arrays`` as soon as it has written them.

    The check after writing maps the whole new file; with the arrays still held, the pack's
    peak memory would be their size plus the file's.
    """
    held = [arrays]

    def write(fh: BinaryIO) -> None:
        write_index(fh, held.pop(), dict(meta), built_utc=built, generator=GENERATOR)
        release_freed_memory()

    return write


def _write_output(
    run: _Run,
    write_index_to: Callable[[BinaryIO], None],
    *,
    chunks: int,
    includes: Mapping[str, str] | None = None,
) -> int:
    """Write the index, then its sidecar, each atomically; return the index size."""
    hasher = xxhash.xxh3_128()

    def write(fh: BinaryIO) -> None:
        write_index_to(cast(BinaryIO, HashingWriter(fh, hasher)))

    size = atomic_write(run.cfg.output, write, check=verify_written)
    sidecar_doc = {
        "sidecar": SIDECAR_VERSION,
        "packer": PACKER_VERSION,
        "inputsHash": run.digest,
        "configHash": run.cfg.config_hash(),
        "provider": run.stamp,
        "chunks": chunks,
        "files": run.file_hashes,
        "output": {"bytes": size, "xxh3": hasher.hexdigest()},
    }
    if includes:
        # Included files are no inputs of their own: a change to one must still repack.
        sidecar_doc["includes"] = dict(sorted(includes.items()))
    atomic_write(
        sidecar_path(run.cfg.output),
        lambda fh: fh.write((json.dumps(sidecar_doc, indent=1, sort_keys=True) + "\n").encode()),
    )
    return size
