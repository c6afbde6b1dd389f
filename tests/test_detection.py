"""Generator detection: configs where real sites keep them, split MkDocs configs, the content.

Each test builds a small site; the pack's summary (human and ``--json``) must say the flavour,
where it came from and why URLs were or were not derived.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scidx.pack.config import config_from_dict
from scidx.pack.flavours.detect import detect, detect_from_content, sample_texts

_INCLUDE = {"include": ["**/*.md"], "output": "out.scidx"}


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _config(root: Path, **extra: object) -> object:
    return config_from_dict({**_INCLUDE, **extra}, root=root)


@pytest.mark.parametrize(
    ("files", "generator", "config"),
    [
        ({"docs/en/mkdocs.yml": "site_name: x\n"}, "mkdocs", "docs/en/mkdocs.yml"),
        ({"mkdocs-en.yml": "INHERIT: mkdocs-base.yml\n"}, "mkdocs", "mkdocs-en.yml"),
        ({"website/docusaurus.config.ts": "export default {}\n"}, "docusaurus", None),
        ({"docs/.vitepress/config.mts": "export default {}\n"}, "vitepress", None),
        ({"doc/book/book.toml": "[book]\n"}, "mdbook", "doc/book/book.toml"),
        ({"site/mkdocs.yml": "x: 1\n"}, "github", None),  # build output is never a project
        ({"tests/fixtures/mkdocs.yml": "x: 1\n"}, "github", None),  # not a docs folder
    ],
)
def test_configs_in_the_usual_places(
    tmp_path: Path, files: dict[str, str], generator: str, config: str | None
) -> None:
    _write(tmp_path, {**files, "a.md": "# A\n\ntext\n"})
    found = detect(tmp_path)
    assert found.generator == generator
    if config is not None:
        assert found.config == tmp_path / config


def test_split_mkdocs_config_with_inherit_derives_the_urls(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "mkdocs-base.yml": "site_name: P\nsite_url: https://ex.org/p/\ndocs_dir: content\n",
            "mkdocs-en.yml": "INHERIT: mkdocs-base.yml\nuse_directory_urls: false\n",
            "content/guide.md": "# Guide\n\n!!! note\n\n    Body.\n",
        },
    )
    cfg = config_from_dict({"include": ["content/**/*.md"], "output": "o.scidx"}, root=root)
    assert cfg.generator == "mkdocs" and cfg.anchor_style == "mkdocs"
    assert cfg.site is not None and cfg.site.config == "mkdocs-en.yml"
    # docs_dir from the parent, use_directory_urls from the child
    assert cfg.url_template == "https://ex.org/p/{page}.html#{anchor}"
    assert cfg.source_root == "content"


def test_two_mkdocs_leaves_pick_the_one_holding_the_inputs(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "mkdocs-base.yml": "site_name: P\n",
            "mkdocs-en.yml": "INHERIT: mkdocs-base.yml\nsite_url: https://ex.org/\ndocs_dir: en\n",
            "mkdocs-de.yml": (
                "INHERIT: mkdocs-base.yml\nsite_url: https://ex.org/de/\ndocs_dir: de\n"
            ),
            "en/a.md": "# A\n",
            "de/a.md": "# A\n",
        },
    )
    de = config_from_dict({"include": ["de/**/*.md"], "output": "o.scidx"}, root=root)
    assert de.url_template == "https://ex.org/de/{page}#{anchor}"
    both = config_from_dict(_INCLUDE, root=root)
    assert both.url_template is None and both.site is not None
    assert "publish different sites" in both.site.note


def test_an_inherit_loop_or_missing_parent_derives_nothing(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "mkdocs.yml": "INHERIT: other.yml\nsite_url: https://ex.org/\n",
            "other.yml": "INHERIT: mkdocs.yml\n",
            "docs/a.md": "# A\n",
        },
    )
    cfg = config_from_dict(_INCLUDE, root=root)
    assert cfg.generator == "mkdocs" and cfg.url_template is None
    assert cfg.site is not None and "INHERITs a config that cannot be read" in cfg.site.note
    (root / "other.yml").unlink()
    assert config_from_dict(_INCLUDE, root=root).url_template is None
    # Only YAML is read as a parent config.
    (root / "mkdocs.yml").write_text("INHERIT: /etc/passwd\nsite_url: https://ex.org/\n")
    cfg = config_from_dict(_INCLUDE, root=root)
    assert cfg.url_template is None and cfg.site is not None
    assert cfg.site.note == "mkdocs.yml INHERITs a config that cannot be read"


def test_the_generator_key_forces_the_flavour(tmp_path: Path) -> None:
    root = _write(tmp_path, {"docusaurus.config.js": "module.exports = {}\n", "a.md": "# A\n"})
    cfg = config_from_dict({**_INCLUDE, "generator": "mkdocs"}, root=root)
    assert cfg.generator == "mkdocs"
    assert cfg.detection is not None and cfg.detection.origin == "key"


@pytest.mark.parametrize(
    ("text", "generator"),
    [
        ('# A\n\n!!! note "T"\n\n    x\n\n=== "Tab"\n\n    y\n', "mkdocs"),
        ("# A\n\n:::tip\n\nx\n\n:::\n", "docusaurus"),
        ("import Tabs from '@theme/Tabs';\n\n# A\n", "docusaurus"),
        ("# {{ $frontmatter.title }}\n\n::: tip\nx\n:::\n", "vitepress"),
        ("# A\n\n```{note}\nx\n```\n\n(label)=\n## B\n", "myst"),
        ("# A\n\nPlain text with `!!! note` in code.\n\n```\n!!! note\n```\n", None),
    ],
)
def test_content_decides_without_a_config(tmp_path: Path, text: str, generator: str | None) -> None:
    _write(tmp_path, {"a.md": text, "b.md": text})
    found = detect(tmp_path, sample_texts(tmp_path, ["**/*.md"], []))
    assert found.generator == (generator or "github")
    assert found.origin == ("content" if generator else "default")


def test_content_needs_clear_evidence() -> None:
    texts = [(f"{i}.md", "# A\n\ntext\n") for i in range(40)]
    texts += [("x.md", "!!! note\n"), ("y.md", "!!! tip\n")]
    generator, reason = detect_from_content(texts)
    assert generator is None and "mkdocs in 2 of 42 files" in reason


def test_ambiguous_configs_are_decided_by_the_content(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "docs/mkdocs.yml": "site_name: x\n",
            "web/docusaurus.config.js": "module.exports = {}\n",
            "a.md": ":::tip\n\nx\n\n:::\n",
            "b.md": ":::note\n\ny\n\n:::\n",
        },
    )
    found = detect(root, sample_texts(root, ["**/*.md"], []))
    assert found.generator == "docusaurus" and found.config == root / "web/docusaurus.config.js"
    assert "the content decided" in found.reason


def test_sample_texts_never_follows_a_symlink_out(tmp_path: Path) -> None:
    outside = _write(tmp_path / "out", {"x.md": "!!! note\n"})
    root = _write(tmp_path / "root", {"a.md": "# A\n"})
    (root / "link.md").symlink_to(outside / "x.md")
    (root / "dir").symlink_to(outside)
    assert [s for s, _ in sample_texts(root, ["**/*.md"], [])] == ["a.md"]


def test_the_pack_summary_names_the_flavour_and_why_no_urls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from support.cli import run

    root = _write(
        tmp_path,
        {
            "docs/en/mkdocs.yml": "site_name: x\nsite_url: https://ex.org/\n",
            "docs/de/docs/a.md": "# A\n\n!!! note\n\n    x\n",
            "staticcorpus.json": json.dumps(
                {"include": ["docs/de/docs/**/*.md"], "output": "a.scidx"}
            ),
        },
    )
    code, out, _ = run(["pack-docs", "-c", str(root / "staticcorpus.json")], capsys)
    assert code == 0, out
    assert "flavour: mkdocs (from docs/en/mkdocs.yml)" in out
    assert (
        "URLs: none: its docs folder docs/en/docs/ does not exist (docs/en/mkdocs.yml); "
        "set urlTemplate in staticcorpus.json"
    ) in out
    code, out, _ = run(["pack-docs", "-c", str(root / "staticcorpus.json"), "--json"], capsys)
    summary = json.loads(out)
    assert summary["generator"] == {
        "name": "mkdocs",
        "from": "config",
        "config": "docs/en/mkdocs.yml",
    }
    (root / "docs/en/mkdocs.yml").unlink()
    code, out, _ = run(["pack-docs", "-c", str(root / "staticcorpus.json"), "--json"], capsys)
    summary = json.loads(out)
    assert summary["generator"]["from"] == "content"
    assert summary["generator"]["reason"] == (
        "from the content: `!!! note` admonitions in 1 of 1 files"
    )
    assert summary["urls"] == (
        "none: no mkdocs config was found to derive them from; set urlTemplate in staticcorpus.json"
    )


def test_fastapi_de_reads_as_mkdocs(shared_dir: Path) -> None:
    root = shared_dir / "corpora" / "fastapi-docs-de"
    cfg = config_from_dict({"include": ["docs/de/docs/**/*.md"], "output": "x.scidx"}, root=root)
    assert cfg.generator == "mkdocs" and cfg.anchor_style == "mkdocs"
    assert cfg.detection is not None and cfg.detection.config == root / "docs/en/mkdocs.yml"
    # Its own docs folder alone: the sibling's config is not above it, the content decides.
    de = root / "docs" / "de"
    cfg = config_from_dict({"include": ["docs/**/*.md"], "output": "x.scidx"}, root=de)
    assert cfg.generator == "mkdocs" and cfg.detection is not None
    assert cfg.detection.origin == "content"


def test_material_blog_posts_link_to_their_dates_and_slugs(
    shared_dir: Path, tmp_path: Path
) -> None:
    from scidx.index.index import load
    from scidx.pack.packer import pack_docs

    root = shared_dir / "corpora" / "mkdocs-material-docs"
    out = tmp_path / "m.scidx"
    cfg = config_from_dict({"include": ["docs/blog/**/*.md"], "output": str(out)}, root=root)
    assert cfg.site is not None and cfg.site.pages == "mkdocs" and cfg.site.blog_known
    pack_docs(cfg)
    hits = load(out).search("transforming material blog support", k=200, mode="keyword")
    urls = {h.source: (h.url or "").partition("#")[0] for h in hits}
    site = "https://squidfunk.github.io/mkdocs-material/"
    # The slug from the post's title (an apostrophe dropped), as the published site has it.
    assert urls["docs/blog/posts/transforming-material-for-mkdocs.md"] == (
        site + "blog/2024/08/19/how-were-transforming-material-for-mkdocs/"
    )
    assert urls["docs/blog/posts/blog-support-just-landed.md"] == (
        site + "blog/2022/09/12/blog-support-just-landed/"
    )


def test_blog_options_that_move_posts_leave_them_without_urls(tmp_path: Path) -> None:
    from scidx.pack.pages import page_path

    root = _write(
        tmp_path,
        {
            "mkdocs.yml": (
                "site_url: https://ex.org/\nplugins:\n  - search\n  - blog:\n"
                '      post_url_format: "{slug}"\n'
            ),
            "docs/blog/posts/a.md": "---\ndate: 2024-01-02\n---\n\n# A\n",
        },
    )
    cfg = config_from_dict(_INCLUDE, root=root)
    assert cfg.site is not None and cfg.site.blog_dir == "blog" and not cfg.site.blog_known
    assert page_path(cfg.site, "docs/blog/posts/a.md", {}, "# A\n") == "\x00"  # unpublished
    assert page_path(cfg.site, "docs/guide/index.md", {}) == "guide/"


def test_sample_texts_starts_in_the_globs_folders_and_survives_a_deep_tree(
    tmp_path: Path,
) -> None:
    import sys

    root = _write(tmp_path, {"docs/a.md": "# A\n", "other/b.md": "# B\n", "README.md": "# R\n"})
    deep = root / "docs"
    for _ in range(300):
        deep = deep / "d"
        deep.mkdir()
    (deep / "z.md").write_text("!!! note\n")
    # A tree deeper than the recursion limit, without making one that deep on disk (the
    # temp-folder clean-up of pytest, shared by every run on the machine, recurses).
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(250)
    try:
        sources = [s for s, _ in sample_texts(root, ["docs/**/*.md", "README.md"], [])]
    finally:
        sys.setrecursionlimit(limit)
    assert sources[:2] == ["README.md", "docs/a.md"] and sources[-1].endswith("/d/z.md")
    assert not any(s.startswith("other/") for s in sources)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("corpus", "origin"), [("fastapi-docs-de", "config"), ("fastapi-docs-en", "content")]
)
def test_fastapi_corpora_leave_no_mkdocs_syntax_in_clean_text(
    shared_dir: Path, corpus: str, origin: str
) -> None:
    """Read as GitHub's, 398 (de) and 462 (en) lines of `/// note` blocks and `::: module`
    directives stayed in the clean text; detected as MkDocs, none does."""
    import re

    from scidx.pack.chunk import chunk_markdown
    from scidx.pack.frontmatter import normalize_source

    root = shared_dir / "corpora" / corpus
    found = detect(root, sample_texts(root, ["**/*.md"], []))
    assert (found.generator, found.origin) == ("mkdocs", origin)
    leaked = re.compile(r"(?m)^[ \t]*(?:///[ \t]*\w|:::[ \t]+fastapi\b)")
    files = 0
    for path in sorted(root.rglob("*.md")):
        text = normalize_source(path.read_text(encoding="utf-8"))
        source = path.relative_to(root).as_posix()
        chunks = chunk_markdown(text, source, generator="mkdocs", anchor_style="mkdocs")
        assert not [c.id for c in chunks if leaked.search(c.plain)], source
        files += 1
    assert files > 100
