"""The OpenAI embedding models scidx knows: vector length, input limit, shortening, price.

A module of its own so that the packer's configuration check can read the table without
importing :mod:`scidx.embed.openai`, which loads the ``openai`` SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DEFAULT_MODEL", "MODELS", "ModelInfo"]

DEFAULT_MODEL = "text-embedding-3-small"


@dataclass(frozen=True)
class ModelInfo:
    """What scidx knows about a hosted embedding model.

    Attributes:
        native_dimensions: Length of the model's full vectors.
        max_input_tokens: The API's per-input token limit.
        supports_dimensions: Whether the API accepts ``dimensions`` to shorten vectors.
        usd_per_million_tokens: List price, for ``--dry-run`` estimates.
    """

    native_dimensions: int
    max_input_tokens: int
    supports_dimensions: bool
    usd_per_million_tokens: float


MODELS: Mapping[str, ModelInfo] = {
    "text-embedding-3-small": ModelInfo(1536, 8191, True, 0.02),
    "text-embedding-3-large": ModelInfo(3072, 8191, True, 0.13),
    "text-embedding-ada-002": ModelInfo(1536, 8191, False, 0.10),
}
