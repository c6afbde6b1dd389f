"""Opening an ONNX transformer encoder and its tokenizer, with errors that say what to do.

One home for what the ``local`` embedding provider (:mod:`scidx.embed.local`) and the
``cross-encoder`` reranker (:mod:`scidx.rerank.cross_encoder`) both do before their first
batch: import ``onnxruntime``/``tokenizers`` (an extra), read ``tokenizer.json``, create a CPU
session and check its inputs. Each caller passes its own error class (an embedding failure and
a reranking failure map to different exit codes) and names what it feeds the model.

Build-time and query-time module: imports ``onnxruntime`` and ``tokenizers`` only when called.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from scidx.embed.model_files import INSTALL_HINT
from scidx.errors import ScidxError

__all__ = ["INPUTS", "first_line", "import_runtime", "open_session", "read_tokenizer"]

#: The inputs scidx feeds an encoder (``token_type_ids`` only when the model declares it).
INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})


def import_runtime(error: type[ScidxError], who: str) -> tuple[Any, Any]:
    """``(onnxruntime, tokenizers)``, or ``error`` naming the extra that installs them."""
    try:
        import onnxruntime
        import tokenizers
    except ImportError as exc:
        raise error(
            f"{who} needs onnxruntime and tokenizers ({exc}); install them with: {INSTALL_HINT}"
        ) from None
    return onnxruntime, tokenizers


def first_line(exc: BaseException) -> str:
    """The substance of an ONNX Runtime or tokenizers message: one line, at most 240 chars."""
    text = str(exc).strip()
    # ONNX Runtime prefixes "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : "; keep the substance.
    text = re.sub(r"^\[ONNXRuntimeError\]\s*:\s*\d+\s*:\s*\w+\s*:\s*", "", text)
    line = text.splitlines()[0] if text else type(exc).__name__
    return line if len(line) <= 240 else line[:237] + "..."


def read_tokenizer(tokenizers: Any, path: Path, error: type[ScidxError], owner: str) -> Any:
    """The fast tokenizer in ``path``, without the file's own padding (not the model's limit)."""
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
        raise error(
            f"{path}: not a usable tokenizer.json ({first_line(exc)}); save the {owner}'s fast "
            "tokenizer again"
        ) from None
    tokenizer.no_padding()
    return tokenizer


def open_session(
    ort: Any,
    onnx: Path,
    error: type[ScidxError],
    *,
    threads: int | None,
    optimization: str | None = None,
    feeds: str,
    kind: str,
) -> tuple[Any, list[str]]:
    """A CPU session for ``onnx`` and its input names (sorted), checked against :data:`INPUTS`.

    Args:
        ort: The ``onnxruntime`` module (:func:`import_runtime`).
        onnx: The model file.
        error: The exception to raise (the caller's tree: embedding or reranking).
        threads: Intra-op threads (``None``: ONNX Runtime's default, one per core).
        optimization: A ``GraphOptimizationLevel`` member name; ``None``: the runtime's default.
        feeds: Who feeds the model (for the message about unexpected inputs).
        kind: What the model should be (for the same message).
    """
    options = ort.SessionOptions()
    options.log_severity_level = 4  # failures are raised as scidx errors, not logged
    if optimization is not None:
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, optimization)
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.inter_op_num_threads = 1
    if threads is not None:
        options.intra_op_num_threads = threads
    try:
        session = ort.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's own exception types, not importable stably
        raise error(
            f"{onnx}: ONNX Runtime cannot load this model ({first_line(exc)}); the file is "
            "corrupt or not an ONNX model: export or copy it again"
        ) from None
    inputs = sorted(i.name for i in session.get_inputs())
    if "input_ids" not in inputs or set(inputs) - INPUTS:
        raise error(
            f"{onnx}: the model's inputs are {inputs}; {feeds} feeds input_ids, attention_mask "
            f"and token_type_ids ({kind} exported to ONNX)"
        )
    return session, inputs
