"""The ``.scidx`` container: constants, header encode/decode, validation and string tables.

This is the only module shared by the writer (``pack``) and the reader (``load``); it mirrors
``docs/FORMAT.md`` and names its constants as the spec does. Layout (all integers little-endian)::

    offset  size  field
    0       8     MAGIC            b"SCIDX\\x00\\r\\n"
    8       2     major            u16, FORMAT_VERSION[0]
    10      2     minor            u16, FORMAT_VERSION[1]
    12      4     flags            u32, reserved, MUST be 0
    16      8     H                u64, header length in bytes, 1 <= H <= MAX_HEADER_BYTES
    24      H     header           msgpack map: format, generator, builtUtc, meta, arrays
    24+H    pad   zero bytes up to data_start = align64(24 + H)
    data_start    data section     arrays in header order, each at a 64-aligned offset
                                   (relative to data_start), zero padding between, the file
                                   ends exactly at the end of the last array

Guarantees:

* ``encode_index`` is deterministic: the same arrays and meta give the same bytes, whatever the
  order of the input mappings.
* ``read_header`` validates the whole layout (magic, version, header cap, msgpack, every array
  entry, alignment, no holes or overlaps, end == file size) without touching the data section,
  so opening costs O(number of arrays), not O(file size).
* Every failure on the read side is a :class:`scidx.errors.IndexFormatError` subclass whose
  message names the source, the field or array and the fix. Writer-side misuse (a bad dtype,
  name or meta value handed in by the caller) is a programming error and raises ``ValueError``
  or ``TypeError``.

Runtime module: imports only numpy, msgpack, xxhash and the stdlib.
"""

from __future__ import annotations

import math
import mmap
import os
import re
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, TypeAlias

import msgpack  # type: ignore[import-untyped]
import numpy as np
import xxhash

from scidx.errors import (
    BadMagicError,
    ChecksumMismatchError,
    CorruptIndexError,
    UnsupportedFormatVersionError,
)

__all__ = [
    "ALIGNMENT",
    "DEFLATE_TABLE_MAX",
    "DTYPES",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAGIC",
    "MAX_HEADER_BYTES",
    "PREAMBLE_BYTES",
    "REBUILD_HINT",
    "ArrayInfo",
    "Buffer",
    "Header",
    "DeflatedStringTable",
    "StringTable",
    "align",
    "array_view",
    "canonical_meta",
    "encode_index",
    "encode_strings",
    "header_to_dict",
    "read_header",
    "read_header_file",
    "read_string_table",
    "string_table_arrays",
    "uint_dtype",
    "verify_checksums",
    "write_index",
]

MAGIC = b"SCIDX\x00\r\n"
"""First 8 bytes of every index. The NUL stops text tools; CR LF detects newline mangling (PNG)."""

FORMAT_VERSION: tuple[int, int] = (10, 0)
"""(major, minor). Major: any layout or meaning change. Minor: additive header keys or arrays
(1.1: the optional ``snippet.*`` arrays; 2.0: chunk texts compressed in ``text.*``; 4.0:
term-frequency codes and idf tables instead of float32 impacts, the ``<f8`` dtype; 4.1:
4-byte snippet occurrences under new array names; 5.0: Markdown chunk ids derived instead of
stored, indexed heading and anchor columns, ``chunk.span`` ``<u4``; 6.0: bit-packed posting
runs in ``bm25.runs`` instead of ``bm25.post_doc``/``bm25.post_tf``, ``<u2`` per-chunk
columns where they fit; 7.0: heading paths as a tree of their prefixes, ``<u4`` string-table
offsets; 8.0: string tables up to 4 MiB deflated in ``<name>.zdata``; 9.0: records hold the
clean text first, ``snippet.where`` and ``snippet.needle`` instead of per-word offsets)."""

FORMAT_NAME = "scidx"
"""Value of the header's ``format`` key."""

ALIGNMENT = 64
"""Data section start and every array offset are multiples of this (a cache line; covers any
SIMD load and every whitelisted dtype's alignment once mmapped at a page boundary)."""

MAX_HEADER_BYTES = 1 << 20
"""Largest header a reader accepts (1 MiB). A real header is a few KiB; the cap bounds the memory a
hostile header can make the msgpack decoder allocate (a small multiple of the cap)."""

# magic, major, minor, flags, header length.
_PREAMBLE = struct.Struct("<8sHHIQ")
PREAMBLE_BYTES = _PREAMBLE.size  # 24

DTYPES: Mapping[str, np.dtype[Any]] = {
    "<u1": np.dtype("<u1"),
    "<u2": np.dtype("<u2"),
    "<u4": np.dtype("<u4"),
    "<u8": np.dtype("<u8"),
    "<i4": np.dtype("<i4"),
    "<i8": np.dtype("<i8"),
    "<f4": np.dtype("<f4"),
    "<f8": np.dtype("<f8"),
}
"""Whitelisted array dtypes, keyed by the string stored in the header (always ``<``-prefixed)."""

# (kind, itemsize) -> header dtype string; the writer accepts either byte order on input.
_DTYPE_BY_KIND = {(d.kind, d.itemsize): s for s, d in DTYPES.items()}

REBUILD_HINT = "The file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."

_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_UTC_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_HEX16_RE = re.compile(r"[0-9a-f]{16}")
_MAX_NDIM = 8
_MAX_ARRAY_BYTES = (1 << 63) - 1
# Bounded copies when streaming array bytes, so writing never holds a second full copy.
_WRITE_CHUNK = 1 << 20
# msgpack decode limits: far above any real header, far below what would hurt.
_MAX_CONTAINER_LEN = 1 << 16

_HEADER_KEYS = ("format", "generator", "builtUtc", "meta", "arrays")
_ARRAY_KEYS = ("name", "dtype", "shape", "offset", "nbytes", "xxh3")

Buffer: TypeAlias = bytes | bytearray | memoryview | mmap.mmap
"""What :func:`read_header` and :func:`array_view` accept: a whole index in memory or mmapped."""


def uint_dtype(largest: int, *, at_least: int = 1) -> str:
    """The narrowest unsigned dtype, ``<u1`` to ``<u8`` and at least ``at_least`` bytes wide.

    Holds every value up to ``largest``: the writer's choice for a column whose readers accept
    several widths (recorded by the dtype in the header).
    """
    for size in (1, 2, 4):
        if size >= at_least and largest < 1 << (8 * size):
            return f"<u{size}"
    return "<u8"


def align(n: int) -> int:
    """Round ``n`` up to the next multiple of :data:`ALIGNMENT`.

    Args:
        n: A non-negative byte count or offset.

    Returns:
        The smallest multiple of 64 that is >= ``n``.
    """
    return -(-n // ALIGNMENT) * ALIGNMENT


@dataclass(frozen=True)
class ArrayInfo:
    """One validated entry of the header's ``arrays`` list.

    Attributes:
        name: Array name, e.g. ``"vectors"`` or ``"chunk.id.offsets"``.
        dtype: Header dtype string, one of :data:`DTYPES` (e.g. ``"<f4"``).
        shape: Array shape; dimensions may be 0.
        offset: Byte offset of the first element, relative to the data section start.
        nbytes: Byte length, equal to ``prod(shape) * itemsize``.
        xxh3: xxh3_64 of the array bytes, 16 lowercase hex digits.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    offset: int
    nbytes: int
    xxh3: str

    @property
    def np_dtype(self) -> np.dtype[Any]:
        """The numpy dtype of the array."""
        return DTYPES[self.dtype]


@dataclass(frozen=True)
class Header:
    """A validated ``.scidx`` header plus the layout facts derived from it.

    Attributes:
        version: (major, minor) format version read from the preamble.
        generator: Free-form writer identification, for diagnostics only (``"scidx 0.1.0"``).
        built_utc: Build timestamp, ``YYYY-MM-DDTHH:MM:SSZ``.
        meta: The decoded ``meta`` map (content-level settings; see FORMAT.md).
        arrays: Array entries by name, in file order (sorted by name).
        data_start: Absolute file offset of the data section.
        header_bytes: H, the msgpack header length.
        file_size: Total file size the layout was validated against.
        source: File path or ``"<buffer>"``; used in every error message.
    """

    version: tuple[int, int]
    generator: str
    built_utc: str
    meta: dict[str, Any]
    arrays: dict[str, ArrayInfo]
    data_start: int
    header_bytes: int
    file_size: int
    source: str = "<buffer>"


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def canonical_meta(value: Any, path: str = "meta") -> Any:
    """Return ``value`` as plain, canonically ordered msgpack data.

    Maps become dicts with keys sorted by code point (recursively), tuples become lists, numpy
    scalars become Python scalars. Only JSON-compatible values are allowed, so ``inspect`` can
    print any header as JSON.

    Args:
        value: A meta value: None, bool, int, float, str, a sequence or a mapping with str keys.
        path: Where ``value`` sits, for error messages (``meta.bm25.k1``).

    Returns:
        The canonical equivalent of ``value``.

    Raises:
        TypeError: For an unsupported type or a non-str map key.
        ValueError: For NaN or infinite floats, or ints outside [-2**63, 2**64).
    """
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 64):
            raise ValueError(f"{path}: int {value} does not fit in msgpack's 64-bit range")
        return int(value)
    if isinstance(value, float):
        # NaN has many bit patterns and never equals itself: no canonical encoding, no JSON.
        if not math.isfinite(value):
            raise ValueError(f"{path}: {value!r} is not allowed in the header (not finite)")
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key in sorted(value, key=_key_for_sort(path)):
            out[str(key)] = canonical_meta(value[key], f"{path}.{key}")
        return out
    if isinstance(value, (list, tuple)):
        return [canonical_meta(v, f"{path}[{i}]") for i, v in enumerate(value)]
    raise TypeError(
        f"{path}: {type(value).__name__} is not allowed in the header; "
        "use None, bool, int, float, str, list or a str-keyed map"
    )


def _key_for_sort(path: str) -> Any:
    def key(k: object) -> str:
        if not isinstance(k, str):
            raise TypeError(f"{path}: map key {k!r} is not a str")
        return k

    return key


def _normalise_array(name: str, value: object) -> tuple[np.ndarray[Any, Any], str]:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ValueError(
            f"array name {name!r} is invalid: use 1-128 characters from [A-Za-z0-9._-], "
            "not starting with '.' or '-'"
        )
    if not isinstance(value, np.ndarray):
        raise TypeError(f"array `{name}` is a {type(value).__name__}, not a numpy.ndarray")
    dtype_str = _DTYPE_BY_KIND.get((value.dtype.kind, value.dtype.itemsize))
    if dtype_str is None or value.dtype.fields is not None:
        allowed = ", ".join(DTYPES)
        raise ValueError(
            f"array `{name}` has dtype {value.dtype.str}; a .scidx array must be one of {allowed}"
        )
    if value.ndim > _MAX_NDIM:
        raise ValueError(f"array `{name}` has {value.ndim} dimensions; at most {_MAX_NDIM}")
    # Little-endian, C order: a no-op (no copy) for the arrays pack actually builds.
    # (Not np.ascontiguousarray: it turns a 0-d array into shape (1,).)
    arr = value.astype(DTYPES[dtype_str], order="C", copy=False)
    return arr, dtype_str


def _byte_view(arr: np.ndarray[Any, Any]) -> memoryview:
    return arr.reshape(-1).view(np.uint8).data


def encode_index(
    arrays: Mapping[str, np.ndarray[Any, Any]],
    meta: Mapping[str, Any],
    *,
    built_utc: str,
    generator: str,
) -> Iterator[bytes]:
    """Encode a complete ``.scidx`` file as a stream of byte chunks.

    The header needs every checksum, so the arrays are validated and hashed once, when the first
    chunk is requested (before anything is yielded); their bytes are then streamed in bounded
    chunks, so encoding never holds a second copy of a large index.

    Args:
        arrays: Named arrays; names match ``[A-Za-z0-9_][A-Za-z0-9._-]{0,127}``, dtypes are in
            :data:`DTYPES` (any byte order; stored little-endian, C order).
        meta: The header ``meta`` map; canonicalised with :func:`canonical_meta`.
        built_utc: ``YYYY-MM-DDTHH:MM:SSZ``; pass a fixed value for reproducible builds.
        generator: Writer identification, e.g. ``f"scidx {scidx.__version__}"``.

    Yields:
        Consecutive pieces of the file; their concatenation is the file.

    Raises:
        ValueError: Bad array name, dtype or ndim, bad meta value, bad ``built_utc``, or a header
            larger than :data:`MAX_HEADER_BYTES`.
        TypeError: A value of the wrong type.

    Example:
        >>> import numpy as np
        >>> data = b"".join(encode_index({"v": np.zeros((1, 4), "<f4")}, {},
        ...                              built_utc="1970-01-01T00:00:00Z", generator="x"))
        >>> data[:8]
        b'SCIDX\\x00\\r\\n'
    """
    header_bytes, plan = _prepare(arrays, meta, built_utc=built_utc, generator=generator)
    head = _PREAMBLE.pack(MAGIC, FORMAT_VERSION[0], FORMAT_VERSION[1], 0, len(header_bytes))
    pos = len(head) + len(header_bytes)
    yield head + header_bytes + bytes(align(pos) - pos)
    pos = 0
    for i, (arr, _) in enumerate(plan):
        view = _byte_view(arr)
        for start in range(0, len(view), _WRITE_CHUNK):
            yield view[start : start + _WRITE_CHUNK].tobytes()
        pos += len(view)
        if i + 1 < len(plan):  # no trailing padding after the last array
            yield bytes(align(pos) - pos)
            pos = align(pos)


def _prepare(
    arrays: Mapping[str, np.ndarray[Any, Any]],
    meta: Mapping[str, Any],
    *,
    built_utc: str,
    generator: str,
) -> tuple[bytes, list[tuple[np.ndarray[Any, Any], dict[str, Any]]]]:
    if not isinstance(built_utc, str) or not _UTC_RE.fullmatch(built_utc):
        raise ValueError(f"built_utc {built_utc!r} is not of the form YYYY-MM-DDTHH:MM:SSZ")
    if not isinstance(generator, str):
        raise TypeError(f"generator must be a str, not {type(generator).__name__}")
    if not isinstance(meta, Mapping):
        raise TypeError(f"meta must be a mapping, not {type(meta).__name__}")
    plan: list[tuple[np.ndarray[Any, Any], dict[str, Any]]] = []
    offset = 0
    # Sorted by name (code point order) so the input mapping's order never matters.
    for name in sorted(arrays, key=_key_for_sort("arrays")):
        arr, dtype_str = _normalise_array(name, arrays[name])
        view = _byte_view(arr)
        entry = {  # fixed key order: part of the byte-exact format
            "name": name,
            "dtype": dtype_str,
            "shape": [int(d) for d in arr.shape],
            "offset": offset,
            "nbytes": len(view),
            "xxh3": xxhash.xxh3_64_hexdigest(view),
        }
        plan.append((arr, entry))
        offset = align(offset + len(view))
    header = {
        "format": FORMAT_NAME,
        "generator": generator,
        "builtUtc": built_utc,
        "meta": canonical_meta(meta),
        "arrays": [entry for _, entry in plan],
    }
    header_bytes = msgpack.packb(header, use_bin_type=True)
    if len(header_bytes) > MAX_HEADER_BYTES:
        raise ValueError(
            f"the header is {len(header_bytes)} bytes, over MAX_HEADER_BYTES "
            f"({MAX_HEADER_BYTES}); keep large data in arrays, not in meta"
        )
    return header_bytes, plan


def write_index(
    fileobj: IO[bytes],
    arrays: Mapping[str, np.ndarray[Any, Any]],
    meta: Mapping[str, Any],
    *,
    built_utc: str,
    generator: str,
) -> int:
    """Write a complete ``.scidx`` file to ``fileobj`` (see :func:`encode_index`).

    Invalid input raises before the first byte is written. The caller owns atomicity (temp file +
    fsync + ``os.replace``) and error wrapping; ``OSError`` from ``fileobj.write`` propagates
    unchanged.

    Args:
        fileobj: A binary file opened for writing, positioned where the index starts.
        arrays: Named arrays, as for :func:`encode_index`.
        meta: The header ``meta`` map.
        built_utc: ``YYYY-MM-DDTHH:MM:SSZ``.
        generator: Writer identification.

    Returns:
        The number of bytes written.

    Raises:
        ValueError: As for :func:`encode_index`.
        TypeError: As for :func:`encode_index`.
    """
    total = 0
    for piece in encode_index(arrays, meta, built_utc=built_utc, generator=generator):
        fileobj.write(piece)
        total += len(piece)
    return total


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def _corrupt(source: str, what: str) -> CorruptIndexError:
    return CorruptIndexError(f"{source}: {what}. {REBUILD_HINT}")


def _as_bytes_view(buf: Buffer) -> memoryview:
    view = memoryview(buf)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    return view


def read_header(buf: Buffer, *, source: str = "<buffer>", file_size: int | None = None) -> Header:
    """Decode and fully validate the header and layout of an index, without reading arrays.

    Args:
        buf: The index bytes from offset 0: the whole file (``bytes``, ``mmap``...) or, with
            ``file_size``, at least its first ``data_start`` bytes.
        source: File path or ``"<buffer>"``, named in every error message.
        file_size: The real file size when ``buf`` holds only a prefix; defaults to ``len(buf)``.

    Returns:
        The validated :class:`Header`.

    Raises:
        BadMagicError: ``buf`` does not start with :data:`MAGIC`.
        UnsupportedFormatVersionError: The major version is not ``FORMAT_VERSION[0]``.
        CorruptIndexError: Anything else: truncation, bad header, bad array entry or layout.
    """
    view = _as_bytes_view(buf)
    have = len(view)
    size = have if file_size is None else file_size
    if have < PREAMBLE_BYTES or size < PREAMBLE_BYTES:
        got = bytes(view[: min(have, size, len(MAGIC))])
        if not MAGIC.startswith(got):
            raise _bad_magic(source, got)
        raise _corrupt(
            source,
            f"the file is {min(have, size)} bytes, shorter than the {PREAMBLE_BYTES}-byte preamble",
        )
    magic, major, minor, flags, hlen = _PREAMBLE.unpack_from(view, 0)
    if magic != MAGIC:
        raise _bad_magic(source, magic)
    if major != FORMAT_VERSION[0]:
        raise _unsupported(source, major, minor)
    if flags != 0:
        raise _corrupt(source, f"reserved preamble flags are 0x{flags:08x}, expected 0")
    if not 1 <= hlen <= MAX_HEADER_BYTES:
        raise _corrupt(
            source, f"header length {hlen} is outside 1..{MAX_HEADER_BYTES} (MAX_HEADER_BYTES)"
        )
    data_start = align(PREAMBLE_BYTES + hlen)
    if size < data_start or have < data_start:
        raise _corrupt(
            source,
            f"the file is {min(have, size)} bytes, but its {hlen}-byte header and padding "
            f"end at {data_start}",
        )
    if any(view[PREAMBLE_BYTES + hlen : data_start]):
        raise _corrupt(source, "the padding after the header is not all zero bytes")
    raw = _unpack_header(view[PREAMBLE_BYTES : PREAMBLE_BYTES + hlen], source)
    _check_plain_types(raw, source)
    generator, built_utc, meta, arrays = _check_header_map(raw, source)
    _check_layout(arrays, source, data_size=size - data_start)
    return Header(
        version=(major, minor),
        generator=generator,
        built_utc=built_utc,
        meta=meta,
        arrays=arrays,
        data_start=data_start,
        header_bytes=hlen,
        file_size=size,
        source=source,
    )


def read_header_file(path: str | os.PathLike[str]) -> Header:
    """Read and validate only the header of the index at ``path`` (for ``inspect``).

    Reads at most ``data_start`` bytes (bounded by :data:`MAX_HEADER_BYTES`) and checks the
    layout against the file's size; array bytes are not read and checksums are not verified.

    Args:
        path: The ``.scidx`` file.

    Returns:
        The validated :class:`Header`; its ``source`` is ``str(path)``.

    Raises:
        OSError: The file cannot be opened or read.
        IndexFormatError: As for :func:`read_header`.
    """
    source = os.fspath(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        prefix = f.read(PREAMBLE_BYTES)
        if len(prefix) == PREAMBLE_BYTES and prefix[: len(MAGIC)] == MAGIC:
            hlen = int.from_bytes(prefix[16:24], "little")
            # Read through data_start only if the cap allows; read_header reports the rest.
            if 1 <= hlen <= MAX_HEADER_BYTES:
                prefix += f.read(align(PREAMBLE_BYTES + hlen) - PREAMBLE_BYTES)
    return read_header(prefix, source=source, file_size=size)


def _bad_magic(source: str, got: bytes) -> BadMagicError:
    return BadMagicError(
        f"{source} is not a .scidx index: it starts with {got!r}, not {MAGIC!r}. "
        "Pass a file written by `toolup-rag pack-docs`."
    )


def _unsupported(source: str, major: int, minor: int) -> UnsupportedFormatVersionError:
    reads = f"this scidx reads format {FORMAT_VERSION[0]}.x"
    if major > FORMAT_VERSION[0]:
        fix = "Rebuild it with `toolup-rag pack-docs` or upgrade scidx."
    else:
        fix = "Rebuild it with `toolup-rag pack-docs`."
    return UnsupportedFormatVersionError(
        f"{source} was written with format {major}.{minor}; {reads}. {fix}"
    )


class _HeaderDecodeError(Exception):
    pass


def _pairs_hook(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        # msgpack would silently keep the last value; a canonical header has unique keys.
        raise _HeaderDecodeError("a map has duplicate keys")
    return out


def _ext_hook(code: int, data: bytes) -> Any:
    raise _HeaderDecodeError(f"msgpack extension type {code} is not allowed")


def _unpack_header(raw: memoryview, source: str) -> Any:
    try:
        return msgpack.unpackb(
            raw,
            raw=False,
            strict_map_key=True,
            use_list=True,
            object_pairs_hook=_pairs_hook,
            ext_hook=_ext_hook,
            timestamp=0,
            max_str_len=MAX_HEADER_BYTES,
            max_bin_len=MAX_HEADER_BYTES,
            max_array_len=_MAX_CONTAINER_LEN,
            max_map_len=_MAX_CONTAINER_LEN,
        )
    except _HeaderDecodeError as exc:
        raise _corrupt(source, f"the header is not valid: {exc}") from None
    # msgpack raises a zoo (ExtraData, FormatError, StackError, OutOfData, UnicodeDecodeError,
    # ValueError, TypeError...) for hostile input; every one of them means "corrupt header".
    except Exception as exc:
        raise _corrupt(
            source, f"the header is not valid msgpack ({type(exc).__name__}: {exc})"
        ) from None


_PLAIN_SCALARS = (type(None), bool, int, float, str)


def _check_plain_types(raw: Any, source: str) -> None:
    # The header holds only JSON-compatible values at every version (so `inspect --json` always
    # works); bin and ext (e.g. the msgpack Timestamp) are rejected. Iterative, because msgpack
    # allows 1024 levels of nesting and Python's recursion limit is lower; errors name only the
    # top-level key, because building a path per element would let a deep, wide header make
    # this walk allocate far more than the header itself.
    if not isinstance(raw, dict):
        return  # _check_header_map reports it
    for top, root in raw.items():
        stack = [root]
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                if not all(isinstance(k, str) for k in value):
                    raise _corrupt(source, f"header `{top}` contains a non-str map key")
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)
            elif not isinstance(value, _PLAIN_SCALARS):
                raise _corrupt(
                    source,
                    f"header `{top}` contains a msgpack {type(value).__name__} value; the header "
                    "holds only nil, bool, int, float, str, array and str-keyed map values",
                )
    if not all(isinstance(k, str) for k in raw):
        raise _corrupt(source, "the header has a non-str map key")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_header_map(
    raw: Any, source: str
) -> tuple[str, str, dict[str, Any], dict[str, ArrayInfo]]:
    if not isinstance(raw, dict):
        raise _corrupt(source, f"the header is a msgpack {type(raw).__name__}, not a map")
    missing = [k for k in _HEADER_KEYS if k not in raw]
    if missing:
        raise _corrupt(source, f"the header lacks the required key(s) {', '.join(missing)}")
    if raw["format"] != FORMAT_NAME:
        raise _corrupt(source, f"header `format` is {raw['format']!r}, not {FORMAT_NAME!r}")
    for key in ("generator", "builtUtc"):
        if not isinstance(raw[key], str):
            raise _corrupt(source, f"header `{key}` is a {type(raw[key]).__name__}, not a str")
    meta = raw["meta"]
    if not isinstance(meta, dict) or not all(isinstance(k, str) for k in meta):
        raise _corrupt(source, "header `meta` is not a map with str keys")
    entries = raw["arrays"]
    if not isinstance(entries, list):
        raise _corrupt(source, f"header `arrays` is a {type(entries).__name__}, not a list")
    arrays: dict[str, ArrayInfo] = {}
    previous = ""
    for i, entry in enumerate(entries):
        info = _check_array_entry(entry, i, source)
        if arrays and info.name <= previous:
            raise _corrupt(
                source,
                f"array `{info.name}` is listed after `{previous}`; arrays must be sorted "
                "by name with no duplicates",
            )
        arrays[info.name] = info
        previous = info.name
    return raw["generator"], raw["builtUtc"], meta, arrays


def _check_array_entry(entry: Any, i: int, source: str) -> ArrayInfo:
    where = f"header `arrays[{i}]`"
    if not isinstance(entry, dict):
        raise _corrupt(source, f"{where} is a {type(entry).__name__}, not a map")
    missing = [k for k in _ARRAY_KEYS if k not in entry]
    if missing:
        raise _corrupt(source, f"{where} lacks the required key(s) {', '.join(missing)}")
    name = entry["name"]
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise _corrupt(source, f"{where} has an invalid name {name!r}")
    where = f"array `{name}`"
    dtype = entry["dtype"]
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise _corrupt(
            source, f"{where} has dtype {dtype!r}, which is not one of {', '.join(DTYPES)}"
        )
    shape = entry["shape"]
    if (
        not isinstance(shape, list)
        or len(shape) > _MAX_NDIM
        or not all(_is_int(d) and d >= 0 for d in shape)
    ):
        raise _corrupt(
            source, f"{where} has shape {shape!r}; expected a list of at most 8 ints >= 0"
        )
    # numpy must be able to represent the shape even when a zero dimension makes it empty
    # ([0, 2**62] has 0 bytes but no ndarray can have that shape).
    if math.prod(max(d, 1) for d in shape) * DTYPES[dtype].itemsize > _MAX_ARRAY_BYTES:
        raise _corrupt(source, f"{where} has shape {shape}, too large for any array")
    offset, nbytes = entry["offset"], entry["nbytes"]
    for key, value in (("offset", offset), ("nbytes", nbytes)):
        if not _is_int(value) or value < 0:
            raise _corrupt(source, f"{where} has {key} {value!r}; expected an int >= 0")
    # Python ints: no overflow however large the claimed shape is.
    expected = math.prod(shape) * DTYPES[dtype].itemsize
    if nbytes != expected:
        raise _corrupt(
            source,
            f"{where} has nbytes {nbytes}, but shape {shape} of {dtype} needs {expected}",
        )
    digest = entry["xxh3"]
    if not isinstance(digest, str) or not _HEX16_RE.fullmatch(digest):
        raise _corrupt(source, f"{where} has xxh3 {digest!r}; expected 16 lowercase hex digits")
    return ArrayInfo(name, dtype, tuple(shape), offset, nbytes, digest)


def _check_layout(arrays: Mapping[str, ArrayInfo], source: str, *, data_size: int) -> None:
    expected = 0
    previous: ArrayInfo | None = None
    for info in arrays.values():
        where = f"array `{info.name}`"
        if info.offset % ALIGNMENT:
            raise _corrupt(
                source, f"{where} starts at data offset {info.offset}, not a multiple of 64"
            )
        if info.offset < expected:
            assert previous is not None  # expected > 0 only after an array
            raise _corrupt(
                source,
                f"{where} starts at data offset {info.offset}, overlapping array "
                f"`{previous.name}` (which needs up to {expected})",
            )
        if info.offset > expected:
            after = f" after array `{previous.name}`" if previous else ""
            raise _corrupt(
                source,
                f"{where} starts at data offset {info.offset}, leaving a hole of "
                f"{info.offset - expected} bytes{after} (expected {expected})",
            )
        end = info.offset + info.nbytes
        if end > data_size:
            raise _corrupt(
                source,
                f"{where} ends at data offset {end}, past the end of the data section "
                f"({data_size} bytes)",
            )
        expected = align(end)
        previous = info
    end = previous.offset + previous.nbytes if previous else 0
    if end != data_size:
        raise _corrupt(
            source,
            f"the data section is {data_size} bytes, but the arrays end at {end}; "
            "the file must end exactly at the end of the last array",
        )


def _check_buffer(buf: Buffer, header: Header) -> memoryview:
    view = _as_bytes_view(buf)
    if len(view) != header.file_size:
        raise _corrupt(
            header.source,
            f"the buffer is {len(view)} bytes, but its header was validated for {header.file_size}",
        )
    return view


def array_view(
    buf: Buffer,
    header: Header,
    name: str,
    *,
    dtype: str | tuple[str, ...] | None = None,
    ndim: int | None = None,
) -> np.ndarray[Any, Any]:
    """Return a zero-copy, read-only numpy view of one array.

    Args:
        buf: The whole index (the buffer ``header`` was read from).
        header: The header returned by :func:`read_header`.
        name: The array name.
        dtype: If given, the header dtype string the caller requires (e.g. ``"<f4"``), or a
            tuple of the ones it accepts (a column the writer stores as narrow as its values
            allow, e.g. ``("<u2", "<u4")``).
        ndim: If given, the number of dimensions the caller requires.

    Returns:
        An array over ``buf`` with the stored dtype and shape; it keeps ``buf`` alive.

    Raises:
        CorruptIndexError: The array is missing, has another dtype or ndim than required, or
            ``buf`` is not the size the header was validated for.
    """
    info = header.arrays.get(name)
    if info is None:
        raise _corrupt(header.source, f"the index has no array `{name}`")
    allowed = (dtype,) if isinstance(dtype, str) else dtype
    if allowed is not None and info.dtype not in allowed:
        raise _corrupt(
            header.source, f"array `{name}` has dtype {info.dtype}, expected {' or '.join(allowed)}"
        )
    if ndim is not None and len(info.shape) != ndim:
        raise _corrupt(
            header.source,
            f"array `{name}` has {len(info.shape)} dimension(s) {list(info.shape)}, "
            f"expected {ndim}",
        )
    view = _check_buffer(buf, header)
    count = math.prod(info.shape)
    try:
        arr = np.frombuffer(
            view, dtype=info.np_dtype, count=count, offset=header.data_start + info.offset
        ).reshape(info.shape)
    except (ValueError, OverflowError) as exc:  # read_header rules this out; defence in depth
        raise _corrupt(header.source, f"array `{name}` cannot be viewed ({exc})") from None
    arr.flags.writeable = False  # a bytearray buffer would otherwise give a writable view
    return arr


def verify_checksums(buf: Buffer, header: Header) -> None:
    """Check every array's xxh3 and that all padding in the data section is zero.

    Reads the whole file, so it is for ``verify=True`` / ``--verify`` and for the writer's
    self-check, not for every open.

    Args:
        buf: The whole index.
        header: Its validated header.

    Raises:
        ChecksumMismatchError: An array's bytes do not match its stored xxh3 (names the array).
        CorruptIndexError: Non-zero padding, or ``buf`` is not the validated size.
    """
    view = _check_buffer(buf, header)
    pos = header.data_start
    for info in header.arrays.values():
        start = header.data_start + info.offset
        if any(view[pos:start]):
            raise _corrupt(header.source, f"the padding before array `{info.name}` is not zero")
        actual = xxhash.xxh3_64_hexdigest(view[start : start + info.nbytes])
        if actual != info.xxh3:
            raise ChecksumMismatchError(
                f"{header.source}: array `{info.name}` fails its checksum (stored xxh3 "
                f"{info.xxh3}, computed {actual}). {REBUILD_HINT}"
            )
        pos = start + info.nbytes


def header_to_dict(header: Header) -> dict[str, Any]:
    """Return the header as plain JSON-ready data, in the stored key order (for ``inspect``).

    Args:
        header: A validated header.

    Returns:
        ``{"version", "format", "generator", "builtUtc", "meta", "arrays", "dataStart",
        "headerBytes", "fileSize"}`` with each array as a dict of its header entry.
    """
    return {
        "version": f"{header.version[0]}.{header.version[1]}",
        "format": FORMAT_NAME,
        "generator": header.generator,
        "builtUtc": header.built_utc,
        "meta": header.meta,
        "arrays": [
            {
                "name": a.name,
                "dtype": a.dtype,
                "shape": list(a.shape),
                "offset": a.offset,
                "nbytes": a.nbytes,
                "xxh3": a.xxh3,
            }
            for a in header.arrays.values()
        ],
        "dataStart": header.data_start,
        "headerBytes": header.header_bytes,
        "fileSize": header.file_size,
    }


# --------------------------------------------------------------------------------------------
# String tables
# --------------------------------------------------------------------------------------------


def encode_strings(values: Sequence[str]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Encode strings as a string table: ``(offsets <u4 or <u8 [n+1], data <u1 [total])``.

    String ``i`` is ``data[offsets[i]:offsets[i+1]]`` decoded as UTF-8; ``offsets[0] == 0`` and
    ``offsets[n] == len(data)``.

    Args:
        values: The strings, in row order.

    Returns:
        The ``<name>.offsets`` and ``<name>.data`` arrays; offsets are ``<u4`` while the data
        is under 4 GiB (format 7), else ``<u8``.

    Raises:
        TypeError: An element is not a str.
        ValueError: An element cannot be encoded as UTF-8 (a lone surrogate).
    """
    # Two passes (lengths, then bytes into one preallocated array) so that packing holds the
    # table once, not as a list of encoded strings plus their join (a 1.5 GB text column at
    # 1M chunks would otherwise peak at three copies).
    lengths: list[int] = []
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise TypeError(f"string table element {i} is a {type(value).__name__}, not a str")
        if value.isascii():  # O(1) in CPython: the UTF-8 length is the length
            lengths.append(len(value))
            continue
        try:
            lengths.append(len(value.encode("utf-8")))
        except UnicodeEncodeError as exc:
            raise ValueError(f"string table element {i} is not encodable as UTF-8: {exc}") from None
    total = sum(lengths)
    offsets = np.zeros(len(lengths) + 1, dtype=uint_dtype(total, at_least=4))
    np.cumsum(lengths, out=offsets[1:])
    data = np.empty(total, dtype="<u1")
    out = data.data  # a writable memoryview of the array
    for i, value in enumerate(values):
        out[int(offsets[i]) : int(offsets[i + 1])] = value.encode("utf-8")
    return offsets, data


class StringTable:
    """Lazy, validated reader over a string table's ``offsets`` and ``data`` arrays.

    Construction checks only O(1) facts (dtypes, ndim, first and last offset); each access checks
    its own offset pair, so opening an index does not grow with the corpus. :meth:`validate_all`
    checks everything (for ``verify=True``).

    Args:
        offsets: ``<u4`` or ``<u8`` ``[n+1]`` byte offsets.
        data: ``<u1`` UTF-8 bytes.
        name: Table name (e.g. ``"chunk.id"``), named in errors.
        source: File path or ``"<buffer>"``, named in errors.

    Raises:
        CorruptIndexError: The arrays have the wrong dtype or ndim, or the end offsets are wrong.
    """

    def __init__(
        self,
        offsets: np.ndarray[Any, Any],
        data: np.ndarray[Any, Any],
        *,
        name: str,
        source: str = "<buffer>",
    ) -> None:
        self.name = name
        self.source = source
        first, last = self._check_shapes(offsets, data, "data")
        if first != 0 or last != len(data):
            raise self._error(
                f"string table `{name}` has offsets from {first} to {last}, "
                f"expected 0 to {len(data)} (the data length)"
            )
        self._offsets = offsets
        self._data = data
        self._len = len(offsets) - 1
        self._nbytes = int(data.shape[0])
        # The hot path reads offsets through a native memoryview (Python ints, no numpy
        # scalars) and decodes straight from a memoryview of the data: about 10x faster per
        # access than going through numpy. A non-native export (a big-endian host, or a
        # non-contiguous view) keeps the numpy path.
        fast = offsets.flags.c_contiguous and data.flags.c_contiguous
        off = offsets.data if fast else None
        self._fast_offsets: memoryview | None = (
            off
            if off is not None and off.format in ("I", "L", "Q") and off.itemsize in (4, 8)
            else None
        )
        self._fast_data: memoryview | bytes | None = (
            data.data if self._fast_offsets is not None else None
        )
        # Every string, decoded on the first take() of a small table (see _decode_whole).
        self._strings: list[str | None] | None = None
        self._decoded = False

    def _check_shapes(
        self, offsets: np.ndarray[Any, Any], data: np.ndarray[Any, Any], part: str
    ) -> tuple[int, int]:
        """Check the offsets' and the ``part`` array's dtype and ndim; the first and last offset."""
        name = self.name
        wide = offsets.dtype in (DTYPES["<u4"], DTYPES["<u8"])
        if not wide or offsets.ndim != 1 or len(offsets) < 1:
            raise self._error(
                f"`{name}.offsets` must be a non-empty 1-D <u4 or <u8 array, "
                f"not {offsets.dtype.str} {list(offsets.shape)}"
            )
        if data.dtype != DTYPES["<u1"] or data.ndim != 1:
            raise self._error(
                f"`{name}.{part}` must be a 1-D <u1 array, not {data.dtype.str} {list(data.shape)}"
            )
        return int(offsets[0]), int(offsets[-1])

    def _error(self, what: str) -> CorruptIndexError:
        return _corrupt(self.source, what)

    def __len__(self) -> int:
        """Number of strings."""
        return self._len

    def __getitem__(self, i: int) -> str:
        """Return string ``i`` (negative indices count from the end).

        Raises:
            IndexError: ``i`` is out of range (a caller error, as for any sequence).
            CorruptIndexError: The stored offsets are out of order or bounds, or the bytes are
                not UTF-8.
        """
        off = self._fast_offsets
        if off is not None and 0 <= i < self._len:
            start, end = off[i], off[i + 1]
            if start <= end <= self._nbytes:
                try:
                    return str(self._fast_data[start:end], "utf-8")  # type: ignore[index]
                except UnicodeDecodeError:
                    pass  # the checked path below names the row
        i = int(i)
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(f"string table `{self.name}` index out of range")
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        if not start <= end <= len(self._data):
            raise self._error(
                f"string table `{self.name}` row {i} has offsets {start}..{end}, "
                f"out of order or past the data ({len(self._data)} bytes)"
            )
        try:
            return self._data[start:end].tobytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._error(
                f"string table `{self.name}` row {i} is not valid UTF-8 ({exc.reason})"
            ) from None

    def take(self, rows: Sequence[int]) -> list[str]:
        """Strings ``rows`` (each in range, as for ``[]``), faster than one ``[]`` per row.

        Raises:
            IndexError: A row is out of range.
            CorruptIndexError: As for ``[]``.
        """
        strings = self._strings if self._decoded else self._decode_whole()
        if strings is not None:
            n = self._len
            try:
                found = [strings[i] if 0 <= i < n else None for i in rows]
            except TypeError:  # a row that is not an int: the checked path below says so
                found = [None]
            if None not in found:
                return found  # type: ignore[return-value]  # no None left
        off, data, nbytes, n = self._fast_offsets, self._fast_data, self._nbytes, self._len
        if off is None or data is None:
            return [self[i] for i in rows]
        out = []
        for i in rows:
            if 0 <= i < n:
                start, end = off[i], off[i + 1]
                if start <= end <= nbytes:
                    try:
                        out.append(str(data[start:end], "utf-8"))
                        continue
                    except UnicodeDecodeError:
                        pass
            out.append(self[i])  # the checked path raises the right error
        return out

    def _decode_whole(self) -> list[str | None] | None:
        """Decode every string of a table of at most :data:`DECODE_ROWS_MAX` rows, once.

        A page of hits then reads each string with one list index, about 0.1 µs, instead of
        slicing and decoding it, 0.5-1 µs (the 7 fields of a page read five tables). The
        bound keeps the copy small: at most that many strings from at most
        :data:`DEFLATE_TABLE_MAX` bytes. A row that is not UTF-8 stays None, and offsets out
        of order leave the whole table undecoded: the checked path names the bad row.
        """
        strings: list[str | None] | None = None
        if self._len <= DECODE_ROWS_MAX and self._nbytes <= DEFLATE_TABLE_MAX:
            offsets = self._offsets
            if not np.any(offsets[1:] < offsets[:-1]):  # with 0 first and the length last
                offs = offsets.tolist()
                spans = zip(offs[:-1], offs[1:], strict=True)
                raw = self._data.tobytes()
                if raw.isascii():
                    text = raw.decode("ascii")
                    strings = [text[a:b] for a, b in spans]
                else:
                    strings = [_utf8_or_none(raw[a:b]) for a, b in spans]
        self._strings = strings
        self._decoded = True
        return strings

    def __iter__(self) -> Iterator[str]:
        """Iterate over all strings in row order."""
        for i in range(self._len):
            yield self[i]

    def validate_all(self) -> None:
        """Check every offset and that every string is valid UTF-8, vectorised.

        Raises:
            CorruptIndexError: Names the table and the first bad row.
        """
        offs = self._offsets
        bad = np.flatnonzero(offs[1:] < offs[:-1])
        if len(bad):
            row = int(bad[0])
            raise self._error(
                f"string table `{self.name}` row {row} has offsets "
                f"{int(offs[row])}..{int(offs[row + 1])}, out of order"
            )
        data = self._data
        size = int(data.shape[0])
        # Decoded a block at a time (never a copy of the whole blob, which can be most of the
        # file); a block takes the continuation bytes (at most 3) of its last character along,
        # so valid text is never split. Invalid bytes fail in whichever block holds them.
        lo = 0
        while lo < size:
            hi = min(lo + _VALIDATE_BLOCK, size)
            for _ in range(3):
                if hi < size and (int(data[hi]) & 0xC0) == 0x80:
                    hi += 1
            try:
                data[lo:hi].tobytes().decode("utf-8")
            except UnicodeDecodeError as exc:
                row = max(int(np.searchsorted(offs, lo + exc.start, side="right")) - 1, 0)
                raise self._error(
                    f"string table `{self.name}` row {row} is not valid UTF-8 ({exc.reason})"
                ) from None
            lo = hi
        # The blob is valid UTF-8; each row is too iff no boundary splits a character, i.e. no
        # inner offset points at a continuation byte (0b10xxxxxx).
        inner = offs[(offs > 0) & (offs < size)].astype(np.intp)
        split = np.flatnonzero((self._data[inner] & 0xC0) == 0x80)
        if len(split):
            at = int(inner[split[0]])
            row = int(np.searchsorted(offs, at, side="left"))
            raise self._error(
                f"string table `{self.name}` row {row} starts inside a UTF-8 character (byte {at})"
            )


_VALIDATE_BLOCK = 1 << 20
"""Bytes of a string table decoded at a time by :meth:`StringTable.validate_all`."""


DEFLATE_TABLE_MAX = 4 << 20
"""String tables whose data is at most this many bytes are stored deflated (format 7).

Inflating one costs about 1 ms per 250 KB, once per process; a larger table (a 1M-chunk
index's ids) stays raw, so it is never held in memory whole."""

_DEFLATE_BOUND = 1032
"""Deflate never expands more than this (plus 64 bytes): a larger claimed size is corrupt."""


def string_table_arrays(name: str, values: Sequence[str]) -> dict[str, np.ndarray[Any, Any]]:
    """The arrays of string table ``name`` as the packer writes them (FORMAT.md §2.2).

    ``<name>.offsets`` and either ``<name>.zdata``, the data as one raw deflate stream (zlib
    level 9, memLevel 9), when the data is at most :data:`DEFLATE_TABLE_MAX` bytes and the
    stream is smaller, or else ``<name>.data``.
    """
    offsets, data = encode_strings(values)
    out: dict[str, np.ndarray[Any, Any]] = {f"{name}.offsets": offsets}
    if 0 < data.shape[0] <= DEFLATE_TABLE_MAX:
        packer = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
        stream = packer.compress(data.tobytes()) + packer.flush()
        if len(stream) < data.shape[0]:
            out[f"{name}.zdata"] = np.frombuffer(stream, dtype="<u1").copy()
            return out
    out[f"{name}.data"] = data
    return out


DECODE_ROWS_MAX = 1 << 16
"""A table of at most this many rows (and DEFLATE_TABLE_MAX bytes) is decoded whole by its
first ``take`` (:meth:`StringTable._decode_whole`)."""


def _utf8_or_none(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


class DeflatedStringTable(StringTable):
    """A :class:`StringTable` stored deflated (``<name>.zdata``), inflated on first use.

    Construction checks only O(1) facts (dtypes, the first offset, and that the last one, the
    inflated size, is within what deflate can produce from the stream); the first access
    inflates the stream, requiring exactly that many bytes and the stream's end, then reads
    as a plain table. Two threads may both inflate it once; they build equal tables.
    """

    def __init__(
        self,
        offsets: np.ndarray[Any, Any],
        zdata: np.ndarray[Any, Any],
        *,
        name: str,
        source: str = "<buffer>",
    ) -> None:
        self.name = name
        self.source = source
        first, last = self._check_shapes(offsets, zdata, "zdata")
        if first != 0 or last > _DEFLATE_BOUND * int(zdata.shape[0]) + 64:
            raise self._error(
                f"string table `{name}` has offsets from {first} to {last}, but `{name}.zdata` "
                f"({int(zdata.shape[0])} bytes) cannot inflate to that"
            )
        self._offsets = offsets
        self._zdata = zdata
        self._want = last
        self._len = len(offsets) - 1
        self._ready = False

    def _inflate(self) -> None:
        inflater = zlib.decompressobj(-15)
        try:
            # One byte more than wanted, so extra output shows (and 0 never means "all").
            raw = inflater.decompress(self._zdata.tobytes(), self._want + 1)
            complete = inflater.eof and not inflater.unused_data and not inflater.unconsumed_tail
        except zlib.error as exc:
            raise self._error(
                f"array `{self.name}.zdata` is not a deflate stream ({exc})"
            ) from None
        if len(raw) != self._want or not complete:
            raise self._error(
                f"array `{self.name}.zdata` does not inflate to exactly the {self._want} bytes "
                f"`{self.name}.offsets` ends at"
            )
        StringTable.__init__(
            self, self._offsets, np.frombuffer(raw, dtype="<u1"), name=self.name, source=self.source
        )
        if self._fast_data is not None:
            # The inflated bytes themselves: str() decodes a slice of bytes about a third faster
            # than a slice of a memoryview (the page of hits reads ids, paths and titles here).
            self._fast_data = raw
        self._ready = True

    def __getitem__(self, i: int) -> str:
        if not self._ready:
            self._inflate()
        return super().__getitem__(i)

    def take(self, rows: Sequence[int]) -> list[str]:
        """Strings ``rows``, as :meth:`StringTable.take` (inflating the table first)."""
        if not self._ready:
            self._inflate()
        return super().take(rows)

    def validate_all(self) -> None:
        """Inflate the table (if not yet) and check it as :meth:`StringTable.validate_all`."""
        if not self._ready:
            self._inflate()
        super().validate_all()


def read_string_table(buf: Buffer, header: Header, name: str) -> StringTable:
    """Return the :class:`StringTable` stored as ``<name>.offsets`` and ``<name>.data``.

    Or, when the file has ``<name>.zdata`` instead (format 7), a
    :class:`DeflatedStringTable` that inflates it on first use.

    Args:
        buf: The whole index.
        header: Its validated header.
        name: Table name without suffix, e.g. ``"chunk.id"``.

    Returns:
        A lazy table over zero-copy views.

    Raises:
        CorruptIndexError: Either array is missing or malformed.
    """
    offsets = array_view(buf, header, f"{name}.offsets", dtype=("<u4", "<u8"), ndim=1)
    if f"{name}.zdata" in header.arrays:
        if f"{name}.data" in header.arrays:
            raise _corrupt(
                header.source, f"string table `{name}` has both `{name}.data` and `{name}.zdata`"
            )
        zdata = array_view(buf, header, f"{name}.zdata", dtype="<u1", ndim=1)
        return DeflatedStringTable(offsets, zdata, name=name, source=header.source)
    data = array_view(buf, header, f"{name}.data", dtype="<u1", ndim=1)
    return StringTable(offsets, data, name=name, source=header.source)
