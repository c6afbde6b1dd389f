"""The MkDocs plugin on a Material site with the blog plugin, through a real ``mkdocs build``.

The site is built by the test: a split config (``mkdocs-site.yml`` INHERITs
``mkdocs-base.yml``, built with ``mkdocs build -f``), ``exclude_docs``, a draft page, a page
without an H1 that the nav titles, and blog posts (one a draft). Every hit's URL must name a
file MkDocs wrote into ``site/``, with the published post URLs ``blog/YYYY/MM/DD/<slug>/``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scidx.index.index import load

pytest.importorskip("mkdocs")
pytest.importorskip("material")

SITE_URL = "https://docs.example.org/proj/"

_FILES = {
    "mkdocs-base.yml": (
        f"site_name: Proj\nsite_url: {SITE_URL}\n"
        "theme:\n  name: material\n"
        "markdown_extensions: [admonition, attr_list, md_in_html, pymdownx.details,\n"
        "  pymdownx.superfences, {pymdownx.tabbed: {alternate_style: true}}]\n"
    ),
    "mkdocs-site.yml": (
        "INHERIT: mkdocs-base.yml\n"
        "exclude_docs: |\n  internal/\n"
        "draft_docs: |\n  wip.md\n"
        "nav:\n  - Home: index.md\n  - The Guide: guide.md\n  - Blog: blog/index.md\n"
        "plugins:\n  - blog\n  - scidx\n"
    ),
    "docs/index.md": (
        "# Welcome\n\nThe zebrafish project home.\n\n"
        '!!! note "Heads up"\n\n    Zebrafish admonition body text.\n\n'
        '=== "Linux"\n\n    Install zebrafish on Linux.\n\n'
        '=== "macOS"\n\n    Install zebrafish on macOS.\n'
    ),
    "docs/guide.md": "Zebrafish guide text before any heading.\n\n## Setup\n\nSet up zebrafish.\n",
    "docs/internal/secret.md": "# Secret\n\nZebrafish internal notes.\n",
    "docs/wip.md": "# Work in progress\n\nZebrafish draft page.\n",
    "docs/blog/index.md": "# Blog\n",
    "docs/blog/posts/first.md": (
        "---\ndate: 2024-01-31\n---\n\n# Zebrafish Release Notes\n\nZebrafish 1.0 is out.\n"
    ),
    "docs/blog/posts/second.md": (
        "---\ndate:\n  created: 2024-03-02\nslug: custom-slug\n---\n\n"
        "# Second Post\n\nMore zebrafish news.\n"
    ),
    "docs/blog/posts/draft.md": (
        "---\ndate: 2024-04-01\ndraft: true\n---\n\n# Draft Post\n\nUnpublished zebrafish.\n"
    ),
}


@pytest.fixture(scope="module")
def blog_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("blog")
    for name, text in _FILES.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", "mkdocs-site.yml"],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return tmp


def _site_file(site: Path, url: str) -> Path:
    assert url.startswith(SITE_URL), url
    path = url[len(SITE_URL) :].partition("#")[0]
    return site / path / "index.html" if path.endswith("/") or not path else site / path


def test_every_hit_url_names_a_file_mkdocs_built(blog_site: Path) -> None:
    site = blog_site / "site"
    index = load(site / "search.scidx")
    hits = index.search("zebrafish", k=100, mode="keyword", group=None)
    assert hits
    for hit in hits:
        page = _site_file(site, hit.url)
        assert page.is_file(), hit.url
        anchor = hit.url.partition("#")[2]
        if anchor:
            assert f'id="{anchor}"' in page.read_text(encoding="utf-8"), hit.url
    pages = {h.source: h.url.partition("#")[0] for h in hits}
    assert pages["blog/posts/first.md"] == f"{SITE_URL}blog/2024/01/31/zebrafish-release-notes/"
    assert pages["blog/posts/second.md"] == f"{SITE_URL}blog/2024/03/02/custom-slug/"
    assert pages["index.md"] == SITE_URL


def test_only_the_pages_mkdocs_built_are_packed(blog_site: Path) -> None:
    index = load(blog_site / "site" / "search.scidx")
    sources = {h.source for h in index.search("zebrafish", k=100, mode="keyword", group=None)}
    assert "internal/secret.md" not in sources  # exclude_docs
    assert "wip.md" not in sources  # draft_docs: not in a build
    assert "blog/posts/draft.md" not in sources  # the blog plugin's draft
    assert {"index.md", "guide.md", "blog/posts/first.md"} <= sources


def test_the_flavour_is_mkdocs_and_the_nav_titles_a_page_without_h1(blog_site: Path) -> None:
    index = load(blog_site / "site" / "search.scidx")
    hits = index.search("zebrafish", k=100, mode="keyword", group=None)
    (guide,) = {h.title for h in hits if h.source == "guide.md"}
    assert guide == "The Guide"
    for hit in hits:
        text = hit.plain or ""
        assert "!!!" not in text and '=== "' not in text, (hit.url, text)


def test_web_bundle_option_without_starlette(blog_site: Path, tmp_path: Path) -> None:
    """The plugin's web_bundle needs only the cli extra: Starlette made unimportable."""
    import shutil

    tmp = tmp_path / "p"
    shutil.copytree(blog_site, tmp, ignore=shutil.ignore_patterns("site"))
    yml = tmp / "mkdocs-site.yml"
    yml.write_text(yml.read_text().replace("  - scidx\n", "  - scidx:\n      web_bundle: find/\n"))
    code = (
        "import sys; sys.modules['starlette'] = None; "
        "from mkdocs.__main__ import cli; cli(['build', '-f', 'mkdocs-site.yml'])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert (tmp / "site" / "find" / "index.html").is_file()


def test_pack_docs_links_blog_posts_as_material_publishes_them(
    blog_site: Path, tmp_path: Path
) -> None:
    """Without the plugin: the CLI reads the split config and the blog plugin's defaults."""
    import json

    from scidx.pack.config import load_config
    from scidx.pack.packer import pack_docs

    config = blog_site / "staticcorpus.json"
    config.write_text(
        json.dumps(
            {
                "include": ["docs/**/*.md"],
                "exclude": ["docs/internal/**", "docs/wip.md"],  # exclude_docs, draft_docs
                "output": str(tmp_path / "cli.scidx"),
            }
        )
    )
    try:
        cfg = load_config(config)
        assert cfg.site is not None and cfg.site.config == "mkdocs-site.yml"
        assert cfg.site.blog_dir == "blog" and cfg.site.blog_known
        pack_docs(cfg)
    finally:
        config.unlink()
    built = {
        (h.source, h.anchor): h.url
        for h in load(blog_site / "site" / "search.scidx").search(
            "zebrafish", k=100, mode="keyword", group=None
        )
    }
    cli = {
        (h.source.removeprefix("docs/"), h.anchor): h.url
        for h in load(tmp_path / "cli.scidx").search("zebrafish", k=100, mode="keyword", group=None)
    }
    assert cli.pop(("blog/posts/draft.md", "draft-post")) is None  # a draft: not published
    assert cli == built


def test_a_dirty_rebuild_keeps_the_pages_it_did_not_render(blog_site: Path, tmp_path: Path) -> None:
    """`mkdocs build --dirty` renders only changed pages; the index keeps every page."""
    import shutil

    tmp = tmp_path / "p"
    shutil.copytree(blog_site, tmp, ignore=shutil.ignore_patterns("site"))

    def build() -> set[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--dirty", "-f", "mkdocs-site.yml"],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        index = load(tmp / "site" / "search.scidx")
        return {h.source for h in index.search("zebrafish", k=100, mode="keyword", group=None)}

    first = build()
    with (tmp / "docs" / "guide.md").open("a") as fh:
        fh.write("\n## More\n\nA zebrafish addendum.\n")
    assert build() == first
