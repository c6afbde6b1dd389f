"""scidx.embed.hashing: the offline feature-hashing embedder."""

from __future__ import annotations

import numpy as np
import pytest

from scidx.embed.base import Embedder
from scidx.embed.hashing import MODEL_ID, HashingEmbedder, embedding_text

TEXTS = [
    "Install kubectl with apt and check the version.",
    "Configure CORS origins on the ingress controller.",
    "Cats chase mice; dogs chase cats.",
    "",
    "the of and",
    "max_chunk_chars bounds the chunk size",
]


def test_stamp_and_interface() -> None:
    emb = HashingEmbedder()
    assert isinstance(emb, Embedder)
    assert emb.stamp() == {
        "provider": "hashing",
        "model": "hashing-v2",
        "dimensions": 512,
        "normalization": "l2",
    }
    assert MODEL_ID == "hashing-v2"
    assert HashingEmbedder(dimensions=64).dimensions == 64


def test_rejects_tiny_dimensions() -> None:
    with pytest.raises(ValueError, match="hashing dimensions must be at least 8, got 4"):
        HashingEmbedder(4)


def test_shape_dtype_and_norms() -> None:
    vecs = HashingEmbedder(128).embed_batch(TEXTS)
    assert vecs.shape == (len(TEXTS), 128) and vecs.dtype == np.float32
    assert vecs.flags.c_contiguous
    norms = np.linalg.norm(vecs, axis=1)
    np.testing.assert_allclose(norms[[0, 1, 2, 5]], 1.0, rtol=1e-6)
    assert norms[3] == 0 and norms[4] == 0  # no terms: an all-zero row, not NaN
    assert HashingEmbedder(32).embed_batch([]).shape == (0, 32)


def test_bit_for_bit_deterministic_across_instances_and_batches() -> None:
    a = HashingEmbedder(256).embed_batch(TEXTS)
    fresh = HashingEmbedder(256)
    fresh.embed_batch(["warm the term table with other words first: zebra quokka"])
    b = fresh.embed_batch(list(reversed(TEXTS)))[::-1]
    c = np.vstack([HashingEmbedder(256).embed_batch([t]) for t in TEXTS])
    assert a.tobytes() == np.ascontiguousarray(b).tobytes() == c.tobytes()
    small_batches = HashingEmbedder(256)
    small_batches.batch_size = 2
    assert small_batches.embed(TEXTS).tobytes() == a.tobytes()


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    emb = HashingEmbedder(512)
    q, near, far = emb.embed_batch(
        [
            "how to install kubectl",
            "Installing kubectl on Linux with apt",
            "Cats chase mice in the garden",
        ]
    )
    assert float(q @ near) > float(q @ far) + 0.2
    # Character n-grams relate morphological neighbours that stemming keeps apart.
    a, b, c = emb.embed_batch(["biomaterials", "biomaterial scaffolds", "economics"])
    assert float(a @ b) > float(a @ c)


def test_identical_text_gives_cosine_one() -> None:
    emb = HashingEmbedder(64)
    x, y = emb.embed_batch(["same words here", "Same words, here!"])
    assert float(x @ y) == pytest.approx(1.0, abs=1e-6)


def test_embedding_text_is_exported_here() -> None:
    assert embedding_text("T", ["T", "H"], "b") == "T\nH\n\nb"
