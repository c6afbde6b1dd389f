"""Tiny real ONNX models for the local provider's failure tests, written without the onnx package.

ONNX files are protocol buffers (onnx.proto3); the handful of messages these models need are
encoded here by hand, so the tests need nothing beyond onnxruntime to build and run them. Each
model takes ``input_ids`` (int64, batch x sequence) and returns ``last_hidden_state`` (float,
batch x sequence x dims), like an exported transformer encoder.
"""

from __future__ import annotations

import struct

__all__ = ["constant_model", "cross_encoder_model", "nan_model", "token_table_model"]

_FLOAT, _INT64 = 1, 7  # TensorProto.DataType
_ATTR_INT = 2  # AttributeProto.AttributeType.INT


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, value: int | bytes | str) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _tensor(name: str, values: list[int]) -> bytes:
    """An int64 initializer (TensorProto): dims 1, data_type 2, name 8, raw_data 9."""
    raw = struct.pack(f"<{len(values)}q", *values)
    return _field(1, len(values)) + _field(2, _INT64) + _field(8, name) + _field(9, raw)


def _node(op: str, inputs: list[str], outputs: list[str], **ints: int) -> bytes:
    """NodeProto: input 1, output 2, name 3, op_type 4, attribute 5 (name 1, i 3, type 20)."""
    out = b"".join(_field(1, i) for i in inputs) + b"".join(_field(2, o) for o in outputs)
    out += _field(3, f"{op}_{outputs[0]}") + _field(4, op)
    for key, value in ints.items():
        out += _field(5, _field(1, key) + _field(3, value) + _field(20, _ATTR_INT))
    return out


def _value_info(name: str, elem_type: int, dims: list[int | str]) -> bytes:
    """ValueInfoProto: name 1, type 2 → TypeProto.tensor_type 1 → elem_type 1, shape 2."""
    shape = b"".join(_field(1, _field(2, d) if isinstance(d, str) else _field(1, d)) for d in dims)
    return _field(1, name) + _field(2, _field(1, _field(1, elem_type) + _field(2, shape)))


def _model(nodes: list[bytes], initializers: list[bytes], dims: int) -> bytes:
    graph = b"".join(_field(1, n) for n in nodes) + _field(2, "scidx-test")
    graph += b"".join(_field(5, t) for t in initializers)
    graph += _field(11, _value_info("input_ids", _INT64, ["batch", "sequence"]))
    graph += _field(12, _value_info("last_hidden_state", _FLOAT, ["batch", "sequence", dims]))
    # ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8 (domain 1, version 2).
    return (
        _field(1, 8)
        + _field(2, "scidx-tests")
        + _field(7, graph)
        + _field(8, _field(1, "") + _field(2, 17))
    )


def _states(dims: int, last: str) -> tuple[list[bytes], list[bytes]]:
    """Nodes that broadcast a per-token float ``last`` (batch x sequence x 1) to ``dims``."""
    nodes = [_node("Expand", [last, "shape"], ["last_hidden_state"])]
    return nodes, [_tensor("shape", [1, 1, dims])]


def constant_model(dims: int) -> bytes:
    """A model whose token states are the token id in every one of ``dims`` components."""
    nodes = [
        _node("Cast", ["input_ids"], ["x"], to=_FLOAT),
        _node("Unsqueeze", ["x", "axes"], ["x3"]),
    ]
    tail, inits = _states(dims, "x3")
    return _model(nodes + tail, [_tensor("axes", [2]), *inits], dims)


def nan_model(dims: int) -> bytes:
    """A model whose every output value is NaN (0 / 0), as a badly exported model can be."""
    nodes = [
        _node("Cast", ["input_ids"], ["x"], to=_FLOAT),
        _node("Unsqueeze", ["x", "axes"], ["x3"]),
        _node("Sub", ["x3", "x3"], ["zero"]),
        _node("Div", ["zero", "zero"], ["nan"]),
    ]
    tail, inits = _states(dims, "nan")
    return _model(nodes + tail, [_tensor("axes", [2]), *inits], dims)


def _float_tensor(name: str, dims: list[int], values: list[float]) -> bytes:
    """A float32 initializer (TensorProto): dims 1 (repeated), data_type 2, name 8, raw 9."""
    raw = struct.pack(f"<{len(values)}f", *values)
    out = b"".join(_field(1, d) for d in dims)
    return out + _field(2, _FLOAT) + _field(8, name) + _field(9, raw)


def cross_encoder_model(
    word: list[list[float]],
    types: list[list[float]],
    weights: list[list[float]],
    bias: list[float],
    *,
    inputs: tuple[str, ...] = ("input_ids", "attention_mask", "token_type_ids"),
) -> bytes:
    """A tiny cross-encoder: ``logits = tanh(masked_mean(word[ids] + types[segments])) @ W + b``.

    Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, batch x sequence);
    output ``logits`` (float, batch x labels), as a sentence-transformers ``CrossEncoder``
    exported to ONNX. ``inputs`` renames or drops inputs, for the bad-model tests.
    """
    vocab, dims, labels = len(word), len(word[0]), len(bias)
    ids, mask, segments = inputs if len(inputs) == 3 else (*inputs, "", "")[:3]
    nodes = [
        _node("Gather", ["word", ids], ["ew"]),
        _node("Gather", ["types", segments], ["et"]),
        _node("Add", ["ew", "et"], ["e"]),
        _node("Cast", [mask], ["m"], to=_FLOAT),
        _node("Unsqueeze", ["m", "axes2"], ["m3"]),
        _node("Mul", ["e", "m3"], ["em"]),
        _node("ReduceSum", ["em", "axes1"], ["num"], keepdims=0),
        _node("ReduceSum", ["m3", "axes1"], ["den"], keepdims=0),
        _node("Div", ["num", "den"], ["pooled"]),
        _node("Tanh", ["pooled"], ["h"]),
        _node("MatMul", ["h", "w"], ["hw"]),
        _node("Add", ["hw", "b"], ["logits"]),
    ]
    inits = [
        _float_tensor("word", [vocab, dims], [v for row in word for v in row]),
        _float_tensor("types", [len(types), dims], [v for row in types for v in row]),
        _float_tensor("w", [dims, labels], [v for row in weights for v in row]),
        _float_tensor("b", [labels], list(bias)),
        _tensor("axes1", [1]),
        _tensor("axes2", [2]),
    ]
    graph = b"".join(_field(1, n) for n in nodes) + _field(2, "scidx-cross-encoder")
    graph += b"".join(_field(5, t) for t in inits)
    for name in (ids, mask, segments):
        if name:
            graph += _field(11, _value_info(name, _INT64, ["batch", "sequence"]))
    graph += _field(12, _value_info("logits", _FLOAT, ["batch", labels]))
    return (
        _field(1, 8)
        + _field(2, "scidx-tests")
        + _field(7, graph)
        + _field(8, _field(1, "") + _field(2, 17))
    )


def token_table_model(word: list[list[float]]) -> bytes:
    """An encoder whose token states are rows of ``word``: ``last_hidden_state = word[ids]``.

    Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (the last two unused), as an
    exported BERT; the distiller's mean over ``[CLS] token [SEP]`` is then exact arithmetic.
    """
    vocab, dims = len(word), len(word[0])
    nodes = [
        _node("Gather", ["word", "input_ids"], ["g"]),
        _node("Cast", ["attention_mask"], ["m"], to=_FLOAT),
        _node("Cast", ["token_type_ids"], ["t"], to=_FLOAT),
        _node("Add", ["m", "t"], ["mt"]),
        _node("Unsqueeze", ["mt", "axes2"], ["mt3"]),
        _node("Mul", ["mt3", "zero"], ["z"]),
        _node("Add", ["g", "z"], ["last_hidden_state"]),
    ]
    inits = [
        _float_tensor("word", [vocab, dims], [v for row in word for v in row]),
        _float_tensor("zero", [1], [0.0]),
        _tensor("axes2", [2]),
    ]
    graph = b"".join(_field(1, n) for n in nodes) + _field(2, "scidx-token-table")
    graph += b"".join(_field(5, t) for t in inits)
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        graph += _field(11, _value_info(name, _INT64, ["batch", "sequence"]))
    graph += _field(12, _value_info("last_hidden_state", _FLOAT, ["batch", "sequence", dims]))
    return (
        _field(1, 8)
        + _field(2, "scidx-tests")
        + _field(7, graph)
        + _field(8, _field(1, "") + _field(2, 17))
    )
