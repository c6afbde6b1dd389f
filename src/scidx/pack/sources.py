"""Reading the selected input files: bytes from disk, then text (UTF-8, BOM and CRLF handled)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import xxhash

from scidx.errors import InputError
from scidx.pack.inputs import InputFile
from scidx.pack.progress import Progress

__all__ = [
    "MAX_INPUT_BYTES",
    "MAX_INPUT_LINES",
    "ScannedInput",
    "check_line_count",
    "decode_source",
    "file_digest",
    "read_input",
    "read_scanned",
    "scan_inputs",
]

MAX_INPUT_BYTES = 16 << 20
"""Largest Markdown file the packer reads (16 MiB). The largest page of the shared corpora is
0.7 MB; a 50 MB single-line file took 7.7 s and 1 GB to chunk (docs/RELIABILITY.md)."""

MAX_INPUT_LINES = 100_000
"""Most lines of a Markdown file the packer reads. markdown-it makes a few tokens per line (a
table row: eight), each a Python object, so memory and time follow the line count, not the
bytes: 2.8 M short lines (13.7 MiB) took 84 s and 2.0 GB (issue 39). The longest page of the
shared corpora has 7,402 lines; at this limit the worst line structure measured (a table) peaks
near 300 MiB (benchmarks/bench_pathological.py)."""


class ScannedInput(NamedTuple):
    """An input file as first read: its size and content hash (its bytes are not kept)."""

    item: InputFile
    size: int
    digest: str


def read_input(item: InputFile) -> bytes:
    """One file's bytes, read by its size (never a buffer larger than the file plus one byte).

    Reading each file into a 16 MiB buffer left one memory mapping alive per file (glibc maps
    large allocations and keeps a shrunk one mapped), so past ~65,000 files the process hit
    ``vm.max_map_count``; a buffer sized by ``fstat`` comes from the ordinary heap.

    Raises:
        InputError: The file cannot be read or is larger than :data:`MAX_INPUT_BYTES`.
    """
    try:
        with open(item.path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            # One byte more than the size (or than the limit) notices a file that grew.
            data = fh.read(min(size, MAX_INPUT_BYTES) + 1)
            if size < len(data) <= MAX_INPUT_BYTES:
                data += fh.read(MAX_INPUT_BYTES + 1 - len(data))  # it grew since fstat
    except OSError as exc:
        raise InputError(
            f"cannot read input file {item.source}: {exc.strerror or exc}; "
            "fix its permissions or exclude it in the config"
        ) from None
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(
            f"input file {item.source} is larger than {MAX_INPUT_BYTES:,} bytes, the limit "
            "for one Markdown page; split it into several pages or exclude it in the config"
        )
    check_line_count(data, item.source)
    return data


def check_line_count(data: bytes, source: str) -> None:
    """Refuse a file of more than :data:`MAX_INPUT_LINES` lines (before markdown-it sees it).

    Raises:
        InputError: Naming the file, its line count and the limit.
    """
    # CR alone ends a line too (normalize_source turns it into LF); counting bytes is ~1 ms/MB.
    lines = max(data.count(b"\n"), data.count(b"\r"))
    lines += bool(data) and data[-1:] not in (b"\n", b"\r")
    if lines > MAX_INPUT_LINES:
        raise InputError(
            f"input file {source} has {lines:,} lines, more than {MAX_INPUT_LINES:,}, the limit "
            "for one Markdown page (memory and time grow with the lines); split it into several "
            "pages or exclude it in the config"
        )


def file_digest(data: bytes) -> str:
    """The content hash of an input file (the sidecar's per-file hash)."""
    return xxhash.xxh3_128_hexdigest(data)


def scan_inputs(inputs: Sequence[InputFile], progress: Progress) -> list[ScannedInput]:
    """Read and hash every selected file, one at a time, reporting progress.

    Only the hashes are kept: the chunking stage reads each file again (from the page cache)
    and checks it is unchanged, so no more than one job's files are in memory at once.

    Raises:
        InputError: A file cannot be read or is larger than :data:`MAX_INPUT_BYTES`.
    """
    out = []
    foreign: list[str] = []
    for i, item in enumerate(inputs):
        data = read_input(item)
        kind = not_markdown(item.source, data)
        if kind:
            foreign.append(f"{item.source} ({kind})")
        out.append(ScannedInput(item, len(data), file_digest(data)))
        progress("read", i + 1, len(inputs))
    if foreign:
        _refuse_foreign(foreign)
    return out


# What a docs glob such as "docs/**" also catches: never Markdown, whatever their bytes.
_FOREIGN_SUFFIXES = frozenset(
    ".png .jpg .jpeg .gif .webp .svg .ico .bmp .avif .pdf .zip .gz .woff .woff2 .ttf .mp4 "
    ".js .mjs .cjs .ts .tsx .jsx .py .css .scss .json .yml .yaml .toml .xml .html .htm "
    ".rst .adoc .tex .ipynb".split()
)
_MAGIC = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF"),
    (b"PK\x03\x04", "a zip archive"),
    (b"\x1f\x8b", "gzip data"),
)


def not_markdown(source: str, data: bytes) -> str:
    """Why ``source`` is not a Markdown page (``"a PNG image"``, ``".js file"``), or ``""``."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    if b"\x00" in data[:8192]:
        return "binary data"
    suffix = source.rsplit("/", 1)[-1].rpartition(".")[2].lower()
    if "." in source.rsplit("/", 1)[-1] and f".{suffix}" in _FOREIGN_SUFFIXES:
        return f".{suffix} file"
    return ""


def _refuse_foreign(foreign: list[str]) -> None:
    """One error naming every selected file that is not Markdown, and how to leave them out."""
    shown = ", ".join(foreign[:10]) + (
        f" and {len(foreign) - 10} more" if len(foreign) > 10 else ""
    )
    suffixes = sorted({f.split(" (")[0].rpartition(".")[2] for f in foreign if "." in f})
    example = ", ".join(f'"**/*.{x}"' for x in suffixes[:3]) or '"**/*.png"'
    raise InputError(
        f"{len(foreign)} selected file{'s are' if len(foreign) > 1 else ' is'} not Markdown: "
        f'{shown}; leave them out with "exclude": [{example}] or narrow "include" to '
        'Markdown files (e.g. "docs/**/*.md")'
    )


def read_scanned(source: str, path: str, digest: str) -> bytes:
    """Read a scanned file again; it must still be what was hashed.

    Raises:
        InputError: It changed (or vanished) since it was scanned.
    """
    data = read_input(InputFile(source, Path(path)))
    if file_digest(data) != digest:
        raise InputError(
            f"input file {source} changed while it was being packed; pack again once the "
            "files stop changing"
        )
    return data


def decode_source(source: str, data: bytes) -> str:
    """Decode a Markdown file's bytes as UTF-8 (BOM dropped); InputError names the file."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{source}: not valid UTF-8 at byte offset {exc.start} "
            f"(byte 0x{data[exc.start]:02x}); re-save the file as UTF-8 or exclude it"
        ) from None
    return text
