"""The MkDocs plugin, through real ``mkdocs build`` and ``mkdocs serve`` runs.

The corpus is ``../shared/corpora/mkdocs-material-docs/docs``. Its own mkdocs.yml needs the
Material theme and plugins that are not installed, so each test writes a minimal mkdocs.yml
(MkDocs' built-in theme, plus the three page templates the corpus names in front matter)
pointing at the shared docs folder; the site's ``site_url`` is the real one.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from scidx.index.index import load
from scidx.pack.config import config_from_dict
from scidx.pack.packer import pack_docs

pytest.importorskip("mkdocs")

CORPUS = "corpora/mkdocs-material-docs/docs"
SITE_URL = "https://squidfunk.github.io/mkdocs-material/"


def _project(tmp: Path, docs: Path, plugin: str, extra: str = "") -> Path:
    theme = tmp / "theme"
    theme.mkdir(exist_ok=True)
    for name in ("home.html", "redirect.html", "custom.html"):
        (theme / name).write_text('{% extends "main.html" %}\n')
    yml = tmp / "mkdocs.yml"
    yml.write_text(
        f"site_name: Docs\nsite_url: {SITE_URL}\ndocs_dir: {docs}\nsite_dir: {tmp / 'site'}\n"
        f"theme:\n  name: mkdocs\n  custom_dir: {theme}\n"
        # md_in_html as the real site has it: without it a `<div markdown>` swallows what follows;
        # attr_list as the real site has it: `{ id="x" }` after a heading sets its id.
        f"markdown_extensions: [md_in_html, attr_list]\n{extra}plugins:\n{plugin}"
    )
    return yml


def _mkdocs(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _page_file(site: Path, url: str, prefix: str) -> tuple[Path, str]:
    assert url.startswith(prefix), url
    path, _, anchor = url[len(prefix) :].partition("#")
    page = site / path / "index.html" if path.endswith("/") or not path else site / path
    return page, anchor


@pytest.fixture(scope="module")
def material_site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    from conftest import _need_shared

    docs = _need_shared(CORPUS)
    tmp = tmp_path_factory.mktemp("mkdocs")
    yml = _project(tmp, docs, "  - scidx:\n      llms_txt: true\n")
    proc = _mkdocs("build", "-f", str(yml), cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {"tmp": tmp, "docs": docs, "site": tmp / "site", "log": proc.stderr}


def test_build_writes_the_index_and_llms_txt_into_the_site(material_site: dict) -> None:
    site: Path = material_site["site"]
    assert re.search(
        r"INFO    -  scidx: search\.scidx packed: 96 files, \d+ chunks, hashing embeddings",
        material_site["log"],
    ), material_site["log"][-2000:]
    assert "INFO    -  scidx: wrote llms.txt, llms-full.txt" in material_site["log"]
    index = load(site / "search.scidx")
    assert len(index) > 1000
    llms = (site / "llms.txt").read_text()
    assert f"]({SITE_URL}" in llms and (site / "llms-full.txt").exists()
    assert not list(site.glob("*.inputs"))


def test_every_link_is_a_page_and_anchor_mkdocs_built(material_site: dict) -> None:
    site: Path = material_site["site"]
    index = load(site / "search.scidx")
    hits = index.search("configuration plugin theme", k=400, mode="keyword")
    assert len(hits) >= 300
    checked = 0
    for hit in hits:
        page, anchor = _page_file(site, hit.url, SITE_URL)
        assert page.is_file(), hit.url
        if not anchor:
            continue
        # The element the link lands on is the hit's heading, as the page shows it (tags such
        # as <code> and <small> removed). pymdownx blocks this minimal site cannot render may
        # hide a heading, so only headings the page has are compared.
        text = page.read_text(encoding="utf-8")
        shown = {
            m.group(1): " ".join(html.unescape(re.sub(r"<[^>]+>", "", m.group(2))).split())
            for m in re.finditer(r'<h[1-6] id="([^"]*)"[^>]*>(.*?)</h[1-6]>', text, re.S)
        }
        heading = " ".join(hit.heading_path[-1].split()) if hit.heading_path else ""
        if anchor not in shown:
            continue  # pymdownx blocks this minimal site cannot render hid the heading
        assert shown[anchor] == heading, (hit.url, shown[anchor], heading)
        checked += 1
    assert checked >= 380, checked  # 392 of the 400 (the rest: hidden by unrendered blocks)


def test_the_index_links_as_pack_docs_does_from_the_same_settings(
    material_site: dict, tmp_path: Path
) -> None:
    # The plugin stores MkDocs' own page.url per page; that is the {page} rule a
    # staticcorpus.json gives, so every chunk links to the same place. Blog posts aside: the
    # CLI reads the corpus's own mkdocs.yml above docs/ (blog plugin on: dated post URLs),
    # the test's build has no blog plugin.
    docs: Path = material_site["docs"]
    settings = {
        "include": ["**/*.md"],
        "anchorStyle": "mkdocs",
        "generator": "mkdocs",
        "urlTemplate": SITE_URL + "{page}#{anchor}",
        "output": str(tmp_path / "cli.scidx"),
    }
    pack_docs(config_from_dict(settings, root=docs))
    query = "configuration plugin theme search blog"
    site_hits = load(material_site["site"] / "search.scidx").search(
        query, k=2000, mode="keyword", group=None
    )
    cli_hits = load(tmp_path / "cli.scidx").search(query, k=2000, mode="keyword", group=None)
    assert len(site_hits) > 500

    def links(hits: list) -> list[tuple[str, str | None, str]]:
        return [(h.id, h.url, h.title) for h in hits if not h.source.startswith("blog/posts/")]

    assert len(links(site_hits)) > 500
    assert links(site_hits) == links(cli_hits)


def _small_docs(shared: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in ("philosophy.md", "conventions.md", "alternatives.md"):
        shutil.copy(shared / CORPUS / name, dest / name)
    (dest / "setup").mkdir()
    shutil.copy(shared / CORPUS / "setup/index.md", dest / "setup/index.md")
    return dest


def test_use_directory_urls_false_links_html_files(shared_dir: Path, tmp_path: Path) -> None:
    docs = _small_docs(shared_dir, tmp_path / "docs")
    yml = _project(tmp_path, docs, "  - scidx\n", extra="use_directory_urls: false\n")
    proc = _mkdocs("build", "-f", str(yml), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    site = tmp_path / "site"
    hits = load(site / "search.scidx").search("setup material alternatives", k=100, mode="keyword")
    urls = {h.url.partition("#")[0] for h in hits}
    assert f"{SITE_URL}setup/index.html" in urls and f"{SITE_URL}philosophy.html" in urls
    for hit in hits:
        page, anchor = _page_file(site, hit.url, SITE_URL)
        assert page.is_file() and f'id="{anchor}"' in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (
            "  - scidx:\n      pack:\n        output: x.scidx\n",
            "scidx: pack sets output, which the plugin takes from mkdocs.yml (docs_dir, "
            "site_url, use_directory_urls) or from its own include, exclude and output "
            "options; remove them from pack",
        ),
        (
            "  - scidx:\n      pack:\n        maxChunkChars: 5\n",
            'mkdocs.yml: "maxChunkChars" must be an integer from 200 to 1000000, got 5',
        ),
        (
            "  - scidx:\n      output: ../outside.scidx\n",
            "scidx: output '../outside.scidx' must be a file path inside the site, like "
            '"search.scidx"',
        ),
    ],
    ids=["overrides", "bad-setting", "outside-site"],
)
def test_bad_options_stop_the_build_before_pages_with_one_message(
    shared_dir: Path, tmp_path: Path, plugin: str, message: str
) -> None:
    docs = _small_docs(shared_dir, tmp_path / "docs")
    proc = _mkdocs("build", "-f", str(_project(tmp_path, docs, plugin)), cwd=tmp_path)
    assert proc.returncode == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "site" / "search.scidx").exists()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(path: Path, pattern: str, count: int, deadline: float) -> str:
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace")
        if len(re.findall(pattern, text)) >= count:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{pattern!r} x{count} not seen:\n{path.read_text()[-3000:]}")


def test_serve_repacks_changed_pages_and_skips_unchanged_docs(
    shared_dir: Path, tmp_path: Path
) -> None:
    docs = _small_docs(shared_dir, tmp_path / "docs")
    yml = _project(tmp_path, docs, "  - scidx\n")
    port = _free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "-f", str(yml), "-a", f"127.0.0.1:{port}"],
            cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, env={**os.environ},
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        _wait_for(log, r"Serving on http://127\.0\.0\.1", 1, deadline)
        first = re.findall(r"scidx: search\.scidx packed: 4 files, (\d+) chunks", log.read_text())
        assert first, log.read_text()
        with (docs / "philosophy.md").open("a") as fh:
            fh.write("\n## Zebrafish\n\nA zebrafish paragraph about aquaria.\n")
        text = _wait_for(log, r"scidx: search\.scidx packed: 4 files", 2, deadline)
        changed = re.findall(
            r"packed: 4 files, (\d+) chunks, hashing embeddings \((\d+) comp", text
        )
        assert int(changed[-1][0]) == int(first[0]) + 1 and int(changed[-1][1]) == 1, text
        data = urllib.request.urlopen(
            f"http://127.0.0.1:{port}/mkdocs-material/search.scidx", timeout=10
        ).read()
        (tmp_path / "served.scidx").write_bytes(data)
        (hit,) = load(tmp_path / "served.scidx").search("zebrafish", k=1, mode="keyword")
        # MkDocs serve points site_url at itself, so the links work on the dev server.
        assert hit.url == f"http://127.0.0.1:{port}/mkdocs-material/philosophy/#zebrafish"
        # A rebuild that changes no page (a stylesheet) copies the index without packing.
        (docs / "extra.css").write_text("body { color: black }\n")
        _wait_for(log, r"scidx: search\.scidx is up to date: 4 files", 1, deadline)
    finally:
        server.terminate()
        server.wait(timeout=20)
