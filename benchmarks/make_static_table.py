"""Make the static token table that ships with scidx, reproducibly, from ../shared/models/.

Usage (from the project root)::

    nice .venv/bin/python benchmarks/make_static_table.py [--shared ../shared] [--check]

Distils ``models/all-MiniLM-L6-v2-int8`` (its ``model.onnx`` must have the sha256 its
PROVENANCE.md lists) with ``scidx.embed.distill`` at 128 dimensions and one ONNX Runtime thread,
and writes ``src/scidx/embed/data/all-MiniLM-L6-v2-static-d128.scidxtok`` with its
``.provenance.json``. ``--check`` distils into a temporary folder and fails unless the bytes
equal the shipped table's (the determinism check).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from scidx.embed.distill import distill  # noqa: E402
from scidx.embed.static import DEFAULT_TABLE  # noqa: E402

MODEL = "models/all-MiniLM-L6-v2-int8"
#: ``model.onnx`` as ../shared/models/all-MiniLM-L6-v2-int8/PROVENANCE.md lists it.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
NAME = "all-MiniLM-L6-v2-static-d128"


def main() -> int:
    """Distil (or, with --check, compare) the shipped table; the exit status says how it went."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--check", action="store_true", help="compare with the shipped table")
    args = parser.parse_args()
    folder = Path(args.shared) / MODEL
    found = hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest()
    if found != MODEL_SHA256:
        print(f"{folder}/model.onnx has sha256 {found}, expected {MODEL_SHA256}", file=sys.stderr)
        return 1
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / DEFAULT_TABLE.name
            result = distill(folder, out, dimensions=128, threads=1, name=NAME)
            same = out.read_bytes() == DEFAULT_TABLE.read_bytes()
        print(f"distilled sha256 {result['sha256']}: {'same' if same else 'DIFFERENT'} bytes")
        return 0 if same else 1
    result = distill(folder, DEFAULT_TABLE, dimensions=128, threads=1, name=NAME)
    print(f"wrote {result['path']} ({result['bytes']} bytes, sha256 {result['sha256']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
