"""Pack benchmark: cold pack vs markdown-it's bare parse (the floor), and the no-op re-pack.

Usage::

    python benchmarks/bench_pack.py [--corpus ../shared/corpora/kubernetes-website-en] [--repeat 3]

Reports, measured in one run on the same files:

* ``parse floor``: ``MarkdownIt("commonmark").parse`` over every input file, single process;
* ``cold pack``: ``pack_docs`` with no cache and no previous index (fresh output path), the
  default worker count (one per core);
* ``no-op``: ``pack_docs`` again with unchanged inputs (reads and hashes inputs, checks the
  sidecar and output hash, writes nothing).

Targets (issue #2): cold pack <= 1.5x the parse floor on 2 cores; no-op <= 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from markdown_it import MarkdownIt

from scidx.pack.config import load_config
from scidx.pack.inputs import collect_inputs
from scidx.pack.packer import pack_docs

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parent.parent / "shared" / "corpora" / "kubernetes-website-en"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    if not corpus.is_dir():
        raise SystemExit(f"corpus folder {corpus} not found (pass --corpus)")

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "corpus").symlink_to(corpus, target_is_directory=True)
        cfg_path = work / "staticcorpus.json"
        cfg_path.write_text(
            json.dumps(
                {
                    "include": ["corpus/**/*.md"],
                    "output": "out.scidx",
                    "allowExternalSymlinks": True,
                }
            )
        )
        os.environ["SCIDX_CACHE_DIR"] = str(work / "cache")
        files = [f.path for f in collect_inputs(load_config(cfg_path))]
        texts = [p.read_text(encoding="utf-8") for p in files]

        md = MarkdownIt("commonmark")
        floors = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            for text in texts:
                md.parse(text)
            floors.append(time.perf_counter() - t0)

        colds = []
        result = None
        for _ in range(args.repeat):
            out = work / "out.scidx"
            for path in (out, work / "out.scidx.inputs"):
                path.unlink(missing_ok=True)
            t0 = time.perf_counter()
            result = pack_docs(cfg_path, use_cache=False)
            colds.append(time.perf_counter() - t0)
        assert result is not None

        noops = []
        for _ in range(max(args.repeat, 5)):
            t0 = time.perf_counter()
            again = pack_docs(cfg_path)
            noops.append(time.perf_counter() - t0)
            assert again.up_to_date

    floor, cold, noop = (statistics.median(x) for x in (floors, colds, noops))
    report = {
        "corpus": corpus.name,
        "files": len(files),
        "chunks": result.chunks,
        "indexBytes": result.output_bytes,
        "cores": os.cpu_count(),
        "parseFloorSeconds": round(floor, 3),
        "coldPackSeconds": round(cold, 3),
        "coldOverFloor": round(cold / floor, 3),
        "noopSeconds": round(noop, 4),
    }
    if args.json:
        print(json.dumps(report))
        return
    print(
        f"corpus {corpus.name}: {len(files)} files, {result.chunks} chunks, "
        f"{result.output_bytes / 2**20:.1f} MiB index, {os.cpu_count()} cores"
    )
    print(f"markdown-it parse floor : {floor:7.3f} s")
    print(f"cold pack (no cache)    : {cold:7.3f} s   = {cold / floor:.2f}x floor (target <= 1.5x)")
    print(f"no-op re-pack           : {noop:7.3f} s   (target <= 0.3 s)")


if __name__ == "__main__":
    main()
