"""Docs versions as a facet (issue 40): each page's version, the default, and the filter.

Small versioned sites built by the tests (Docusaurus ``versioned_docs`` + ``versions.json``,
folders mapped in ``staticcorpus.json``, a mike build), packed for real and searched through
``Index.search``, the CLI, the JSON API and the static bundle's reader. By default a search
finds each section once (the version the site publishes at its root), ``version="current"``
the unreleased docs, ``"*"`` every version; bad versions are clear errors.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from scidx.errors import ConfigError, CorruptIndexError, QueryError
from scidx.index.index import load, load_bytes
from scidx.pack.config import load_config
from scidx.pack.packer import pack_docs
from support.cli import run
from support.indexes import replace_arrays

DOC = "# Install\n\nInstall the wombat with the installer ({where}).\n\n## Upgrade\n\nUpgrade it.\n"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _docusaurus(root: Path, versions: str = '["2.0", "1.0"]', config: str = "") -> Path:
    files = {
        "docusaurus.config.js": (
            "module.exports = {\n  baseUrl: '/',\n  url: 'https://x.org',\n"
            f"  presets: [['classic', {{docs: {{{config}}}}}]],\n}};\n"
        ),
        "versions.json": versions,
        "docs/install.md": DOC.format(where="next"),
        "versioned_docs/version-2.0/install.md": DOC.format(where="two"),
        "versioned_docs/version-1.0/install.md": DOC.format(where="one"),
        "blog/news.md": "# News\n\nThe wombat installer news.\n",
        "staticcorpus.json": json.dumps(
            {
                "include": ["docs/**/*.md", "versioned_docs/**/*.md", "blog/**/*.md"],
                "output": "out.scidx",
            }
        ),
    }
    _write(root, files)
    return root / "staticcorpus.json"


@pytest.fixture(scope="module")
def versioned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("versioned")
    result = pack_docs(_docusaurus(root), use_cache=False)
    assert result.versions == "current, 2.0 (default), 1.0; from versions.json"
    return root / "out.scidx"


def _pages(*pairs: tuple[str, str | None]) -> list[tuple[str, str | None]]:
    return sorted(pairs, key=str)


def _found(index: Path, **options: object) -> list[tuple[str, str | None]]:
    # One hit per page, sorted: which pages (and versions) a search finds, not their order.
    options.setdefault("mode", "keyword")
    options.setdefault("group", "page")
    with load(index) as idx:
        hits = idx.search("wombat installer", **options)  # type: ignore[arg-type]
        return sorted(((h.source, h.version) for h in hits), key=str)


def test_the_default_is_the_version_published_at_the_root(versioned: Path) -> None:
    # Each section once: the newest entry of versions.json, plus the unversioned blog post.
    assert _found(versioned) == _pages(
        ("versioned_docs/version-2.0/install.md", "2.0"), ("blog/news.md", None)
    )
    assert _found(versioned, version="current") == _pages(
        ("docs/install.md", "current"), ("blog/news.md", None)
    )
    assert _found(versioned, version="1.0", mode="keyword") == _pages(
        ("versioned_docs/version-1.0/install.md", "1.0"), ("blog/news.md", None)
    )
    assert _found(versioned, version="*", k=10) == sorted(
        [
            ("docs/install.md", "current"),
            ("versioned_docs/version-2.0/install.md", "2.0"),
            ("versioned_docs/version-1.0/install.md", "1.0"),
            ("blog/news.md", None),
        ],
        key=str,
    )
    with load(versioned) as idx:
        assert idx.meta["versions"] == {"names": ["current", "2.0", "1.0"], "default": "2.0"}
        # Every mode and entry point filters the same way.
        for mode in ("keyword", "vector", "hybrid"):
            hits = idx.search("upgrade", mode=mode, k=10, group=None)
            assert {h.version for h in hits} <= {"2.0", None}, mode
        assert all("version-2.0" in i for i, _ in idx.rank("upgrade", mode="keyword"))
        [batch] = idx.search_batch(["upgrade"], mode="keyword")
        assert [h.version for h in batch] == ["2.0"]
        assert idx.search("upgrade", mode="keyword")[0].to_dict()["version"] == "2.0"


def test_an_unknown_version_is_a_query_error(versioned: Path) -> None:
    with load(versioned) as idx, pytest.raises(QueryError) as info:
        idx.search("wombat", version="3.0")
    assert str(info.value) == (
        "unknown version '3.0'; this index has 'current', '2.0', '1.0' (or '*' for all versions)"
    )
    with load(versioned) as idx, pytest.raises(QueryError, match="non-empty version name"):
        idx.search("wombat", version="")


def test_last_version_in_the_config_is_the_default(tmp_path: Path) -> None:
    config = _docusaurus(tmp_path, config="lastVersion: 'current'")
    pack_docs(config, use_cache=False)
    assert _found(tmp_path / "out.scidx") == _pages(
        ("docs/install.md", "current"), ("blog/news.md", None)
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"2.0": {}}', "got an object"),
        ('"2.0"', "got a string"),
        ("[2.0]", "entry 2.0 is not a string"),
        ('["current"]', "the reserved name `current`"),
        ("[not json", "cannot read it as JSON"),
    ],
)
def test_a_versions_json_that_is_not_a_list_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, why: str
) -> None:
    config = _docusaurus(tmp_path, versions=text)
    with pytest.raises(ConfigError, match=why):
        load_config(config)
    code, out, err = run(["pack-docs", "--config", str(config)], capsys)
    assert code == 1 and "Traceback" not in err
    assert err.startswith(f"error: {tmp_path / 'versions.json'}: ") and why in err


def test_versions_mapped_in_staticcorpus_json(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "site/v1/a.md": DOC.format(where="v1"),
            "site/v2/a.md": DOC.format(where="v2"),
            "site/v2/beta/a.md": DOC.format(where="beta"),
            "site/about.md": "# About\n\nThe wombat installer team.\n",
        },
    )
    folders = {"site/v1": "1.x", "site/v2": "2.x", "site/v2/beta": "3.0-beta"}
    (tmp_path / "staticcorpus.json").write_text(
        json.dumps(
            {
                "include": ["site/**/*.md"],
                "output": "out.scidx",
                "versions": {"folders": folders, "default": "2.x"},
            }
        ),
        encoding="utf-8",
    )
    result = pack_docs(tmp_path / "staticcorpus.json", use_cache=False)
    assert result.versions == "1.x, 2.x (default), 3.0-beta; from versions in staticcorpus.json"
    out = tmp_path / "out.scidx"
    assert _found(out) == _pages(("site/v2/a.md", "2.x"), ("site/about.md", None))
    # The longest folder wins: v2/beta is its own version.
    assert _found(out, version="3.0-beta") == _pages(
        ("site/v2/beta/a.md", "3.0-beta"), ("site/about.md", None)
    )


@pytest.mark.parametrize(
    ("versions", "message"),
    [
        ({"folders": {}}, "`versions.folders` is empty"),
        ({"folders": {"../x": "1"}}, "must be a folder relative to the config's folder"),
        ({"folders": {"a": "1"}, "default": "2"}, "`versions.default` '2' is none of"),
        ({"folders": {"a": "*"}}, "is empty, `*` or has surrounding blanks"),
        ({"folders": {"a": "1"}, "latest": "1"}, "unknown key(s) ['latest']"),
        (["1.0"], "`versions` must be an object like"),
    ],
)
def test_bad_versions_keys_are_config_errors(
    tmp_path: Path, versions: object, message: str
) -> None:
    (tmp_path / "staticcorpus.json").write_text(
        json.dumps({"include": ["*.md"], "output": "o.scidx", "versions": versions}),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "staticcorpus.json")
    assert message in str(info.value)


def test_mike_builds_one_version_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, {"mkdocs.yml": "site_name: t\n", "docs/index.md": DOC.format(where="m")})
    config = tmp_path / "staticcorpus.json"
    config.write_text(json.dumps({"include": ["docs/**/*.md"], "output": "out.scidx"}), "utf-8")
    monkeypatch.setenv("MIKE_DOCS_VERSION", "0.9")
    result = pack_docs(config, use_cache=False)
    assert result.versions == "0.9 (default); from MIKE_DOCS_VERSION (mike)"
    assert _found(tmp_path / "out.scidx") == _pages(("docs/index.md", "0.9"))
    # Another version is another build: the config hash changes with it, so it repacks.
    monkeypatch.setenv("MIKE_DOCS_VERSION", "1.0")
    assert not pack_docs(config, use_cache=False).up_to_date
    assert _found(tmp_path / "out.scidx", version="1.0") == _pages(("docs/index.md", "1.0"))
    # The `version` key wins over the environment.
    config.write_text(
        json.dumps({"include": ["docs/**/*.md"], "output": "out.scidx", "version": "2.0"}), "utf-8"
    )
    assert pack_docs(config, use_cache=False).versions.startswith("2.0 (default)")


def test_an_unversioned_index_ignores_the_version(tmp_path: Path) -> None:
    _write(tmp_path, {"a.md": DOC.format(where="x")})
    (tmp_path / "staticcorpus.json").write_text(
        json.dumps({"include": ["*.md"], "output": "out.scidx"}), "utf-8"
    )
    result = pack_docs(tmp_path / "staticcorpus.json", use_cache=False)
    assert result.versions == "" and "versions" not in result.to_dict()
    out = tmp_path / "out.scidx"
    assert _found(out) == _found(out, version="2.0") == _pages(("a.md", None))
    with load(out) as idx:
        assert "versions" not in idx.meta and "version" not in idx.search("wombat")[0].to_dict()


def test_cli_doc_version(versioned: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["search", str(versioned), "wombat installer", "--json", "--doc-version", "1.0"]
        + ["--group", "page", "--mode", "keyword"],
        capsys,
    )
    assert code == 0, err
    assert sorted((h["source"], h.get("version")) for h in json.loads(out)) == [
        ("blog/news.md", None),
        ("versioned_docs/version-1.0/install.md", "1.0"),
    ]
    code, out, err = run(["inspect", str(versioned)], capsys)
    assert code == 0 and "versions: current, 2.0 (default), 1.0\n" in out
    code, out, err = run(["search", str(versioned), "wombat", "--doc-version", "9"], capsys)
    assert code != 0 and "Traceback" not in err
    assert "error: unknown version '9'" in err


def test_hostile_version_arrays_are_corrupt_index_errors(versioned: Path) -> None:
    data = versioned.read_bytes()
    no_array = replace_arrays(data, source__version=None)
    with pytest.raises(CorruptIndexError, match="no array `source.version`"):
        load_bytes(no_array)
    with load(versioned) as idx:
        meta = dict(idx.meta)
    for bad in ({"names": ["a", "a"], "default": "a"}, {"names": [], "default": None}, "x"):
        with pytest.raises(CorruptIndexError, match="meta `versions`"):
            load_bytes(replace_arrays(data, meta={**meta, "versions": bad}))
    rows = np.array([0, 7, 0xFFFF, 1], dtype="<u2")
    idx = load_bytes(replace_arrays(data, source__version=rows))
    with pytest.raises(CorruptIndexError, match="`source.version` row 1 is 7"):
        idx.search("wombat")
    with pytest.raises(CorruptIndexError, match=r"shape \[2\], expected \[4\]"):
        load_bytes(replace_arrays(data, source__version=rows[:2]))


def test_verify_checks_the_version_rows(versioned: Path) -> None:
    data = versioned.read_bytes()
    rows = np.array([0, 9, 0xFFFF, 1], dtype="<u2")
    with pytest.raises(CorruptIndexError, match="`source.version` row 1 is 9"):
        load_bytes(replace_arrays(data, source__version=rows), verify=True)


# -- the JSON API and the static bundle ----------------------------------------------------


def test_json_api_version_parameter(versioned: Path) -> None:
    pytest.importorskip("starlette", reason="scidx.web needs the serve extra")
    pytest.importorskip("uvicorn", reason="scidx.web needs the serve extra")
    import httpx

    from scidx.web import WebSettings, create_app
    from support.web_server import UvicornThread

    app = create_app([versioned], WebSettings(token_env=None))
    with UvicornThread(app) as server, httpx.Client(base_url=server.url, timeout=10) as client:
        query = {"q": "wombat installer", "group": "page", "mode": "keyword"}
        body = client.get("/search", params=query).json()
        assert sorted(h.get("version") or "" for h in body["hits"]) == ["", "2.0"]
        body = client.get("/search", params={**query, "version": "current"}).json()
        assert sorted(h["source"] for h in body["hits"]) == ["blog/news.md", "docs/install.md"]
        bad = client.get("/search", params={"q": "wombat", "version": "7"})
        assert bad.status_code == 400 and "unknown version '7'" in bad.json()["error"]["message"]


@pytest.fixture
def bundle_dir(versioned: Path, tmp_path: Path) -> Path:
    from scidx.export.web_bundle import write_web_bundle

    write_web_bundle(versioned, tmp_path / "web")
    return tmp_path / "web"


@pytest.fixture
def bundle_server(bundle_dir: Path) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(bundle_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


_NODE_SCRIPT = """
const [base, reader] = process.argv.slice(1);
globalThis.location = { href: base };
const m = await import(reader);
const b = await m.Bundle.open(base + "scidx-bundle.json");
const out = {};
for (const v of ["", "current", "1.0", "*"]) {
  // Keyword: a bundle without an embeddings URL has no vector leg (Python's hybrid has one).
  for (const mode of ["keyword"]) {
    const hits = await b.search("wombat installer", { k: 10, mode, version: v || undefined });
    out[v + "/" + mode] = hits.map((h) => [h.source, h.version === undefined ? null : h.version]);
  }
}
try { await b.search("wombat", { version: "9" }); } catch (e) { out.error = e.message; }
console.log(JSON.stringify(out));
"""


def test_bundle_reader_searches_the_default_version(
    versioned: Path, bundle_dir: Path, bundle_server: str
) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node (the bundle reader is an ES module)")
    manifest = json.loads(_get(bundle_server + "scidx-bundle.json"))
    assert manifest["versions"] == {"names": ["current", "2.0", "1.0"], "default": "2.0"}
    # The bundle's own copy of the reader (node imports modules from files only).
    reader = bundle_dir / manifest["reader"]
    done = subprocess.run(
        [node, "--input-type=module", "-e", _NODE_SCRIPT, bundle_server, reader.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    with load(versioned) as idx:
        for key, hits in found.items():
            if key == "error":
                continue
            version, mode = key.split("/")
            want = idx.search("wombat installer", k=10, mode=mode, version=version or None)
            assert hits == [[h.source, h.version] for h in want], key
    assert found["error"].startswith('scidx bundle: unknown version "9"')


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url) as response:  # loopback only
        return str(response.read().decode("utf-8"))


def test_search_page_passes_its_version_to_the_bundle(bundle_server: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (test extra)")
    from support.browser import FLAGS, chromium

    executable = chromium()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=FLAGS)
        try:
            shown = {}
            for version in ("", "1.0"):
                page = browser.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                query = "?q=wombat+installer" + (f"&version={version}" if version else "")
                page.goto(bundle_server + query)
                page.wait_for_function(
                    "() => document.getElementById('status').textContent.includes('wombat')"
                )
                shown[version] = page.locator("#results").inner_text()
                assert errors == []
                page.close()
        finally:
            browser.close()
    # The page's results are those of its version: 2.0 by default, 1.0 with ?version=1.0.
    assert "(two)" in shown[""] and "(one)" not in shown[""]
    assert "(one)" in shown["1.0"] and "(two)" not in shown["1.0"]
