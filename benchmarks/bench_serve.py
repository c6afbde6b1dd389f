"""Load on ``toolup-rag serve``: throughput, latency, errors, memory and index swaps.

Usage (from the project root; needs the ``serve`` extra and httpx)::

    nice -n 10 .venv/bin/python benchmarks/bench_serve.py [--shared ../shared] [--quick]

Indexes: the SciFact corpus (5,183 abstracts, ``--shared``/beir/scifact) once (~5k chunks) and
repeated 20 times with fresh ids (~100k chunks), packed with the default offline provider
(hashing, 512 dimensions); SciFact's queries are the requests. The server is the real CLI,
``python -m scidx serve``, in its own process on 127.0.0.1; the clients are ``httpx.AsyncClient``
workers in this process, each sending its next request as soon as the last one is answered
(closed loop), for a bounded time *and* a bounded count. Reported:

* requests/s, p50 and p99 latency of ``GET /search`` for keyword and hybrid at 5k and 100k
  chunks, with ``--concurrency`` clients (default 8), next to the peer figure: the same
  searches (``Index.search`` + ``to_dict``) in this process without HTTP, on one thread;
* the same at 64 concurrent clients: every request must be answered 200 (errors are counted);
* memory: the server's RSS (``VmRSS``) after a warm-up and after ``--memory-requests`` more
  requests (default 100,000; keyword, 5k index), sampled as it goes;
* an index swap under load: the file is replaced by atomic rename every 0.5 s while 16 clients
  search; every request must be answered 200, and the reloads are counted from the server log.

The client shares the machine's cores with the server, so absolute figures are a floor; the
ratios (keyword vs hybrid, 5k vs 100k) and the error counts are what to compare between runs.
Results are printed and written to ``bench-out/bench_serve-<phases>.json``; ``--phases`` runs a
subset (``throughput``, ``memory``, ``swap``), ``--search-threads`` is passed to the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench-out"
sys.path.insert(0, str(ROOT / "src"))


def read_scifact(shared: Path) -> tuple[list[dict[str, Any]], list[str]]:
    folder = shared / "beir" / "scifact"
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    queries = [json.loads(line)["text"] for line in (folder / "queries.jsonl").open()]
    return corpus, queries


def records(corpus: list[dict[str, Any]], times: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{copy}-{d['_id']}",
            "source": f"copy{copy:02d}/{d['_id']}.md",
            "title": d.get("title", ""),
            "text": d.get("text", "") or d.get("title", "") or "empty",
        }
        for copy in range(times)
        for d in corpus
    ]


def pack(recs: list[dict[str, Any]], path: Path) -> None:
    from scidx.errors import ScidxError
    from scidx.index.index import load as load_index
    from scidx.pack.packer import pack_records

    if path.exists():
        try:
            load_index(path).close()
            return
        except ScidxError as exc:  # built by an older scidx (format or tokenizer): rebuild
            print(f"rebuilding {path.name}: {exc}")
            path.unlink()
    t0 = time.perf_counter()
    pack_records(recs, path, url_template="https://example.org/{path}")
    print(f"packed {len(recs)} chunks into {path.name} in {time.perf_counter() - t0:.1f} s")


class Server:
    """``python -m scidx serve`` in a subprocess; its URL, pid and stderr lines."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scidx", "serve", *args, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.log: list[str] = []
        lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stderr, None), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stdout, lines), daemon=True).start()
        first = lines.get(timeout=300)
        self.url = first.rsplit(" on ", 1)[1].strip()

    def _pump(self, stream: Any, into: queue.Queue[str] | None) -> None:
        for line in stream:
            if into is None:
                self.log.append(line)
            else:
                into.put(line)

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def load(
    url: str,
    queries: list[str],
    *,
    mode: str,
    concurrency: int,
    seconds: float,
    count: int,
    on_progress: Any = None,
) -> dict[str, Any]:
    """``concurrency`` closed-loop clients for at most ``seconds`` and ``count`` requests."""
    latencies: list[float] = []
    errors: list[str] = []
    sent = 0
    deadline = time.perf_counter() + seconds
    rnd = random.Random(7)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    # A generous timeout: a request that is slow because this machine is busy is not an error.
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as client:

        async def worker() -> None:
            nonlocal sent
            while sent < count and time.perf_counter() < deadline:
                sent += 1
                q = queries[rnd.randrange(len(queries))]
                t0 = time.perf_counter()
                try:
                    r = await client.get("search", params={"q": q, "k": 10, "mode": mode})
                    if r.status_code != 200:
                        errors.append(f"{r.status_code} {r.text[:200]}")
                except httpx.HTTPError as exc:
                    errors.append(repr(exc))
                latencies.append(time.perf_counter() - t0)
                if on_progress is not None and len(latencies) % 1000 == 0:
                    on_progress(len(latencies))

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - t0
    latencies.sort()
    n = len(latencies)
    return {
        "mode": mode,
        "concurrency": concurrency,
        "requests": n,
        "errors": len(errors),
        "first_errors": errors[:3],
        "seconds": round(elapsed, 2),
        "rps": round(n / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(1000 * latencies[n // 2], 2) if n else None,
        "p99_ms": round(1000 * latencies[min(n - 1, int(n * 0.99))], 2) if n else None,
    }


def in_process(path: Path, queries: list[str], mode: str, seconds: float) -> dict[str, Any]:
    """The same searches without HTTP: one thread calling ``Index.search`` (the peer figure)."""
    from scidx.index.index import load as load_index

    rnd = random.Random(7)
    with load_index(path) as idx:
        for q in queries[:20]:
            [h.to_dict() for h in idx.search(q, k=10, mode=mode)]
        latencies = []
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline and len(latencies) < 5000:
            q = queries[rnd.randrange(len(queries))]
            t0 = time.perf_counter()
            [h.to_dict() for h in idx.search(q, k=10, mode=mode)]  # what the server serialises
            latencies.append(time.perf_counter() - t0)
    latencies.sort()
    n = len(latencies)
    return {
        "mode": mode,
        "requests": n,
        "qps": round(n / sum(latencies), 1),
        "p50_ms": round(1000 * latencies[n // 2], 2),
        "p99_ms": round(1000 * latencies[min(n - 1, int(n * 0.99))], 2),
    }


def show(label: str, row: dict[str, Any]) -> None:
    print(
        f"{label:<22} {row['mode']:<8} c={row['concurrency']:<3} {row['requests']:>7} req "
        f"{row['rps']:>8.1f} req/s  p50 {row['p50_ms']:>7} ms  p99 {row['p99_ms']:>8} ms  "
        f"errors {row['errors']}"
    )


def throughput_phase(
    args: argparse.Namespace, paths: dict[str, Path], queries: list[str], results: dict[str, Any]
) -> None:
    """Requests/s and latency per index size and mode, at ``--concurrency`` and at 64 clients."""
    for label, path in paths.items():
        for mode in ("keyword", "hybrid"):
            base = {**in_process(path, queries, mode, min(args.seconds, 5.0)), "index": label}
            results["in_process"].append(base)
            print(
                f"{label} chunks in process   {mode:<8} {base['qps']:>8.1f} q/s   "
                f"p50 {base['p50_ms']:>7} ms  p99 {base['p99_ms']:>8} ms  (no HTTP, 1 thread)"
            )
        server = Server(str(path), "--reload-interval", "0", *args.server_args)
        try:
            idle = server.rss_kib()
            for mode in ("keyword", "hybrid"):
                asyncio.run(  # warm-up: imports, page cache, first query embeddings
                    load(server.url, queries, mode=mode, concurrency=2, seconds=2, count=100)
                )
                for concurrency in (args.concurrency, 64):
                    row = asyncio.run(
                        load(
                            server.url,
                            queries,
                            mode=mode,
                            concurrency=concurrency,
                            seconds=args.seconds,
                            count=args.count,
                        )
                    )
                    row["index"] = label
                    row["server_rss_mib_start"] = round(idle / 1024, 1)
                    results["throughput"].append(row)
                    show(f"{label} chunks", row)
        finally:
            server.stop()


def memory_phase(
    args: argparse.Namespace, path: Path, queries: list[str], results: dict[str, Any]
) -> None:
    """Server RSS after a warm-up and every 10k requests, up to ``--memory-requests``."""
    server = Server(str(path), "--reload-interval", "0", *args.server_args)
    try:
        asyncio.run(
            load(server.url, queries, mode="keyword", concurrency=8, seconds=60, count=5000)
        )
        samples: list[tuple[int, int]] = [(0, server.rss_kib())]

        def sample(done: int) -> None:
            if done % 10_000 == 0:
                samples.append((done, server.rss_kib()))

        row = asyncio.run(
            load(
                server.url,
                queries,
                mode="keyword",
                concurrency=16,
                seconds=args.memory_seconds,
                count=args.memory_requests,
                on_progress=sample,
            )
        )
        samples.append((row["requests"], server.rss_kib()))
        results["memory"] = {
            "requests": row["requests"],
            "errors": row["errors"],
            "rps": row["rps"],
            "rss_kib_samples": samples,
            "growth_kib": samples[-1][1] - samples[0][1],
            "first_errors": row["first_errors"],
        }
        print(
            f"memory: {row['requests']} requests, errors {row['errors']}, RSS "
            f"{samples[0][1] / 1024:.1f} MiB after warm-up -> {samples[-1][1] / 1024:.1f} MiB "
            f"(samples every 10k: {[round(s / 1024, 1) for _, s in samples]})"
        )
    finally:
        server.stop()


def swap_phase(
    args: argparse.Namespace,
    path: Path,
    corpus: list[dict[str, Any]],
    queries: list[str],
    results: dict[str, Any],
) -> None:
    """Replace the index file every 0.5 s by atomic rename while 16 clients search."""
    live = OUT / "serve-live.scidx"
    other = OUT / "serve-scifact-5k-b.scidx"
    pack(records(corpus[: len(corpus) // 2], 1), other)
    live.write_bytes(path.read_bytes())
    server = Server(str(live), "--reload-interval", "0.1", *args.server_args)
    stop = threading.Event()
    swaps = 0

    def swapper() -> None:
        nonlocal swaps
        sources = [other.read_bytes(), path.read_bytes()]
        while not stop.wait(0.5):
            staged = live.with_suffix(".tmp")
            staged.write_bytes(sources[swaps % 2])
            os.replace(staged, live)
            swaps += 1

    try:
        thread = threading.Thread(target=swapper)
        thread.start()
        try:
            row = asyncio.run(
                load(
                    server.url,
                    queries,
                    mode="hybrid",
                    concurrency=16,
                    seconds=args.seconds,
                    count=10**9,
                )
            )
        finally:
            stop.set()
            thread.join()
        time.sleep(0.5)
        reloads = sum("reloaded" in line for line in server.log)
        failed = sum("cannot be loaded" in line for line in server.log)
        results["swap"] = {**row, "swaps": swaps, "reloads": reloads, "failed_reloads": failed}
        show("swap under load", row)
        print(f"  file replaced {swaps} times, server reloaded {reloads}, failed {failed}")
    finally:
        server.stop()
        live.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and write ``bench-out/bench_serve-<phases>.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0, help="per throughput run")
    parser.add_argument("--count", type=int, default=5000, help="requests per throughput run")
    parser.add_argument("--memory-requests", type=int, default=100_000)
    parser.add_argument(
        "--memory-seconds", type=float, default=1800.0, help="time bound of the memory run"
    )
    parser.add_argument(
        "--phases", default="throughput,memory,swap", help="comma-separated subset to run"
    )
    parser.add_argument(
        "--search-threads",
        type=int,
        default=None,
        help="passed to toolup-rag serve (default: its own, one per core)",
    )
    parser.add_argument("--sizes", default="5k,100k", help="index sizes: 5k, 100k or both")
    parser.add_argument("--quick", action="store_true", help="5k only, short runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.count, args.memory_requests = 3.0, 1000, 5000
    args.server_args = (
        ["--search-threads", str(args.search_threads)] if args.search_threads is not None else []
    )
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]

    corpus, queries = read_scifact(args.shared)
    OUT.mkdir(exist_ok=True)
    known = {"5k": 1, "100k": 20}
    wanted = ["5k"] if args.quick else [x.strip() for x in args.sizes.split(",") if x.strip()]
    sizes = {label: known[label] for label in wanted}
    paths = {}
    for label, times in sizes.items():
        paths[label] = OUT / f"serve-scifact-{label}.scidx"
        pack(records(corpus, times), paths[label])
    results: dict[str, Any] = {
        "throughput": [],
        "in_process": [],
        "machine_cores": os.cpu_count(),
        "search_threads": args.search_threads,
        "load_average_start": os.getloadavg(),
    }
    if "throughput" in phases:
        throughput_phase(args, paths, queries, results)
    if "memory" in phases:
        memory_phase(args, paths["5k"], queries, results)
    if "swap" in phases:
        swap_phase(args, paths["5k"], corpus, queries, results)

    results["load_average_end"] = os.getloadavg()
    print(
        f"load average (1/5/15 min) at start {results['load_average_start']}, at end "
        f"{results['load_average_end']} on {os.cpu_count()} cores"
    )
    threads = "" if args.search_threads is None else f"-threads{args.search_threads}"
    out = OUT / f"bench_serve-{'-'.join(phases)}-{'-'.join(sizes)}{threads}.json"
    out.write_text(json.dumps(results, indent=1))
    errors = sum(r["errors"] for r in results["throughput"])
    errors += results.get("memory", {}).get("errors", 0) + results.get("swap", {}).get("errors", 0)
    if errors:
        print(f"ERRORS seen: {errors}; see {out}")
        sys.exit(1)


if __name__ == "__main__":
    main()
