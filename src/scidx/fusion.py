"""The default fusion of hybrid search, shared by the providers and the runtime.

A module of its own, below both :mod:`scidx.embed` and :mod:`scidx.index`, so that the runtime
knows the defaults without importing the embedding layer (a keyword search imports no embedder).
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_FUSION"]

#: How hybrid search fuses its two legs unless a provider says otherwise (written into every
#: index header as ``meta.fusion``): the max-normalised weighted sum with weight ``alpha`` on the
#: vector leg, whose query is expanded with the ``prfDocs`` best keyword hits at weight
#: ``prfBeta`` (see :mod:`scidx.index.search`). Tuned on SciFact train for the hashing provider.
DEFAULT_FUSION: dict[str, Any] = {
    "method": "weighted-sum",
    "alpha": 0.3,
    "prfDocs": 3,
    "prfBeta": 2.0,
}
