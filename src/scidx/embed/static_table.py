"""The static token table file (``.scidxtok``): one int8 vector per vocabulary token.

Layout (all little-endian; FORMAT.md §5):

=======  =====  ====================================================================
offset   size   content
=======  =====  ====================================================================
0        8      magic ``b"SCIDXTOK"``
8        4      u32 table format version (:data:`TABLE_VERSION`)
12       4      u32 ``H``: length of the JSON header, ``1 <= H <= MAX_TABLE_HEADER``
16       H      UTF-8 JSON object: ``dimensions``, ``vocabSize``, ``tokenizer`` (a
                ``tokenizer.json`` reduced to its WordPiece model and normaliser),
                ``method`` (how the rows were made), ``source`` (the model's files and
                their sha256)
16+H     pad    zero bytes up to a multiple of 4
...      4·V    float32 per-row scales (finite, ``0 <= scale <= MAX_SCALE``)
...      V·D    int8 rows; a token's vector is ``rows[i] * scales[i]``
=======  =====  ====================================================================

The file ends exactly after the rows. Its sha256 is the table's identity: an index packed
with it records the digest (``provider.table``), and a query refuses any other table.
:func:`read_table` checks everything and raises :class:`~scidx.errors.ConfigError` naming
the file and the fault (a table is an input the user chose, like a model folder).

Runtime module: numpy and the stdlib only.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.embed.wordpiece import WordPiece
from scidx.errors import ConfigError

__all__ = [
    "MAGIC",
    "MAX_SCALE",
    "MAX_TABLE_HEADER",
    "TABLE_VERSION",
    "TokenTable",
    "encode_table",
    "read_table",
]

MAGIC = b"SCIDXTOK"
TABLE_VERSION = 1
MAX_TABLE_HEADER = 16 << 20
#: Largest per-row scale a table may hold: rows come from unit-length sentence vectors, so a
#: component is at most 1 (a scale of 1/127); anything far beyond is a damaged file.
MAX_SCALE = 1.0
MAX_VOCAB = 1 << 20
MAX_DIMENSIONS = 4096


@dataclass(frozen=True)
class TokenTable:
    """A read, checked token table."""

    path: str
    sha256: str
    dimensions: int
    rows: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]
    tokenizer: WordPiece
    header: dict[str, Any]

    @property
    def vocab_size(self) -> int:
        """Rows in the table (one per vocabulary token)."""
        return int(self.rows.shape[0])

    def vectors(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The float32 vectors of token ``ids`` (rows times their scales)."""
        return self.rows[ids].astype(np.float32) * self.scales[ids, None]


def encode_table(
    rows: npt.NDArray[np.int8], scales: npt.NDArray[np.float32], header: dict[str, Any]
) -> bytes:
    """The bytes of a table file (deterministic: sorted JSON keys, fixed layout)."""
    body = json.dumps(header, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    raw = body.encode("utf-8")
    pad = (-len(raw)) % 4
    return b"".join(
        [
            MAGIC,
            struct.pack("<II", TABLE_VERSION, len(raw)),
            raw,
            b"\0" * pad,
            np.ascontiguousarray(scales, dtype="<f4").tobytes(),
            np.ascontiguousarray(rows, dtype=np.int8).tobytes(),
        ]
    )


def read_table(path: str | Path) -> TokenTable:
    """Read and check a table file; see the module docstring.

    Raises:
        ConfigError: The file is missing, truncated, or holds values no distiller writes.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the static token table ({exc.strerror})") from None
    return parse_table(data, str(p))


def _header_problem(header: dict[str, Any]) -> str | None:
    """What is wrong with the header's ``sifA``, ``languages`` or ``name``, or None."""
    sif = header.get("sifA", 1e-3)
    if isinstance(sif, bool) or not isinstance(sif, (int, float)) or not 0 < sif <= 1:
        return f"`sifA` is {sif!r}, not a number in (0, 1]"
    if not math.isfinite(float(sif)):
        return "`sifA` is not a finite number"
    langs = header.get("languages", ["en"])
    if not isinstance(langs, list) or not all(isinstance(x, str) for x in langs):
        return f"`languages` is {langs!r}, not a list of language codes"
    if not isinstance(header.get("name", ""), str):
        return "`name` is not a string"
    return None


def parse_table(data: bytes, label: str) -> TokenTable:
    """:func:`read_table` from the file's bytes."""
    fix = "; distil it again with `toolup-rag distill`"

    def bad(what: str) -> ConfigError:
        return ConfigError(f"{label}: not a valid static token table: {what}{fix}")

    if len(data) < 16 or data[:8] != MAGIC:
        raise bad("it does not start with the SCIDXTOK magic")
    version, hlen = struct.unpack_from("<II", data, 8)
    if version != TABLE_VERSION:
        raise bad(f"table format {version}, this scidx reads {TABLE_VERSION}")
    if not 1 <= hlen <= MAX_TABLE_HEADER or 16 + hlen > len(data):
        raise bad(f"header length {hlen} does not fit the {len(data)}-byte file")
    try:
        header = json.loads(data[16 : 16 + hlen].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise bad("its header is not JSON") from None
    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    dims, vocab = header.get("dimensions"), header.get("vocabSize")
    if type(dims) is not int or not 1 <= dims <= MAX_DIMENSIONS:
        raise bad(f"`dimensions` is {dims!r}, not an integer in 1..{MAX_DIMENSIONS}")
    if type(vocab) is not int or not 1 <= vocab <= MAX_VOCAB:
        raise bad(f"`vocabSize` is {vocab!r}, not an integer in 1..{MAX_VOCAB}")
    start = 16 + hlen + (-hlen) % 4
    expected = start + 4 * vocab + vocab * dims
    if len(data) != expected:
        raise bad(f"it is {len(data)} bytes, but {vocab} rows of {dims} need {expected}")
    scales = np.frombuffer(data, dtype="<f4", count=vocab, offset=start).astype(np.float32)
    if (
        not np.all(np.isfinite(scales))
        or float(scales.min()) < 0
        or float(scales.max()) > MAX_SCALE
    ):
        worst = int(
            np.flatnonzero(~(np.isfinite(scales) & (scales >= 0) & (scales <= MAX_SCALE)))[0]
        )
        raise bad(f"row {worst} has scale {float(scales[worst])!r}, outside 0..{MAX_SCALE}")
    rows = np.frombuffer(data, dtype=np.int8, count=vocab * dims, offset=start + 4 * vocab)
    rows = rows.reshape(vocab, dims)
    if int(rows.min(initial=0)) < -127:
        raise bad("a row holds -128, which no distiller writes (rows are in -127..127)")
    tok = header.get("tokenizer")
    try:
        wordpiece = WordPiece.from_json(tok, f"{label} (its tokenizer)")
    except ConfigError as exc:
        raise bad(str(exc)) from None
    ids = wordpiece.vocab.values()
    if max(ids, default=-1) >= vocab or len(set(ids)) != len(wordpiece.vocab):
        raise bad(f"its tokenizer's ids are not distinct ids below vocabSize {vocab}")
    problem = _header_problem(header)
    if problem:
        raise bad(problem)
    return TokenTable(
        path=label,
        sha256=hashlib.sha256(data).hexdigest(),
        dimensions=dims,
        rows=rows,
        scales=scales,
        tokenizer=wordpiece,
        header=header,
    )
