"""Distilling a sentence-embedding ONNX model into a static token table (Model2Vec-style).

Method (Tulkens & van Dongen, 2024, "Model2Vec"), as :func:`distill` runs it:

1. every vocabulary token alone is one input, ``[CLS] token [SEP]``, in batches of
   :data:`BATCH` (all sequences have length 3, so no padding enters any result);
2. the model's ``last_hidden_state`` is mean-pooled over the three positions and L2-normalised:
   the model's own sentence embedding of that one token;
3. PCA: the rows are centred and projected on the top ``dimensions`` eigenvectors of their
   covariance (float64; each component's sign fixed so its largest loading is positive);
4. int8 with one float32 scale per row (``scale = max|row| / 127``, values rounded to nearest).

The corpus-dependent part (SIF token weights, ``a / (a + p)``) is applied when packing
(:mod:`scidx.embed.static`), not here. The same model and settings give the same bytes on a
machine (one intra-op thread by default: the summation order of a threaded product can vary).

Build-time module: numpy and ``onnxruntime`` (the ``local`` extra), imported when called.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx._version import __version__
from scidx.embed.onnx_runtime import first_line, open_session
from scidx.embed.static_table import encode_table, parse_table
from scidx.embed.wordpiece import WordPiece
from scidx.errors import ConfigError, EmbeddingError

__all__ = ["BATCH", "DEFAULT_DIMENSIONS", "METHOD", "DistillResult", "distill", "distill_bytes"]

#: Tokens per model call.
BATCH = 512
#: The dimension the shipped table is reduced to (docs/performance.md: 128 scored as 256 did,
#: fused, at half the bytes per query token).
DEFAULT_DIMENSIONS = 128
#: Recorded in every table's header (``method``).
METHOD: dict[str, Any] = {
    "name": "model2vec-style distillation",
    "input": "[CLS] token [SEP]",
    "pooling": "mean over the 3 positions, L2-normalised",
    "reduction": "PCA (centred, float64 covariance eigenvectors, sign: largest loading > 0)",
    "quantisation": "int8 per row, scale = max|row| / 127, round to nearest",
}

_TOKENIZER_KEYS = ("normalizer", "pre_tokenizer", "model")


class DistillResult(dict[str, Any]):
    """What :func:`distill` wrote: ``table``, ``provenance``, ``sha256``, ``bytes``, ..."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _special(vocab: dict[str, int], name: str) -> int:
    tid = vocab.get(name)
    if tid is None:
        raise ConfigError(f"tokenizer.json: the vocabulary has no {name} token to wrap tokens in")
    return int(tid)


def distill_bytes(
    model_dir: str | Path,
    *,
    dimensions: int = DEFAULT_DIMENSIONS,
    threads: int | None = 1,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> bytes:
    """The table file's bytes for the model in ``model_dir`` (``model.onnx``, ``tokenizer.json``).

    Raises:
        ConfigError: A file is missing or the tokenizer is not BERT WordPiece, or
            ``dimensions`` is not below the model's.
        EmbeddingError: onnxruntime is missing or the model fails or returns non-finite values.
    """
    folder = Path(model_dir)
    onnx, tok_path = folder / "model.onnx", folder / "tokenizer.json"
    for needed in (onnx, tok_path):
        if not needed.is_file():
            raise ConfigError(
                f"{needed}: not found; MODEL_DIR must hold model.onnx and tokenizer.json"
            )
    try:
        doc = json.loads(tok_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{tok_path}: cannot read the tokenizer ({exc})") from None
    wordpiece = WordPiece.from_json(doc, str(tok_path))
    vocab = wordpiece.vocab
    size = max(vocab.values()) + 1
    if len(vocab) != size:
        raise ConfigError(f"{tok_path}: the vocabulary's ids are not 0..{size - 1} without gaps")
    cls_id, sep_id = _special(vocab, "[CLS]"), _special(vocab, "[SEP]")
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise EmbeddingError(
            f"distilling needs onnxruntime ({exc}); pip install 'toolup-rag[local]'"
        ) from None
    session, inputs = open_session(
        ort, onnx, EmbeddingError, threads=threads, feeds="distill", kind="a sentence encoder"
    )
    chunks: list[npt.NDArray[np.float64]] = []
    for start in range(0, size, BATCH):
        ids = np.arange(start, min(start + BATCH, size), dtype=np.int64)
        batch = np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], axis=1)
        feeds = {"input_ids": batch}
        if "attention_mask" in inputs:
            feeds["attention_mask"] = np.ones_like(batch)
        if "token_type_ids" in inputs:
            feeds["token_type_ids"] = np.zeros_like(batch)
        try:
            (states, *_) = session.run(None, feeds)
        except Exception as exc:  # onnxruntime's own exception types
            raise EmbeddingError(
                f"{onnx}: the model failed on tokens {start}..: {first_line(exc)}"
            ) from None
        arr = np.asarray(states, dtype=np.float64)
        if arr.ndim != 3 or arr.shape[:2] != batch.shape:
            raise EmbeddingError(
                f"{onnx}: the model returned shape {list(arr.shape)}, expected "
                f"[{batch.shape[0]}, 3, hidden] (last_hidden_state)"
            )
        if not np.all(np.isfinite(arr)):
            raise EmbeddingError(f"{onnx}: the model returned NaN or infinite values")
        chunks.append(arr.mean(axis=1))
        if progress is not None:
            progress(int(ids[-1]) + 1, size)
    pooled = np.concatenate(chunks)
    hidden = pooled.shape[1]
    if not 1 <= dimensions <= hidden:
        raise ConfigError(f"dimensions {dimensions} must be in 1..{hidden} (the model's own)")
    rows, scales, explained = _pca_int8(pooled, dimensions)
    header = {
        "name": name or f"{folder.name}-static-d{dimensions}",
        "dimensions": int(dimensions),
        "vocabSize": int(size),
        "method": {**METHOD, "components": int(dimensions), "hidden": int(hidden)},
        "explainedVariance": round(explained, 6),
        "tokenizer": {k: doc[k] for k in _TOKENIZER_KEYS},
        "source": {
            "folder": folder.name,
            "files": {"model.onnx": _sha256(onnx), "tokenizer.json": _sha256(tok_path)},
        },
        "sifA": 1e-3,
        "languages": ["en"],
    }
    return encode_table(rows, scales, header)


def _pca_int8(
    pooled: npt.NDArray[np.float64], dimensions: int
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], float]:
    """Unit rows, PCA to ``dimensions`` (fixed signs), int8 with a scale per row.

    Returns the rows, their scales and the share of the variance the components keep.
    """
    size = pooled.shape[0]
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit = pooled / norms
    centred = unit - unit.mean(axis=0)
    cov = centred.T @ centred / float(size)
    values, vectors = np.linalg.eigh(cov)
    order = np.argsort(-values, kind="stable")[:dimensions]
    comps = vectors[:, order]
    flip = np.sign(comps[np.argmax(np.abs(comps), axis=0), np.arange(dimensions)])
    comps = comps * np.where(flip == 0, 1.0, flip)
    reduced = centred @ comps
    peak = np.abs(reduced).max(axis=1)
    scales = (peak / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0).astype(np.float64)
    rows = np.clip(np.rint(reduced / safe[:, None]), -127, 127).astype(np.int8)
    explained = float(values[order].sum() / values.sum()) if values.sum() > 0 else 0.0
    return rows, scales, explained


def distill(
    model_dir: str | Path,
    out: str | Path,
    *,
    dimensions: int = DEFAULT_DIMENSIONS,
    threads: int | None = 1,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> DistillResult:
    """Write the table of :func:`distill_bytes` to ``out`` and its provenance beside it.

    The provenance file (``out`` + ``.provenance.json``) holds the method, the model files'
    sha256, the table's sha256 and size and the scidx version.

    Raises:
        ConfigError, EmbeddingError: as :func:`distill_bytes`; nothing is written then (the
            file is written only once the table is complete and checked).
    """
    data = distill_bytes(
        model_dir, dimensions=dimensions, threads=threads, name=name, progress=progress
    )
    table = parse_table(data, str(out))  # the same checks a reader makes
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    provenance = {
        "table": target.name,
        "sha256": table.sha256,
        "bytes": len(data),
        "name": table.header["name"],
        "dimensions": table.dimensions,
        "vocabSize": table.vocab_size,
        "method": table.header["method"],
        "explainedVariance": table.header["explainedVariance"],
        "source": table.header["source"],
        "generator": f"scidx {__version__}",
    }
    prov = target.with_name(target.name + ".provenance.json")
    prov.write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return DistillResult(provenance, path=str(target), provenancePath=str(prov))
