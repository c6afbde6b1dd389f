"""The scidx exception hierarchy.

Every error scidx raises on purpose is a :class:`ScidxError`. Messages say what failed, where
(file, field, array or record) and how to fix it. The CLI maps each branch to an exit code::

    ScidxError
    ├── ConfigError                      exit 1  bad staticcorpus.json / arguments
    ├── InputError (ConfigError)         exit 1  an input Markdown file or record is unusable
    ├── ChunkError (InputError)          exit 1  a chunk record is invalid
    ├── EmbeddingError                   exit 2  the embedding provider failed
    │   ├── MissingAPIKeyError           exit 2  the provider's API key is not set
    │   └── ProviderError                exit 2  the provider answered badly or not at all
    ├── OutputError                      exit 3  the index or its sidecar could not be written
    ├── IndexFormatError                 exit 4  an index file is not a valid .scidx
    │   ├── BadMagicError                        not a .scidx file at all
    │   ├── UnsupportedFormatVersionError        written by a newer, incompatible format
    │   └── CorruptIndexError                    truncated, out-of-bounds, overlapping, bad header
    │       └── ChecksumMismatchError            an array's xxh3 checksum does not match
    ├── QueryError (also ValueError)     exit 5  a search request is invalid
    │   └── QueryEmbeddingError          exit 2  the query cannot be embedded (provider)
    ├── ChatError                        exit 2  the chat model could not answer (``ask``)
    │   ├── ChatMissingKeyError                  ``OPENAI_API_KEY`` is not set
    │   └── ChatProviderError                    the chat provider failed or was unreachable
    ├── QualityRegressionError           exit 7  ``eval --baseline``: quality fell below it
    ├── RerankError                      exit 2  the reranker failed or returned bad scores
    ├── QueryRewriteError                exit 2  the query rewriter failed
    └── DatabaseError                    exit 8  PostgreSQL unreachable or refused ([postgres])
"""

from __future__ import annotations

__all__ = [
    "BadMagicError",
    "ChatError",
    "ChatMissingKeyError",
    "ChatProviderError",
    "ChecksumMismatchError",
    "ChunkError",
    "ConfigError",
    "CorruptIndexError",
    "DatabaseError",
    "EmbeddingError",
    "IndexFormatError",
    "InputError",
    "MissingAPIKeyError",
    "OutputError",
    "ProviderError",
    "QualityRegressionError",
    "QueryEmbeddingError",
    "QueryError",
    "QueryRewriteError",
    "RerankError",
    "ScidxError",
    "UnsupportedFormatVersionError",
]


class ScidxError(Exception):
    """Base class of every error scidx raises on purpose; its message is shown to the user."""

    exit_code = 1


class ConfigError(ScidxError):
    """The configuration (staticcorpus.json or an argument) is invalid."""

    exit_code = 1


class InputError(ConfigError):
    """An input file or record cannot be used (undecodable bytes, unreadable file)."""


class ChunkError(InputError):
    """A chunk record is invalid: blank or duplicate id, missing text."""


class EmbeddingError(ScidxError):
    """The embedding provider failed to produce vectors."""

    exit_code = 2


class MissingAPIKeyError(EmbeddingError):
    """A provider needs an API key that is not set in the environment."""


class ProviderError(EmbeddingError):
    """The provider answered with an error or an invalid response."""


class OutputError(ScidxError):
    """The index file or its sidecar could not be written; the previous one is intact."""

    exit_code = 3


class IndexFormatError(ScidxError):
    """A file is not a valid .scidx index."""

    exit_code = 4


class BadMagicError(IndexFormatError):
    """The file does not start with the .scidx magic bytes."""


class UnsupportedFormatVersionError(IndexFormatError):
    """The file was written with a format major version this scidx cannot read."""


class CorruptIndexError(IndexFormatError):
    """The file is truncated or its header or arrays are inconsistent."""


class ChecksumMismatchError(CorruptIndexError):
    """An array's stored xxh3 checksum does not match its bytes."""


class QueryError(ScidxError, ValueError):
    """A search request is invalid (bad mode, k, vector, filter)."""

    exit_code = 5


class QueryEmbeddingError(QueryError):
    """A vector query cannot be embedded for this index (provider unavailable or mismatched)."""

    exit_code = 2


class ChatError(ScidxError):
    """The chat model could not produce an answer."""

    exit_code = 2


class ChatMissingKeyError(ChatError):
    """``OPENAI_API_KEY`` is not set, so no chat request was made."""


class ChatProviderError(ChatError):
    """The chat provider answered with an error (429, 5xx, 401...) or could not be reached."""


class QualityRegressionError(ScidxError):
    """Retrieval quality fell below the baseline by more than the tolerance."""

    exit_code = 7


class RerankError(ScidxError):
    """The reranker (model, service or plugin) failed, or returned unusable scores."""

    exit_code = 2


class QueryRewriteError(ScidxError):
    """The query rewriter (a plugin or callable) failed or returned something unusable."""

    exit_code = 2


class DatabaseError(ScidxError):
    """PostgreSQL is unreachable, refused the connection or a statement (``toolup-rag[postgres]``).

    Raised for connection failures (host down, wrong port, authentication), missing privileges
    and a server without the pgvector extension. The message names the host, port, database
    and user, never the password.
    """

    exit_code = 8
