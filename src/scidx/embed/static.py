"""The ``static`` embedding provider: static token vectors, weighted by the corpus (numpy only).

A text's vector is the weighted mean of its WordPiece tokens' rows in a distilled token table
(:mod:`scidx.embed.distill`, :mod:`scidx.embed.static_table`), L2-normalised. Token ``t``
weighs ``a / (a + p(t))`` (SIF, Arora et al. 2017), where ``p(t)`` is the token's share of all
tokens of the packed corpus and ``a`` is the table's ``sifA`` (1e-3): frequent tokens of *this*
corpus count little, rare ones fully; a token the corpus never has weighs 1. ``[UNK]`` and the
special tokens are skipped.

Packing counts the corpus's tokens first (:meth:`StaticEmbedder.fit_corpus`, over the input
files' text), stores the counts in the index (array ``static.counts``) and records their
xxh3 digest in the provider stamp, so cached vectors of another corpus are never reused and a
query weighs its tokens exactly as the chunks were weighed. The table itself ships in the
wheel (``scidx/embed/data/``; an index records its sha256 as ``provider.table``), so a
machine with only the runtime dependencies can search a ``static`` index.

Hybrid search with this provider only re-ranks keyword matches (:data:`FUSION`): alone, static
vectors score below BM25 and give nonsense a cosine as high as a question's.

Runtime module: numpy, xxhash and the stdlib only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import xxhash

from scidx.embed.base import Embedder, Vectors
from scidx.embed.static_table import TokenTable, read_table
from scidx.errors import ConfigError, EmbeddingError

__all__ = [
    "COUNTS_ARRAY",
    "DEFAULT_TABLE",
    "FUSION",
    "PROVIDER_ID",
    "StaticEmbedder",
    "from_config",
    "load_table",
    "query_embedder_from_stamp",
    "token_weights",
]

PROVIDER_ID = "static"
#: The index array holding the corpus's token counts (``<u4``, one per table row).
COUNTS_ARRAY = "static.counts"
#: The table that ships with scidx (``benchmarks/make_static_table.py`` makes it).
DEFAULT_TABLE = Path(__file__).parent / "data" / "all-MiniLM-L6-v2-static-d128.scidxtok"

#: Hybrid fusion for static indexes: re-rank keyword matches only (``vectorFloor`` nil), the
#: vector leg at ``alpha`` (calibrated on the English docs-questions dev set,
#: docs/performance.md), no query expansion.
FUSION: Mapping[str, Any] = {
    "method": "rerank",
    "alpha": 0.4,
    "candidates": 100,
    "prfDocs": 0,
    "prfBeta": 0.0,
    "vectorFloor": None,
}


@lru_cache(maxsize=4)
def _cached_table(path: str) -> TokenTable:
    return read_table(path)


def load_table(path: str | Path | None = None) -> TokenTable:
    """The table at ``path`` (default: the shipped one), read and checked once per process.

    Raises:
        ConfigError: The file is missing or damaged.
    """
    return _cached_table(str(Path(path) if path is not None else DEFAULT_TABLE))


def token_weights(counts: npt.NDArray[Any], a: float) -> npt.NDArray[np.float64]:
    """SIF weights ``a / (a + p)`` from token counts (``p = count / total``)."""
    c = np.asarray(counts, dtype=np.float64)
    total = float(c.sum())
    if not total > 0:
        return np.ones(c.shape[0], dtype=np.float64)
    return a / (a + c / total)


class StaticEmbedder(Embedder):
    """Weighted mean of static token vectors (see the module docstring).

    Args:
        table: The token table (:func:`load_table`).
        counts: The corpus's token counts (from an index); ``None`` until :meth:`fit_corpus`.
    """

    provider_id = PROVIDER_ID
    batch_size = 4096

    def __init__(self, table: TokenTable, counts: npt.NDArray[Any] | None = None) -> None:
        self.table = table
        self.table_name = str(table.header.get("name") or "static")
        self.model_id = self.table_name
        self.dimensions = table.dimensions
        self.sif_a = float(table.header.get("sifA", 1e-3))
        self._lock = threading.Lock()
        self._skip = self._special_ids()
        self.counts: npt.NDArray[np.uint32] | None = None
        self._weighted: npt.NDArray[np.float32] | None = None
        if counts is not None:
            self.set_counts(counts)

    def _special_ids(self) -> npt.NDArray[np.bool_]:
        skip = np.zeros(self.table.vocab_size, dtype=np.bool_)
        for token, tid in self.table.tokenizer.vocab.items():
            if token.startswith("[") and token.endswith("]"):
                skip[tid] = True  # [UNK], [CLS], [SEP], [PAD], [MASK], [unusedN]
        return skip

    # -- corpus weights ------------------------------------------------------------------------

    def count_tokens(self, texts: Iterable[str]) -> npt.NDArray[np.uint32]:
        """How often each table token occurs in ``texts`` (specials not counted)."""
        total = np.zeros(self.table.vocab_size, dtype=np.int64)
        encode = self.table.tokenizer.encode
        for text in texts:
            ids = encode(text)
            if ids:
                total += np.bincount(np.asarray(ids, dtype=np.int64), minlength=total.shape[0])
        total[self._skip] = 0
        return np.minimum(total, np.iinfo(np.uint32).max).astype(np.uint32)

    def fit_corpus(self, texts: Iterable[str]) -> None:
        """Weigh tokens by their counts in ``texts`` (the corpus to be packed)."""
        self.set_counts(self.count_tokens(texts))

    def set_counts(self, counts: npt.NDArray[Any]) -> None:
        """Use ``counts`` (one per table row) as the corpus's token counts.

        Raises:
            EmbeddingError: ``counts`` does not have one non-negative integer per row.
        """
        arr = np.asarray(counts)
        if arr.ndim != 1 or arr.shape[0] != self.table.vocab_size or arr.dtype.kind not in "ui":
            raise EmbeddingError(
                f"the static token counts have shape {list(arr.shape)} ({arr.dtype}), expected "
                f"{self.table.vocab_size} unsigned integers (one per row of {self.table.path})"
            )
        if arr.dtype.kind == "i" and int(arr.min(initial=0)) < 0:
            raise EmbeddingError("the static token counts hold a negative count")
        fixed = arr.astype(np.uint32)
        weights = token_weights(fixed, self.sif_a)
        weights[self._skip] = 0.0
        table = self.table
        weighted = table.rows.astype(np.float64) * table.scales[:, None].astype(np.float64)
        weighted *= weights[:, None]
        with self._lock:
            self.counts = fixed
            self._weighted = weighted.astype(np.float32)
            # The cache keys texts by model id: with the weights in it, a vector weighted for
            # another corpus (or an earlier version of this one) is never taken from the cache.
            self.model_id = f"{self.table_name}+w{self.weights_hash()}"

    def weights_hash(self) -> str | None:
        """xxh3-64 (hex) of the counts' little-endian bytes, or None before any counts."""
        if self.counts is None:
            return None
        return xxhash.xxh3_64_hexdigest(self.counts.astype("<u4").tobytes())

    def index_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The arrays the packer stores with the index: the token counts."""
        if self.counts is None:
            raise EmbeddingError("the static embedder has no corpus counts: call fit_corpus first")
        return {COUNTS_ARRAY: self.counts.astype("<u4")}

    # -- embedding -----------------------------------------------------------------------------

    def token_ids(self, text: str) -> npt.NDArray[np.int64]:
        """The (non-special) token ids of ``text``, in order."""
        ids = np.asarray(self.table.tokenizer.encode(text), dtype=np.int64)
        return ids[~self._skip[ids]] if ids.shape[0] else ids

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Weighted, normalised token means; an all-zero row for a text with no tokens.

        Raises:
            EmbeddingError: No corpus counts yet (:meth:`fit_corpus`).
        """
        weighted = self._weighted
        if weighted is None:
            raise EmbeddingError("the static embedder has no corpus counts: call fit_corpus first")
        out = np.zeros((len(texts), self.dimensions), dtype=np.float64)
        for i, text in enumerate(texts):
            ids = self.token_ids(text)
            if ids.shape[0]:
                out[i] = weighted[ids].astype(np.float64).sum(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(out / norms, dtype=np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """One query's vector (as :meth:`embed_batch`)."""
        vec: npt.NDArray[np.float32] = self.embed_batch([text])[0]
        return vec

    def fusion(self) -> dict[str, Any]:
        """The hybrid fusion settings recorded in the index header (:data:`FUSION`)."""
        return dict(FUSION)

    def stamp(self) -> dict[str, object]:
        """The base stamp plus the table's sha256, the weighting and the languages."""
        out = super().stamp()
        out["model"] = self.table_name
        out["table"] = self.table.sha256
        out["weights"] = {"method": "sif", "a": self.sif_a, "counts": self.weights_hash()}
        out["languages"] = list(self.table.header.get("languages") or ["en"])
        return out

    def __repr__(self) -> str:
        return f"StaticEmbedder(model={self.model_id!r}, dimensions={self.dimensions})"


def from_config(config: object, **options: Any) -> StaticEmbedder:
    """The packing embedder: the shipped table, or ``providerOptions.table`` (a path).

    Raises:
        ConfigError: The table is missing or damaged.
    """
    opts = getattr(config, "provider_options", None) or {}
    raw = options.get("table", opts.get("table") if isinstance(opts, Mapping) else None)
    label = getattr(config, "path", None) or "config"
    path: Path | None = None
    if raw is not None:
        if not isinstance(raw, str) or not raw:
            raise ConfigError(
                f'{label}: providerOptions "table" must be a path to a .scidxtok file'
            )
        path = Path(raw).expanduser()
        root = getattr(config, "root", None)
        if not path.is_absolute() and root is not None:
            path = Path(root) / path
    return StaticEmbedder(load_table(path))


def embedder_for_index(
    stamp: Mapping[str, Any], counts: npt.NDArray[Any] | None, *, table: str | Path | None = None
) -> StaticEmbedder:
    """The query embedder of a ``static`` index: its stamp and its ``static.counts`` array.

    Raises:
        EmbeddingError: The index's table is not the one here, or its counts are missing or
            do not match the stamp.
    """
    want = stamp.get("table")
    try:
        found = load_table(table)
    except ConfigError as exc:
        raise EmbeddingError(str(exc)) from None
    if want != found.sha256:
        raise EmbeddingError(
            f"the index was embedded with static table {str(want)[:16]}, but this scidx has "
            f"{found.sha256[:16]} ({found.path}); rebuild the index or install the scidx that "
            "packed it"
        )
    if counts is None:
        raise EmbeddingError(f"the index has no `{COUNTS_ARRAY}` array; rebuild it")
    emb = StaticEmbedder(found, counts)
    weights = stamp.get("weights")
    if not isinstance(weights, Mapping) or weights.get("counts") != emb.weights_hash():
        raise EmbeddingError(
            f"the index's `{COUNTS_ARRAY}` array does not match its provider stamp; rebuild it"
        )
    return emb


def query_embedder_from_stamp(stamp: Mapping[str, object], **options: Any) -> StaticEmbedder:
    """Refused: a static query embedder needs the index's token counts, not only its stamp.

    The runtime builds it itself (:func:`embedder_for_index`); this exists so that a caller
    resolving providers by name gets a clear message.

    Raises:
        EmbeddingError: Always, unless ``options["counts"]`` holds the index's counts.
    """
    counts = options.get("counts")
    if counts is None:
        raise EmbeddingError(
            "a static index's queries are embedded with the index's own token counts; open "
            "the index with scidx.load() and search it"
        )
    return embedder_for_index(stamp, counts, table=options.get("table"))
