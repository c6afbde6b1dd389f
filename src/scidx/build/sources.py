"""Reading the selected input files: bytes from disk, then text (UTF-8, BOM and CRLF handled)."""

from __future__ import annotations

from collections.abc import Sequence

from scidx.build.inputs import InputFile
from scidx.build.progress import Progress
from scidx.errors import InputError


def read_inputs(inputs: Sequence[InputFile], progress: Progress) -> list[tuple[InputFile, bytes]]:
    """Read every selected file's bytes, reporting progress; unreadable files are InputErrors."""
    out = []
    for i, item in enumerate(inputs):
        try:
            data = item.path.read_bytes()
        except OSError as exc:
            raise InputError(
                f"cannot read input file {item.source}: {exc.strerror or exc}; "
                "fix its permissions or exclude it in the config"
            ) from None
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
