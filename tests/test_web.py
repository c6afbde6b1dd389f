"""scidx.web over real HTTP: uvicorn on 127.0.0.1 and httpx as the client.

The JSON API (``GET /search``), the page and its assets, limits and bad input, auth, CORS,
mounting under a prefix, and the reload logic of :mod:`scidx.web.store`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("starlette", reason="scidx.web needs the serve extra")
pytest.importorskip("uvicorn", reason="scidx.web needs the serve extra")

from starlette.applications import Starlette  # noqa: E402
from starlette.responses import PlainTextResponse  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import scidx.cli.run  # noqa: E402,F401 (registers the commands on the app)
from scidx.cli.app import app as cli_app  # noqa: E402
from scidx.index.index import load  # noqa: E402
from scidx.web import IndexSet, ServedIndex, WebSettings, create_app, store_name  # noqa: E402
from support.web_server import UvicornThread, assert_error  # noqa: E402


@pytest.fixture(scope="module")
def server(index_dir: Path) -> Iterator[UvicornThread]:
    app = create_app([index_dir / "docs.scidx"], WebSettings(max_k=20, token_env=None))
    with UvicornThread(app) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: UvicornThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as c:
        yield c


# -- GET /search -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_search_for_nonsense_has_no_results(client: httpx.Client, mode: str) -> None:
    # What the search page shows as "No results": nonsense is not evidence in any mode.
    for q in ("xyzzyplugh", "qwxzvb fmxw"):
        response = client.get("/search", params={"q": q, "mode": mode})
        assert response.status_code == 200 and response.json()["hits"] == [], (q, mode)


def test_search_hits_are_the_cli_json_hits(client: httpx.Client, index_dir: Path) -> None:
    response = client.get("/search", params={"q": "rotate nginx logs", "k": 3, "mode": "keyword"})
    assert response.status_code == 200
    body = response.json()
    assert body["query"] == "rotate nginx logs" and body["mode"] == "keyword" and body["k"] == 3
    cli = CliRunner().invoke(
        cli_app,
        [
            "search",
            str(index_dir / "docs.scidx"),
            "rotate nginx logs",
            "-k",
            "3",
            "--mode",
            "keyword",
            "--json",
        ],
    )
    assert cli.exit_code == 0, cli.output
    expected = json.loads(cli.stdout)
    assert [{k: v for k, v in hit.items() if k != "index"} for hit in body["hits"]] == expected
    assert all(hit["index"] == "docs" for hit in body["hits"])
    assert body["hits"][0]["url"] == "https://docs.example.com/ops/logs/#rotate"


def test_search_defaults_and_filters(client: httpx.Client) -> None:
    body = client.get("/search", params={"q": "configure"}).json()
    assert body["mode"] == "hybrid" and body["k"] == 10
    only_ops = client.get("/search", params={"q": "configure", "source": "ops/"}).json()
    assert only_ops["hits"] and all(h["source"].startswith("ops/") for h in only_ops["hits"])
    cors = client.get("/search", params={"q": "configure", "heading": "cors"}).json()
    assert [h["anchor"] for h in cors["hits"]] == ["cors"]
    assert client.get("/search", params={"q": ""}).json()["hits"] == []
    assert client.get("/search", params={"q": "   "}).json()["hits"] == []


def test_search_corrects_typos_and_completes_with_prefix(client: httpx.Client) -> None:
    fixed = client.get("/search", params={"q": "configuer", "mode": "keyword"}).json()
    assert fixed["hits"] and fixed["corrections"][0]["kind"] == "typo"
    plain = client.get("/search", params={"q": "configuer", "fuzzy": "0"}).json()
    assert plain["hits"] == [] and "corrections" not in plain
    typed = client.get("/search", params={"q": "configu", "prefix": "1"}).json()
    assert typed["hits"] and typed["corrections"][0]["kind"] == "prefix"
    assert client.get("/search", params={"q": "configu"}).json()["hits"] == []
    bad = client.get("/search", params={"q": "x", "prefix": "maybe"})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "prefix"


def test_search_group_collapses_pages(client: httpx.Client) -> None:
    raw = client.get(
        "/search", params={"q": "logs", "mode": "keyword", "k": 5, "group": "none"}
    ).json()["hits"]
    assert len({h["source"] for h in raw}) < len(raw)  # a page appears more than once
    paged = client.get(
        "/search", params={"q": "logs", "mode": "keyword", "k": 5, "group": "page"}
    ).json()
    sources = [h["source"] for h in paged["hits"]]
    assert len(sources) == len(set(sources))
    sections = client.get(
        "/search", params={"q": "logs", "mode": "keyword", "k": 5, "group": "section"}
    ).json()["hits"]
    keys = [(h["source"], h["anchor"]) for h in sections]
    assert len(keys) == len(set(keys))
    # No group asked: sections, as the CLI gives them (a section's parts are one result).
    default = client.get("/search", params={"q": "logs", "mode": "keyword", "k": 5}).json()
    assert default["group"] == "section" and default["hits"] == sections


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ("q=logs&k=0", 400, ("k must be between 1 and 20, got 0",)),
        ("q=logs&k=-3", 400, ("k must be between 1 and 20",)),
        ("q=logs&k=21", 400, ("k must be between 1 and 20, got 21",)),
        ("q=logs&k=99999999999999999999", 400, ("k must be an integer",)),
        ("q=logs&k=abc", 400, ("k must be an integer",)),
        ("q=logs&k=2.5", 400, ("k must be an integer",)),
        ("q=logs&mode=fuzzy", 400, ("mode must be one of hybrid, keyword, vector",)),
        ("q=lo%00gs", 400, ("q contains a NUL character at position 2",)),
        ("q=%ED%A0%80", 400, ("not valid UTF-8",)),
        ("q=%FF%FE", 400, ("not valid UTF-8",)),
        ("q=logs&kk=3", 400, ("unknown parameter 'kk'",)),
        ("q=logs&q=cache", 400, ("'q' is given twice",)),
        ("q=logs&group=chapter", 400, ("group must be one of",)),
        ("q=logs&index=nope", 404, ("no index named 'nope'", "docs")),
        ("q=" + "a" * 2001, 400, ("q is 2001 characters long; the limit is 2000",)),
        ("q=logs&source=", 200, ()),
    ],
)
def test_search_bad_input_is_a_json_error(
    client: httpx.Client, query: str, status: int, words: tuple[str, ...]
) -> None:
    response = client.get("/search?" + query)
    if status == 200:
        assert response.status_code == 200
        return
    assert_error(response, status, *words)


def test_query_error_message_is_the_cli_message(client: httpx.Client, index_dir: Path) -> None:
    # A query error the library raises (not caught by the web layer's own checks) keeps its text.
    response = client.get("/search", params={"q": "logs", "source": "[oops"})
    cli = CliRunner().invoke(
        cli_app, ["search", str(index_dir / "docs.scidx"), "logs", "--source", "[oops"]
    )
    if cli.exit_code == 0:
        assert response.status_code == 200
        return
    error = assert_error(response, 400)
    assert error["message"] in cli.stderr


def test_unknown_paths_and_methods_are_json(client: httpx.Client) -> None:
    assert_error(client.get("/nope"), 404, "no such endpoint")
    assert_error(client.post("/search"), 405, "not allowed")
    for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/index.html"):
        response = client.get(path)
        assert response.status_code == 404
        assert "import" not in response.text


# -- the page ------------------------------------------------------------------------------------


def test_page_and_assets(client: httpx.Client) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    html = page.text
    assert '<base href="/">' in html and 'data-indexes="[&quot;docs&quot;]"' in html
    assert '<label for="q">' in html and 'role="search"' in html and 'aria-live="polite"' in html
    js = client.get("/static/search.js")
    css = client.get("/static/search.css")
    assert js.headers["content-type"].startswith("text/javascript")
    assert css.headers["content-type"].startswith("text/css")
    # No CDN, no external resource of any kind; text is never written as HTML.
    for text in (html, js.text, css.text):
        assert "http://" not in text and "https://" not in text and "//cdn" not in text
    assert "innerHTML" not in js.text and "insertAdjacentHTML" not in js.text
    assert "DEBOUNCE_MS" in js.text
    assert client.get("/", params={"q": "x", "utm_source": "mail"}).status_code == 200


def test_mounted_under_a_prefix(index_dir: Path) -> None:
    inner = create_app({"docs": index_dir / "docs.scidx"}, WebSettings(token_env=None))
    outer = Starlette(
        routes=[
            Route("/", lambda request: PlainTextResponse("site home")),
            Mount("/find", app=inner),
        ]
    )
    with UvicornThread(outer) as running, httpx.Client(base_url=running.url) as c:
        assert c.get("/").text == "site home"
        page = c.get("/find/")
        assert page.status_code == 200 and '<base href="/find/">' in page.text
        assert c.get("/find/static/search.js").status_code == 200
        hits = c.get("/find/search", params={"q": "cors"}).json()["hits"]
        assert hits[0]["anchor"] == "cors"
    inner.state.indexes.close()


# -- several indexes ---------------------------------------------------------------------------


def test_several_indexes_are_fused_and_selectable(index_dir: Path) -> None:
    app = create_app(
        [index_dir / "docs.scidx", ("faq", index_dir / "faq.scidx")], WebSettings(token_env=None)
    )
    with UvicornThread(app) as running, httpx.Client(base_url=running.url) as c:
        both = c.get("/search", params={"q": "logs", "mode": "keyword", "k": 10}).json()["hits"]
        assert {h["index"] for h in both} == {"docs", "faq"}
        # Reciprocal-rank fusion: the two first places are the two indexes' best hits.
        assert {both[0]["index"], both[1]["index"]} == {"docs", "faq"}
        faq = c.get("/search", params={"q": "logs", "index": "faq"}).json()["hits"]
        assert [h["index"] for h in faq] == ["faq"]
        assert 'data-indexes="[&quot;docs&quot;, &quot;faq&quot;]"' in c.get("/").text
        health = c.get("/healthz").json()
        assert health == {
            "status": "ok",
            "indexes": [{"name": "docs", "chunks": 5}, {"name": "faq", "chunks": 1}],
        }


def test_index_names(index_dir: Path) -> None:
    assert store_name("site/docs.v2.scidx") == "docs.v2"
    assert store_name("/x/-weird name!.scidx") == "weird-name"
    with pytest.raises(Exception, match="two indexes are named 'docs'"):
        IndexSet([index_dir / "docs.scidx", index_dir / "docs.scidx"])
    with pytest.raises(Exception, match="index name"):
        IndexSet([("../etc", index_dir / "docs.scidx")])


# -- auth and CORS -------------------------------------------------------------------------------


def test_bearer_token(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCIDX_TEST_TOKEN", "s3cret-token")
    app = create_app([index_dir / "docs.scidx"], WebSettings(token_env="SCIDX_TEST_TOKEN"))
    assert "s3cret" not in repr(vars(app.state))
    with UvicornThread(app) as running, httpx.Client(base_url=running.url) as c:
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": "Bearer s3cret-token-and-more"},
            {"Authorization": "Basic s3cret-token"},
            {"Authorization": b"Bearer \xe9\xff"},
        ):
            for path in ("/search?q=logs", "/v1/vector_stores", "/v1/vector_stores/nope"):
                response = c.get(path, headers=headers)
                error = assert_error(response, 401, "Incorrect or missing API key")
                assert error["code"] == "invalid_api_key"
                assert response.headers["www-authenticate"] == "Bearer"
                assert "s3cret" not in response.text
        ok = {"Authorization": "Bearer s3cret-token"}
        assert c.get("/search?q=logs", headers=ok).status_code == 200
        assert c.get("/v1/vector_stores", headers=ok).status_code == 200
        # The page holds no index data: it stays public.
        assert c.get("/").status_code == 200
        assert c.get("/static/search.js").status_code == 200


def test_cors(index_dir: Path) -> None:
    app = create_app(
        [index_dir / "docs.scidx"],
        WebSettings(token_env=None, cors_origins=("https://docs.example.com",)),
    )
    with UvicornThread(app) as running, httpx.Client(base_url=running.url) as c:
        good = c.get("/search?q=logs", headers={"Origin": "https://docs.example.com"})
        assert good.headers["access-control-allow-origin"] == "https://docs.example.com"
        evil = c.get("/search?q=logs", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in evil.headers
        preflight = c.options(
            "/v1/vector_stores/docs/search",
            headers={
                "Origin": "https://docs.example.com",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["x-content-type-options"] == "nosniff"
        assert "POST" in preflight.headers["access-control-allow-methods"]
    # No origins configured: no CORS headers at all.
    app = create_app([index_dir / "docs.scidx"], WebSettings(token_env=None))
    with UvicornThread(app) as running, httpx.Client(base_url=running.url) as c:
        plain = c.get("/search?q=logs", headers={"Origin": "https://docs.example.com"})
        assert "access-control-allow-origin" not in plain.headers


# -- reload ------------------------------------------------------------------------------------


def test_reload_swaps_after_an_atomic_rename(
    tmp_path: Path, index_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "live.scidx"
    path.write_bytes((index_dir / "docs.scidx").read_bytes())
    entry = ServedIndex("live", path=path)
    assert entry.check() is False  # unchanged
    with entry.lease() as before:
        # Replace while a request holds the old generation: it stays open for that request.
        staged = tmp_path / "staged.scidx"
        staged.write_bytes((index_dir / "faq.scidx").read_bytes())
        os.replace(staged, path)
        assert entry.check() is True
        assert not before.closed
        assert len(before.search("logs", k=5, mode="keyword")) > 0
    assert before.closed  # closed once the last lease ended
    with entry.lease() as after:
        assert len(after) == 1
    assert entry.reloads == 1

    # A corrupt replacement: logged, and the previous generation keeps serving.
    broken = tmp_path / "broken.scidx"
    broken.write_bytes(b"SCIDX" + b"\0" * 100)
    os.replace(broken, path)
    with caplog.at_level(logging.ERROR, logger="scidx.web"):
        assert entry.check() is False
    assert "cannot be loaded, still serving the previous index" in caplog.text
    assert str(path) in caplog.text
    with entry.lease() as still:
        assert len(still) == 1 and not still.closed
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="scidx.web"):
        assert entry.check() is False  # the same broken file is not retried
    assert caplog.text == ""
    # A truncated copy of a real index (valid header, missing body) is refused too.
    data = (index_dir / "docs.scidx").read_bytes()
    broken.write_bytes(data[: len(data) // 2])
    os.replace(broken, path)
    assert entry.check() is False
    # Then a good file again.
    broken.write_bytes(data)
    os.replace(broken, path)
    assert entry.check() is True
    with entry.lease() as good:
        assert len(good) == 5
    entry.close()


def test_reload_watcher_under_concurrent_searches(tmp_path: Path, index_dir: Path) -> None:
    path = tmp_path / "live.scidx"
    docs = (index_dir / "docs.scidx").read_bytes()
    faq = (index_dir / "faq.scidx").read_bytes()
    path.write_bytes(docs)
    store = IndexSet([path])
    store.watch(0.01)
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher() -> None:
        entry = store.get("live")
        assert entry is not None
        while not stop.is_set():
            try:
                with entry.lease() as idx:
                    idx.search("logs", k=3, mode="keyword")
            except BaseException as exc:  # noqa: BLE001 - any failure is the test's finding
                errors.append(exc)
                return

    threads = [threading.Thread(target=searcher) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for i in range(30):
            staged = tmp_path / f"staged{i}.scidx"
            staged.write_bytes(faq if i % 2 == 0 else docs)
            os.replace(staged, path)
            deadline = 200
            entry = store.get("live")
            assert entry is not None
            while entry.reloads < i + 1 and deadline:
                threading.Event().wait(0.01)
                deadline -= 1
    finally:
        stop.set()
        for t in threads:
            t.join()
        store.close()
    assert errors == []
    entry = store.get("live")
    assert entry is not None and entry.reloads >= 20


def test_settings_are_validated(index_dir: Path) -> None:
    for bad in (
        WebSettings(max_k=0),
        WebSettings(default_k=60),
        WebSettings(default_mode="fuzzy"),
        WebSettings(reload_interval=-1),
        WebSettings(max_body_bytes=10),
    ):
        with pytest.raises(Exception, match="must"):
            create_app([index_dir / "docs.scidx"], bad)


def test_loaded_index_objects_are_served_not_closed(index_dir: Path) -> None:
    idx = load(index_dir / "docs.scidx")
    app = create_app({"mine": idx}, WebSettings(token_env=None))
    with UvicornThread(app) as running, httpx.Client(base_url=running.url) as c:
        assert c.get("/search", params={"q": "cors"}).json()["hits"][0]["index"] == "mine"
    assert not idx.closed
    idx.close()


# -- docs/serve.md -------------------------------------------------------------------------------


def test_serve_doc_examples_run(
    index_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "serve.md").read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    assert len(blocks) == 2
    (tmp_path / "docs.scidx").write_bytes((index_dir / "docs.scidx").read_bytes())
    monkeypatch.chdir(tmp_path)
    mounted: dict[str, Any] = {}
    exec(compile(blocks[0], "docs/serve.md", "exec"), mounted)
    with UvicornThread(mounted["site"]) as running, httpx.Client(base_url=running.url) as c:
        assert c.get("/search-ui/").status_code == 200
        assert (
            c.get("/search-ui/search", params={"q": "cors"}).json()["hits"][0]["anchor"] == "cors"
        )
        sdk = blocks[1].replace("http://127.0.0.1:8000", running.url + "/search-ui")
        exec(compile(sdk, "docs/serve.md", "exec"), {})
    mounted["search"].state.indexes.close()
    printed = capsys.readouterr().out.splitlines()
    assert printed and "https://docs.example.com/ops/logs/#rotate" in printed[0]


def test_index_that_cannot_embed_queries_here(monkeypatch: pytest.MonkeyPatch) -> None:
    from scidx.index.index import load_bytes
    from support.indexes import DOCS, build_index

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    stamp = {"provider": "openai", "model": "text-embedding-3-small", "dimensions": 64}
    idx = load_bytes(build_index(DOCS, stamp=stamp), source="remote.scidx")
    app = create_app({"remote": idx}, WebSettings(token_env=None))
    with UvicornThread(app) as running, httpx.Client(base_url=running.url) as c:
        error = assert_error(c.get("/search", params={"q": "cors"}), 503, 'mode="keyword"')
        assert error["code"] == "query_embedding_error"
        assert c.get("/search", params={"q": "cors", "mode": "keyword"}).json()["hits"]
        assert_error(
            c.post("/v1/vector_stores/remote/search", json={"query": "cors"}), 503, "keyword"
        )
        assert_error(
            c.post("/v1/embeddings", json={"model": "remote", "input": "cors"}),
            404,
            "'openai', which embeds remotely",
        )
    idx.close()
