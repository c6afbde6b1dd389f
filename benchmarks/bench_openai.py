"""Benchmark the OpenAI provider against the local fake server (no network, no real key).

Chunks ``../shared/corpora/fastapi-docs-en`` with the scidx chunker and embeds every chunk
through the real ``openai`` SDK pointed at ``tests/support/openai_server.py`` on 127.0.0.1. The
server runs in a child process so that its JSON encoding does not compete with the client for
the GIL (in-process, the concurrency figures would measure the server). Reports:

* cold: through ``CachedEmbedder`` with an empty cache (requests and inputs sent, time);
* warm: the same again with the now-full cache (must send zero requests);
* concurrency 1 vs 8 against a server that adds 50 ms per request (no cache).

Run from the project root::

    .venv/bin/python benchmarks/bench_openai.py [--dimensions 256] [--batch-size 128]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from scidx.embed.openai import OpenAIEmbedder
from scidx.pack.cache import CachedEmbedder, EmbeddingCache

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "fastapi-docs-en"


def corpus_texts(corpus: Path) -> list[str]:
    """The embedding texts of every chunk of every Markdown file, in path order."""
    from scidx.pack.chunk import chunk_markdown

    try:
        from scidx.tokenize import embedding_text
    except ImportError:  # older tree: same shape as pack.index_text

        def embedding_text(title: str, heading_path: object, text: str) -> str:
            return f"{title}\n\n{text}"

    texts: list[str] = []
    for path in sorted(corpus.rglob("*.md")):
        source = path.relative_to(corpus).as_posix()
        for chunk in chunk_markdown(path.read_text(encoding="utf-8"), source):
            texts.append(embedding_text(chunk.title, chunk.heading_path, chunk.text))
    return texts


class ServerProcess:
    """``tests/support/openai_server.py`` as a child process, with its counters over HTTP."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency

    def __enter__(self) -> ServerProcess:
        script = ROOT / "tests" / "support" / "openai_server.py"
        self.proc = subprocess.Popen(
            [sys.executable, str(script), "--latency", str(self.latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        if not self.base_url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the fake server did not start (said {self.base_url!r})")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # the server exits when its stdin closes
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.base_url}/stats", timeout=10) as response:
            stats: dict[str, Any] = json.load(response)
        return stats

    def reset(self, *, latency: float | None = None) -> None:
        """Zero the counters (and change the added latency)."""
        request = urllib.request.Request(f"{self.base_url}/stats", method="DELETE")
        urllib.request.urlopen(request, timeout=10).close()
        if latency is not None:
            body = json.dumps({"latency": latency}).encode()
            request = urllib.request.Request(f"{self.base_url}/settings", body, method="PUT")
            urllib.request.urlopen(request, timeout=10).close()


def timed_embed(embedder: object, texts: list[str]) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    vectors = embedder.embed(texts)  # type: ignore[attr-defined]
    return time.perf_counter() - start, vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--dimensions", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    if not args.corpus.is_dir():
        sys.exit(f"{args.corpus} is absent (the shared corpora live beside the project root)")
    # A placeholder: the fake server accepts any key, and it never leaves 127.0.0.1.
    os.environ["OPENAI_API_KEY"] = "sk-local-benchmark"
    os.environ.pop("OPENAI_BASE_URL", None)

    start = time.perf_counter()
    texts = corpus_texts(args.corpus)
    chunk_s = time.perf_counter() - start
    figures: dict[str, object] = {
        "corpus": args.corpus.name,
        "chunks": len(texts),
        "chunk_s": round(chunk_s, 3),
        "dimensions": args.dimensions,
        "batch_size": args.batch_size,
    }

    def embedder(server: ServerProcess, concurrency: int = 4) -> OpenAIEmbedder:
        return OpenAIEmbedder(
            "text-embedding-3-small",
            args.dimensions,
            base_url=server.base_url,
            batch_size=args.batch_size,
            concurrency=concurrency,
        )

    with ServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        figures["estimate"] = embedder(server).estimate(texts)
        with EmbeddingCache(Path(tmp)) as cache:
            cold_s, cold = timed_embed(CachedEmbedder(embedder(server), cache), texts)
        stats = server.stats()
        figures["cold"] = {
            "requests": stats["requests"],
            "inputs_sent": stats["inputs"],
            "max_in_flight": stats["max_in_flight"],
            "seconds": round(cold_s, 3),
        }
        server.reset()
        with EmbeddingCache(Path(tmp)) as cache:
            warm_s, warm = timed_embed(CachedEmbedder(embedder(server), cache), texts)
        warm_requests = server.stats()["requests"]
        figures["warm"] = {"requests": warm_requests, "seconds": round(warm_s, 3)}
        assert warm.tobytes() == cold.tobytes(), "warm vectors differ from cold"
        assert warm_requests == 0, "a warm run sent requests"

        # Same server process: its vectors for this corpus are now computed and cached, so
        # the next two runs measure the client's overlap of the added latency.
        results: dict[int, np.ndarray] = {}
        for concurrency in (1, 8):
            server.reset(latency=args.latency)
            seconds, results[concurrency] = timed_embed(embedder(server, concurrency), texts)
            stats = server.stats()
            figures[f"latency_{int(args.latency * 1000)}ms_concurrency_{concurrency}"] = {
                "requests": stats["requests"],
                "max_in_flight": stats["max_in_flight"],
                "seconds": round(seconds, 3),
            }
        assert results[1].tobytes() == results[8].tobytes(), "output depends on concurrency"
        assert results[1].tobytes() == cold.tobytes(), "uncached output differs from cached"

    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"corpus {figures['corpus']}: {len(texts)} chunks (chunked in {chunk_s:.2f} s)")
    print(f"model text-embedding-3-small, {args.dimensions} dims, batch size {args.batch_size}")
    print(f"dry-run estimate: {figures['estimate']}")
    for name, value in figures.items():
        if isinstance(value, dict) and "seconds" in value:
            detail = ", ".join(f"{k} {v}" for k, v in value.items() if k != "seconds")
            print(f"  {name:<32} {value['seconds']:>7.3f} s   ({detail})")


if __name__ == "__main__":
    main()
