"""The pack-time embedder: provider from the config, behind the disk cache and previous vectors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from scidx.build.arrays import record_texts
from scidx.build.cache import CachedEmbedder, EmbeddingCache, default_cache_dir
from scidx.build.config import Config
from scidx.build.progress import Progress
from scidx.build.records import Record
from scidx.embed.base import Embedder
from scidx.embed.hashing import HashingEmbedder
from scidx.errors import ConfigError
from scidx.index.vectors import DEFAULT_ENCODING, VectorEncoder

__all__ = ["embed_records", "make_embedder"]


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


def embed_records(
    records: Sequence[Record],
    embedder: Embedder,
    *,
    cache_dir: Path | None,
    use_cache: bool,
    progress: Progress,
    seed: Mapping[bytes, np.ndarray] | None = None,
    encoding: str = DEFAULT_ENCODING,
) -> tuple[dict[str, np.ndarray], int, int]:
    """Vectors for every record, in order: previous index, then disk cache, then the provider.

    Each batch is encoded (``encoding``: ``float32``, ``int8`` or ``binary``) as it arrives, so
    a compact index never holds the float32 matrix. Returns ``(vector arrays, cache hits,
    provider calls)``; the arrays are those of :func:`scidx.index.vectors.encode_vectors`.
    """
    texts = record_texts(records)
    if hasattr(embedder, "describe_input"):
        # Lets the provider name chunks (not list positions) in its warnings.
        embedder.describe_input = dict(zip(texts, (r.id for r in records), strict=True)).get
    cache = EmbeddingCache(default_cache_dir(cache_dir)) if use_cache else None
    try:
        cached = CachedEmbedder(embedder, cache, seed=seed)
        out = VectorEncoder(encoding, len(texts), embedder.dimensions)
        done = 0
        reported_hits = False
        progress("embed", 0, len(texts))
        for positions, vecs in cached.embed_iter(texts):
            if not reported_hits:
                # The cache is consulted before anything is yielded: its hits are known now.
                progress("cached", cached.hits, len(set(texts)))
                reported_hits = True
            out.put(np.asarray(positions, dtype=np.intp), vecs)
            done += len(positions)
            progress("embed", done, len(texts))
        return out.arrays, cached.hits, cached.misses
    finally:
        if cache is not None:
            cache.close()
