"""Static bundle benchmark: bytes per query from the browser's network log, size, latency.

Usage::

    nice -n 10 python benchmarks/bench_web_bundle.py [--corpus CORPUS] [--index X.scidx] [--json]
    nice -n 10 python benchmarks/bench_web_bundle.py --scifact   # every SciFact train query

Docs mode packs the corpus (hashing provider, as a docs site would without an API key), writes
the bundle with ``export-web`` and serves it from a loopback ``http.server`` that behaves as a
CDN does: ``Cache-Control: immutable`` for the content-hashed files, ``no-cache`` and an ETag
for ``index.html`` and the manifest, ``.html``/``.js``/``.css``/``.json`` gzipped on the wire
(``--plain``: every file as on disk). Headless Chromium (Debian's) then opens the page and
types each query into the search box. ``--pagefind`` (``pip install -e '.[bench]'``) also
indexes the same Markdown pages with Pagefind (``pagefind_site.py``: rendered to HTML with
markdown-it-py) and runs the same rows on its JS API right after scidx's, in the same browser
(``--pagefind-site DIR`` reuses a site built before). Rows:

* ``cold``: a fresh browser context (empty HTTP cache) per query: the page is loaded, the
  query typed; ``page bytes`` are the page's own load until the network is idle (HTML,
  script, style, and the reader, manifest and page table, which the page loads at once so the
  first keystroke does not wait for them); ``query bytes`` are every response from the first
  keystroke to the rendered results (term shards, page fragments), headers included. A cold
  query's total is the two added.
* ``next``: in the same page after the cold query, another query of the same length (the
  reader, manifest and page table are loaded: its shards and page fragments travel).
* ``warm``: the same browser context, the page loaded again and the cold query typed again
  (HTTP cache warm: only the revalidation of ``index.html`` and the manifest travels).
* ``ms``: from the query's input event (a capture listener, before the page's own) to the
  first results in the DOM (a ``MutationObserver``), to the next animation frame after that,
  and to the page's User Timing marks ``scidx:ranked`` (ranked) and ``scidx:results`` (every
  hit in the DOM); the page does not debounce. Medians over the queries.
* ``typed``: a new context, the page loaded, the query typed key by key (``--key-ms`` apart,
  120 by default, a fast typist): the page searches every prefix as it comes (a stale one is
  aborted before its page fragments), so *query bytes* are every response from the first key
  to the final results, all prefixes included; *ms* count from the last key.
* ``typed warm``: the same context, the page loaded again and the query typed again the same
  way (HTTP cache warm).
* ``search() ms``: ``Bundle.search(q, {k: 20})`` alone, every file already in memory (the CPU
  cost of a warm query: tokenize, sum, rank, group, snippets), median over all queries.

Except in the typed rows, a query is put in the box as one input event (as pasted): the
bytes of that query alone. The load average is recorded before and after (``load``).

``--scifact`` packs SciFact's corpus, runs every train query in the browser through the reader
and counts the queries whose keyword results differ from ``Index.search(q, mode="keyword")``
(ids, order, scores to 1e-6, snippets, marked words).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import hashlib
import http.server
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

import scidx
from scidx.export.web_bundle import MANIFEST_NAME, write_web_bundle
from scidx.pack.packer import pack_docs

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
DEFAULT_CORPUS = SHARED / "corpora" / "kubernetes-website-en"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]

QUERIES = {
    1: ["pod", "ingress", "configmap", "namespace", "kubectl", "secret", "scheduler", "taint"],
    2: [
        "persistent volume",
        "rolling update",
        "network policy",
        "resource quota",
        "service account",
        "node affinity",
        "liveness probe",
        "cluster autoscaler",
    ],
    4: [
        "configure pod security context",
        "drain node before maintenance",
        "expose deployment with service",
        "horizontal pod autoscaler metrics",
        "mount secret as volume",
        "upgrade kubeadm control plane",
        "limit container memory usage",
        "debug crashing init container",
    ],
}


class _Handler(http.server.SimpleHTTPRequestHandler):
    """A static host as a CDN serves one: cache headers, and text files gzipped on the wire.

    ``compress`` False: every file as it is on disk (``python -m http.server``). The ``.bin``
    files are gzip members already and are sent as they are either way.
    """

    compress = True

    def end_headers(self) -> None:
        name = self.path.split("?", 1)[0]
        mutable = name.endswith(("/", ".html", MANIFEST_NAME))
        cache = "no-cache" if mutable else "public, max-age=31536000, immutable"
        self.send_header("Cache-Control", cache)
        super().end_headers()

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        wants = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (self.compress and wants and path.suffix in TEXT_TYPES and path.is_file()):
            super().do_GET()
            return
        body = path.read_bytes()
        etag = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
        if self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        data = gzip.compress(body, 6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", TEXT_TYPES[path.suffix])
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("ETag", etag)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return None


TEXT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
}


def _serve(folder: Path, compress: bool = True) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = type("Handler", (_Handler,), {"compress": compress})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(folder))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _chromium() -> str:
    for name in ("chromium-headless-shell", "chromium"):
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            if (Path(folder) / name).exists():
                return str(Path(folder) / name)
    raise SystemExit("no Chromium (apt-get install chromium-headless-shell)")


# Each input resets the clock: with a query typed key by key, the first results after the
# last key are the final query's (the page never renders a stale query's results).
_WATCH = """() => {
  window.__keys = []; window.__done = null; window.__frame = null;
  document.addEventListener('input', () => {
    window.__keys.push(performance.now()); window.__done = null; window.__frame = null;
  }, true);
  new MutationObserver(() => {
    if (window.__done === null && document.querySelector('#results section.page')) {
      window.__done = performance.now();
      requestAnimationFrame(() => { window.__frame = performance.now(); });
    }
  }).observe(document.getElementById('results'), { childList: true, subtree: true });
}"""

# The page's User Timing marks after the last key (the reader's and search.js's own).
_TIMELINE = """() => {
  const key = window.__keys[window.__keys.length - 1];
  const at = (name) => {
    const m = performance.getEntriesByName(name).filter((e) => e.startTime >= key);
    return m.length ? m[m.length - 1].startTime - key : null;
  };
  return { ranked: at('scidx:ranked'), fetched: at('scidx:fetched'), results: at('scidx:results') };
}"""


def _sized(responses: list[Any]) -> int:
    total = 0
    for r in responses:
        sizes = r.request.sizes()
        total += int(sizes["responseBodySize"]) + int(sizes["responseHeadersSize"])
    return total


def _load(context: Any, url: str) -> tuple[Any, list[Any], int]:
    page = context.new_page()
    seen: list[Any] = []
    page.on("requestfinished", lambda req: seen.append(req.response()))
    page.goto(url)
    page.wait_for_load_state("networkidle")
    page_bytes = _sized([r for r in seen if r is not None])
    seen.clear()
    page.evaluate(_WATCH)
    return page, seen, page_bytes


def _type(page: Any, seen: list[Any], query: str, key_ms: float | None = None) -> dict[str, float]:
    """Put ``query`` in the box (replacing what is there); bytes and ms until its results.

    ``key_ms`` None: one input event (the bytes of this query alone, not of its prefixes);
    else typed key by key, ``key_ms`` apart, into an empty box: every prefix is searched as
    the page searches it (a stale one aborted), and the bytes are all of theirs.
    """
    seen.clear()
    page.evaluate(
        "() => { window.__keys = []; window.__done = null; window.__frame = null; "
        "performance.clearMarks(); document.getElementById('results').textContent = ''; }"
    )
    box = page.locator("#q")
    if key_ms is None:
        box.fill(query)
    else:
        box.fill("")
        seen.clear()
        page.evaluate("() => { window.__keys = []; }")
        box.press_sequentially(query, delay=key_ms)
    page.wait_for_function(
        "(q) => document.getElementById('status').textContent.includes('for “' + q + '”')",
        arg=query,
    )
    page.wait_for_load_state("networkidle")
    page.wait_for_function("() => window.__frame !== null")
    keys, done, frame = page.evaluate("() => [window.__keys, window.__done, window.__frame]")
    marks = page.evaluate(_TIMELINE)
    responses = [r for r in seen if r is not None]
    nan = float("nan")

    def since(mark: str) -> float:
        return float(marks[mark]) if marks[mark] is not None else nan

    return {
        "queryBytes": _sized(responses),
        "requests": len(responses),
        "keys": len(keys),
        "ms": (done - keys[-1]) if done is not None and keys else nan,
        "frameMs": (frame - keys[-1]) if frame is not None and keys else nan,
        "rankedMs": since("ranked"),
        "allMs": since("results"),
    }


def _rows(
    browser: Any, url: str, queries: list[str], key_ms: float
) -> dict[str, list[dict[str, float]]]:
    """Per query: cold (empty cache), warm (reloaded, HTTP cache warm), next (same session),
    and typed key by key: cold (a new context) and warm (that context, the page reloaded)."""
    kinds = ("cold", "warm", "next", "typed", "typed warm")
    out: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    for i, query in enumerate(queries):
        context = browser.new_context()
        page, seen, page_bytes = _load(context, url)
        out["cold"].append(_type(page, seen, query) | {"pageBytes": page_bytes})
        out["next"].append(_type(page, seen, queries[(i + 1) % len(queries)]) | {"pageBytes": 0})
        page.close()
        page, seen, page_bytes = _load(context, url)
        out["warm"].append(_type(page, seen, query) | {"pageBytes": page_bytes})
        context.close()
        context = browser.new_context()
        page, seen, page_bytes = _load(context, url)
        out["typed"].append(_type(page, seen, query, key_ms) | {"pageBytes": page_bytes})
        page.close()
        page, seen, page_bytes = _load(context, url)
        out["typed warm"].append(_type(page, seen, query, key_ms) | {"pageBytes": page_bytes})
        context.close()
    return out


def _docs(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="scidx-bench-web-"))
    if args.index:
        index = Path(args.index).resolve()
    else:
        (work / "corpus").symlink_to(Path(args.corpus).resolve())
        (work / "staticcorpus.json").write_text(
            json.dumps(
                {
                    "include": ["corpus/**/*.md"],
                    "output": "docs.scidx",
                    "allowExternalSymlinks": True,
                    "sourceRoot": "corpus",
                    "urlTemplate": "https://kubernetes.io/{page}#{anchor}",
                }
            ),
            encoding="utf-8",
        )
        pack_docs(work / "staticcorpus.json", use_cache=False)
        index = work / "docs.scidx"
    t0 = time.perf_counter()
    report = write_web_bundle(index, work / "bundle")
    export_s = time.perf_counter() - t0
    bundle = work / "bundle"
    manifest = json.loads((bundle / MANIFEST_NAME).read_text(encoding="utf-8"))
    reader = (bundle / manifest["reader"]).read_bytes()
    shards = sorted((bundle / name).stat().st_size for _, name in manifest["shards"])
    frags = sorted(p.stat().st_size for p in (bundle / "pages").iterdir())
    server, url = _serve(bundle, compress=not args.plain)
    pf_url = None
    if args.pagefind or args.pagefind_site:
        pf_site, pf_url, pf_server = _pagefind(args, work)
    out: dict[str, Any] = {
        "index": str(index.name),
        "indexBytes": index.stat().st_size,
        "load": os.getloadavg(),
        "chunks": manifest["chunks"],
        "bundleBytes": report.bytes,
        "bundleFiles": report.files,
        "termShards": report.term_shards,
        "shardMedianBytes": statistics.median(shards),
        "shardMaxBytes": shards[-1],
        "pages": report.pages,
        "fragmentFiles": len(frags),
        "fragmentMedianBytes": statistics.median(frags),
        "pageTableBytes": (bundle / manifest["pages"]).stat().st_size,
        "manifestBytes": (bundle / MANIFEST_NAME).stat().st_size,
        "readerBytes": len(reader),
        "readerGzipBytes": len(gzip.compress(reader, 9)),
        "exportSeconds": round(export_s, 2),
        "rows": {},
    }
    if pf_url:
        files = [f for f in (pf_site / "pagefind").rglob("*") if f.is_file()]
        out["pagefind"] = {
            "bundleBytes": sum(f.stat().st_size for f in files),
            "bundleFiles": len(files),
            "rows": {},
        }
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=_chromium(), headless=True, args=FLAGS)
            for words in args.words:
                queries = QUERIES[words][: args.queries]
                out["rows"][words] = _summary(_rows(browser, url, queries, args.key_ms))
                if pf_url:  # the same queries just after, in the same browser and load
                    rows = _rows(browser, pf_url, queries, args.key_ms)
                    out["pagefind"]["rows"][words] = _summary(rows)
            out["searchMs"] = _search_ms(browser, url, manifest["reader"])
            out["loadAfter"] = os.getloadavg()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
        if pf_url:
            pf_server.shutdown()
            pf_server.server_close()
    return out


_MEDIANS = ("pageBytes", "queryBytes", "requests", "ms", "frameMs", "rankedMs", "allMs")


def _summary(rows: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float]]:
    return {
        kind: {key: statistics.median(r[key] for r in got) for key in _MEDIANS}
        | {"queryBytesMax": max(r["queryBytes"] for r in got)}
        for kind, got in rows.items()
    }


def _pagefind(
    args: argparse.Namespace, work: Path
) -> tuple[Path, str, http.server.ThreadingHTTPServer]:
    """Pagefind's site for the same pages (built, or ``--pagefind-site``), served alike."""
    if args.pagefind_site:
        site = Path(args.pagefind_site).resolve()
    else:
        from pagefind_site import build_pagefind_site

        site = work / "pagefind-site"
        t0 = time.perf_counter()
        pages = build_pagefind_site(Path(args.corpus).resolve(), site)
        print(
            f"pagefind: {pages} pages indexed in {time.perf_counter() - t0:.0f} s", file=sys.stderr
        )
    server, url = _serve(site, compress=not args.plain)
    return site, url, server


def _search_ms(browser: Any, url: str, reader: str) -> float:
    page = browser.new_page()
    page.goto(url)
    queries = [q for qs in QUERIES.values() for q in qs]
    times = page.evaluate(
        """async ([reader, qs]) => {
            const m = await import(reader);
            const b = await m.Bundle.open("scidx-bundle.json");
            for (const q of qs) await b.search(q, { k: 20 });  // every file in memory
            const out = [];
            for (const q of qs) {
                const t = performance.now();
                await b.search(q, { k: 20 });
                out.push(performance.now() - t);
            }
            return out;
        }""",
        [url + reader, queries],
    )
    page.close()
    return float(statistics.median(times))


def _scifact() -> dict[str, Any]:
    from scidx.embed.hashing import HashingEmbedder
    from scidx.evaluation.beir import read_beir
    from scidx.pack.packer import pack_records

    data = read_beir(SHARED / "beir" / "scifact", "train")
    records = [{"id": d, "title": t, "text": x} for d, t, x in data.corpus]
    packed = pack_records(records, None, embedder=HashingEmbedder(dimensions=64), use_cache=False)
    assert packed.data is not None
    work = Path(tempfile.mkdtemp(prefix="scidx-bench-web-"))
    (work / "sf.scidx").write_bytes(packed.data)
    write_web_bundle(work / "sf.scidx", work / "bundle")
    queries = sorted(data.queries.values())
    idx = scidx.load(work / "sf.scidx")
    server, url = _serve(work / "bundle")
    reader = json.loads((work / "bundle" / MANIFEST_NAME).read_text(encoding="utf-8"))["reader"]
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=_chromium(), headless=True, args=FLAGS)
            page = browser.new_page()
            page.goto(url)
            t0 = time.perf_counter()
            got = page.evaluate(
                """async ([reader, qs]) => {
                    const m = await import(reader);
                    const b = await m.Bundle.open("scidx-bundle.json");
                    const out = [];
                    for (const q of qs) out.push(await b.search(q, { k: 10 }));
                    return out;
                }""",
                [url + reader, queries],
            )
            browser_s = time.perf_counter() - t0
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    bad = []
    for q, hits in zip(queries, got, strict=True):
        want = idx.search(q, k=10, mode="keyword")
        same = [h["id"] for h in hits] == [w.id for w in want] and all(
            abs(h["score"] - w.score) <= 1e-6
            and h["snippet"] == w.snippet
            and [_js_slice(h["snippet"], a, b) for a, b in h["highlights"]]
            == [w.snippet[a:b] for a, b in w.highlights]
            for h, w in zip(hits, want, strict=True)
        )
        if not same:
            bad.append(q)
    return {
        "queries": len(queries),
        "differing": len(bad),
        "examples": bad[:5],
        "browserSeconds": round(browser_s, 2),
    }


def _js_slice(text: str, start: int, end: int) -> str:
    """``text.slice(start, end)`` as JavaScript slices: the reader's offsets are UTF-16."""
    return text.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--index", help="use this .scidx instead of packing the corpus")
    parser.add_argument("--scifact", action="store_true", help="keyword parity, every query")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--pagefind", action="store_true", help="also Pagefind on the same pages ('.[bench]')"
    )
    parser.add_argument("--pagefind-site", help="a site built by pagefind_site.py before")
    parser.add_argument(
        "--plain", action="store_true", help="serve files as on disk (no gzip for .js/.html)"
    )
    parser.add_argument("--words", type=int, nargs="*", default=sorted(QUERIES))
    parser.add_argument(
        "--key-ms", type=float, default=120, help="ms between keys in the typed rows (120)"
    )
    parser.add_argument("--queries", type=int, default=8, help="queries per row (at most 8)")
    args = parser.parse_args()
    report = _scifact() if args.scifact else _docs(args)
    if args.json or args.scifact:
        print(json.dumps(report, indent=None if args.json else 2))
        return
    _print(report)


def _print(report: dict[str, Any]) -> None:
    print(
        f"{report['index']}: {report['chunks']} chunks, index {report['indexBytes'] / 1e6:.1f} MB;"
        f" bundle {report['bundleBytes'] / 1e6:.2f} MB in {report['bundleFiles']} files "
        f"({report['termShards']} term shards, median {report['shardMedianBytes'] / 1e3:.1f} KB, "
        f"max {report['shardMaxBytes'] / 1e3:.1f} KB; {report['pages']} pages in "
        f"{report['fragmentFiles']} fragment files, median "
        f"{report['fragmentMedianBytes'] / 1e3:.1f} KB; page table "
        f"{report['pageTableBytes'] / 1e3:.1f} KB); reader {report['readerBytes'] / 1e3:.1f} KB, "
        f"{report['readerGzipBytes'] / 1e3:.1f} KB gzipped; export {report['exportSeconds']} s"
    )
    print(
        "words  cache  page KB  query KB (median / max)  requests  "
        "ms after the last key: ranked  first in DOM  next frame  all in DOM"
    )
    for words, kinds in report["rows"].items():
        for kind, r in kinds.items():
            print(
                f"{words:>5}  {kind:<5}  {r['pageBytes'] / 1e3:7.1f}  "
                f"{r['queryBytes'] / 1e3:8.1f} / {r['queryBytesMax'] / 1e3:6.1f}        "
                f"{r['requests']:6.0f}  {r['rankedMs']:28.1f}  {r['ms']:12.1f}  "
                f"{r['frameMs']:10.1f}  {r['allMs']:10.1f}"
            )
    if "pagefind" in report:
        _print_pagefind(report)
    print(f"search() with every file in memory: {report['searchMs']:.1f} ms (median)")
    load = ", ".join(f"{x:.1f}" for x in report["load"] + report["loadAfter"])
    print(f"load average (1, 5, 15 min) before and after: {load}")
    sys.stdout.flush()


def _print_pagefind(report: dict[str, Any]) -> None:
    pf = report["pagefind"]
    print(
        f"side by side: bundle scidx {report['bundleBytes'] / 1e6:.2f} MB in "
        f"{report['bundleFiles']} files, Pagefind {pf['bundleBytes'] / 1e6:.2f} MB in "
        f"{pf['bundleFiles']} files"
    )
    print(
        "words  cache  KB page+query scidx / Pagefind (max)          "
        "ms to first result in DOM scidx / Pagefind"
    )
    for words, kinds in report["rows"].items():
        for kind, r in kinds.items():
            q = pf["rows"][words][kind]
            print(
                f"{words:>5}  {kind:<5}  {(r['pageBytes'] + r['queryBytes']) / 1e3:7.1f} "
                f"({(r['pageBytes'] + r['queryBytesMax']) / 1e3:5.1f}) / "
                f"{(q['pageBytes'] + q['queryBytes']) / 1e3:7.1f} "
                f"({(q['pageBytes'] + q['queryBytesMax']) / 1e3:5.1f})"
                f"          {r['ms']:6.1f} / {q['ms']:6.1f}"
            )


if __name__ == "__main__":
    main()
