"""URLs that work: ``sourceRoot`` and ``{page}`` against what real site generators publish.

Each case chunks a real page of the shared corpora and renders the URL of a few of its sections;
the expected strings are the addresses those sites serve (mdBook: doc.rust-lang.org/book, MkDocs
Material: fastapi.tiangolo.com, Hugo: kubernetes.io). Sphinx with MyST has no corpus in
``../shared``; its scheme (``x.html``, ``index.md`` → ``index.html``) is checked on a layout
written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scidx.errors import ConfigError
from scidx.index.urls import render_url, url_parts
from scidx.pack.chunk import chunk_markdown
from scidx.pack.config import config_from_dict


def _urls(
    corpus: Path,
    source: str,
    template: str,
    source_root: str | None,
    anchor_style: str = "github",
) -> dict[str, str | None]:
    text = (corpus / source).read_text(encoding="utf-8")
    chunks = chunk_markdown(text, source, anchor_style=anchor_style)  # type: ignore[arg-type]
    return {c.anchor: render_url(template, c.source, c.anchor, source_root) for c in chunks}


def test_mdbook_rust_book(shared_dir: Path) -> None:
    urls = _urls(
        shared_dir / "corpora" / "rust-book",
        "src/ch09-02-recoverable-errors-with-result.md",
        "https://doc.rust-lang.org/book/{page}.html#{anchor}",
        "src",
    )
    page = "https://doc.rust-lang.org/book/ch09-02-recoverable-errors-with-result.html"
    assert urls["recoverable-errors-with-result"] == f"{page}#recoverable-errors-with-result"
    assert urls["matching-on-different-errors"] == f"{page}#matching-on-different-errors"
    assert urls["propagating-errors"] == f"{page}#propagating-errors"


def test_mdbook_readme_is_index_html() -> None:
    template = "https://doc.rust-lang.org/book/{page}.html#{anchor}"
    assert render_url(template, "src/README.md", "", "src") == (
        "https://doc.rust-lang.org/book/index.html"
    )
    assert render_url(template, "src/part/README.md", "x", "src") == (
        "https://doc.rust-lang.org/book/part/index.html#x"
    )


def test_mkdocs_fastapi(shared_dir: Path) -> None:
    corpus = shared_dir / "corpora" / "fastapi-docs-en"
    template = "https://fastapi.tiangolo.com/{page}#{anchor}"
    # The corpus folder is MkDocs' docs_dir: no sourceRoot needed.
    urls = _urls(corpus, "tutorial/first-steps.md", template, None, "mkdocs")
    assert urls["first-steps"] == "https://fastapi.tiangolo.com/tutorial/first-steps/#first-steps"
    assert urls["check-it"] == "https://fastapi.tiangolo.com/tutorial/first-steps/#check-it"
    home = _urls(corpus, "index.md", template, None, "mkdocs")
    assert home["opinions"] == "https://fastapi.tiangolo.com/#opinions"
    section = _urls(corpus, "tutorial/index.md", template, None, "mkdocs")
    assert section["run-the-code"] == "https://fastapi.tiangolo.com/tutorial/#run-the-code"


def test_hugo_kubernetes(shared_dir: Path) -> None:
    corpus = shared_dir / "corpora" / "kubernetes-website-en"
    template = "https://kubernetes.io/{page}#{anchor}"
    urls = _urls(corpus, "docs/concepts/overview/components.md", template, None)
    assert urls["control-plane-components"] == (
        "https://kubernetes.io/docs/concepts/overview/components/#control-plane-components"
    )
    assert urls["kube-controller-manager"] == (
        "https://kubernetes.io/docs/concepts/overview/components/#kube-controller-manager"
    )
    section = _urls(corpus, "docs/concepts/overview/_index.md", template, None)
    assert section["why-you-need-kubernetes-and-what-can-it-do"] == (
        "https://kubernetes.io/docs/concepts/overview/#why-you-need-kubernetes-and-what-can-it-do"
    )


def test_docusaurus_style_docs_folder() -> None:
    # Docusaurus serves docs/guides/install.md at /docs/guides/install/ (trailingSlash: true)
    # and docs/guides/index.md at /docs/guides/.
    template = "https://example.org/docs/{page}#{anchor}"
    assert render_url(template, "website/docs/guides/install.md", "linux", "website/docs") == (
        "https://example.org/docs/guides/install/#linux"
    )
    assert render_url(template, "website/docs/guides/index.md", "", "website/docs") == (
        "https://example.org/docs/guides/"
    )


def test_sphinx_myst_layout() -> None:
    template = "https://proj.readthedocs.io/en/latest/{page}.html#{anchor}"
    assert render_url(template, "docs/usage.md", "install", "docs") == (
        "https://proj.readthedocs.io/en/latest/usage.html#install"
    )
    assert render_url(template, "docs/index.md", "", "docs") == (
        "https://proj.readthedocs.io/en/latest/index.html"
    )
    assert render_url(template, "docs/api/index.md", "x", "docs") == (
        "https://proj.readthedocs.io/en/latest/api/index.html#x"
    )


def test_source_outside_the_root_has_no_url() -> None:
    assert url_parts("README.md", "docs") is None
    assert render_url("https://x.org/{page}", "docsy/a.md", "", "docs") is None
    assert render_url("https://x.org/{source}", "docs/a.md", "", "docs") == "https://x.org/a.md"


def test_source_root_config_key(tmp_path: Path) -> None:
    cfg = config_from_dict(
        {"include": ["docs/**/*.md"], "output": "x.scidx", "sourceRoot": "docs/src/"},
        root=tmp_path,
    )
    assert cfg.source_root == "docs/src"
    assert cfg.canonical()["sourceRoot"] == "docs/src"
    plain = config_from_dict({"include": ["*.md"], "output": "x.scidx"}, root=tmp_path)
    assert "sourceRoot" not in plain.canonical()


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("../docs", 'must be a plain folder path like "docs/src" (no "..", "." or "//")'),
        ("/abs/docs", "is absolute; write it relative to the folder of the config file"),
        ("docs\\src", 'contains "\\"; use "/" as the path separator'),
    ],
)
def test_bad_source_root(tmp_path: Path, value: str, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        config_from_dict(
            {"include": ["*.md"], "output": "x.scidx", "sourceRoot": value}, root=tmp_path
        )
    assert str(err.value) == (
        f'staticcorpus.json: "sourceRoot" must be a folder relative to the config file, like '
        f'"docs/src", got {__import__("json").dumps(value)}; {problem}'
    )


def test_url_renderer_equals_render_url() -> None:
    """The per-index renderer (template parsed once, sources pre-rendered) is render_url."""
    from scidx.index.urls import UrlRenderer

    templates = [
        None,
        "",
        "https://x.org/{page}#{anchor}",
        "https://x.org/book/{page}.html#{anchor}",
        "/docs/{path}?a={anchor}&b={anchor}",
        "{source}",
        "java{anchor}script:{page}",  # an empty anchor would make a javascript: URL
        "{anchor}{page}",
        "https://x.org/{page}#{anchor}#{anchor}",
        "ftp://x.org/{page}",  # refused scheme
        "https://x.org/{nope}",  # not a placeholder
        "https://x.org/{{{page}}}",
    ]
    sources = ["docs/a.md", "docs/index.md", "docs/sub/README.md", "other/b.md", "docs/ü x.md"]
    anchors = ["", "intro", "a b", "ü", "x:y", "%41"]
    for template in templates:
        for root in (None, "docs"):
            renderer = UrlRenderer(template, root)
            for _ in range(2):  # cold, then from the memo
                for source in sources:
                    for anchor in anchors:
                        expected = render_url(template, source, anchor, root)
                        assert renderer.render(source, anchor) == expected, (template, source)
