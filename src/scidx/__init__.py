"""scidx: pack Markdown docs into one deterministic index file, then search it offline."""

from __future__ import annotations

from scidx.errors import ScidxError

__version__ = "0.1.0"

__all__ = ["ScidxError", "__version__"]
