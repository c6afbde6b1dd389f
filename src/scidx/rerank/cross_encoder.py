"""The ``cross-encoder`` reranker: a sentence-transformers ``CrossEncoder`` in ONNX, on CPU.

Install with ``pip install 'scidx[local]'`` (``onnxruntime`` + ``tokenizers``, as the ``local``
embedding provider). Nothing is ever downloaded.

Contract:

* **Model** — the ``CrossEncoder`` folder layout: ``model.onnx`` (or ``onnx/model.onnx``),
  ``tokenizer.json``, ``config.json`` and optionally ``tokenizer_config.json`` /
  ``sentence_bert_config.json``; or a Hugging Face id found in the local cache. Files are found
  as for the ``local`` provider (:mod:`scidx.embed.model_files`).
* **Input** — each (query, passage) pair is encoded by the tokenizer as a *pair*
  (``[CLS] query [SEP] passage [SEP]`` with segment ids for BERT-style models), truncated
  longest-first to the model's own maximum length (``max_seq_length`` /
  ``model_max_length``, capped by ``max_position_embeddings``), right-padded per batch.
* **Score** — the model's single logit, through the model's own activation:
  ``config.json``'s ``sentence_transformers.activation_fn`` (sentence-transformers ≥ 4) or
  ``sbert_ce_default_activation_function`` (older), else sigmoid, as ``CrossEncoder`` does for a
  one-label model. Sigmoid, identity and tanh are supported. A model with more than one output
  label (an NLI model) is refused: a reranker needs one relevance score.
* **Loading** — lazy: the folder is read when the reranker is made (so a missing file is a
  :class:`~scidx.errors.ConfigError` at once) and ONNX Runtime starts on the first
  :meth:`~CrossEncoderReranker.rerank`, with ``threads`` intra-op threads (default: ONNX
  Runtime's). A probe pair runs at load time; an unloadable file, a tokenizer of another
  model, a wrong output shape or non-finite outputs are a :class:`~scidx.errors.RerankError`.
* **Identity** — ``stamp()`` has ``provider: cross-encoder`` and ``model: name@<16 hex>``,
  the digest of the weights, the tokenizer and the settings that change scores (maximum length,
  activation), as :func:`~scidx.embed.model_files.model_identity` computes for embedders.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.embed.model_files import (
    ModelFiles,
    _read_json,
    model_identity,
    read_model_files,
    resolve_model,
)
from scidx.embed.onnx_runtime import first_line, import_runtime, open_session, read_tokenizer
from scidx.errors import ConfigError, RerankError
from scidx.index.hits import Hit
from scidx.index.rerank import passage

__all__ = ["ACTIVATIONS", "PROVIDER_ID", "CrossEncoderReranker", "from_options"]

PROVIDER_ID = "cross-encoder"

#: Activation name → function; names are matched on the last dotted part, as
#: sentence-transformers writes them (``torch.nn.modules.activation.Sigmoid``).
ACTIVATIONS = ("sigmoid", "identity", "tanh")

_PROBE = ("scidx probe query", "does this cross-encoder load and score?")


def _activation(files: ModelFiles) -> str:
    """The model's activation from ``config.json`` (see the module docstring)."""
    config = _read_json(files.onnx.parent / "config.json")
    if not isinstance(config, dict):
        config = _read_json(files.tokenizer.parent / "config.json")
    name: object = None
    if isinstance(config, dict):
        st = config.get("sentence_transformers")
        if isinstance(st, dict):
            name = st.get("activation_fn")
        if name is None:
            name = config.get("sbert_ce_default_activation_function")
    if name is None:
        return "sigmoid"
    short = str(name).rsplit(".", 1)[-1].lower()
    if short not in ACTIVATIONS:
        raise ConfigError(
            f"{files.tokenizer.parent / 'config.json'}: activation {name!r} is not supported by "
            f"the cross-encoder reranker; supported: {', '.join(ACTIVATIONS)}"
        )
    return short


class CrossEncoderReranker:
    """A local ONNX cross-encoder (see the module docstring).

    Args:
        model: The model folder or ``.onnx`` file, or a cached Hugging Face id.
        threads: ONNX Runtime intra-op threads (``None``: its default).
        batch_size: Pairs per model run.
        max_tokens: A lower maximum length than the model's (``None``: the model's).
        root: The folder a relative ``model`` path starts from.
        name: The readable name in the stamp (default: the folder's).

    Raises:
        ConfigError: A missing model folder or file, a bad setting, an unsupported activation.
    """

    provider_id = PROVIDER_ID

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        threads: int | None = None,
        batch_size: int = 32,
        max_tokens: int | None = None,
        root: Path | None = None,
        name: str | None = None,
    ) -> None:
        for label, value in (("threads", threads), ("batch_size", batch_size)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigError(
                    f"cross-encoder {label} must be a positive integer, got {value!r}"
                )
        location, repo_id = resolve_model(model, root=root)
        self.files = files = read_model_files(location, name=name or repo_id)
        if max_tokens is not None:
            if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 4:
                raise ConfigError(
                    f"cross-encoder max_tokens must be an integer >= 4, got {max_tokens!r}"
                )
            if max_tokens > files.max_tokens:
                raise ConfigError(
                    f"cross-encoder max_tokens {max_tokens} is above the model's limit of "
                    f"{files.max_tokens} tokens ({files.onnx.parent}); use a smaller value"
                )
        self.max_tokens = max_tokens or files.max_tokens
        self.activation = _activation(files)
        self.identity = model_identity(
            files, pooling=f"cross-encoder/{self.activation}", max_tokens=self.max_tokens
        )
        self.model_id = f"{files.name}@{self.identity[:16]}"
        self.name = f"{PROVIDER_ID}:{files.name}"
        self.threads = threads
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: list[str] = []

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self.model_id!r})"

    def stamp(self) -> Mapping[str, object]:
        """``provider``, ``model`` (name@identity), ``maxTokens`` and ``activation``."""
        return {
            "provider": PROVIDER_ID,
            "model": self.model_id,
            "maxTokens": self.max_tokens,
            "activation": self.activation,
        }

    @property
    def loaded(self) -> bool:
        """Whether ONNX Runtime has loaded the model (on the first :meth:`rerank`)."""
        return self._session is not None

    # -- loading ------------------------------------------------------------------------------

    def _ensure_loaded(self) -> None:
        with self._lock:
            if self._session is None:
                self._load()

    def _load(self) -> None:
        ort, tokenizers = import_runtime(RerankError, "the cross-encoder reranker")
        files = self.files
        tokenizer = read_tokenizer(tokenizers, files.tokenizer, RerankError, "cross-encoder")
        tokenizer.enable_truncation(self.max_tokens, strategy="longest_first")
        session, inputs = open_session(
            ort,
            files.onnx,
            RerankError,
            threads=self.threads,
            feeds="the cross-encoder reranker",
            kind="a CrossEncoder",
        )
        vocab = int(tokenizer.get_vocab_size(with_added_tokens=True))
        if files.vocab_size is not None and vocab > files.vocab_size:
            raise RerankError(
                f"{files.tokenizer} has {vocab} tokens but {files.onnx.parent / 'config.json'} "
                f"says the model knows {files.vocab_size}: the tokenizer belongs to another "
                "model; use the tokenizer.json that came with model.onnx"
            )
        self._tokenizer, self._session, self._inputs = tokenizer, session, inputs
        self._output = session.get_outputs()[0].name
        try:
            self._scores([_PROBE], probe_id=vocab - 1)
        except BaseException:
            self._session = None
            raise

    # -- scoring ------------------------------------------------------------------------------

    def encode(self, pairs: Sequence[tuple[str, str]]) -> dict[str, npt.NDArray[np.int64]]:
        """The model inputs for ``pairs``: ids, attention mask and segment ids, right-padded."""
        self._ensure_loaded()
        return self._encode(pairs)

    def _encode(
        self, pairs: Sequence[tuple[str, str]], probe_id: int | None = None
    ) -> dict[str, npt.NDArray[np.int64]]:
        encodings = self._tokenizer.encode_batch([list(p) for p in pairs])
        rows = [list(e.ids) for e in encodings]
        types = [list(e.type_ids) for e in encodings]
        if probe_id is not None:  # the largest token id must be accepted by the model
            rows[0].insert(1, probe_id)
            types[0].insert(1, 0)
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        segments = np.zeros_like(ids)
        for i, (row, seg) in enumerate(zip(rows, types, strict=True)):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
            segments[i, : len(seg)] = seg
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": segments}

    def _scores(
        self, pairs: Sequence[tuple[str, str]], probe_id: int | None = None
    ) -> npt.NDArray[np.float64]:
        feed = self._encode(pairs, probe_id)
        try:
            (out,) = self._session.run([self._output], {k: feed[k] for k in self._inputs})
        except Exception as exc:
            what = (
                "the tokenizer's largest token id is rejected by the model: tokenizer.json "
                "does not belong to this model"
                if probe_id is not None and "out of" in str(exc)
                else "the model failed"
            )
            raise RerankError(
                f"{self.files.onnx}: {what} ({first_line(exc)}); use the tokenizer.json and "
                "model.onnx of one cross-encoder"
            ) from None
        logits = np.asarray(out, dtype=np.float64)
        if logits.ndim == 1:
            logits = logits[:, None]
        if logits.ndim != 2 or logits.shape[0] != len(pairs) or logits.shape[1] != 1:
            raise RerankError(
                f"{self.files.onnx}: output {self._output!r} has shape {list(logits.shape)} for "
                f"{len(pairs)} pairs; a reranker needs one relevance logit per pair (a "
                "CrossEncoder with num_labels=1)"
            )
        scores = self._activate(logits[:, 0])
        bad = np.flatnonzero(~np.isfinite(scores))
        if bad.size:
            raise RerankError(
                f"{self.files.onnx}: the model returned NaN or infinite scores for {bad.size} "
                f"of {len(pairs)} pairs; the model is broken or was exported wrongly"
            )
        return scores

    def _activate(self, logits: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        if self.activation == "sigmoid":
            with np.errstate(over="ignore"):
                return np.asarray(1.0 / (1.0 + np.exp(-logits)))
        if self.activation == "tanh":
            return np.tanh(logits)
        return logits

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Scores of (query, passage) pairs, in order, ``batch_size`` pairs a run."""
        if not pairs:
            return []
        self._ensure_loaded()
        out: list[float] = []
        for start in range(0, len(pairs), self.batch_size):
            out.extend(self._scores(pairs[start : start + self.batch_size]).tolist())
        return out

    def rerank(self, query: str, candidates: Sequence[Hit]) -> list[float]:
        """Scores of ``candidates`` for ``query`` (see :func:`~scidx.index.rerank.passage`)."""
        return self.score_pairs([(query, passage(hit)) for hit in candidates])


def from_options(model: str | None, **options: Any) -> CrossEncoderReranker:
    """The registry factory: ``model`` is required (a folder, ``.onnx`` file or cached id).

    Options: ``threads``, ``batch_size``, ``max_tokens`` (integers), ``root``, ``name``.
    """
    if not model:
        raise ConfigError(
            "the cross-encoder reranker needs a model: a folder with model.onnx and "
            "tokenizer.json (a sentence-transformers CrossEncoder exported to ONNX)"
        )
    ints: dict[str, Any] = {}
    for key in ("threads", "batch_size", "max_tokens"):
        if key in options:
            ints[key] = _int_option(key, options.pop(key))
    return CrossEncoderReranker(model, **ints, **options)


def _int_option(key: str, value: object) -> int:
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise ConfigError(f"cross-encoder {key} must be an integer, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"cross-encoder {key} must be an integer, got {value!r}")
    return value
