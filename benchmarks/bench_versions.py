"""Docs versions (issue 40): what the default-version filter costs and what it saves.

Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_versions.py [CORPUS]

Builds a two-version site in a temp folder from a shared corpus's docs folder (default
``react-native-website-docs``: ``v1/`` and ``v2/`` are links to it, mapped to ``1.0`` and
``2.0`` by ``staticcorpus.json``'s ``versions``), packs it with the hashing provider, then for
eight queries prints the median search time and how many top-10 hits repeat a section another
version already gave, for the default version (``2.0``) and for every version (``"*"``).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import scidx
from scidx.pack.packer import pack_docs

QUERIES = [
    "flatlist performance",
    "navigation between screens",
    "native modules android",
    "style props",
    "animated api",
    "accessibility label",
    "text input keyboard",
    "image caching",
]


def main() -> None:
    corpus = sys.argv[1] if len(sys.argv) > 1 else "react-native-website-docs"
    docs = Path(__file__).resolve().parents[2] / "shared" / "corpora" / corpus / "docs"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "v1").symlink_to(docs)
        (root / "v2").symlink_to(docs)
        config = {
            "include": ["v1/**/*.md", "v2/**/*.md"],
            "output": "x.scidx",
            "allowExternalSymlinks": True,
            "versions": {"folders": {"v1": "1.0", "v2": "2.0"}, "default": "2.0"},
        }
        (root / "staticcorpus.json").write_text(json.dumps(config), encoding="utf-8")
        result = pack_docs(root / "staticcorpus.json", use_cache=False)
        print(f"{corpus}: {result.chunks} chunks in two versions")  # noqa: T201
        with scidx.load(root / "x.scidx") as idx:
            for mode in ("keyword", "hybrid"):
                for version in (None, "*"):
                    for q in QUERIES:  # warm
                        idx.search(q, mode=mode, version=version)
                    times, repeats = [], 0
                    for _ in range(5):
                        for q in QUERIES:
                            start = time.perf_counter()
                            idx.search(q, mode=mode, version=version)
                            times.append(time.perf_counter() - start)
                    for q in QUERIES:
                        hits = idx.search(q, mode=mode, version=version, k=10)
                        keys = [(h.source.split("/", 1)[1], h.anchor) for h in hits]
                        repeats += len(keys) - len(set(keys))
                    print(  # noqa: T201
                        f"{mode:8} version={version!s:5} median "
                        f"{statistics.median(times) * 1000:.2f} ms, {repeats} of "
                        f"{10 * len(QUERIES)} top-10 hits repeat another version's section"
                    )


if __name__ == "__main__":
    main()
