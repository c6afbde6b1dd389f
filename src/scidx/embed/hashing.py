"""The offline feature-hashing embedder ``hashing-v2``: deterministic, stateless, no downloads.

A text becomes a sparse bag of features, each hashed (xxh3_64) to one of ``dimensions`` buckets
with a hash-derived sign (signed feature hashing, so collisions cancel on average instead of
piling up). Features of ``hashing-v2``:

* every term of :func:`scidx.tokenize.tokenize` (stemmed, stop-words removed), weight
  ``1 + ln(tf)`` (sublinear term frequency);
* the character 3- to 5-grams of each distinct term wrapped in ``<``/``>``, sharing the term's
  weight × :data:`CHAR_WEIGHT` spread over its n-grams (``/ sqrt(count)``, so long words do not
  dominate). They make morphological neighbours (``biomaterial``/``biomaterials``,
  ``kubeadm``/``kubeadm-init``) close even when stemming misses.

Measured on SciFact train (benchmarks/bench_scifact.py): adding adjacent-term bigrams lowered
vector nDCG@10 (0.49 → 0.47) and cost 20% of the embedding time, so there are none; character
n-grams at weight 1.0 gave the best hybrid (0.708 vs 0.706 at 0.5, 0.703 without).

The vector is L2-normalised float32. It uses no corpus statistics (no IDF), so a chunk's vector
depends on its own text only and packing is embarrassingly parallel and cacheable. Any change to
the features or weights MUST change :data:`MODEL_ID`: the model id is part of every cache key and
of the index's provider stamp. (``hashing-v1`` had bigram features; its cached vectors and
indexes are not mixed with ``hashing-v2``.)

Output is bit-for-bit deterministic: contributions are summed in an order fixed by the text
(terms sorted by hash within a text, n-grams by hash within a term), never by batch composition
or the order in which the process first met a word.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import xxhash

from scidx.embed.base import Embedder, Vectors
from scidx.tokenize import embedding_text, tokenize

__all__ = [
    "CHAR_WEIGHT",
    "MODEL_ID",
    "PROVIDER_ID",
    "HashingEmbedder",
    "embedding_text",
]

PROVIDER_ID = "hashing"
MODEL_ID = "hashing-v2"
# Chosen on SciFact train (benchmarks/bench_scifact.py, vector and hybrid nDCG@10).
CHAR_WEIGHT = 1.0
CHAR_NGRAMS = (3, 4, 5)

_U64 = np.uint64


MEMO_TERMS = 1 << 15
"""Most terms the per-embedder memo keeps (least recently used first out): about 13 MB."""


class _TermTable:
    """Bounded LRU memo of term → (term hash, sorted char n-gram hashes).

    Every call builds small arrays for the *distinct terms of that call* only, so its cost does
    not depend on how many terms the process has seen: a server fed novel query words keeps a
    flat per-query cost and a bounded memory (an unbounded memo that re-snapshotted all of its
    terms after each growth took 17x longer per query after 40k novel terms).
    """

    def __init__(self, capacity: int = MEMO_TERMS) -> None:
        self.capacity = capacity
        self.memo: OrderedDict[str, tuple[int, npt.NDArray[np.uint64]]] = OrderedDict()
        self.lock = threading.Lock()

    def lookup(
        self, terms: list[str]
    ) -> tuple[
        npt.NDArray[np.int64],
        npt.NDArray[np.uint64],
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
        npt.NDArray[np.uint64],
    ]:
        """``(ids, term_hash, gram_start, gram_len, grams)``; ids are local to this call."""
        distinct = list(dict.fromkeys(terms))
        memo = self.memo
        entries = []
        for term in distinct:
            entry = memo.get(term)
            if entry is None:
                entry = _term_features(term)
                memo[term] = entry
                if len(memo) > self.capacity:
                    memo.popitem(last=False)
            else:
                memo.move_to_end(term)
            entries.append(entry)
        local = {t: i for i, t in enumerate(distinct)}
        count = len(entries)
        term_hash = np.fromiter((e[0] for e in entries), dtype=np.uint64, count=count)
        gram_len = np.fromiter((e[1].shape[0] for e in entries), dtype=np.int64, count=count)
        gram_start = np.cumsum(gram_len) - gram_len
        grams = np.concatenate([e[1] for e in entries]) if entries else np.zeros(0, dtype=np.uint64)
        ids = np.fromiter((local[t] for t in terms), dtype=np.int64, count=len(terms))
        return ids, term_hash, gram_start, gram_len, grams


def _term_features(term: str) -> tuple[int, npt.NDArray[np.uint64]]:
    wrapped = f"<{term}>"
    grams = {wrapped[i : i + n] for n in CHAR_NGRAMS for i in range(max(len(wrapped) - n + 1, 0))}
    # Sorted so the summation order does not depend on set iteration order.
    hashes = sorted(xxhash.xxh3_64_intdigest(("#" + g).encode()) for g in grams)
    return xxhash.xxh3_64_intdigest(term.encode("utf-8")), np.array(hashes, dtype=np.uint64)


class HashingEmbedder(Embedder):
    """Deterministic feature-hashing embeddings (``hashing`` / ``hashing-v2``).

    Args:
        dimensions: Number of hash buckets (vector length), at least 8.

    Raises:
        ValueError: ``dimensions`` is below 8.

    Example:
        >>> emb = HashingEmbedder(dimensions=64)
        >>> emb.embed_batch(["kubectl apply --force"]).shape
        (1, 64)
    """

    provider_id = PROVIDER_ID
    model_id = MODEL_ID
    batch_size = 1024

    def __init__(self, dimensions: int = 512) -> None:
        if int(dimensions) < 8:
            raise ValueError(f"hashing dimensions must be at least 8, got {dimensions}")
        self.dimensions = int(dimensions)
        self._table = _TermTable()

    def languages(self) -> tuple[str, ...]:
        """Any language: it hashes the tokenizer's terms, whatever they are (issue 42)."""
        return ("*",)

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; see the module docstring for the features.

        Args:
            texts: The texts (chunk texts should come from :func:`embedding_text`).

        Returns:
            float32 ``(len(texts), dimensions)``, rows L2-normalised (all-zero for a text with
            no terms).
        """
        n = len(texts)
        dim = self.dimensions
        token_lists = [tokenize(t) for t in texts]
        lengths = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=n)
        flat = [tok for toks in token_lists for tok in toks]
        with self._table.lock:
            tids, term_hash, gram_start, gram_len, grams = self._table.lookup(flat)
        out: npt.NDArray[np.float64] = np.zeros(n * dim, dtype=np.float64)
        if tids.size:
            doc = np.repeat(np.arange(n, dtype=np.int64), lengths)
            h = term_hash[tids]
            feat_h, feat_doc, feat_w = self._features(doc, h, tids, gram_start, gram_len, grams)
            bucket = (feat_h % _U64(dim)).astype(np.int64)
            sign = np.where((feat_h >> _U64(63)) == _U64(1), -1.0, 1.0)
            out = np.asarray(
                np.bincount(feat_doc * dim + bucket, weights=sign * feat_w, minlength=n * dim),
                dtype=np.float64,
            )
        matrix = out.reshape(n, dim)
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(matrix / norms[:, None], dtype=np.float32)

    @staticmethod
    def _features(
        doc: npt.NDArray[np.int64],
        h: npt.NDArray[np.uint64],
        tids: npt.NDArray[np.int64],
        gram_start: npt.NDArray[np.int64],
        gram_len: npt.NDArray[np.int64],
        grams: npt.NDArray[np.uint64],
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        # Unigrams: count each (doc, term) once, ordered by (doc, term hash).
        order = np.lexsort((h, doc))
        hs, ds, ts = h[order], doc[order], tids[order]
        new = np.ones(hs.shape[0], dtype=bool)
        new[1:] = (hs[1:] != hs[:-1]) | (ds[1:] != ds[:-1])
        starts = np.flatnonzero(new)
        counts = np.diff(np.append(starts, hs.shape[0]))
        uni_h, uni_doc, uni_t = hs[starts], ds[starts], ts[starts]
        uni_w = 1.0 + np.log(counts)

        # Character n-grams of each distinct (doc, term), each n-gram sharing the term weight.
        glen = gram_len[uni_t]
        total = int(glen.sum())
        run_start = np.repeat(np.cumsum(glen) - glen, glen)
        within = np.arange(total, dtype=np.int64) - run_start
        gram_h = grams[np.repeat(gram_start[uni_t], glen) + within]
        per_gram = CHAR_WEIGHT * uni_w / np.sqrt(np.maximum(glen, 1))
        gram_w = np.repeat(per_gram, glen)
        gram_doc = np.repeat(uni_doc, glen)

        feat_h = np.concatenate([uni_h, gram_h])
        feat_doc = np.concatenate([uni_doc, gram_doc])
        feat_w = np.concatenate([uni_w, gram_w])
        return feat_h, feat_doc, feat_w
