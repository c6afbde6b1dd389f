"""scidx: pack Markdown docs into one deterministic index file, then search it offline.

Example:
    >>> import scidx
    >>> idx = scidx.load("docs.scidx")  # doctest: +SKIP
    >>> idx.search("how do I configure CORS", k=5)  # doctest: +SKIP

``scidx.load`` and search need only numpy, msgpack and xxhash. The build-time names
(``pack_docs``, ``pack_records``, ``Record``, ``Chunk``, ``chunk_markdown``) are imported on first
use, so ``import scidx`` never loads the build-time stack (markdown-it, typer, rich, openai).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"  # before the imports below: scidx.pack reads it

from scidx.embed.base import Embedder
from scidx.errors import (
    BadMagicError,
    ChecksumMismatchError,
    ChunkError,
    ConfigError,
    CorruptIndexError,
    EmbeddingError,
    IndexFormatError,
    InputError,
    MissingAPIKeyError,
    OutputError,
    ProviderError,
    QueryEmbeddingError,
    QueryError,
    ScidxError,
    UnsupportedFormatVersionError,
)
from scidx.load import Index, load, load_bytes, load_resource
from scidx.search import Hit

if TYPE_CHECKING:
    from scidx.chunk import Chunk, chunk_markdown
    from scidx.pack import PackResult, Record, pack_docs, pack_records

__all__ = [
    "BadMagicError",
    "ChecksumMismatchError",
    "Chunk",
    "ChunkError",
    "ConfigError",
    "CorruptIndexError",
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
    "QueryEmbeddingError",
    "QueryError",
    "Record",
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

_LAZY = {
    "Chunk": "scidx.chunk",
    "chunk_markdown": "scidx.chunk",
    "PackResult": "scidx.pack",
    "Record": "scidx.pack",
    "pack_docs": "scidx.pack",
    "pack_records": "scidx.pack",
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
