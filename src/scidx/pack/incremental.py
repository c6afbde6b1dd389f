"""Incremental packing: the inputs sidecar, reuse of a previous index, change reports, dry runs."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xxhash

from scidx.embed.base import Embedder
from scidx.embed.hashing import embedding_text
from scidx.errors import ConfigError, CorruptIndexError
from scidx.index.highlight import CODE_END, CODE_START
from scidx.pack.arrays import (
    GENERATOR,
    PACKER_VERSION,
    _source_fields,
    built_utc,
    canonical_json,
    record_texts,
)
from scidx.pack.cache import EmbeddingCache, default_cache_dir
from scidx.pack.config import Config
from scidx.pack.records import Record
from scidx.tokenize import TOKENIZER_VERSION

if TYPE_CHECKING:
    from scidx.index.format import Header

__all__ = [
    "SIDECAR_VERSION",
    "ChangeReport",
    "DryRunPlan",
    "Previous",
    "change_report",
    "chunk_digest",
    "dry_run_plan",
    "inputs_digest",
    "read_previous",
    "read_sidecar",
    "sidecar_path",
]

SIDECAR_VERSION = 1


def inputs_digest(config: Config, stamp: Mapping[str, Any], files: Mapping[str, str]) -> str:
    """Content hash of everything a pack reads: config, provider stamp, input files, versions."""
    h = xxhash.xxh3_128()
    h.update(
        canonical_json(
            {
                "packer": PACKER_VERSION,
                # A new tokenizer changes the BM25 arrays and hashing vectors of the same inputs.
                "tokenizer": TOKENIZER_VERSION,
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


def read_sidecar(path: Path) -> dict[str, Any] | None:
    """The <output>.inputs sidecar as a dict, or None if missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class Previous:
    """What a pack needs from the index it replaces."""

    size: int
    digests: dict[str, str]  # chunk id -> hash of (heading path, text)
    sources: set[str]
    seed: dict[bytes, np.ndarray]  # cache key -> vector, when the provider stamp matches
    stamp: dict[str, Any] | None  # the old index's provider stamp


def chunk_digest(title: str, meta: str, heading: str, text: str) -> str:
    """What a chunk contributes to the index, for the change report."""
    joined = "\x00".join((title, meta, heading, text))
    return xxhash.xxh3_64_hexdigest(joined.encode("utf-8", "surrogatepass"))


# What _seed_vectors reads of the chunk table: N, chunk.source, source.title, chunk.heading,
# chunk.text and the texts the vectors were made from (clean text, or the raw text).
_Tables = tuple[int, Any, Any, Any, Any, Any]


def _seed_vectors(
    mm: bytes, header: Header, embedder: Embedder, encoding: str, tables: _Tables
) -> dict[bytes, np.ndarray]:
    """The previous index's vectors that may seed the cache, by cache key (verified rows only).

    Only for the same provider stamp (and, for hashing, the same tokenizer), never when they
    are less precise than ``encoding`` asks for, and only rows whose ``vectors.key`` still
    matches their text and vector.
    """
    from scidx.index.format import array_view
    from scidx.index.keys import VECTOR_KEY_ARRAY, vector_array_names, vector_key
    from scidx.index.vectors import open_vectors
    from scidx.pack.cache import cache_key

    n, source_rows, titles, headings, texts, bodies = tables
    seed: dict[bytes, np.ndarray] = {}
    old_stamp = header.meta.get("provider")
    new_stamp = embedder.stamp()
    bm25_meta = header.meta.get("bm25")
    old_tokenizer = bm25_meta.get("tokenizer") if isinstance(bm25_meta, dict) else None
    # Hashing vectors are made from the tokenizer's terms: an index from another tokenizer
    # version has vectors this one would not produce, so none of them is reused.
    same_tokenizer = old_tokenizer == TOKENIZER_VERSION or new_stamp.get("provider") != "hashing"
    if (
        same_tokenizer
        and isinstance(old_stamp, dict)
        and all(
            old_stamp.get(k) == new_stamp.get(k)
            # `table` and `weights`: a static index's vectors depend on its corpus's counts.
            for k in ("provider", "model", "dimensions", "normalization", "table", "weights")
        )
    ):
        store = open_vectors(mm, header, n, embedder.dimensions)
        lossy = store.encoding != "float32" and encoding == "float32"
        # Without per-row keys (packer 3 and older) nothing binds a row to its text: such
        # an index's vectors are not reused (the disk cache still is).
        keys = (
            array_view(mm, header, VECTOR_KEY_ARRAY, dtype="<u8", ndim=1)
            if VECTOR_KEY_ARRAY in header.arrays
            else None
        )
        shapes = {name: info.shape for name, info in header.arrays.items()}
        stored = [array_view(mm, header, name) for name in vector_array_names(shapes, n)]
        verified: dict[int, str] = {}  # chunk row -> the text its main vector was made from
        if not lossy and keys is not None and keys.shape == (n,) and source_rows.shape == (n,):
            vectors = store.decode_all()
            for i in range(n):
                row = int(source_rows[i])
                if row >= len(titles):
                    break
                rows = [a[i] for a in stored]
                if int(keys[i]) != vector_key(titles[row], headings[i], texts[i], rows):
                    continue  # swapped or altered: embed this text afresh
                heading_path = tuple(h for h in headings[i].split("\x1f") if h)
                body = bodies[i].replace(CODE_START, "").replace(CODE_END, "")
                text = embedding_text(titles[row], heading_path, body)
                key = cache_key(embedder.provider_id, embedder.model_id, embedder.dimensions, text)
                seed[key] = np.array(vectors[i], dtype=np.float32)
                verified[i] = text
        seed.update(_seed_windows(mm, header, embedder, (store.encoding, encoding), n, verified))
    return seed


def _seed_windows(
    mm: bytes,
    header: Header,
    embedder: Embedder,
    encodings: tuple[str, str],
    n: int,
    verified: dict[int, str],
) -> dict[bytes, np.ndarray]:
    """The previous index's window rows (FORMAT.md §2.11) by the cache key of their text.

    Window rows carry no key of their own: they are bound to their chunk by ``window.chunk``
    and to its text by the cut, which only the tokenizer and ``meta.windows`` decide. So they
    are reused only for chunks whose main row was verified (``verified``), only when the
    previous index cut windows as this provider would (same ``tokens`` and ``overlap``), and
    only when the cut of the text gives as many windows as the index holds for that chunk.
    ``encodings`` is (the previous index's vector encoding, the one this pack writes).
    """
    from scidx.index.windows import open_windows
    from scidx.pack.cache import cache_key

    policy, old = embedder.window_policy(), header.meta.get("windows")
    if policy is None or not verified or not isinstance(old, dict):
        return {}
    if any(old.get(k) != policy.get(k) for k in ("tokens", "overlap")):
        return {}
    windows = open_windows(mm, header, n, embedder.dimensions, encodings[0])
    if windows is None or not len(windows):
        return {}
    if windows.store.encoding != "float32" and encodings[1] == "float32":
        return {}  # int8 window rows are less precise than a float32 index asks for
    starts, rows = windows.segments()
    ends = np.r_[starts[1:], len(windows)]
    runs = [(int(r), int(a), int(b)) for r, a, b in zip(rows, starts, ends, strict=True)]
    runs = [run for run in runs if run[0] in verified]
    texts = embedder.windows([verified[row] for row, _, _ in runs]) if runs else []
    vectors = windows.store.decode_all()
    seed: dict[bytes, np.ndarray] = {}
    for (_, start, end), parts in zip(runs, texts, strict=True):
        if len(parts) != end - start:
            continue  # another cut (tokenizer or window policy changed): embed afresh
        for text, vector in zip(parts, vectors[start:end], strict=True):
            key = cache_key(embedder.provider_id, embedder.model_id, embedder.dimensions, text)
            seed[key] = np.array(vector, dtype=np.float32)
    return seed


def read_previous(
    path: Path,
    embedder: Embedder,
    *,
    required: bool = False,
    encoding: str = "float32",
) -> Previous | None:
    """Read the chunk table (and, for the same provider stamp, the vectors) of an index.

    A missing or unreadable index is simply no previous index, except for an explicit
    ``--reuse`` path (``required``), which must be a valid index. Its vectors are offered for
    reuse (decoded, to be re-encoded as ``encoding``) unless they are less precise than
    ``encoding`` asks for: int8 or binary vectors are not reused for a float32 index.
    """
    from scidx.errors import IndexFormatError
    from scidx.index.columns import read_column
    from scidx.index.format import array_view, read_header, read_string_table, verify_checksums
    from scidx.index.ids import read_chunk_ids
    from scidx.index.opening import open_regular
    from scidx.index.texts import open_texts, text_columns

    try:
        # A plain read, not a mmap: the packer is about to replace this very file. Opened
        # non-blocking and refused unless a regular file: a FIFO would block the pack.
        with os.fdopen(open_regular(str(path)), "rb") as fh:
            mm = fh.read()
        size = len(mm)
    except (OSError, IndexFormatError) as exc:
        if required:
            raise ConfigError(f"--reuse {path}: cannot read it ({exc})") from None
        return None
    try:
        header = read_header(mm, source=str(path), file_size=size)
        # Reused vectors must be exactly what was written: check every checksum first.
        verify_checksums(mm, header)
        ids = read_chunk_ids(mm, header)
        texts, plains = text_columns(open_texts(mm, header, len(ids)))
        # Vectors were made from the clean text when the index has one (packer 3).
        bodies = plains if plains is not None else texts
        headings = read_column(mm, header, "chunk.heading", len(ids))
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
            digests[ids[i]] = chunk_digest(titles[row], metas[row], headings[i], texts[i])
        sources = {paths[i] for i in range(len(paths))}
        old_stamp = header.meta.get("provider")
        tables = (n, source_rows, titles, headings, texts, bodies)
        seed = _seed_vectors(mm, header, embedder, encoding, tables)
        return Previous(
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


@dataclass(frozen=True)
class ChangeReport:
    """How a new index differs from the one it replaces (chunk ids and source paths, sorted).

    Attributes:
        previous: Whether there was a previous index to compare with.
        chunks_added: Ids of chunks that are new.
        chunks_changed: Ids of chunks whose text, headings, page title or front matter changed.
        chunks_removed: Ids of chunks that are gone.
        sources_added: Source paths that are new.
        sources_removed: Source paths that are gone.
        bytes_before: Size of the previous index, if there was one.
        bytes_after: Size of the new index; ``None`` when ``--check`` decided without building it.
    """

    previous: bool
    chunks_added: tuple[str, ...] = ()
    chunks_changed: tuple[str, ...] = ()
    chunks_removed: tuple[str, ...] = ()
    sources_added: tuple[str, ...] = ()
    sources_removed: tuple[str, ...] = ()
    bytes_before: int | None = None
    bytes_after: int | None = None

    @property
    def any(self) -> bool:
        """True when there is no previous index or anything was added, changed or removed."""
        return not self.previous or any(
            (
                self.chunks_added,
                self.chunks_changed,
                self.chunks_removed,
                self.sources_added,
                self.sources_removed,
            )
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (``--json``'s ``changes``; camelCase keys)."""
        return {
            "previous": self.previous,
            "chunksAdded": list(self.chunks_added),
            "chunksChanged": list(self.chunks_changed),
            "chunksRemoved": list(self.chunks_removed),
            "sourcesAdded": list(self.sources_added),
            "sourcesRemoved": list(self.sources_removed),
            "bytesBefore": self.bytes_before,
            "bytesAfter": self.bytes_after,
        }


@dataclass(frozen=True)
class DryRunPlan:
    """What a real pack would send to the embedding provider (``--dry-run``), and its cost.

    Attributes:
        chunks: Distinct chunk texts that would be sent (not in the cache or previous index).
        cached: Chunks whose vectors are already at hand.
        requests: Provider requests it would take (0 for offline providers).
        tokens: Estimated tokens, when the provider can tell.
        cost_usd: Estimated cost in US dollars, when the provider can tell.
        windows: Extra window rows the index would store for chunks longer than the
            provider's input limit (FORMAT.md §2.11; 0 for providers without a limit).
        window_chunks: Chunks that would have extra windows.
        windows_cached: Distinct window texts already in the cache or the previous index.
        windows_sent: Distinct window texts that would be sent.
    """

    chunks: int
    cached: int
    requests: int = 0
    tokens: int | None = None
    cost_usd: float | None = 0.0
    windows: int = 0
    window_chunks: int = 0
    windows_cached: int = 0
    windows_sent: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready data (``--json``'s ``dryRun``; ``windows`` only when any)."""
        out: dict[str, Any] = {
            "chunks": self.chunks,
            "cached": self.cached,
            "requests": self.requests,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
        }
        if self.windows:
            out["windows"] = {
                "rows": self.windows,
                "chunks": self.window_chunks,
                "cached": self.windows_cached,
                "sent": self.windows_sent,
            }
        return out


def change_report(
    previous: Previous | None, records: Sequence[Record], size: int | None
) -> ChangeReport:
    """Chunks and sources added / changed / removed against the previous index."""
    titles, metas = _source_fields(records)
    new = {
        r.id: chunk_digest(titles[r.source], metas[r.source], "\x1f".join(r.heading_path), r.text)
        for r in records
    }
    new_sources = {r.source for r in records}
    old = previous.digests if previous is not None else {}
    old_sources = previous.sources if previous is not None else set()
    return ChangeReport(
        previous=previous is not None,
        chunks_added=tuple(sorted(k for k in new if k not in old)),
        chunks_changed=tuple(sorted(k for k in new if k in old and old[k] != new[k])),
        chunks_removed=tuple(sorted(k for k in old if k not in new)),
        sources_added=tuple(sorted(new_sources - old_sources)),
        sources_removed=tuple(sorted(old_sources - new_sources)),
        bytes_before=previous.size if previous is not None else None,
        bytes_after=size,
    )


def _missing(
    texts: Sequence[str],
    embedder: Embedder,
    cache_dir: Path | None,
    use_cache: bool,
    seed: Mapping[bytes, np.ndarray],
) -> tuple[list[str], int]:
    """The distinct texts neither ``seed`` nor the disk cache has, and the distinct count."""
    from scidx.pack.cache import cache_key

    distinct = {
        cache_key(embedder.provider_id, embedder.model_id, embedder.dimensions, t): t for t in texts
    }
    missing = {key: text for key, text in distinct.items() if key not in seed}
    if use_cache and missing:
        cache = EmbeddingCache(default_cache_dir(cache_dir))
        try:
            for key in cache.get_many(list(missing)):
                missing.pop(key, None)
        finally:
            cache.close()
    return list(missing.values()), len(distinct)


def dry_run_plan(
    records: Sequence[Record],
    embedder: Embedder,
    cache_dir: Path | None,
    use_cache: bool,
    seed: Mapping[bytes, np.ndarray],
) -> DryRunPlan:
    """Which chunks (and windows of long chunks) a real pack would send, and the estimated cost.

    Windows are counted as a real pack stores them (``window.*`` rows: every window after a
    long chunk's first) and looked up by their own text, as the packer caches them.
    """
    texts = record_texts(records)
    missing, _ = _missing(texts, embedder, cache_dir, use_cache, seed)
    windows: dict[str, int] = {}
    if embedder.window_policy() is not None:
        parts = embedder.windows(texts)
        flat = [w for ws in parts for w in ws]
        if flat:
            unsent, distinct = _missing(flat, embedder, cache_dir, use_cache, seed)
            windows = {
                "windows": len(flat),
                "window_chunks": sum(1 for ws in parts if ws),
                "windows_cached": distinct - len(unsent),
                "windows_sent": len(unsent),
            }
    estimate = getattr(embedder, "estimate", None)
    cached = len(records) - len(missing)
    if not callable(estimate):
        return DryRunPlan(chunks=len(missing), cached=cached, **windows)
    est = dict(estimate(missing))
    return DryRunPlan(
        chunks=int(est.get("chunks", len(missing))),
        cached=cached,
        requests=int(est.get("requests") or 0),
        tokens=est.get("tokens"),
        cost_usd=est.get("cost_usd"),
        **windows,
    )
