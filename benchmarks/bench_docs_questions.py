"""Realistic questions on three real docs sites: hits@3 per mode (issue 22's before → after).

Usage (from the project root; ``--src`` points at another checkout's ``src`` to measure it)::

    nice .venv/bin/python benchmarks/bench_docs_questions.py [--shared ../shared]
        [--model ../shared/models/all-MiniLM-L6-v2-int8] [--src OTHER/src] [--modes ...]

Each corpus of ``../shared/corpora`` is packed with its own config (its folder as the root, the
generator detected where the packer supports it) and every question is asked in keyword,
hybrid (hashing) and, with ``--model``, hybrid (local) mode. A question counts as answered when
one of the first three hits is the section that answers it: same source file and same own
heading (the last entry of the heading path; heading text is stable across chunker versions,
anchors and ids are not). The answers were chosen by reading the pages.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (question, source, accepted own headings)
Question = tuple[str, str, tuple[str, ...]]
VP = "docs/en/"
QUESTIONS: dict[str, list[Question]] = {
    "vitepress-docs-en": [
        ("urls without the .html extension", VP + "guide/routing.md", ("Generating Clean URLs",)),
        (
            "deploy the site under a sub path",
            VP + "guide/deploy.md",
            ("Setting a Public Base Path",),
        ),
        ("cache headers for hashed assets", VP + "guide/deploy.md", ("HTTP Cache Headers",)),
        (
            "use a different font in the default theme",
            VP + "guide/extending-default-theme.md",
            ("Using Different Fonts",),
        ),
        (
            "highlight one line in a code block",
            VP + "guide/markdown.md",
            ("Line Highlighting in Code Blocks",),
        ),
        (
            "include another markdown file in a page",
            VP + "guide/markdown.md",
            ("Markdown File Inclusion",),
        ),
        ("show a tip or warning box", VP + "guide/markdown.md", ("Custom Containers",)),
        (
            "load data from local files at build time",
            VP + "guide/data-loading.md",
            ("Data from Local Files",),
        ),
        (
            "render a component only in the browser, not during SSR",
            VP + "guide/ssr-compat.md",
            ("<ClientOnly>",),
        ),
        (
            "generate a sitemap.xml",
            VP + "guide/sitemap-generation.md",
            ("Sitemap Generation", "Options"),
        ),
        ("right to left languages", VP + "guide/i18n.md", ("RTL Support (Experimental)",)),
        (
            "use sass or less in vue components",
            VP + "guide/using-vue.md",
            ("Using CSS Pre-processors",),
        ),
        ("pages generated from route parameters", VP + "guide/routing.md", ("Dynamic Routes",)),
        ("start the dev server", VP + "reference/cli.md", ("vitepress dev",)),
        ("write latex math equations", VP + "guide/markdown.md", ("Math Equations",)),
    ],
    "myst-parser-docs": [
        (
            "make an admonition collapsible",
            "docs/syntax/admonitions.md",
            ("Collapsible admonitions",),
        ),
        ("give an admonition a custom title", "docs/syntax/admonitions.md", ("Admonition titles",)),
        (
            "number lines in a code block and emphasize some",
            "docs/syntax/code_and_apis.md",
            ("Numbering and highlighting lines",),
        ),
        (
            "include code from a file",
            "docs/syntax/code_and_apis.md",
            ("Including code from files",),
        ),
        (
            "document a python api with autodoc",
            "docs/syntax/code_and_apis.md",
            ("sphinx.ext.autodoc", "sphinx-autodoc2", "Documenting whole APIs"),
        ),
        (
            "link to a heading in another document",
            "docs/syntax/cross-referencing.md",
            ("Creating explicit targets", "Implicit targets", "Markdown link syntax"),
        ),
        (
            "link to another project's docs with intersphinx",
            "docs/syntax/cross-referencing.md",
            ("Cross-project (intersphinx) links",),
        ),
        (
            "figure with a caption",
            "docs/syntax/images_and_figures.md",
            ("Figures (images with captions)",),
        ),
        (
            "dollar sign math",
            "docs/syntax/optional.md",
            ("Dollar delimited math", "Math shortcuts"),
        ),
        (
            "replace variables in the text with substitutions",
            "docs/syntax/optional.md",
            ("Substitutions (with Jinja2)",),
        ),
        (
            "automatically generate anchors for headings",
            "docs/syntax/optional.md",
            ("Auto-generated header anchors", "Anchor slug structure"),
        ),
        ("definition lists", "docs/syntax/optional.md", ("Definition Lists",)),
        ("table from a csv file", "docs/syntax/tables.md", ("CSV tables",)),
        ("add a footnote", "docs/syntax/typography.md", ("Footnotes",)),
        ("turn off a build warning", "docs/configuration.md", ("Build Warnings",)),
    ],
    "mkdocs-material-docs": [
        (
            "change the title of an admonition",
            "docs/reference/admonitions.md",
            ("Changing the title",),
        ),
        ("collapsible admonition", "docs/reference/admonitions.md", ("Collapsible blocks",)),
        ("define my own admonition type", "docs/reference/admonitions.md", ("Custom admonitions",)),
        ("copy button on code blocks", "docs/reference/code-blocks.md", ("Code copy button",)),
        ("add a title to a code block", "docs/reference/code-blocks.md", ("Adding a title",)),
        (
            "annotations in code",
            "docs/reference/code-blocks.md",
            ("Code annotations", "Adding annotations"),
        ),
        (
            "highlight specific lines of code",
            "docs/reference/code-blocks.md",
            ("Highlighting specific lines",),
        ),
        (
            "linked content tabs across the page",
            "docs/reference/content-tabs.md",
            ("Linked content tabs",),
        ),
        (
            "search suggestions while typing",
            "docs/setup/setting-up-site-search.md",
            ("Search suggestions",),
        ),
        (
            "exclude a page from search",
            "docs/setup/setting-up-site-search.md",
            ("Search exclusion",),
        ),
        ("dark mode toggle", "docs/setup/changing-the-colors.md", ("Color palette toggle",)),
        ("use custom colors", "docs/setup/changing-the-colors.md", ("Custom colors",)),
        ("version selector with mike", "docs/setup/setting-up-versioning.md", ("Versioning",)),
        ("change the site language", "docs/setup/changing-the-language.md", ("Site language",)),
        ("abbreviations with tooltips", "docs/reference/tooltips.md", ("Adding abbreviations",)),
    ],
}


def _answered(hits: list[object], source: str, headings: tuple[str, ...]) -> bool:
    for hit in hits[:3]:
        path = tuple(getattr(hit, "heading_path", ()) or ())
        if getattr(hit, "source", None) == source and path and path[-1] in headings:
            return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--model", default=None)
    parser.add_argument("--src", default=str(ROOT / "src"))
    parser.add_argument("--label", default="this checkout")
    args = parser.parse_args()
    sys.path.insert(0, args.src)
    from scidx.index.index import load
    from scidx.pack.config import config_from_dict
    from scidx.pack.packer import pack_docs

    providers = [("hashing", None)]
    if args.model:
        providers.append(("local", str(Path(args.model).resolve())))
    print(f"{args.label}: hits@3 of 15 questions per corpus")
    with tempfile.TemporaryDirectory() as tmp:
        for corpus, questions in QUESTIONS.items():
            root = Path(args.shared) / "corpora" / corpus
            cells: list[str] = []
            for provider, model in providers:
                out = Path(tmp) / f"{corpus}-{provider}.scidx"
                data: dict[str, object] = {
                    "include": ["**/*.md", "**/*.mdx"]
                    if corpus == "starlight-docs-en"
                    else ["**/*.md"],
                    "output": str(out),
                    "embeddingProvider": provider,
                    "cacheDir": str(Path(tmp) / "cache"),
                }
                if model:
                    data["model"] = model
                if corpus.startswith("mkdocs"):
                    data["anchorStyle"] = "mkdocs"
                pack_docs(config_from_dict(data, root=root))
                index = load(out, **({"model_dir": model} if model else {}))
                modes = ["keyword", "hybrid"] if provider == "hashing" else ["hybrid"]
                for mode in modes:
                    score = sum(
                        _answered(index.search(q, k=3, mode=mode), src, heads)
                        for q, src, heads in questions
                    )
                    cells.append(f"{mode} ({provider}) {score}/15")
                index.close()
            print(f"  {corpus:24} " + "  ".join(cells))


if __name__ == "__main__":
    main()
