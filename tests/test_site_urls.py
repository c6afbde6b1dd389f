"""URLs as each generator publishes them: templates derived from its config, stored page paths.

Rules are each generator's documented ones (cited per test); the corpora in ../shared check
them on real sites, small synthetic trees check each rule alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import scidx
from scidx.errors import CorruptIndexError
from scidx.index.format import encode_strings
from scidx.index.urls import UNPUBLISHED, page_problem, render_url, url_parts
from scidx.pack.config import config_from_dict
from scidx.pack.packer import pack_docs
from scidx.pack.pages import docusaurus_page, starlight_page, strip_number_prefix, vitepress_page
from scidx.pack.site import derive_site
from support.indexes import replace_arrays


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _pack(root: Path, tmp: Path, **settings: Any) -> Path:
    out = tmp / "out" / "docs.scidx"
    cfg = config_from_dict({"include": ["**/*.md"], "output": str(out), **settings}, root=root)
    pack_docs(cfg, workers=1)
    return out


def _page_urls(index_path: Path) -> dict[str, str | None]:
    """Each source's URL without an anchor (from its chunks' URLs)."""
    idx = scidx.load(index_path)
    out: dict[str, str | None] = {}
    for i in range(len(idx)):
        hit = idx.chunk(i)
        out.setdefault(hit.source, hit.url.partition("#")[0] if hit.url else None)
    idx.close()
    return out


# ---- page-path rules ---------------------------------------------------------------------


def test_docusaurus_number_prefixes() -> None:
    # plugin-content-docs numberPrefix.ts: "01-intro", "1. x", "2_x" lose the prefix; dates
    # and version-like names keep it.
    assert strip_number_prefix("01-intro") == "intro"
    assert strip_number_prefix("1. Getting started") == "Getting started"
    assert strip_number_prefix("2_setup") == "setup"
    assert strip_number_prefix("2021-01-31-post") == "2021-01-31-post"
    assert strip_number_prefix("1.2-notes") == "1.2-notes"
    assert strip_number_prefix("42") == "42"
    assert docusaurus_page("01-guide/02-install.md", {}, None) == "guide/install"


@pytest.mark.parametrize(
    ("path", "meta", "page"),
    [
        ("guide/install.md", {"slug": "/setup"}, "setup"),  # absolute slug: the path itself
        ("guide/install.md", {"slug": "setup"}, "guide/setup"),  # relative: in its folder
        ("guide/install.md", {"slug": "../setup"}, "setup"),
        ("guide/install.md", {"id": "installation"}, "guide/installation"),  # id: file name
        ("guide/install.md", {"id": "x", "slug": "/y"}, "y"),  # slug wins over id
        ("guide/index.md", {}, "guide/"),  # category index: the folder's URL
        ("guide/README.md", {}, "guide/"),
        ("guide/guide.md", {}, "guide/"),  # named like its folder
        ("index.md", {}, ""),
        ("02-guide/index.mdx", {}, "guide/"),
        ("guide/index.md", {"slug": "start"}, "guide/start"),  # a slug beats the index rule
        ("intro.md", {"slug": "/"}, ""),
    ],
)
def test_docusaurus_slug_id_and_index_pages(path: str, meta: dict[str, str], page: str) -> None:
    assert docusaurus_page(path, meta, None) == page


def test_docusaurus_trailing_slash() -> None:
    # trailingSlash true: every URL ends with "/"; false: none does, even a folder's page.
    assert docusaurus_page("guide/install.md", {}, True) == "guide/install/"
    assert docusaurus_page("guide/index.md", {}, False) == "guide"
    assert docusaurus_page("guide/index.md", {}, None) == "guide/"


def test_vitepress_pages_and_rewrites() -> None:
    # VitePress routing: guide/index.md is /guide/, other files keep their path; rewrites
    # "en/:rest*": ":rest*" moves en/guide/x.md to /guide/x.
    assert vitepress_page("guide/routing.md", ()) == "guide/routing"
    assert vitepress_page("guide/index.md", ()) == "guide/"
    assert vitepress_page("index.md", ()) == ""
    assert vitepress_page("en/guide/routing.md", (("en/", ""),)) == "guide/routing"
    assert vitepress_page("01-intro.md", ()) == "01-intro"  # no number-prefix rule


def test_starlight_pages() -> None:
    # Astro content IDs: each segment slugged (github-slugger), a final "index" dropped; a
    # `slug` front matter value replaces the path.
    assert starlight_page("guides/Getting Started.mdx", {}) == "guides/getting-started"
    assert starlight_page("guides/index.mdx", {}) == "guides/"
    assert starlight_page("index.mdx", {}) == ""
    assert starlight_page("guides/x.md", {"slug": "custom/place"}) == "custom/place"


def test_url_parts_with_a_stored_page() -> None:
    assert url_parts("docs/a.md", "docs", "intro") == {
        "source": "a.md",
        "path": "intro",
        "page": "intro/",
        "page_file": "intro",
    }
    assert url_parts("docs/a.md", "docs", "guide/")["page_file"] == "guide/index"
    assert url_parts("other/a.md", "docs", "intro") is None  # outside sourceRoot: no URL
    assert url_parts("docs/a.md", "docs", UNPUBLISHED) is None  # not published: no URL
    assert page_problem(UNPUBLISHED) == ""
    assert render_url("/{path}#{anchor}", "a.md", "x", None, "a b") == "/a%20b#x"
    # A stored page is percent-encoded: it cannot become a scheme, query or fragment.
    assert render_url("{path}", "a.md", "", None, "javascript:alert(1)") == (
        "javascript%3Aalert%281%29"
    )


@pytest.mark.parametrize(
    "page", ["/evil.example", "a/../b", "a//b", "a\x00b", "\x00\x00", "a\\b", "x" * 2000]
)
def test_page_problem_refuses(page: str) -> None:
    assert page_problem(page)


# ---- templates from the generator's config -----------------------------------------------


def test_mkdocs_use_directory_urls_false(tmp_path: Path) -> None:
    # MkDocs: use_directory_urls false publishes guide/install.html and guide/index.html.
    root = _write(
        tmp_path / "site",
        {
            "mkdocs.yml": "site_name: X\nsite_url: https://ex.org/d\nuse_directory_urls: false\n",
            "docs/guide/install.md": "# Install\n\ntext\n",
            "docs/guide/index.md": "# Guide\n\ntext\n",
        },
    )
    urls = _page_urls(_pack(root, tmp_path))
    assert urls == {
        "docs/guide/index.md": "https://ex.org/d/guide/index.html",
        "docs/guide/install.md": "https://ex.org/d/guide/install.html",
    }


def test_mkdocs_without_site_url_derives_nothing(tmp_path: Path) -> None:
    root = _write(tmp_path / "s", {"mkdocs.yml": "site_name: X\n", "docs/a.md": "# A\n\nx\n"})
    cfg = config_from_dict({"include": ["**/*.md"], "output": "o.scidx"}, root=root)
    assert cfg.url_template is None and cfg.source_root is None
    assert cfg.site is not None and "site_url" in cfg.site.note


_DOCUSAURUS = """\
export default {
  title: 'X',
  url: 'https://ex.org',
  baseUrl: '/proj/',
  presets: [['classic', {
    docs: {
      path: 'content',
      routeBasePath: 'guide',
    },
  }]],
};
"""


def test_docusaurus_site_end_to_end(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "w",
        {
            "docusaurus.config.js": _DOCUSAURUS,
            "content/01-intro.md": "# Intro\n\n## First steps\n\ntext\n",
            "content/02-basics/index.md": "# Basics\n\ntext\n",
            "content/02-basics/03-state.md": "---\nid: managing-state\n---\n# State\n\nx\n",
            "content/moved.md": "---\nslug: /elsewhere\n---\n# Moved\n\ntext\n",
        },
    )
    out = _pack(root, tmp_path)
    assert _page_urls(out) == {
        "content/01-intro.md": "https://ex.org/proj/guide/intro",
        "content/02-basics/index.md": "https://ex.org/proj/guide/basics/",
        "content/02-basics/03-state.md": "https://ex.org/proj/guide/basics/managing-state",
        "content/moved.md": "https://ex.org/proj/guide/elsewhere",
    }
    idx = scidx.load(out, verify=True)
    assert idx.meta["urlTemplate"] == "https://ex.org/proj/guide/{path}#{anchor}"
    assert idx.get("content/01-intro.md:first-steps:0").url == (  # type: ignore[union-attr]
        "https://ex.org/proj/guide/intro#first-steps"
    )
    idx.close()
    # Same inputs, same bytes (the page table included).
    first = out.read_bytes()
    out.unlink()
    assert _pack(root, tmp_path).read_bytes() == first


def test_unpublished_docusaurus_pages_have_no_url(tmp_path: Path) -> None:
    # Docusaurus's default exclude drops "_" files and folders (partials); drafts are left
    # out of production builds. They stay searchable, without a link to a missing page.
    root = _write(
        tmp_path / "w",
        {
            "docusaurus.config.js": _DOCUSAURUS,
            "content/_partial.md": "# Partial\n\ntext\n",
            "content/_parts/x.md": "# X\n\ntext\n",
            "content/draft.md": "---\ndraft: true\n---\n# Draft\n\ntext\n",
            "content/live.md": "# Live\n\ntext\n",
        },
    )
    assert _page_urls(_pack(root, tmp_path)) == {
        "content/_partial.md": None,
        "content/_parts/x.md": None,
        "content/draft.md": None,
        "content/live.md": "https://ex.org/proj/guide/live",
    }


def test_a_config_url_template_wins(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "w", {"docusaurus.config.js": _DOCUSAURUS, "content/01-a.md": "# A\n\nx\n"}
    )
    urls = _page_urls(
        _pack(root, tmp_path, urlTemplate="https://mine.org/{path}", sourceRoot="content")
    )
    assert urls == {"content/01-a.md": "https://mine.org/a"}  # its template, the page rules


def test_docusaurus_non_literal_values_derive_nothing(tmp_path: Path) -> None:
    text = _DOCUSAURUS.replace("baseUrl: '/proj/'", "baseUrl: process.env.BASE")
    root = _write(tmp_path / "w", {"docusaurus.config.js": text, "content/a.md": "# A\n"})
    cfg = config_from_dict({"include": ["**/*.md"], "output": "o.scidx"}, root=root)
    assert cfg.url_template is None


@pytest.mark.parametrize(
    ("clean", "urls"),
    [
        (
            "true",
            {"index.md": "/base/", "guide/index.md": "/base/guide/", "guide/a.md": "/base/guide/a"},
        ),
        (
            "false",
            {
                "index.md": "/base/index.html",
                "guide/index.md": "/base/guide/index.html",
                "guide/a.md": "/base/guide/a.html",
            },
        ),
    ],
)
def test_vitepress_clean_urls(tmp_path: Path, clean: str, urls: dict[str, str]) -> None:
    # VitePress: cleanUrls true serves /guide/a, false /guide/a.html; no hostname in the
    # config, so the template is relative to the host: base + page.
    config = f"export default {{\n  title: 'X',\n  base: '/base/',\n  cleanUrls: {clean},\n}}\n"
    root = _write(
        tmp_path / "v",
        {
            ".vitepress/config.mts": config,
            "index.md": "# Home\n\nx\n",
            "guide/index.md": "# Guide\n\nx\n",
            "guide/a.md": "# A\n\nx\n",
        },
    )
    assert _page_urls(_pack(root, tmp_path)) == urls


def test_myst_html_baseurl(tmp_path: Path) -> None:
    # Sphinx html builder: docs/guide/a.md → guide/a.html under html_baseurl.
    root = _write(
        tmp_path / "m",
        {
            "docs/conf.py": 'project = "x"\nhtml_baseurl = "https://ex.org/en/latest/"\n',
            "docs/guide/a.md": "# A\n\nx\n",
            "docs/index.md": "# Home\n\nx\n",
        },
    )
    assert _page_urls(_pack(root, tmp_path)) == {
        "docs/guide/a.md": "https://ex.org/en/latest/guide/a.html",
        "docs/index.md": "https://ex.org/en/latest/index.html",
    }


def test_derive_site_reads_no_code(tmp_path: Path) -> None:
    # A conf.py is never executed: a computed html_baseurl is "not certain".
    (tmp_path / "conf.py").write_text('import os\nhtml_baseurl = os.environ["X"]\n')
    site = derive_site("myst", tmp_path)
    assert site is not None and site.template is None


# ---- a hostile source.page table ---------------------------------------------------------


def _save(data: bytes, tmp_path: Path) -> Path:
    path = tmp_path / "changed.scidx"
    path.write_bytes(data)
    return path


def _docusaurus_index(tmp_path: Path) -> bytes:
    root = _write(
        tmp_path / "w",
        {
            "docusaurus.config.js": _DOCUSAURUS,
            "content/01-a.md": "# A\n\nalpha\n",
            "content/b.md": "# B\n\nbeta\n",
        },
    )
    return _pack(root, tmp_path).read_bytes()


@pytest.mark.parametrize(
    "pages",
    [["/evil.example", "b"], ["a\x1b[2J", "b"], ["../../x", "b"], ["a", "b\u2028"]],
)
def test_hostile_page_strings_are_corrupt(tmp_path: Path, pages: list[str]) -> None:
    offsets, data = encode_strings(pages)
    bad = _save(
        replace_arrays(
            _docusaurus_index(tmp_path), source__page__offsets=offsets, source__page__data=data
        ),
        tmp_path,
    )
    idx = scidx.load(bad)
    with pytest.raises(CorruptIndexError, match="source.page"):
        [h.url for h in idx.search("alpha beta", mode="keyword")]
    with pytest.raises(CorruptIndexError, match="source.page"):
        scidx.load(bad, verify=True)


@pytest.mark.parametrize(
    "change",
    [
        {"source__page__data": None},  # one array of the pair
        {"source__page__offsets": np.array([0, 1], dtype="<u8")},  # wrong row count
        {"source__page__offsets": np.array([0, 1, 99], dtype="<u8")},  # past the data
        {"source__page__data": np.frombuffer(b"a\xff", dtype="<u1")},  # not UTF-8
    ],
)
def test_hostile_page_table_is_corrupt(tmp_path: Path, change: dict[str, Any]) -> None:
    bad = _save(replace_arrays(_docusaurus_index(tmp_path), **change), tmp_path)
    with pytest.raises(CorruptIndexError):
        idx = scidx.load(bad, verify=True)
        [h.url for h in idx.search("alpha beta", mode="keyword")]


def test_an_index_without_pages_reads_as_before(tmp_path: Path) -> None:
    plain = _save(
        replace_arrays(
            _docusaurus_index(tmp_path), source__page__offsets=None, source__page__data=None
        ),
        tmp_path,
    )
    idx = scidx.load(plain, verify=True)
    # Today's rule: {path} is the source path under sourceRoot, number prefix and all.
    assert sorted(h.url or "" for h in idx.search("alpha beta", mode="keyword")) == [
        "https://ex.org/proj/guide/01-a#a",
        "https://ex.org/proj/guide/b#b",
    ]


# ---- real sites (../shared/corpora) -------------------------------------------------------


def _corpus_urls(
    shared: Path, corpus: str, files: list[str], tmp: Path, **settings: Any
) -> tuple[str | None, dict[str, str | None]]:
    root = shared / "corpora" / corpus
    out = tmp / "out.scidx"
    cfg = config_from_dict(
        {"include": files, "output": str(out), "cacheDir": str(tmp / "c"), **settings}, root=root
    )
    pack_docs(cfg, workers=1)
    return cfg.url_template, _page_urls(out)


def test_mkdocs_material_urls(shared_dir: Path, tmp_path: Path) -> None:
    # mkdocs.yml: site_url https://squidfunk.github.io/mkdocs-material/, use_directory_urls
    # unset (MkDocs default true): docs/x.md is published at x/, docs/x/index.md at x/.
    template, urls = _corpus_urls(
        shared_dir,
        "mkdocs-material-docs",
        ["docs/reference/code-blocks.md", "docs/changelog/index.md", "docs/getting-started.md"],
        tmp_path,
    )
    site = "https://squidfunk.github.io/mkdocs-material/"
    assert template == site + "{page}#{anchor}"
    assert urls == {
        "docs/reference/code-blocks.md": site + "reference/code-blocks/",
        "docs/changelog/index.md": site + "changelog/",
        "docs/getting-started.md": site + "getting-started/",
    }


def test_vitepress_docs_urls(shared_dir: Path, tmp_path: Path) -> None:
    # .vitepress/config.ts: cleanUrls true (no .html), rewrites 'en/:rest*': ':rest*', the
    # sitemap hostname const siteUrl = 'https://vitepress.dev' (en/index.md is a home
    # layout with no text, so no chunk: the index rule is tested on a synthetic tree).
    template, urls = _corpus_urls(
        shared_dir,
        "vitepress-docs-en",
        [
            "docs/en/guide/routing.md",
            "docs/en/guide/what-is-vitepress.md",
            "docs/en/reference/site-config.md",
        ],
        tmp_path,
    )
    assert template == "https://vitepress.dev/{path}#{anchor}"
    assert urls == {
        "docs/en/guide/routing.md": "https://vitepress.dev/guide/routing",
        "docs/en/guide/what-is-vitepress.md": "https://vitepress.dev/guide/what-is-vitepress",
        "docs/en/reference/site-config.md": "https://vitepress.dev/reference/site-config",
    }


def test_starlight_docs_urls(shared_dir: Path, tmp_path: Path) -> None:
    # astro.config.mjs: `site` is an expression (not certain: a relative template), base
    # unset ("/"), trailingSlash 'always'; src/content/docs/x.mdx is /x/, index.mdx is /.
    docs = "docs/src/content/docs/"
    template, urls = _corpus_urls(
        shared_dir,
        "starlight-docs-en",
        [docs + "guides/sidebar.mdx", docs + "index.mdx", docs + "getting-started.mdx"],
        tmp_path,
    )
    assert template == "/{page}#{anchor}"
    assert urls == {
        docs + "guides/sidebar.mdx": "/guides/sidebar/",
        docs + "index.mdx": "/",
        docs + "getting-started.mdx": "/getting-started/",
    }


def test_react_native_docusaurus_urls(shared_dir: Path, tmp_path: Path) -> None:
    # docusaurus.config.ts imports versions.json, which the corpus lacks: which version the
    # docs folder is published as is not certain, so no template is derived. With one given,
    # the page paths follow Docusaurus: the `id` front matter names the page, in its folder.
    files = [
        "docs/fabric-native-components.md",  # id: fabric-native-components-introduction
        "docs/accessibility.md",  # id: accessibility
        "docs/the-new-architecture/direct-manipulation.md",  # id: ...-new-architecture
    ]
    template, _ = _corpus_urls(shared_dir, "react-native-website-docs", files, tmp_path)
    assert template is None
    site = "https://reactnative.dev/docs/"
    template, urls = _corpus_urls(
        shared_dir,
        "react-native-website-docs",
        files,
        tmp_path / "given",
        urlTemplate=site + "{path}#{anchor}",
        sourceRoot="docs",
    )
    assert urls == {
        files[0]: site + "fabric-native-components-introduction",
        files[1]: site + "accessibility",
        files[2]: site + "the-new-architecture/direct-manipulation-new-architecture",
    }


def test_myst_parser_docs_urls(shared_dir: Path, tmp_path: Path) -> None:
    # conf.py sets no html_baseurl: nothing derived. Sphinx's html builder publishes
    # docs/x/y.md as x/y.html and docs/x/index.md as x/index.html ({page}.html).
    files = ["docs/syntax/roles-and-directives.md", "docs/faq/index.md", "docs/index.md"]
    template, _ = _corpus_urls(shared_dir, "myst-parser-docs", files, tmp_path)
    assert template is None
    site = "https://myst-parser.readthedocs.io/en/latest/"
    _, urls = _corpus_urls(
        shared_dir,
        "myst-parser-docs",
        files,
        tmp_path / "given",
        urlTemplate=site + "{page}.html#{anchor}",
        sourceRoot="docs",
    )
    assert urls == {
        files[0]: site + "syntax/roles-and-directives.html",
        files[1]: site + "faq/index.html",
        files[2]: site + "index.html",
    }


def test_llms_txt_links_use_the_stored_pages(tmp_path: Path) -> None:
    from scidx.export.llms_txt import build_llms_txt

    root = _write(
        tmp_path / "w",
        {"docusaurus.config.js": _DOCUSAURUS, "content/01-intro.md": "# Intro\n\nHello there.\n"},
    )
    text = build_llms_txt(_pack(root, tmp_path)).index
    assert "](https://ex.org/proj/guide/intro)" in text, text


# ---- anchors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        # @mdit-vue/shared slugify (VitePress's default): runs of spaces and punctuation are one
        # "-", a leading digit gets "_".
        ("What's Next?", "what-s-next"),
        ("Vite, Vue & Markdown Config", "vite-vue-markdown-config"),
        ("Migration from VitePress 0.x", "migration-from-vitepress-0-x"),
        ("1. Setup", "_1-setup"),
        ("Café  Crème", "cafe-creme"),
    ],
)
def test_vitepress_anchors(heading: str, anchor: str) -> None:
    from scidx.pack.slug import make_slugger

    assert make_slugger("vitepress").slug(heading) == anchor


def test_vitepress_corpus_anchors(shared_dir: Path, tmp_path: Path) -> None:
    # The default anchorStyle of a VitePress site is VitePress's own slugify.
    page = "docs/en/reference/default-theme-nav.md"
    root = shared_dir / "corpora" / "vitepress-docs-en"
    cfg = config_from_dict({"include": [page], "output": str(tmp_path / "o.scidx")}, root=root)
    assert cfg.anchor_style == "vitepress"
    pack_docs(cfg, workers=1)
    idx = scidx.load(tmp_path / "o.scidx")
    anchors = {idx.chunk(i).anchor for i in range(len(idx))}
    idx.close()
    assert "customize-link-s-active-state" in anchors  # GitHub's would be "customize-links-..."


def test_the_pack_summary_says_where_urls_come_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from support.cli import run

    root = _write(
        tmp_path / "w",
        {
            "docusaurus.config.js": _DOCUSAURUS,
            "content/a.md": "# A\n\nx\n",
            "staticcorpus.json": '{"include": ["content/**/*.md"], "output": "a.scidx"}',
        },
    )
    code, out, _ = run(["pack-docs", "-c", str(root / "staticcorpus.json"), "-q"], capsys)
    assert code == 0 and out == ""
    code, out, _ = run(["pack-docs", "-c", str(root / "staticcorpus.json"), "--force"], capsys)
    assert code == 0
    assert (
        "URLs: https://ex.org/proj/guide/{path}#{anchor} (derived from docusaurus.config.js; "
        "page paths by docusaurus's rules)"
    ) in out
    (root / "docusaurus.config.js").write_text(_DOCUSAURUS.replace("'/proj/'", "BASE"))
    code, out, _ = run(["pack-docs", "-c", str(root / "staticcorpus.json"), "--json"], capsys)
    assert code == 0
    assert json.loads(out)["urls"] == (
        "none: `baseUrl` or the docs `routeBasePath` is not a plain string "
        "(docusaurus.config.js); set urlTemplate in staticcorpus.json"
    )


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        # docutils.nodes.make_id, the primary id Sphinx gives every section (MyST's
        # myst_heading_anchors slugs are extra ids, only to its depth).
        ("Directives - a block-level extension point", "directives-a-block-level-extension-point"),
        ("1. Intro", "intro"),
        ("C++ API & Café", "c-api-cafe"),
        ("Straße", "strasze"),
        ("日本語", "id1"),  # no ASCII left: docutils' automatic id
    ],
)
def test_docutils_anchors(heading: str, anchor: str) -> None:
    from scidx.pack.slug import make_slugger

    assert make_slugger("docutils").slug(heading) == anchor


def test_myst_corpus_anchors(shared_dir: Path, tmp_path: Path) -> None:
    # conf.py sets myst_heading_anchors = 2: an H3 has only its docutils id on the page, so
    # the default anchors of a MyST site are docutils ids (valid for every level).
    page = "docs/syntax/roles-and-directives.md"
    root = shared_dir / "corpora" / "myst-parser-docs"
    cfg = config_from_dict({"include": [page], "output": str(tmp_path / "o.scidx")}, root=root)
    assert cfg.anchor_style == "docutils"
    pack_docs(cfg, workers=1)
    idx = scidx.load(tmp_path / "o.scidx")
    anchors = {idx.chunk(i).anchor for i in range(len(idx))}
    idx.close()
    assert "directives-a-block-level-extension-point" in anchors  # GitHub: "directives---a-..."
