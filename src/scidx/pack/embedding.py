"""The pack-time embedder: provider from the config, behind the disk cache and previous vectors."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from scidx.embed.base import Embedder
from scidx.embed.hashing import HashingEmbedder
from scidx.embed.registry import provider_names, resolve_provider
from scidx.errors import ConfigError, EmbeddingError, ProviderError, ScidxError
from scidx.index.vectors import DEFAULT_ENCODING, VectorEncoder
from scidx.pack.arrays import record_texts, release_freed_memory
from scidx.pack.cache import CachedEmbedder, EmbeddingCache, cache_key, default_cache_dir
from scidx.pack.config import Config
from scidx.pack.progress import Progress
from scidx.pack.records import Record

__all__ = [
    "embed_records",
    "fit_to_corpus",
    "make_embedder",
    "provider_arrays",
    "provider_embedder",
]


def fit_to_corpus(embedder: Embedder, texts: Iterable[str]) -> None:
    """Let a provider whose vectors depend on the corpus (``static``) read it first.

    A provider with a ``fit_corpus(texts)`` method is given every text once, before its
    stamp is taken; others are left alone.
    """
    fit = getattr(embedder, "fit_corpus", None)
    if callable(fit):
        fit(texts)


def provider_arrays(embedder: Embedder) -> dict[str, np.ndarray]:
    """The arrays a provider stores with the index (``index_arrays()``), or none."""
    extra = getattr(embedder, "index_arrays", None)
    return dict(extra()) if callable(extra) else {}


def make_embedder(config: Config) -> Embedder:
    """The provider named by the config, not yet cached.

    ``hashing`` is built in; every other provider (``openai``, ``local``, plugins registered
    under the ``scidx.embedders`` entry points) is imported by name and built by its
    ``from_config(config)``.

    Raises:
        ConfigError: The provider is unknown, cannot pack, or rejects the config.
        EmbeddingError: The provider (or a package it needs) cannot be imported.
    """
    name = config.embedding_provider
    if name == "hashing":
        return HashingEmbedder(dimensions=config.dimensions)
    return provider_embedder(name, config, str(config.path or "config"))


def provider_embedder(name: str, config: object, label: str) -> Embedder:
    """The embedder that provider ``name`` (built in or a plugin) builds from ``config``.

    The one place a provider is resolved by name and its ``from_config`` called: the packer
    passes its :class:`~scidx.pack.config.Config`; ``bench`` passes its own settings (any
    object with the attributes the provider reads).

    Raises:
        ConfigError: The provider is unknown, cannot pack, or rejects the config (messages
            start with ``label``).
        EmbeddingError: The provider (or a package it needs) cannot be imported.
        ProviderError: The provider failed while starting.
    """
    try:
        module = resolve_provider(name)
    except LookupError:
        raise ConfigError(
            f"{label}: unknown embeddingProvider {name!r}; use one of {', '.join(provider_names())}"
        ) from None
    except ImportError as exc:
        hint = f"reinstall the {name!r} plugin"
        if name == "local":
            hint = "pip install 'toolup-rag[local]'"
        raise EmbeddingError(
            f"{label}: the embedding provider {name!r} cannot be imported ({exc}); {hint}"
        ) from None
    factory = getattr(module, "from_config", None)
    if not callable(factory):
        raise ConfigError(
            f"{label}: the embedding provider {name!r} has no from_config(config) factory, so it "
            "cannot pack; see docs/providers.md"
        )
    try:
        embedder = factory(config)
    except ScidxError:
        raise
    except Exception as exc:  # a plugin's own failure: report it, never crash
        raise ProviderError(
            f"{label}: the embedding provider {name!r} failed to start: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(embedder, Embedder) or embedder.stamp().get("provider") != name:
        raise ConfigError(
            f"{label}: the embedding provider {name!r} returned {type(embedder).__name__}, not an "
            f"Embedder whose stamp names provider {name!r}; see docs/providers.md"
        )
    return embedder


def embed_records(
    records: Sequence[Record],
    embedder: Embedder,
    *,
    cache_dir: Path | None,
    use_cache: bool,
    progress: Progress,
    seed: Mapping[bytes, np.ndarray] | None = None,
    encoding: str = DEFAULT_ENCODING,
) -> tuple[dict[str, np.ndarray], int, int, int]:
    """Vectors for every record, in order: previous index, then disk cache, then the provider.

    Each batch is encoded (``encoding``: ``float32``, ``int8`` or ``binary``) as it arrives, so
    a compact index never holds the float32 matrix. Returns ``(vector arrays, cache hits,
    provider calls, duplicates)``; the arrays are those of
    :func:`scidx.index.vectors.encode_vectors`. Hits and calls count distinct texts;
    duplicates are the chunks whose text another chunk already has (embedded once, reused).
    Progress reports the same counts: ``distinct`` (distinct texts of all chunks), ``cached``
    (hits of the distinct texts), ``embed`` (texts the provider embedded of those it is sent).
    """
    texts = record_texts(records)
    first = _first_occurrences(texts, embedder)
    distinct = int(first.sum())
    progress("distinct", distinct, len(texts))
    cache = EmbeddingCache(default_cache_dir(cache_dir)) if use_cache else None
    try:
        # The labels let the provider name chunks (not list positions) in its warnings.
        cached = CachedEmbedder(embedder, cache, seed=seed, labels=lambda i: records[i].id)
        out = VectorEncoder(encoding, len(texts), embedder.dimensions)
        done = 0
        reported_hits = False
        progress("embed", 0, distinct)
        try:
            for positions, vecs in cached.embed_iter(texts):
                if not reported_hits:
                    # The cache is consulted before anything is yielded: its hits are known now.
                    progress("cached", cached.hits, distinct)
                    reported_hits = True
                rows = np.asarray(positions, dtype=np.intp)
                out.put(rows, vecs)
                # Every hit is yielded before the first provider batch, so the distinct texts
                # done beyond the hits are the ones the provider embedded.
                done += int(first[rows].sum())
                progress("embed", max(done - cached.hits, 0), distinct - cached.hits)
        except ScidxError:
            raise
        except Exception as exc:  # a plugin provider may raise anything: report, never crash
            provider = embedder.stamp().get("provider")
            raise ProviderError(
                f"the {provider!r} embedding provider failed: {type(exc).__name__}: {exc}; "
                "batches finished before the failure are cached, nothing was written"
            ) from exc
        return out.arrays, cached.hits, cached.misses, len(texts) - distinct
    finally:
        if cache is not None:
            cache.close()
        release_freed_memory()  # the cache keys of every text


def _first_occurrences(texts: Sequence[str], embedder: Embedder) -> np.ndarray:
    """A mask of the chunks whose text no earlier chunk has, by the cache's own key.

    Keying by :func:`cache_key` (16-byte digests, not the texts) makes "distinct" mean exactly
    what the cache dedups, without holding a second copy of the corpus.
    """
    seen: set[bytes] = set()
    mask = np.zeros(len(texts), dtype=bool)
    ident = (embedder.provider_id, embedder.model_id, embedder.dimensions)
    for position, text in enumerate(texts):
        key = cache_key(*ident, text)
        if key not in seen:
            seen.add(key)
            mask[position] = True
    return mask
