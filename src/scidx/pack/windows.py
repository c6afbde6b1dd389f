"""Long chunks read whole: the later windows of every chunk longer than the model's limit.

A provider with an input limit (``Embedder.window_policy()`` not None, e.g. ``local``) cuts a
long text's main vector at its limit; the packer embeds the text's later windows
(``Embedder.windows``) as extra rows, ``window.*`` in the index (FORMAT.md §2.11), and vector
search scores the chunk by its best window. Each window is cached by its own text, so a re-pack
embeds only the windows of changed chunks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scidx.embed.base import Embedder
from scidx.errors import ProviderError, ScidxError
from scidx.index.vectors import VectorEncoder
from scidx.pack.arrays import record_texts
from scidx.pack.cache import CachedEmbedder, EmbeddingCache, default_cache_dir
from scidx.pack.progress import Progress
from scidx.pack.records import Record

__all__ = ["WindowVectors", "embed_windows", "window_arrays"]


@dataclass
class WindowVectors:
    """The extra window rows of one pack.

    Attributes:
        arrays: ``window.chunk`` and the window vector arrays (empty without a policy).
        meta: ``meta.windows`` (None when the provider has no input limit).
        count: Window rows stored (windows after each long chunk's first).
        chunks: Chunks that have extra windows.
        hits: Windows whose vector came from the cache.
        embedded: Windows the provider embedded.
    """

    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    meta: dict[str, Any] | None = None
    count: int = 0
    chunks: int = 0
    hits: int = 0
    embedded: int = 0


def window_arrays(encoding: str, chunk: Sequence[int], dims: int) -> VectorEncoder:
    """An encoder for ``len(chunk)`` window rows: float32 as is, int8 codes otherwise.

    A ``binary`` index stores its windows as int8 (no bits): windows are scored exactly, never
    pre-ranked by Hamming distance.
    """
    return VectorEncoder("float32" if encoding == "float32" else "int8", len(chunk), dims)


def embed_windows(
    records: Sequence[Record],
    embedder: Embedder,
    *,
    cache_dir: Path | None,
    use_cache: bool,
    progress: Progress,
    encoding: str,
    seed: Mapping[bytes, np.ndarray] | None = None,
) -> WindowVectors:
    """Embed the later windows of every record longer than the provider's limit.

    Rows are in chunk-row order, each chunk's windows in text order, so ``window.chunk`` is
    non-decreasing. Progress reports stage ``windows`` (windows embedded or cached of all).
    ``seed`` holds known vectors by cache key (the previous index's windows, see
    :func:`scidx.pack.incremental.read_previous`), consulted before the disk cache.

    Raises:
        ProviderError: The provider failed (finished batches stay cached).
    """
    policy = embedder.window_policy()
    if policy is None:
        return WindowVectors()
    texts = record_texts(records)
    parts = embedder.windows(texts)
    chunk = [row for row, ws in enumerate(parts) for _ in ws]
    flat = [w for ws in parts for w in ws]
    ordinal = [k for ws in parts for k in range(1, len(ws) + 1)]
    out = window_arrays(encoding, chunk, embedder.dimensions)
    cache = EmbeddingCache(default_cache_dir(cache_dir)) if use_cache and flat else None
    try:
        cached = CachedEmbedder(
            embedder,
            cache,
            seed=seed,
            labels=lambda i: f"{records[chunk[i]].id} (window {ordinal[i] + 1})",
        )
        done = 0
        progress("windows", 0, len(flat))
        try:
            for positions, vecs in cached.embed_iter(flat) if flat else ():
                out.put(np.asarray(positions, dtype=np.intp), vecs)
                done += len(positions)
                progress("windows", done, len(flat))
        except ScidxError:
            raise
        except Exception as exc:  # a plugin provider may raise anything: report, never crash
            raise ProviderError(
                f"the {embedder.provider_id!r} embedding provider failed on a window: "
                f"{type(exc).__name__}: {exc}; finished batches are cached, nothing was written"
            ) from exc
    finally:
        if cache is not None:
            cache.close()
    arrays = {f"window.{name}": array for name, array in out.arrays.items()}
    arrays["window.chunk"] = np.asarray(chunk, dtype="<u4").reshape(len(chunk))
    meta = dict(policy)
    return WindowVectors(
        arrays=arrays,
        meta=meta,
        count=len(flat),
        chunks=len(set(chunk)),
        hits=cached.hits,
        embedded=cached.misses,
    )
