"""Query vectors: resolving the index's query embedder, embedding queries, checking vectors.

Query embeddings follow the index's provider stamp: ``hashing`` indexes embed queries in
process with :class:`~scidx.embed.hashing.HashingEmbedder`; other providers are resolved through
:mod:`scidx.embed.registry` (built-ins and the ``scidx.embedders`` entry points, imported
lazily, each exposing ``query_embedder_from_stamp``), or the caller passes ``query_vector``.
An embedder whose stamp differs from the index's is refused (:class:`QueryEmbeddingError`).

Runtime module: numpy and the stdlib only (providers are imported only when needed).
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock itself, without importing threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from scidx.errors import EmbeddingError, QueryEmbeddingError, QueryError

if TYPE_CHECKING:
    from scidx.embed.hashing import HashingEmbedder

__all__ = ["QueryEncoder", "describe_stamp", "stamps_match"]

#: The built-in offline provider's name (``scidx.embed.hashing.PROVIDER_ID``, which is imported
#: only when a query is embedded: keyword search never loads the embedders).
_HASHING = "hashing"

#: The shipped static-vector provider (``scidx.embed.static``): numpy only, so built in here.
_STATIC = "static"

_HINT = 'pass query_vector=..., or search with mode="keyword"'


def stamps_match(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two provider stamps describe the same embedding space."""

    def key(s: Mapping[str, Any]) -> tuple[object, ...]:
        return (
            s.get("provider"),
            s.get("model"),
            s.get("dimensions"),
            s.get("normalization", "l2"),
        )

    return key(a) == key(b)


def describe_stamp(stamp: Mapping[str, Any]) -> str:
    """``provider/model (D dims)``, for messages."""
    return f"{stamp.get('provider')}/{stamp.get('model')} ({stamp.get('dimensions')} dims)"


class QueryEncoder:
    """Turns query text (or a caller's vector) into a normalised query vector for one index.

    Safe to share between threads; the embedder is created once, on first use.

    Args:
        source: The index's file name, for messages.
        stamp: The index's provider stamp.
        dimensions: The index's vector dimensions.
        query_embedder: An embedder to use instead; it must have the index's stamp.
        embedder_options: Keyword arguments for a provider's ``query_embedder_from_stamp``
            (e.g. ``base_url``).
    """

    def __init__(
        self,
        source: str,
        stamp: Mapping[str, Any],
        dimensions: int,
        *,
        query_embedder: Any | None = None,
        embedder_options: Mapping[str, Any] | None = None,
        token_counts: Any | None = None,
    ) -> None:
        self.source = source
        self.token_counts = token_counts
        self.stamp = stamp
        self.dimensions = dimensions
        self._options = dict(embedder_options or {})
        self._lock = allocate_lock()
        self._embedder: Any | None = None
        if query_embedder is not None:
            self._embedder = self._checked(query_embedder)

    def _checked(self, embedder: Any) -> Any:
        stamp = embedder.stamp()
        if not stamps_match(stamp, self.stamp):
            raise QueryEmbeddingError(
                f"{self.source}: the query embedder is {describe_stamp(stamp)} but the index "
                f"was embedded with {describe_stamp(self.stamp)}; vectors from different "
                'models are not comparable. Use the index\'s provider, mode="keyword", or '
                "rebuild the index."
            )
        return embedder

    def embedder(self) -> Any:
        """Return (creating it once) the embedder for this index's query vectors.

        Raises:
            QueryEmbeddingError: The provider cannot be used here (not installed, no API key,
                or a mismatched stamp); the message suggests ``mode="keyword"``.
        """
        with self._lock:
            if self._embedder is None:
                if self.stamp.get("provider") == _HASHING:
                    self._embedder = self._hashing()
                elif self.stamp.get("provider") == _STATIC:
                    self._embedder = self._static()
                else:
                    self._embedder = self._checked(self._from_provider())
            return self._embedder

    def _hashing(self) -> HashingEmbedder:
        from scidx.embed.hashing import MODEL_ID as HASHING_MODEL_ID
        from scidx.embed.hashing import HashingEmbedder

        stamp = self.stamp
        if stamp.get("model") != HASHING_MODEL_ID:
            raise QueryEmbeddingError(
                f"{self.source}: the index was embedded with hashing model "
                f"{stamp.get('model')!r}, but this scidx has {HASHING_MODEL_ID!r}; "
                f"upgrade scidx or rebuild the index, or {_HINT}."
            )
        dims = stamp.get("dimensions")
        if not isinstance(dims, int) or dims < 8:
            raise QueryEmbeddingError(
                f"{self.source}: the provider stamp has dimensions {dims!r}; "
                f"rebuild the index, or {_HINT}."
            )
        return HashingEmbedder(dims)

    def _static(self) -> Any:
        """A ``static`` index's embedder: the shipped table and the index's token counts."""
        from scidx.embed.static import embedder_for_index

        try:
            return embedder_for_index(
                self.stamp, self.token_counts, table=self._options.get("static_table")
            )
        except EmbeddingError as exc:
            raise QueryEmbeddingError(f"{self.source}: {exc}; {_HINT}.") from None

    def _from_provider(self) -> Any:
        stamp = self.stamp
        provider = stamp.get("provider")
        from scidx.embed.registry import resolve_provider

        try:
            module = resolve_provider(provider)
        except LookupError:
            raise QueryEmbeddingError(
                f"{self.source}: the index's embedding provider {provider!r} is not "
                f"known to scidx; {_HINT}."
            ) from None
        except ImportError as exc:
            raise QueryEmbeddingError(
                f"{self.source}: vector search needs the {provider!r} embedding "
                f"provider, which cannot be imported here ({exc}); {_HINT}."
            ) from exc
        try:
            factory = module.query_embedder_from_stamp
            return factory(dict(stamp), **self._options)
        except AttributeError as exc:
            raise QueryEmbeddingError(
                f"{self.source}: the {provider!r} provider cannot embed queries; {_HINT}."
            ) from exc
        except Exception as exc:  # the provider's own ScidxError (no key, bad stamp...)
            raise QueryEmbeddingError(
                f"{self.source}: cannot embed the query with {describe_stamp(stamp)}: "
                f"{exc}; {_HINT}."
            ) from exc

    def embed(self, query: str) -> npt.NDArray[np.float32]:
        """Embed ``query`` with the index's provider (not normalised); see :meth:`embedder`."""
        embedder = self.embedder()
        try:
            if hasattr(embedder, "embed_query"):
                vec = embedder.embed_query(query)
            else:
                vec = embedder.embed([query])[0]
        except Exception as exc:  # a plugin provider may raise anything: report, never crash
            detail = str(exc) if isinstance(exc, EmbeddingError) else f"{type(exc).__name__}: {exc}"
            raise QueryEmbeddingError(
                f"{self.source}: embedding the query failed: {detail}; pass "
                'query_vector=..., or search with mode="keyword".'
            ) from exc
        return np.asarray(vec, dtype=np.float32).reshape(-1)

    def embed_normalised(self, text: str) -> npt.NDArray[np.float32] | None:
        """The L2-normalised embedding of ``text``, or ``None`` when it is all zeros.

        Raises:
            QueryEmbeddingError: The embedder failed or returned a wrong-sized or NaN vector.
        """
        vec = self.embed(text)
        if vec.shape[0] != self.dimensions or not np.all(np.isfinite(vec)):
            raise QueryEmbeddingError(
                f"{self.source}: the query embedder returned a vector of shape "
                f"{list(vec.shape)} (or with NaN), expected {self.dimensions} "
                'finite values; search with mode="keyword".'
            )
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            return None  # e.g. a hashing query of only stop-words: no vector evidence
        return (vec / norm).astype(np.float32)

    def check_vector(self, vector: Any) -> npt.NDArray[np.float32]:
        """Validate a caller-supplied query vector and return it L2-normalised.

        Raises:
            QueryError: Wrong length or shape, NaN/inf, or zero norm.
        """
        d = self.dimensions
        try:
            raw = np.asarray(vector)
        except (TypeError, ValueError, OverflowError) as exc:  # ragged nesting, odd objects
            raise QueryError(
                f"the query vector is not a flat array of {d} numbers ({exc})"
            ) from None
        if raw.dtype.kind not in "biuf":
            raise QueryError(
                f"the query vector must hold real numbers, got dtype {raw.dtype}; pass floats"
            )
        try:
            arr = raw.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise QueryError(f"the query vector is not a numeric array ({exc})") from None
        if arr.ndim == 2 and arr.shape[0] == 1:
            arr = arr[0]
        if arr.ndim != 1 or arr.shape[0] != d:
            raise QueryError(
                f"the query vector has shape {list(arr.shape)}, but this index's vectors have "
                f"{d} dimensions ({describe_stamp(self.stamp)}); embed the query with the "
                "same model."
            )
        if not np.all(np.isfinite(arr)):
            raise QueryError("the query vector contains NaN or infinite values")
        # Scale by the largest component first, so huge or tiny values cannot overflow the norm.
        peak = float(np.max(np.abs(arr)))
        if peak == 0.0:
            raise QueryError("the query vector is all zeros; it matches nothing")
        arr = arr / peak
        return (arr / float(np.linalg.norm(arr))).astype(np.float32)
