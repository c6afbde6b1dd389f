"""The static bundle in headless Chromium: keyword results identical to Python, no server.

The bundle is written with ``export-web`` and served by a loopback ``http.server`` (any static
host). Python's ``Index.search(q, mode="keyword")`` is the oracle (over the index without
``snippet.where``, so that snippets are whole-text windows as in the bundle): the same ids in
the same order, scores within 1e-6, the same snippets and highlighted words. The JS tokenizer
is checked word for word against ``scidx.tokenize`` over more than 50,000 distinct words of
``../shared``.
"""

from __future__ import annotations

import functools
import http.server
import json
import random
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scidx.export.web_bundle import MANIFEST_NAME, write_web_bundle
from scidx.fusion import DEFAULT_FUSION
from scidx.index.index import Index, load, load_bytes
from scidx.tokenize import tokenize

sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (test extra)")
from support.browser import FLAGS, artifact, chromium  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOCS_QUERIES = [
    "ship nginx logs",
    "install",
    "configure the server",
    "How do I set the batch size?",
    "kelpie check --config",
    "KELPIE_BATCH_SIZE",
    "s3 region credentials",
    "rate limits retries",
    "what is a checkpoint file",
    "the",  # only a stop-word: no results
    "zzqqxx",
    "",
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None


class _Embeddings(_Quiet):
    """The static files, and ``POST /v1/embeddings`` answering fixed vectors (same origin)."""

    vectors: dict[str, list[float]] = {}

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(size))
        if self.path != "/v1/embeddings" or not all(t in self.vectors for t in body["input"]):
            self.send_error(404)
            return
        data = [{"index": i, "embedding": self.vectors[t]} for i, t in enumerate(body["input"])]
        out = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def _serve(
    folder: Path, vectors: dict[str, list[float]] | None = None
) -> tuple[http.server.ThreadingHTTPServer, str]:
    base = _Quiet if vectors is None else type("Handler", (_Embeddings,), {"vectors": vectors})
    handler = functools.partial(base, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, headless=True, args=FLAGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, str]]]:
    """The docs fixture's bundle, and a SciFact sample's when ../shared is there."""
    folder = tmp_path_factory.mktemp("bundles")
    shutil.copytree(ROOT / "fixtures" / "docs", folder / "docs")
    (folder / "staticcorpus.json").write_text(
        json.dumps(
            {"include": ["docs/**/*.md"], "output": "docs.scidx", "urlTemplate": "/{page}#{anchor}"}
        ),
        encoding="utf-8",
    )
    from scidx.pack.packer import pack_docs

    pack_docs(folder / "staticcorpus.json", use_cache=False)
    write_web_bundle(folder / "docs.scidx", folder / "docs-site")
    server, url = _serve(folder / "docs-site")
    out = {"docs": (folder / "docs.scidx", url)}
    try:
        yield out
    finally:
        server.shutdown()
        server.server_close()


def _open(browser: Any, url: str) -> Any:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.errors = errors  # type: ignore[attr-defined]
    return page


def _run(
    page: Any,
    url: str,
    queries: list[str],
    k: int = 10,
    group: Any = "section",
    mode: str | None = None,
) -> Any:
    reader = json.loads(_get(url + MANIFEST_NAME))["reader"]
    return page.evaluate(
        """async ([reader, queries, k, group, mode]) => {
            const m = await import(reader);
            const b = await m.Bundle.open("scidx-bundle.json");
            const out = [];
            for (const q of queries) out.push(await b.search(q, { k, group, mode }));
            return out;
        }""",
        [url + reader, queries, k, group, mode],
    )


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url) as response:  # loopback only
        return str(response.read().decode("utf-8"))


def _oracle(path: Path) -> Index:
    """Python's oracle for the bundle: the index without ``snippet.where``, so that a snippet is
    the best window over the whole text, which is what the bundle's reader shows (FORMAT.md
    §2.8; with the bytes, Python looks for the window only where they point)."""
    from support.indexes import rewrite

    data = rewrite(Path(path).read_bytes(), lambda a, m: a.pop("snippet.where", None))
    return load_bytes(data, source=str(path))


def _compare(
    idx: Index, queries: list[str], got: list[Any], group: Any = "section", k: int = 10
) -> None:
    for q, hits in zip(queries, got, strict=True):
        want = idx.search(q, k=k, mode="keyword", group=group) if q.strip() else []
        _same_hits(q, hits, want)
        for h, w in zip(hits, want, strict=True):  # group="page": the page's other sections
            _same_hits(q, h["sections"], list(w.sections))


def _same_hits(q: str, hits: list[Any], want: list[Any]) -> None:
    assert [h["id"] for h in hits] == [h.id for h in want], q
    for h, w in zip(hits, want, strict=True):
        assert abs(h["score"] - w.score) <= 1e-6, (q, w.id)
        assert h["snippet"] == w.snippet, (q, w.id)
        marked = [_js_slice(h["snippet"], a, b) for a, b in h["highlights"]]
        assert marked == [w.snippet[a:b] for a, b in w.highlights], (q, w.id)
        assert (h["url"], h["headingPath"], h["title"]) == (w.url, w.heading_path, w.title)


def _js_slice(text: str, start: int, end: int) -> str:
    """``text.slice(start, end)`` as JavaScript slices: the reader's offsets are UTF-16."""
    return text.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le")


def test_docs_queries_match_python(browser: Any, sites: dict[str, tuple[Path, str]]) -> None:
    index, url = sites["docs"]
    page = _open(browser, url)
    with _oracle(index) as idx:
        for group in ("section", "page", None):
            _compare(idx, DOCS_QUERIES, _run(page, url, DOCS_QUERIES, group=group), group)
    assert page.errors == []


def test_page_grouping_matches_python_on_a_shared_docs_corpus(
    browser: Any, shared_dir: Path, tmp_path: Path
) -> None:
    """group="page" (and "section", None) on real docs: pages of many sections, long lists.

    Queries are built from the corpus's own headings and common words, so many pages match
    and the searcher's candidate cut (max(4k, 32) rows, widened 4x) decides which sections a
    page collects; k=3 makes the cut bite.
    """
    (tmp_path / "corpus").symlink_to(shared_dir / "corpora" / "myst-parser-docs")
    (tmp_path / "staticcorpus.json").write_text(
        json.dumps(
            {
                "include": ["corpus/**/*.md"],
                "output": "myst.scidx",
                "allowExternalSymlinks": True,
                "sourceRoot": "corpus",
                "urlTemplate": "/{page}#{anchor}",
            }
        ),
        encoding="utf-8",
    )
    from scidx.pack.packer import pack_docs

    pack_docs(tmp_path / "staticcorpus.json", use_cache=False)
    write_web_bundle(tmp_path / "myst.scidx", tmp_path / "site")
    server, url = _serve(tmp_path / "site")
    try:
        with _oracle(tmp_path / "myst.scidx") as idx:
            headings = sorted({h for i in range(len(idx)) for h in idx.chunk(i).heading_path})
            rng = random.Random(28)
            queries = rng.sample(headings, min(40, len(headings)))
            queries += ["the", "directive", "configuration options", "markdown syntax role"]
            queries += [" ".join(rng.sample(queries[:40], 2)) for _ in range(10)]
            page = _open(browser, url)
            for group, k in (("page", 10), ("page", 3), ("section", 10), (None, 10)):
                got = _run(page, url, queries, k=k, group=group)
                _compare(idx, queries, got, group, k)
                if group == "page":
                    assert sum(len(h["sections"]) for hits in got for h in hits) > 20
            assert page.errors == []
    finally:
        server.shutdown()
        server.server_close()


def test_scifact_train_queries_match_python(browser: Any, shared_dir: Path, tmp_path: Path) -> None:
    """A sample of SciFact train over 1,500 of its documents (benchmarks/ run every query)."""
    from scidx.embed.hashing import HashingEmbedder
    from scidx.evaluation.beir import read_beir
    from scidx.pack.packer import pack_records

    data = read_beir(shared_dir / "beir" / "scifact", "train")
    queries = sorted(data.queries.values())
    rng = random.Random(28)
    sample = rng.sample(queries, 120)
    corpus = data.corpus[:1500]
    records = [{"id": d, "title": t, "text": x} for d, t, x in corpus]
    packed = pack_records(records, None, embedder=HashingEmbedder(dimensions=32), use_cache=False)
    assert packed.data is not None
    (tmp_path / "sf.scidx").write_bytes(packed.data)
    write_web_bundle(tmp_path / "sf.scidx", tmp_path / "sf")
    server, url = _serve(tmp_path / "sf")
    try:
        page = _open(browser, url)
        got = _run(page, url, sample)
        _compare(_oracle(tmp_path / "sf.scidx"), sample, got)
        assert sum(1 for hits in got if hits) > 100  # the sample really ranks something
    finally:
        server.shutdown()
        server.server_close()


def _shared_words(shared: Path, want: int) -> list[str]:
    words: set[str] = set()
    files = sorted(p for p in (shared / "corpora").rglob("*.md") if p.is_file())
    random.Random(28).shuffle(files)  # many corpora and languages, not the first one alone
    for path in files:
        words.update(re.findall(r"\w+", path.read_text(encoding="utf-8", errors="replace")))
        if len(words) >= want:
            break
    return sorted(words)


def test_tokenizer_parity_over_50000_shared_words(
    browser: Any, sites: dict[str, tuple[Path, str]], shared_dir: Path
) -> None:
    _, url = sites["docs"]
    words = _shared_words(shared_dir, 52_000)
    assert len(words) >= 50_000
    reader = json.loads(_get(url + MANIFEST_NAME))["reader"]
    page = _open(browser, url)
    got = page.evaluate(
        """async ([reader, words]) => {
            const m = await import(reader);
            return words.map((w) => m.tokenize(w).join(" "));
        }""",
        [url + reader, words],
    )
    bad = [(w, g) for w, g in zip(words, got, strict=True) if " ".join(tokenize(w)) != g]
    assert bad == []
    # The reader's snippets skip an ASCII-letter word whose first letter starts no query term
    # without stemming it: sound only because a stem keeps the word's first letter.
    letters = [w for w in words if re.fullmatch("[A-Za-z]+", w)]
    assert len(letters) > 20_000
    assert [w for w in letters if any(t[0] != w[0].lower() for t in tokenize(w))] == []
    # Sentences, not only words: stop-words, identifiers, case folding, NFKC, digits.
    texts = [
        "How do I configure CORS with kubectl --force? Straße ＦＵＬＬ max_chunk_chars IL-6",
        "ΣΊΣΥΦΟΣ ﬁle naïve café 1 a 2 ⑦ skies dying news _under__score_ x_1",
    ]
    js = page.evaluate(
        "async ([reader, ts]) => { const m = await import(reader); return ts.map(m.tokenize); }",
        [url + reader, texts],
    )
    assert js == [tokenize(t) for t in texts]


def test_search_page_runs_on_the_bundle(browser: Any, sites: dict[str, tuple[Path, str]]) -> None:
    index, url = sites["docs"]
    page = _open(browser, url)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    box = page.locator("#q")
    box.press_sequentially("ship nginx logs", delay=20)
    page.wait_for_function(
        "() => document.getElementById('status').textContent.includes('for “ship nginx logs”')"
    )
    with _oracle(index) as idx:
        want = idx.search("ship nginx logs", k=20, mode="keyword")
    titles = page.locator("section.page h2").all_inner_texts()
    assert titles[0] == (want[0].title or want[0].source)
    marks = {m.lower() for m in page.locator("mark").all_inner_texts()}
    assert {"nginx", "logs"} <= marks
    assert all(r.startswith(url) for r in requests)  # nothing leaves the static host
    assert not any("search?" in r for r in requests)  # no server API
    page.screenshot(path=str(artifact("web-bundle-search.png")), full_page=True)
    assert page.errors == []


MODES = ("hybrid", "vector", "keyword")
PETS = {
    "install.md": "# Install\n\n## Linux\n\nRun the installer script to set up the agent on a "
    "server.\n\n## Windows\n\nDownload the MSI package and double-click it.\n",
    "pets.md": "# Pets\n\n## Cats\n\nA cat is a small furry animal that purrs and sleeps all "
    "day.\n\n## Dogs\n\nDogs bark at the postman and love long walks.\n",
    "garden.md": "# Garden\n\n## Roses\n\nPrune roses in late winter and feed them in "
    "spring.\n\n## Lawn\n\nMow the lawn weekly; water it at dawn in dry weeks.\n",
}


def test_vector_leg_fuses_query_vectors_from_serve(
    browser: Any, shared_dir: Path, tmp_path: Path
) -> None:
    """A local-model index: the page asks serve's /v1/embeddings, fuses as the index does."""
    pytest.importorskip("onnxruntime", reason="the local provider (scidx[local])")
    from scidx.pack.packer import pack_docs
    from scidx.web import WebSettings, create_app
    from support.web_server import UvicornThread

    model = shared_dir / "models" / "all-MiniLM-L6-v2-int8"
    (tmp_path / "docs").mkdir()
    for name, text in PETS.items():
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    (tmp_path / "staticcorpus.json").write_text(
        json.dumps(
            {
                "include": ["docs/**/*.md"],
                "output": "docs.scidx",
                "embeddingProvider": "local",
                "model": str(model),
            }
        ),
        encoding="utf-8",
    )
    pack_docs(tmp_path / "staticcorpus.json")
    idx = load(tmp_path / "docs.scidx", model_dir=model)
    api = create_app({"docs": idx}, WebSettings(token_env=None, cors_origins=("*",)))
    questions = ["which pet purrs and sleeps all day", "when should I trim flowers", "agent"]
    with UvicornThread(api) as running:
        write_web_bundle(
            tmp_path / "docs.scidx", tmp_path / "site", embeddings_url=running.url + "/v1"
        )
        manifest = json.loads((tmp_path / "site" / MANIFEST_NAME).read_text(encoding="utf-8"))
        assert manifest["vectors"]["dimensions"] == idx.vectors.shape[1]
        server, url = _serve(tmp_path / "site")
        try:
            page = _open(browser, url)
            hybrid = _run(page, url, questions, k=3)
            keyword = _run(page, url, questions, k=3, mode="keyword")
            vector = _run(page, url, questions, k=3, mode="vector")
            nonsense = [_run(page, url, ["xyzzyplugh"], mode=m)[0] for m in MODES]
            assert page.errors == []
        finally:
            server.shutdown()
            server.server_close()
    for q, got, kw, vec in zip(questions, hybrid, keyword, vector, strict=True):
        want = idx.search(q, k=3)  # hybrid, the index's own fusion
        assert got[0]["id"] == want[0].id, q
        assert [h["id"] for h in got] == [h.id for h in want], q  # int8: same order here
        for h, w in zip(got, want, strict=True):
            assert abs(h["score"] - w.score) < 0.02, (q, h["id"])
        assert [h["id"] for h in kw] == [h.id for h in idx.search(q, k=3, mode="keyword")]
        want = idx.search(q, k=3, mode="vector")
        assert [h["id"] for h in vec] == [h.id for h in want], q
        for h, w in zip(vec, want, strict=True):
            assert abs(h["score"] - w.score) < 0.02, (q, h["id"])
    # Evidence: the model's vectors add no chunk to a query no chunk is about, in any mode.
    assert nonsense == [[], [], []]
    assert [idx.search("xyzzyplugh", mode=m) for m in MODES] == [[], [], []]
    # "when should I trim flowers" shares no term with the roses: only vectors find them.
    assert hybrid[1][0]["id"] == "docs/garden.md:roses:0"
    idx.close()


def test_mkdocs_web_bundle_option_links_to_the_built_pages(
    browser: Any, shared_dir: Path, tmp_path: Path
) -> None:
    """``web_bundle: find/`` in mkdocs.yml: the built site searches itself, links resolve."""
    pytest.importorskip("mkdocs")
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    corpus = shared_dir / "corpora" / "mkdocs-material-docs" / "docs"
    for name in ("philosophy.md", "conventions.md", "alternatives.md"):
        shutil.copy(corpus / name, docs / name)
    # No site_url: the index's links are relative to the site root, the bundle is one below.
    (tmp_path / "mkdocs.yml").write_text(
        f"site_name: Docs\ndocs_dir: {docs}\nsite_dir: {tmp_path / 'site'}\n"
        "markdown_extensions: [md_in_html]\n"
        "plugins:\n  - scidx:\n      web_bundle: find/\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(tmp_path / "mkdocs.yml")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "scidx: wrote the search bundle find/" in proc.stderr
    site = tmp_path / "site"
    manifest = json.loads((site / "find" / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["linkBase"] == "../"
    server, url = _serve(site)
    try:
        page = _open(browser, url + "find/")
        hits = _run(page, url + "find/", ["alternatives to material"], k=5)[0]
        with _oracle(site / "search.scidx") as idx:
            want = idx.search("alternatives to material", k=5, mode="keyword")
        assert [h["id"] for h in hits] == [w.id for w in want] and hits
        for hit in hits:
            assert hit["url"].startswith(url), hit["url"]
            path = hit["url"][len(url) :].split("#", 1)[0]
            assert (site / path / "index.html").is_file(), hit["url"]
        assert page.errors == []
    finally:
        server.shutdown()
        server.server_close()


def test_nonsense_finds_nothing_on_the_bundle_in_every_mode(
    browser: Any, sites: dict[str, tuple[Path, str]]
) -> None:
    """``xyzzyplugh`` on the docs bundle: no hit in any mode, and the page says so."""
    index, url = sites["docs"]
    page = _open(browser, url)
    got = [_run(page, url, ["xyzzyplugh"], mode=m)[0] for m in MODES]
    with _oracle(index) as idx:
        assert got == [[] for _ in MODES] == [idx.search("xyzzyplugh", mode=m) for m in MODES]
    page.locator("#q").fill("xyzzyplugh")
    page.wait_for_function(
        "() => document.getElementById('status').textContent.includes('No results for')"
    )
    assert page.locator("section.page").count() == 0
    assert page.errors == []


# A semantic index with a numeric floor (0.3). The query vector is e0; each chunk's vector has
# cosine c with it (the rest on an axis of its own). "cat purrs" names chunks a and f only.
FLOOR_CHUNKS = [
    ("a-cat.md", "A cat purrs on the sofa.", 0.5),
    ("b-near.md", "A small furry animal that sleeps all day.", 0.7),
    ("c-mid.md", "Kittens nap in the sun.", 0.36),
    ("d-below.md", "Dogs bark at the postman.", 0.2),
    ("e-far.md", "Prune roses in late winter.", 0.05),
    ("f-neg.md", "The cat command prints files.", -0.3),
]


def _floor_index(floor: float | None) -> bytes:
    from support.indexes import build_arrays, record, write_arrays

    dims = len(FLOOR_CHUNKS) + 2
    vectors = np.zeros((len(FLOOR_CHUNKS), dims), dtype=np.float32)
    for row, (_, _, cos) in enumerate(FLOOR_CHUNKS):
        vectors[row, 0], vectors[row, row + 1] = cos, (1 - cos * cos) ** 0.5
    records = [record(name, text, anchor="s") for name, text, _ in FLOOR_CHUNKS]
    stamp = {"provider": "openai", "model": "m", "dimensions": dims, "normalize": True}
    arrays, meta = build_arrays(records, vectors=vectors, stamp=stamp)
    meta["fusion"] = {**DEFAULT_FUSION, "vectorFloor": floor}
    return write_arrays(arrays, meta)


def test_vector_floor_admits_chunks_at_or_above_it_as_the_file_does(
    browser: Any, tmp_path: Path
) -> None:
    """Vector-only chunks are hits when their cosine clears ``vectorFloor``, as in Python.

    Vector mode uses the query's cosines: b (0.7) and c (0.36) clear 0.3, d (0.2) and e do
    not. Hybrid uses the feedback-expanded vector's: b (0.53) still does, c (0.27) no longer.
    Without a floor, only the keyword matches (a, f) are hits in either mode.
    """
    query = "cat purrs"
    qvec = np.zeros(len(FLOOR_CHUNKS) + 2)
    qvec[0] = 1.0
    expected = {
        (0.3, "vector"): ["b-near.md", "a-cat.md", "c-mid.md", "f-neg.md"],
        (0.3, "hybrid"): ["a-cat.md", "f-neg.md", "b-near.md"],
        (None, "vector"): ["a-cat.md", "f-neg.md"],
        (None, "hybrid"): ["a-cat.md", "f-neg.md"],
    }
    for floor in (0.3, None):
        folder = tmp_path / f"floor-{floor}"
        folder.mkdir()
        (folder / "f.scidx").write_bytes(_floor_index(floor))
        server, url = _serve(folder / "site", vectors={query: qvec.tolist()})
        try:
            write_web_bundle(folder / "f.scidx", folder / "site", embeddings_url=url + "v1")
            page = _open(browser, url)
            got = {m: _run(page, url, [query], mode=m)[0] for m in ("vector", "hybrid")}
            assert page.errors == []
        finally:
            server.shutdown()
            server.server_close()
        with load(folder / "f.scidx") as idx:
            for mode, hits in got.items():
                want = idx.search(query, mode=mode, query_vector=qvec)
                assert [h.source for h in want] == expected[floor, mode], (floor, mode)
                assert [h["id"] for h in hits] == [h.id for h in want], (floor, mode)
                for h, w in zip(hits, want, strict=True):
                    assert abs(h["score"] - w.score) < 0.01, (floor, mode, w.id)


def test_a_stale_query_stops_before_its_page_fragments(
    browser: Any, sites: dict[str, tuple[Path, str]]
) -> None:
    """search-as-you-type cancels: an aborted query fetches no fragments and rejects."""
    _, url = sites["docs"]
    page = _open(browser, url)
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url))
    reader = json.loads(_get(url + MANIFEST_NAME))["reader"]
    got = page.evaluate(
        """async (reader) => {
            const m = await import(reader);
            const b = await m.Bundle.open("scidx-bundle.json");
            await b.table();
            const stale = new AbortController();
            const run = b.search("ship nginx logs", { k: 10, signal: stale.signal });
            stale.abort();  // a newer key came while its shards were on their way
            try { await run; return "resolved"; } catch (e) { return e.name; }
        }""",
        url + reader,
    )
    assert got == "AbortError"
    assert not [u for u in fetched if "/pages/" in u]
    assert page.errors == []


def test_first_hits_are_shown_before_the_other_fragments_arrive(
    browser: Any, sites: dict[str, tuple[Path, str]]
) -> None:
    """onFirst gets a prefix of the final hits while later hits' fragments are on the way."""
    _, url = sites["docs"]
    page = _open(browser, url)
    reader = json.loads(_get(url + MANIFEST_NAME))["reader"]
    first, final = page.evaluate(
        """async (reader) => {
            const m = await import(reader);
            const b = await m.Bundle.open("scidx-bundle.json");
            await b.search("install", { k: 1 });  // the best hit's fragment is in memory
            let first = null;
            const all = await b.search("install", { k: 10, onFirst: (h) => { first = h; } });
            return [first, all];
        }""",
        url + reader,
    )
    assert len(final) > 1 and first is not None
    assert 1 <= len(first) < len(final)
    assert first == final[: len(first)]
    assert page.errors == []


def test_typing_fetches_only_the_best_hits_fragments_of_a_stale_prefix(
    browser: Any, sites: dict[str, tuple[Path, str]]
) -> None:
    """restDelay: a query made stale after its best hit was shown fetches none of the rest."""
    _, url = sites["docs"]
    page = _open(browser, url)
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url))
    reader = json.loads(_get(url + MANIFEST_NAME))["reader"]
    got = page.evaluate(
        """async (reader) => {
            const m = await import(reader);
            const b = await m.Bundle.open("scidx-bundle.json");
            await b.table();
            const stale = new AbortController();
            let shown = null;
            // the next key, 50 ms into the wait
            const onFirst = (h) => { shown = h.length; setTimeout(() => stale.abort(), 50); };
            const t = performance.now();
            const options = { k: 10, signal: stale.signal, onFirst, restDelay: 60000 };
            const run = b.search("install", options);
            let outcome;
            try { await run; outcome = "resolved"; } catch (e) { outcome = e.name; }
            return [outcome, shown, performance.now() - t < 30000];
        }""",
        url + reader,
    )
    assert got == ["AbortError", 1, True]  # the abort ends the wait
    assert len([u for u in fetched if "/pages/" in u]) == 1  # the best hit's fragment alone
    assert page.errors == []


def test_bundle_page_completes_and_corrects_as_you_type(
    browser: Any, sites: dict[str, tuple[Path, str]]
) -> None:
    """Key by key on the bundle's page: a half-typed word finds what its completions find
    (Index.search with prefix=True), a typo shows its correction, and each key fetches
    dictionary shards, never the whole word list."""
    index, url = sites["docs"]
    page = _open(browser, url)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    box = page.locator("#q")
    box.press_sequentially("configura", delay=60)
    page.wait_for_function(
        "() => document.getElementById('status').textContent.includes('for “configura”')"
    )
    with _oracle(index) as idx:
        want = idx.search("configura", k=20, mode="keyword", prefix=True)
        words = len(idx._live().corpus.dictionary or ())
    assert want
    titles = page.locator("section.page h2").all_inner_texts()
    assert titles[0] == (want[0].title or want[0].source)
    shards = {r for r in requests if "/words/" in r}
    manifest = json.loads((index.parent / "docs-site" / MANIFEST_NAME).read_text())
    total = len(manifest["dictionary"]["words"]) + len(manifest["dictionary"]["reversed"])
    assert shards and (len(shards) < total or words <= 2048)

    box.fill("")
    box.press_sequentially("confgiuration ", delay=20)
    page.wait_for_function(
        "() => document.getElementById('status').textContent.includes("
        "'showing results for “configuration”')"
    )
    box.fill("")
    box.press_sequentially("xyzzyplugh", delay=20)
    page.wait_for_function(
        "() => document.getElementById('status').textContent.includes('No results')"
    )
    assert page.errors == []
