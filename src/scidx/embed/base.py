"""The embedding-provider interface shared by every provider.

A provider turns texts into L2-normalised float32 vectors of a fixed dimension. Its *stamp*
(provider id, model id, dimensions, normalisation) is written into the index so that queries are
only ever embedded by the same model that embedded the chunks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.fusion import DEFAULT_FUSION

__all__ = ["DEFAULT_FUSION", "Embedder", "Vectors", "l2_normalize"]

Vectors = npt.NDArray[np.float32]


def l2_normalize(matrix: npt.NDArray[np.floating]) -> Vectors:
    """Return ``matrix`` as float32 with every non-zero row scaled to unit L2 norm.

    All-zero rows (a text with no features) stay zero rather than becoming NaN.
    """
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)


class Embedder(ABC):
    """A text-embedding provider.

    Subclasses set ``provider_id``, ``model_id`` and ``dimensions`` and implement
    :meth:`embed_batch`. Providers that can overlap requests override :meth:`embed_iter` so that
    a caching wrapper can store every finished batch as soon as it arrives.
    """

    provider_id: str
    model_id: str
    dimensions: int
    normalization: str = "l2"
    batch_size: int = 256

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed one batch.

        Args:
            texts: The texts to embed.

        Returns:
            A C-contiguous float32 array of shape ``(len(texts), dimensions)`` with unit rows.

        Raises:
            EmbeddingError: The provider failed.
        """

    def embed_iter(self, texts: Sequence[str]) -> Iterator[tuple[list[int], Vectors]]:
        """Yield ``(positions, vectors)`` for successive batches of ``texts``.

        The default runs :meth:`embed_batch` batch by batch, in order. Every position of
        ``texts`` is yielded exactly once.
        """
        for start in range(0, len(texts), self.batch_size):
            positions = list(range(start, min(start + self.batch_size, len(texts))))
            yield positions, self.embed_batch([texts[i] for i in positions])

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed any number of texts, in order.

        Returns:
            A float32 array of shape ``(len(texts), dimensions)``.
        """
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for positions, vectors in self.embed_iter(texts):
            out[positions] = vectors
        return out

    def window_policy(self) -> dict[str, Any] | None:
        """How long texts are read whole (``meta.windows``), or None: no input limit.

        A provider that cuts its inputs at a token limit returns ``{"tokens": int,
        "overlap": int, "score": "max"}`` (optionally ``"margin": float``, what a later
        window's cosine counts less) and implements :meth:`windows`; the packer then
        embeds every later window as an extra row (FORMAT.md §2.11).
        """
        return None

    def windows(self, texts: Sequence[str]) -> list[list[str]]:
        """The texts of each text's windows after the first (``[]`` for a text that fits).

        The default (no input limit) has none. The first window is what :meth:`embed_batch`
        reads of the text, so its vector is the text's main vector.
        """
        return [[] for _ in texts]

    def languages(self) -> tuple[str, ...] | None:
        """The languages this provider's vectors are meaningful in (issue 42).

        ``("*",)``: any; None: unknown (the default: nothing is warned or changed).
        """
        return None

    def fusion(self) -> dict[str, Any]:
        """Hybrid-search fusion settings for indexes of this provider (``meta.fusion``).

        The default is :data:`DEFAULT_FUSION`; a provider whose vectors are much stronger or
        weaker than hashing's overrides it with settings tuned for its model.
        """
        return dict(DEFAULT_FUSION)

    def stamp(self) -> dict[str, object]:
        """The identity written into an index: provider, model, dimensions, normalisation."""
        return {
            "provider": self.provider_id,
            "model": self.model_id,
            "dimensions": self.dimensions,
            "normalization": self.normalization,
        }
