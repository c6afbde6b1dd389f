"""The ``local`` provider: a sentence-embedding transformer run on the CPU by ONNX Runtime.

Install with ``pip install 'toolup-rag[local]'`` (``onnxruntime`` + ``tokenizers``). Nothing is ever
downloaded unless the caller allows it (``allowDownload`` / ``allow_download``).

Contract:

* **Model** — a folder holding ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``,
  a path to an ``.onnx`` file with ``tokenizer.json`` beside it or one folder up, or a Hugging
  Face model id (``org/name``) found in the standard local cache (``$HF_HUB_CACHE``, else
  ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``). Pooling (mean, cls, max,
  mean_sqrt_len) comes from the sentence-transformers files ``modules.json`` and
  ``1_Pooling/config.json`` when present (else mean); the maximum sequence length from
  ``sentence_bert_config.json`` (else ``tokenizer_config.json``), capped by ``config.json``'s
  ``max_position_embeddings``. Vectors are always L2-normalised (scidx scores by cosine).
* **Identity** — :func:`model_identity` hashes (xxh3-128) the bytes of the ONNX file(s) and
  ``tokenizer.json`` plus the settings that change vectors (pooling, sequence length), never
  the folder path. The model id in the index stamp and in every cache key is
  ``<name>@<first 16 hex digits>``, so different weights under the same path make the index
  stale, miss the cache and fail ``pack-docs --check`` (exit 6).
* **Windows** — a text longer than the sequence length is read whole as overlapping windows
  (:meth:`LocalEmbedder.windows`): the main vector is the first window (the model's input cut
  at ``max_tokens``), and the packer embeds the later windows as extra rows that vector
  search scores by their best window (FORMAT.md §2.11). :attr:`LocalEmbedder.truncated` lists
  the texts that needed them.
* **Batching** — texts are tokenized once, sorted by token count and batched (at most
  ``batch_size`` texts and ``batch_size * 128`` tokens a batch), so little padding is computed.
* **Determinism** — on one machine the vectors are bit-identical whatever the batch
  composition, padding or thread count (attention masks padding exactly; tested). Across CPUs
  they are not guaranteed bit-identical: ONNX Runtime picks kernels by instruction set, and
  two kernel choices on this machine (graph optimisation levels) differ by up to 2e-7 per
  component. The *index* is reproducible anyway: a re-pack takes the vectors of unchanged chunks
  from the previous index (or ``--reuse``, or the cache) whenever the stamp matches, so a CI
  runner with the committed index rebuilds the same bytes without running the model.
* **Query time** — :func:`query_embedder_from_stamp` finds the model the stamp names in
  ``model_dir`` (``scidx.load(path, model_dir=...)``), then ``$SCIDX_MODEL_DIR``, then the
  Hugging Face cache, and refuses a model whose identity differs from the stamp's.
* **Failures** — a missing folder or file is a :class:`~scidx.errors.ConfigError`; a missing
  ``onnxruntime``/``tokenizers`` an :class:`~scidx.errors.EmbeddingError` naming the extra; an
  unloadable ONNX file, a tokenizer that does not fit the model, an unexpected output shape or
  non-finite outputs a :class:`~scidx.errors.ProviderError`. All are raised before anything is
  embedded, cached or written (a probe input runs when the model loads).

Finding the model on disk or in the Hugging Face cache, and its identity, live in
:mod:`scidx.embed.model_files` (re-exported here).

The module imports neither ``onnxruntime`` nor ``tokenizers`` until a model is loaded.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.embed import model_record
from scidx.embed.base import Embedder, Vectors
from scidx.embed.model_files import (
    INSTALL_HINT,
    POOLING_MODES,
    ModelFiles,
    find_in_hf_cache,
    is_hf_id,
    model_identity,
    read_model_files,
    resolve_model,
)
from scidx.embed.onnx_runtime import first_line, import_runtime, open_session, read_tokenizer
from scidx.errors import ConfigError, EmbeddingError, ProviderError

__all__ = [
    "ENV_MODEL_DIR",
    "FUSION",
    "INSTALL_HINT",
    "POOLING_MODES",
    "PROVIDER_ID",
    "LocalEmbedder",
    "ModelFiles",
    "find_in_hf_cache",
    "from_config",
    "model_identity",
    "query_embedder_from_stamp",
    "read_model_files",
    "resolve_model",
]

PROVIDER_ID = "local"
ENV_MODEL_DIR = "SCIDX_MODEL_DIR"

#: Hybrid fusion for local-provider indexes: the dense leg weighs 0.6, no query expansion (the
#: dense leg needs no lexical feedback). Issue 10 chose 0.5 on SciFact train (all-MiniLM-L6-v2
#: int8, hybrid nDCG@10 0.7427, vector leg cut at 256 tokens); with long chunks read whole
#: (windows, MaxP) the dense leg is stronger and 0.6 is best: hybrid 0.7440 (0.7405 at 0.5),
#: and on the docs fixtures Kelpie 0.9094 -> 0.9228, scidx docs 0.7960 (0.5) -> 0.8054.
#: benchmarks/bench_local.py prints the full alpha x feedback grid to re-check it.
#:
#: ``vectorFloor``: a chunk no query term matches is a hit only if its cosine is at least 0.4.
#: ``benchmarks/bench_evidence.py --model ../shared/models/all-MiniLM-L6-v2-int8`` on SciFact
#: train with windows (MaxP): hybrid nDCG@10 0.7440 at floors 0.3-0.4 and without one, vector
#: 0.6777 (0.6774 with no floor); nonsense queries with a hit, of 30: 0 at 0.4, 1 at 0.35, 9 at
#: 0.3 — the best window of a long chunk is a larger cosine than its head alone, so the floor
#: chosen without windows (0.35: 0 of 30) let one through. Calibrated on that model; re-run
#: the benchmark for another one.
FUSION: Mapping[str, Any] = {
    "method": "weighted-sum",
    "alpha": 0.6,
    "prfDocs": 0,
    "prfBeta": 0.0,
    "vectorFloor": 0.4,
}

#: Tokens a window shares with the one before it (special tokens not counted). Measured on
#: SciFact train with ``benchmarks/bench_local.py`` (see docs/providers.md): the overlap a
#: window of 256 tokens needs so a passage cut by one boundary is whole in the next.
WINDOW_OVERLAP = 64

#: A later window of a long chunk counts this much less than its cosine (``meta.windows.margin``):
#: it lifts the chunk only where it beats the head (which carries the title and headings) by
#: more. Chosen on two thirds of SciFact train (540 queries) among 0, 0.005, 0.01, 0.015, 0.02,
#: 0.03, 0.05, 0.08 (vector nDCG@10 0.6640 -> 0.6682, hybrid 0.7327 -> 0.7345) and checked on
#: the other third (vector 0.7052 -> 0.7120, hybrid 0.7666 -> 0.7677) and the docs fixtures;
#: other ways of combining windows measured worse (docs/providers.md).
WINDOW_MARGIN = 0.01

# A token budget per batch, so a batch of long texts does not allocate a huge attention tensor.
_TOKENS_PER_TEXT_BUDGET = 128
_QUERY_CACHE_SIZE = 256
_PROBE_TEXT = "scidx probe: does this model load?"


# ---------------------------------------------------------------------------------------------
# The embedder


def _import_runtime() -> tuple[Any, Any]:
    return import_runtime(EmbeddingError, "the local embedding provider")


_OPTIMIZATION = {
    "all": "ORT_ENABLE_ALL",
    "extended": "ORT_ENABLE_EXTENDED",
    "basic": "ORT_ENABLE_BASIC",
    "none": "ORT_DISABLE_ALL",
}


class LocalEmbedder(Embedder):
    """Sentence embeddings from a local ONNX model, on the CPU.

    Args:
        model: A model folder, an ``.onnx`` file or a Hugging Face model id (see the module
            docstring).
        dimensions: The expected vector length; default the model's own. A mismatch is a
            :class:`~scidx.errors.ConfigError`.
        max_tokens: Cut inputs at this many tokens (special tokens included); default and
            upper bound: the model's maximum sequence length.
        threads: ONNX Runtime intra-op threads; default one per core.
        batch_size: At most this many texts per model run.
        root: The folder relative model paths start from.
        allow_download: Fetch a Hugging Face id that is not in the local cache.
        name: The name recorded in the stamp (default from the folder or model id).
        optimization: ONNX Runtime graph optimisation (``all``, ``extended``, ``basic``,
            ``none``). Kernels differ between levels in the last bits of the result, as they do
            between CPUs; tests use it to emulate another machine.
        window_overlap: Tokens each window of a long text shares with the previous one
            (default :data:`WINDOW_OVERLAP`, at most a quarter of ``max_tokens``); at most
            half the window.

    Raises:
        ConfigError: The model or one of its files is missing, or a setting is invalid.
        EmbeddingError: ``onnxruntime`` or ``tokenizers`` is not installed.
        ProviderError: The model cannot be loaded or does not give usable vectors.

    Example:
        >>> emb = LocalEmbedder("../shared/models/all-MiniLM-L6-v2-int8")  # doctest: +SKIP
        >>> emb.embed(["a cat"]).shape  # doctest: +SKIP
        (1, 384)
    """

    provider_id = PROVIDER_ID
    batch_size = 32

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        dimensions: int | None = None,
        max_tokens: int | None = None,
        threads: int | None = None,
        batch_size: int | None = None,
        root: Path | None = None,
        allow_download: bool = False,
        name: str | None = None,
        optimization: str = "all",
        window_overlap: int | None = None,
    ) -> None:
        location, repo_id = resolve_model(model, root=root, allow_download=allow_download)
        files = read_model_files(location, name=name or repo_id)
        self.files = files
        self.location = location
        if max_tokens is not None:
            if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 2:
                raise ConfigError(f"maxTokens must be an integer of at least 2, got {max_tokens!r}")
            limit = files.position_limit or files.max_tokens
            if max_tokens > limit:
                raise ConfigError(
                    f"maxTokens {max_tokens} is above the model's limit of {limit} tokens "
                    f"({files.onnx.parent}); use at most {limit}"
                )
        self.max_tokens = max_tokens or files.max_tokens
        if window_overlap is None:
            window_overlap = min(WINDOW_OVERLAP, self.max_tokens // 4)
        if (
            isinstance(window_overlap, bool)
            or not isinstance(window_overlap, int)
            or not 0 <= window_overlap <= self.max_tokens // 2
        ):
            raise ConfigError(
                f"windowOverlap must be an integer from 0 to {self.max_tokens // 2} (half of "
                f"maxTokens {self.max_tokens}), got {window_overlap!r}"
            )
        self.window_overlap = window_overlap
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
        ):
            raise ConfigError(f"threads must be a positive integer, got {threads!r}")
        if batch_size is not None:
            if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
                raise ConfigError(f"batchSize must be a positive integer, got {batch_size!r}")
            self.batch_size = batch_size
        if optimization not in _OPTIMIZATION:
            raise ConfigError(
                f"optimization must be one of {', '.join(_OPTIMIZATION)}, got {optimization!r}"
            )
        self.pooling = files.pooling
        self.identity = model_identity(files, pooling=self.pooling, max_tokens=self.max_tokens)
        self.model_id = f"{files.name}@{self.identity[:16]}"
        self.truncated: list[str] = []
        # Set by the packer: names an input (its chunk id) instead of quoting its text.
        self.describe_input: Any = None
        self._query_cache: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self._threads = threads
        self._optimization = optimization
        self._session: Any = None
        self._whole: Any = None
        self._requested_dimensions = dimensions
        if (
            dimensions is not None
            and files.dimensions is not None
            and dimensions != files.dimensions
        ):
            raise self._dimension_error(dimensions, files.dimensions)
        if files.dimensions is not None:
            # Known from 1_Pooling/config.json: the model loads lazily, on the first text to
            # embed, so a fully cached re-pack or an up-to-date check never starts ONNX Runtime.
            self.dimensions = files.dimensions
        else:
            self._ensure_loaded()

    def _dimension_error(self, wanted: int, actual: int) -> ConfigError:
        return ConfigError(
            f'"dimensions" is {wanted} but the model {self.files.name} gives {actual}-'
            f'dimensional vectors; remove "dimensions" or set it to {actual}'
        )

    @property
    def loaded(self) -> bool:
        """Whether the ONNX session has been created (it is, on the first text to embed)."""
        return self._session is not None

    def _ensure_loaded(self) -> None:
        with self._lock:
            if self._session is None:
                self._load(self._threads, self._optimization)
                self.dimensions = self._probe(self._requested_dimensions)

    # -- loading ------------------------------------------------------------------------------

    def _load(self, threads: int | None, optimization: str) -> None:
        ort, tokenizers = _import_runtime()
        files = self.files
        tokenizer = read_tokenizer(tokenizers, files.tokenizer, ProviderError, "model")
        tokenizer.enable_truncation(self.max_tokens)
        self._tokenizer = tokenizer
        self._session, self._inputs = open_session(
            ort,
            files.onnx,
            ProviderError,
            threads=threads,
            optimization=_OPTIMIZATION[optimization],
            feeds="scidx",
            kind="a transformer encoder",
        )
        outputs = [o.name for o in self._session.get_outputs()]
        self._output = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]

    def _probe(self, dimensions: int | None) -> int:
        """Run one input that holds the tokenizer's largest id; check the shape and values."""
        files = self.files
        vocab = int(self._tokenizer.get_vocab_size(with_added_tokens=True))
        if files.vocab_size is not None and vocab > files.vocab_size:
            raise ProviderError(
                f"{files.tokenizer} has {vocab} tokens but {files.onnx.parent / 'config.json'} "
                f"says the model knows {files.vocab_size}: the tokenizer belongs to another "
                "model; use the tokenizer.json that came with model.onnx"
            )
        encoding = self._tokenizer.encode(_PROBE_TEXT)
        ids = list(encoding.ids)
        ids.insert(1 if len(ids) > 1 else 0, vocab - 1)
        hidden, mask = self._run([ids], probe=True)
        if hidden.ndim not in (2, 3) or hidden.shape[0] != 1:
            raise ProviderError(
                f"{files.onnx}: output {self._output!r} has shape {list(hidden.shape)}; expected "
                "(batch, sequence, dimensions) token states or (batch, dimensions) vectors"
            )
        dims = int(hidden.shape[-1])
        if files.dimensions is not None and files.dimensions != dims:
            raise ProviderError(
                f"{files.onnx}: the model gives {dims}-dimensional vectors, but "
                f"1_Pooling/config.json says {files.dimensions}; the folder mixes two models"
            )
        if dimensions is not None and dimensions != dims:
            raise self._dimension_error(dimensions, dims)
        self._finish(hidden, mask, ["the probe input"], dims)
        return dims

    # -- running ------------------------------------------------------------------------------

    def _run(
        self, rows: Sequence[Sequence[int]], *, probe: bool = False
    ) -> tuple[npt.NDArray[Any], npt.NDArray[np.int64]]:
        """Run the model on right-padded ``rows``: ``(output, attention mask)``."""
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        try:
            (out,) = self._session.run([self._output], {k: feed[k] for k in self._inputs})
        except Exception as exc:
            what = (
                "the tokenizer's largest token id is rejected by the model: tokenizer.json "
                "does not belong to this model"
                if probe and "out of" in str(exc)
                else "the model failed"
            )
            raise ProviderError(
                f"{self.files.onnx}: {what} ({first_line(exc)}); use the tokenizer.json and "
                "model.onnx of one model"
            ) from None
        return np.asarray(out), mask

    def _finish(
        self,
        hidden: npt.NDArray[Any],
        mask: npt.NDArray[np.int64],
        labels: Sequence[str],
        dimensions: int | None = None,
    ) -> Vectors:
        """Pool token states (or take pooled vectors), L2-normalise, and check every value."""
        if hidden.ndim == 3:
            states = hidden.astype(np.float64)
            weights = mask[:, :, None].astype(np.float64)
            if self.pooling == "cls":
                pooled = states[:, 0, :]
            elif self.pooling == "max":
                pooled = np.where(weights > 0, states, -np.inf).max(axis=1)
            else:
                counts = np.maximum(weights.sum(axis=1), 1.0)
                pooled = (states * weights).sum(axis=1)
                pooled = pooled / (np.sqrt(counts) if self.pooling == "mean_sqrt_len" else counts)
        else:
            pooled = hidden.astype(np.float64)
        expected = dimensions or self.dimensions
        if pooled.shape[1] != expected:
            raise ProviderError(
                f"{self.files.onnx}: the model gave {pooled.shape[1]}-dimensional vectors, "
                f"expected {expected}"
            )
        finite: npt.NDArray[np.bool_] = np.asarray(np.isfinite(pooled).all(axis=1), dtype=bool)
        norms = np.linalg.norm(np.where(finite[:, None], pooled, 0.0), axis=1)
        bad = np.flatnonzero(~finite | (norms == 0))
        if bad.size:
            i = int(bad[0])
            what = "NaN or infinite values" if not finite[i] else "an all-zero vector"
            raise ProviderError(
                f"{self.files.onnx}: the model returned {what} for {labels[i]} "
                f"({bad.size} of {len(labels)} inputs in the batch); the model is broken or "
                "was exported wrongly, so nothing was written"
            )
        return np.ascontiguousarray(pooled / norms[:, None], dtype=np.float32)

    def _label(self, text: str, position: int) -> str:
        name = self.describe_input(text) if self.describe_input is not None else None
        return f"chunk {name!r}" if name else f"input {position}"

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, truncated to ``max_tokens``; records truncations.

        Returns:
            One list of ids per text, special tokens included.
        """
        self._ensure_loaded()
        encodings = self._tokenizer.encode_batch(list(texts))
        rows = []
        for position, (text, enc) in enumerate(zip(texts, encodings, strict=True)):
            if enc.overflowing:
                self.truncated.append(self._label(text, position).removeprefix("chunk "))
            rows.append(list(enc.ids))
        return rows

    def _window_tokenizer(self) -> Any:
        """The tokenizer without truncation or padding, loaded without the model.

        Windows need every token's offsets, and a warm re-pack (every vector cached) must not
        start ONNX Runtime just to find them.
        """
        with self._lock:
            if self._whole is None:
                try:
                    import tokenizers
                except ImportError:
                    _import_runtime()  # raises the EmbeddingError naming the extra
                    raise
                whole = read_tokenizer(tokenizers, self.files.tokenizer, ProviderError, "model")
                whole.no_truncation()
                whole.no_padding()
                self._whole = whole
            return self._whole

    def window_policy(self) -> dict[str, Any]:
        """``meta.windows``: window length (special tokens included), overlap, MaxP, margin.

        A later window counts :data:`WINDOW_MARGIN` less than its cosine.
        """
        return {
            "tokens": self.max_tokens,
            "overlap": self.window_overlap,
            "score": "max",
            "margin": WINDOW_MARGIN,
        }

    def windows(self, texts: Sequence[str]) -> list[list[str]]:
        """The texts of each text's windows after the first (``[]`` when it fits).

        A window is ``max_tokens`` tokens with the special tokens, so ``C = max_tokens -
        specials`` content tokens; window ``k`` starts at content token ``k * (C - overlap)``,
        moved back to the first token of its word (never before the previous window's start
        + 1), and is the text from its first token's first character to its last token's last
        character. The first window is the model's truncated input (the main vector), so only
        the later ones are returned. Deterministic: only the tokenizer's offsets decide.
        """
        whole = self._window_tokenizer()
        content = self.max_tokens - int(whole.num_special_tokens_to_add(False))
        step = max(content - self.window_overlap, 1)
        out: list[list[str]] = []
        encodings = whole.encode_batch(list(texts), add_special_tokens=False)
        for text, enc in zip(texts, encodings, strict=True):
            n = len(enc.ids)
            if content < 1 or n <= content:
                out.append([])
                continue
            offsets, words = enc.offsets, enc.word_ids
            parts: list[str] = []
            start, k = 0, 1
            while start + content < n:
                at = min(k * step, n - 1)
                while at > start + 1 and words[at] is not None and words[at - 1] == words[at]:
                    at -= 1
                start = max(at, start + 1)
                end = min(start + content, n)
                parts.append(text[offsets[start][0] : offsets[end - 1][1]])
                k += 1
            out.append(parts)
        return out

    def embed_iter(self, texts: Sequence[str]) -> Iterator[tuple[list[int], Vectors]]:
        """Yield ``(positions, vectors)`` batch by batch, shortest texts first.

        Texts are sorted by token count (ties by position) so each batch pads little; the
        vectors do not depend on the batching.
        """
        rows = self.tokenize(texts)
        order = sorted(range(len(rows)), key=lambda i: (len(rows[i]), i))
        budget = self.batch_size * _TOKENS_PER_TEXT_BUDGET
        start = 0
        while start < len(order):
            end = start + 1
            while (
                end < len(order)
                and end - start < self.batch_size
                and (end - start + 1) * len(rows[order[end]]) <= budget
            ):
                end += 1
            positions = order[start:end]
            hidden, mask = self._run([rows[i] for i in positions])
            labels = [self._label(texts[i], i) for i in positions]
            yield positions, self._finish(hidden, mask, labels)
            start = end

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in order (see :meth:`embed_iter`).

        Returns:
            float32 ``(len(texts), dimensions)``, rows L2-normalised.
        """
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for positions, vectors in self.embed_iter(texts):
            out[positions] = vectors
        return out

    def embed_query(self, query: str) -> Vectors:
        """One query's vector, from a small in-process LRU cache when asked before."""
        self._ensure_loaded()
        with self._lock:
            hit = self._query_cache.get(query)
            if hit is not None:
                self._query_cache.move_to_end(query)
                return hit
        (ids,) = [list(e.ids) for e in self._tokenizer.encode_batch([query])]
        hidden, mask = self._run([ids])
        vector: Vectors = np.ascontiguousarray(self._finish(hidden, mask, ["the query"])[0])
        with self._lock:
            self._query_cache[query] = vector
            while len(self._query_cache) > _QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return vector

    def stamp(self) -> dict[str, object]:
        """Provider, model id (name@identity), dimensions, normalisation, pooling, max tokens."""
        out = super().stamp()
        out.update(
            {"modelHash": self.identity, "pooling": self.pooling, "maxTokens": self.max_tokens}
        )
        return out

    def remember_location(self) -> None:
        """Record where this model is on this machine (the packer calls it after a pack).

        So an index packed with it is searchable here with no ``model_dir``
        (:mod:`scidx.embed.model_record`; never in the index, which stays the same bytes
        on every machine).
        """
        model_record.remember(self.identity, self.location)

    def languages(self) -> tuple[str, ...] | None:
        """The model's languages: its model card's, else by its name (issue 42)."""
        from scidx.embed.languages import model_languages

        return model_languages(self.files.name, self.files.onnx.parent)

    def fusion(self) -> dict[str, Any]:
        """The hybrid fusion settings to record in the index header (:data:`FUSION`)."""
        return dict(FUSION)

    def __repr__(self) -> str:
        return (
            f"LocalEmbedder(model={self.model_id!r}, dimensions={self.dimensions}, "
            f"pooling={self.pooling!r}, max_tokens={self.max_tokens})"
        )


# ---------------------------------------------------------------------------------------------
# Factories used by the packer and by query-time search


def from_config(config: object, **options: Any) -> LocalEmbedder:
    """Build the embedder from a scidx ``Config`` (read by attribute).

    Reads ``model`` (required), ``dimensions`` (0 or None: the model's own), ``max_tokens``,
    ``threads``, ``batch_size``, ``allow_download`` and ``root``.

    Raises:
        ConfigError: No model, or a setting the model cannot honour.
    """
    model = getattr(config, "model", None)
    label = getattr(config, "path", None) or "config"
    if not model:
        raise ConfigError(
            f'{label}: "model" is required for embeddingProvider "local": the folder holding '
            "model.onnx and tokenizer.json, or a Hugging Face model id in the local cache"
        )
    dims = getattr(config, "dimensions", None)
    kwargs: dict[str, Any] = {
        "dimensions": dims or None,
        "max_tokens": getattr(config, "max_tokens", None),
        "threads": getattr(config, "threads", None),
        "batch_size": getattr(config, "batch_size", None),
        "allow_download": bool(getattr(config, "allow_download", False)),
        "root": getattr(config, "root", None),
    }
    overlap = getattr(config, "window_overlap", None)
    if overlap is not None:
        kwargs["window_overlap"] = overlap
    kwargs.update(options)
    try:
        return LocalEmbedder(model, **kwargs)
    except ConfigError as exc:
        raise ConfigError(f"{label}: {exc}") from None


_QUERY_EMBEDDERS: dict[tuple[object, ...], LocalEmbedder] = {}
_QUERY_EMBEDDERS_LOCK = threading.Lock()


def _candidates(base: Path, name: str) -> list[Path]:
    """``base`` itself if it is a model folder, else ``base/name`` and ``base/<last part>``."""
    out = [base, base / name, base / name.split("/")[-1]]
    return list(dict.fromkeys(p for p in out if p.is_dir() or p.suffix == ".onnx"))


def query_embedder_from_stamp(stamp: Mapping[str, object], **options: Any) -> LocalEmbedder:
    """The embedder for queries against an index whose provider stamp is ``stamp``.

    The model is looked for, in order, in ``model_dir`` (the model folder itself, or a folder
    holding it under its name), then ``$SCIDX_MODEL_DIR`` (the same), then the Hugging Face
    cache when the stamp's name is a model id. A model whose identity differs from the stamp's
    ``modelHash`` is refused. Embedders are kept per (stamp, options) for the process.

    Args:
        stamp: The index header's ``provider`` map.
        **options: ``model_dir``, ``threads`` (default 1); other keys (e.g. ``base_url`` for
            OpenAI indexes) are ignored.

    Raises:
        EmbeddingError: The extra is not installed, or the model is not found or differs.
    """
    model = stamp.get("model")
    identity = stamp.get("modelHash")
    max_tokens = stamp.get("maxTokens")
    dims = stamp.get("dimensions")
    if (
        stamp.get("provider") != PROVIDER_ID
        or not isinstance(model, str)
        or "@" not in model
        or not isinstance(identity, str)
        or not isinstance(max_tokens, int)
        or not isinstance(dims, int)
    ):
        raise EmbeddingError(f"the index's provider stamp {dict(stamp)!r} is not a local stamp")
    _import_runtime()  # the clearest message first: what to install
    name = model.rsplit("@", 1)[0]
    # One thread by default: a short query is too small to split, and on a busy 2-core machine
    # one thread measured 12 ms p50 against 31 ms for two (docs/providers.md).
    threads = options.get("threads") or 1
    bases: list[Path] = []
    for raw in (options.get("model_dir"), os.environ.get(ENV_MODEL_DIR, "").strip() or None):
        if raw:
            bases.append(Path(os.fspath(raw)).expanduser())
    places = [p for base in bases for p in _candidates(base, name)]
    packed_from = model_record.recall(identity)
    if packed_from is not None:
        places.append(packed_from)
    if is_hf_id(name):
        cached = find_in_hf_cache(name)
        if cached is not None:
            places.append(cached)
    key = (model, identity, tuple(str(p) for p in places), threads)
    with _QUERY_EMBEDDERS_LOCK:
        ready = _QUERY_EMBEDDERS.get(key)
    if ready is not None:
        return ready
    mismatched: list[str] = []
    for place in places:
        try:
            files = read_model_files(place, name=name)
        except ConfigError:
            continue
        pooling = stamp.get("pooling", files.pooling)
        found = model_identity(files, pooling=str(pooling), max_tokens=max_tokens)
        if found != identity:
            mismatched.append(f"{place} (identity {found[:16]})")
            continue
        embedder = LocalEmbedder(
            place, name=name, max_tokens=max_tokens, threads=threads, dimensions=dims
        )
        with _QUERY_EMBEDDERS_LOCK:
            _QUERY_EMBEDDERS[key] = embedder
        return embedder
    where = (
        f"; these hold a different model: {', '.join(mismatched)}"
        if mismatched
        else f"; looked in {', '.join(str(p) for p in places)}"
        if places
        else ""
    )
    raise EmbeddingError(
        f"the index was embedded with the local model {name!r} (identity {identity[:16]}), "
        f"which is not found here{where}. Point to its folder with "
        f"scidx.load(path, model_dir=...), --model-dir or ${ENV_MODEL_DIR}"
    )
