"""Embedding providers: the :class:`Embedder` interface and the built-in providers.

Only ``base`` and ``hashing`` are runtime modules; ``cache`` and ``openai`` are build-time and are
imported explicitly by the code that needs them.
"""

from __future__ import annotations

from scidx.embed.base import Embedder

__all__ = ["Embedder"]
