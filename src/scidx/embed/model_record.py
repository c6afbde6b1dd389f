"""Where this machine found each ``local`` model it packed with: identity → folder.

An index packed with ``"embeddingProvider": "local", "model": "/abs/path/model"`` names its
model by name and identity only (the header must not hold a machine's path: the same inputs give
the same bytes on every machine). So that the index is searchable right after packing, on the
machine that packed it, with no ``--model-dir``, the packer records here the folder each model
identity was loaded from, and the query side looks there after ``model_dir`` and
``$SCIDX_MODEL_DIR``. The identity check still applies: a folder whose files changed since is
not used.

The record is one small JSON file, ``local-models.json``, in the embedding-cache folder
(``$SCIDX_CACHE_DIR``, else the platform's user cache folder for scidx). It is a convenience:
failing to read or write it never fails a pack or a search (the error message then says how to
point at the model). It is bounded (the newest :data:`MAX_ENTRIES` identities) and read with the
same care as any untrusted file: only string → string entries are used.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

__all__ = ["MAX_ENTRIES", "RECORD_NAME", "recall", "record_path", "remember"]

RECORD_NAME = "local-models.json"
MAX_ENTRIES = 256
_MAX_BYTES = 1 << 20  # a record of 256 paths is ~100 KiB; anything larger is not ours


def record_path() -> Path:
    """The record file: ``$SCIDX_CACHE_DIR/local-models.json`` or the user cache folder's."""
    env = os.environ.get("SCIDX_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser() / RECORD_NAME
    try:
        import platformdirs  # the packer's dependency; the runtime may not have it
    except ImportError:
        base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache")
        return Path(base) / "scidx" / RECORD_NAME
    return Path(platformdirs.user_cache_dir("scidx")) / RECORD_NAME


def _read(path: Path) -> dict[str, str]:
    try:
        with open(path, "rb") as fh:
            data = fh.read(_MAX_BYTES + 1)
        if len(data) > _MAX_BYTES:
            return {}
        raw = json.loads(data.decode("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    return {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, str)}


def recall(identity: str) -> Path | None:
    """The folder ``identity`` was last packed from on this machine, if recorded and present."""
    folder = _read(record_path()).get(identity)
    if not folder or not os.path.isabs(folder):
        return None
    path = Path(folder)
    return path if path.exists() else None


def remember(identity: str, folder: Path) -> None:
    """Record that the model ``identity`` was loaded from ``folder`` (best effort, atomic)."""
    path = record_path()
    entries = _read(path)
    value = str(Path(folder).absolute())
    if entries.get(identity) == value:
        return
    entries.pop(identity, None)
    entries[identity] = value  # newest last; the oldest go first when the record is full
    kept = dict(list(entries.items())[-MAX_ENTRIES:])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{RECORD_NAME}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(kept, fh, indent=1, sort_keys=False)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return
