"""Pagefind over the same Markdown pages, for bench_web_bundle.py's side-by-side rows.

Pagefind indexes built HTML, so each page is rendered with markdown-it-py (front matter's
``title`` as the ``<title>`` and ``<h1>``; Hugo shortcodes left as text, as a site without
them would show) and indexed through Pagefind's Python API (``pip install -e '.[bench]'``).
The search page is a minimal one on Pagefind's JS API, shaped like scidx's bundle page so the
benchmark measures both the same way: ``#q``, a status line, ``section.page`` results; it
searches on every input (no debounce, a stale query's results dropped), loads the data of the
first :data:`RESULTS` results (Pagefind's UI shows 5 at first) and renders their excerpts.
"""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path

RESULTS = 5

_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)
_TITLE = re.compile(r"^title:\s*(.+?)\s*$", re.M)

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Search (Pagefind)</title></head>
<body><main id="app"><input id="q" type="search" autocomplete="off" autofocus>
<p id="status"></p><div id="results"></div></main>
<script type="module">
const pagefind = await import("./pagefind/pagefind.js");
await pagefind.init();  // the entry file, wasm and metadata load with the page
const input = document.getElementById("q"), results = document.getElementById("results");
const status = document.getElementById("status");
let sequence = 0;
input.addEventListener("input", async () => {
  const q = input.value.trim(), mine = ++sequence;
  const search = await pagefind.search(q);
  if (mine !== sequence || !search) return;
  const data = await Promise.all(search.results.slice(0, RESULTS).map((r) => r.data()));
  if (mine !== sequence) return;
  results.textContent = "";
  for (const d of data) {
    const s = document.createElement("section"); s.className = "page";
    const h = document.createElement("h2"); h.textContent = d.meta.title || d.url;
    const p = document.createElement("p"); p.innerHTML = d.excerpt;  // Pagefind's <mark>s
    s.append(h, p); results.append(s);
  }
  status.textContent = search.results.length + " results for “" + q + "”.";
});
</script></body></html>
""".replace("RESULTS", str(RESULTS))


def _html(text: str, fallback: str) -> tuple[str, str]:
    from markdown_it import MarkdownIt

    title = fallback
    front = _FRONT.match(text)
    if front:
        found = _TITLE.search(front.group(1))
        if found:
            title = found.group(1).strip("\"'")
        text = text[front.end() :]
    body = MarkdownIt("commonmark").enable("table").render(text)
    page = (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>"
        f"{html.escape(title)}</title></head><body><main><h1>{html.escape(title)}</h1>"
        f"{body}</main></body></html>"
    )
    return title, page


async def _index(corpus: Path, out: Path) -> int:
    from pagefind.index import IndexConfig, PagefindIndex

    pages = sorted(p for p in corpus.rglob("*.md") if p.is_file())
    config = IndexConfig(output_path=str(out / "pagefind"), force_language="en")
    async with PagefindIndex(config=config) as index:
        for path in pages:
            rel = path.relative_to(corpus).with_suffix("")
            _, page = _html(path.read_text(encoding="utf-8", errors="replace"), rel.name)
            await index.add_html_file(content=page, url=f"/{rel.as_posix()}/")
    return len(pages)


def build_pagefind_site(corpus: Path, out: Path) -> int:
    """Index every ``*.md`` under ``corpus`` with Pagefind into ``out``; pages indexed."""
    out.mkdir(parents=True, exist_ok=True)
    count = asyncio.run(_index(corpus, out))
    (out / "index.html").write_text(_PAGE, encoding="utf-8")
    return count
