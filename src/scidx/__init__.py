"""scidx: pack Markdown docs into one deterministic index file, then search it offline.

Example:
    >>> import scidx
    >>> idx = scidx.load("docs.scidx")  # doctest: +SKIP
    >>> idx.search("how do I configure CORS", k=5)  # doctest: +SKIP

``scidx.load`` and search need only numpy, msgpack and xxhash. Every public name except the
errors is imported on first use, so ``import scidx`` loads neither numpy nor the build-time
stack (markdown-it, typer, rich, openai).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scidx._version import __version__
from scidx.errors import (
    BadMagicError,
    ChatError,
    ChatMissingKeyError,
    ChatProviderError,
    ChecksumMismatchError,
    ChunkError,
    ConfigError,
    CorruptIndexError,
    DatabaseError,
    EmbeddingError,
    IndexFormatError,
    InputError,
    MissingAPIKeyError,
    OutputError,
    ProviderError,
    QualityRegressionError,
    QueryEmbeddingError,
    QueryError,
    QueryRewriteError,
    RerankError,
    ScidxError,
    UnsupportedFormatVersionError,
)

if TYPE_CHECKING:
    from scidx.embed.base import Embedder
    from scidx.index.hits import Hit
    from scidx.index.index import Index, load, load_bytes, load_resource
    from scidx.pack.chunk import Chunk, chunk_markdown
    from scidx.pack.packer import PackResult, pack_docs, pack_records
    from scidx.pack.records import Record

__all__ = [
    "BadMagicError",
    "ChatError",
    "ChatMissingKeyError",
    "ChatProviderError",
    "ChecksumMismatchError",
    "Chunk",
    "ChunkError",
    "ConfigError",
    "CorruptIndexError",
    "DatabaseError",
    "Embedder",
    "EmbeddingError",
    "Hit",
    "Index",
    "IndexFormatError",
    "InputError",
    "MissingAPIKeyError",
    "OutputError",
    "PackResult",
    "ProviderError",
    "QualityRegressionError",
    "QueryEmbeddingError",
    "QueryError",
    "QueryRewriteError",
    "Record",
    "RerankError",
    "ScidxError",
    "UnsupportedFormatVersionError",
    "__version__",
    "chunk_markdown",
    "load",
    "load_bytes",
    "load_resource",
    "pack_docs",
    "pack_records",
]

# Every name that needs numpy or the build stack is imported on first use, so `import scidx`
# (and the setuptools plugin, which every build in the environment loads) costs almost nothing.
_LAZY = {
    "Chunk": "scidx.pack.chunk",
    "chunk_markdown": "scidx.pack.chunk",
    "PackResult": "scidx.pack.packer",
    "pack_docs": "scidx.pack.packer",
    "Record": "scidx.pack.records",
    "pack_records": "scidx.pack.packer",
    "Embedder": "scidx.embed.base",
    "Hit": "scidx.index.hits",
    "Index": "scidx.index.index",
    "load": "scidx.index.index",
    "load_bytes": "scidx.index.index",
    "load_resource": "scidx.index.index",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scidx' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
