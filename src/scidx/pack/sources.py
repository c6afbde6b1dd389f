"""Reading the selected input files: bytes from disk, then text (UTF-8, BOM and CRLF handled)."""

from __future__ import annotations

from collections.abc import Sequence

from scidx.errors import InputError
from scidx.pack.inputs import InputFile
from scidx.pack.progress import Progress

__all__ = ["MAX_INPUT_BYTES", "decode_source", "read_inputs"]

MAX_INPUT_BYTES = 16 << 20
"""Largest Markdown file the packer reads (16 MiB). The largest page of the shared corpora is
0.7 MB; a 50 MB single-line file took 7.7 s and 1 GB to chunk (docs/RELIABILITY.md)."""


def read_inputs(inputs: Sequence[InputFile], progress: Progress) -> list[tuple[InputFile, bytes]]:
    """Read every selected file's bytes, reporting progress.

    Raises:
        InputError: A file cannot be read or is larger than :data:`MAX_INPUT_BYTES`.
    """
    out = []
    for i, item in enumerate(inputs):
        try:
            with open(item.path, "rb") as fh:
                data = fh.read(MAX_INPUT_BYTES + 1)
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
        out.append((item, data))
        progress("read", i + 1, len(inputs))
    return out


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
