"""A docs-site search endpoint with only the standard library: ``GET /search?q=...`` → JSON.

Run it next to a packed index, then query it::

    python examples/docs_site_server.py docs.scidx --port 8000
    curl 'http://127.0.0.1:8000/search?q=configure+the+cache&k=3'

The index is loaded once at start-up (memory-mapped) and shared by every request thread;
``scidx.Index`` is thread-safe. Each hit carries ``url``, made from the index's ``urlTemplate``.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from scidx.index.index import Index, load

MAX_K = 50  # a public endpoint should not let one request ask for the whole corpus


def make_server(index: Index, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """An HTTP server answering ``GET /search?q=&k=&mode=`` from ``index``."""

    class SearchHandler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if url.path != "/search":
                self._send(404, {"error": "not found; use /search?q=your+question"})
                return
            params = {key: values[0] for key, values in parse_qs(url.query).items()}
            query = params.get("q", "")
            try:
                k = min(int(params.get("k", "5")), MAX_K)
                hits = index.search(query, k=k, mode=params.get("mode", "hybrid"))
            except ValueError as exc:  # a bad k, or scidx.QueryError (a ValueError)
                self._send(400, {"error": str(exc)})
                return
            results = [
                {
                    "title": hit.title,
                    "section": " > ".join(hit.heading_path),
                    "url": hit.url or f"{hit.source}#{hit.anchor}",
                    "snippet": hit.snippet,
                    "score": round(hit.score, 4),
                }
                for hit in hits
            ]
            self._send(200, {"query": query, "hits": results})

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (base signature)
            return  # keep the console for the start-up line; add access logging as you need

    return ThreadingHTTPServer((host, port), SearchHandler)


def main(argv: list[str] | None = None) -> None:
    """Serve an index until interrupted (Ctrl-C)."""
    parser = argparse.ArgumentParser(description="Serve /search?q= over a .scidx index.")
    parser.add_argument("index", help="the .scidx file")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    parser.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one")
    args = parser.parse_args(argv)

    index = load(args.index)  # once, at start-up
    server = make_server(index, args.host, args.port)
    host, port = server.server_address[:2]
    sys.stdout.write(f"serving {args.index} on http://{host}:{port}/search?q=\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        index.close()


if __name__ == "__main__":
    main()
