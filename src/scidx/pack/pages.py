"""Each source's published page path, by its generator's rules (stored as ``source.page``).

Some generators publish a page at a path its file path does not give: Docusaurus strips
number prefixes and obeys ``slug``/``id`` front matter, VitePress serves an ``index.md`` at
its folder and applies ``rewrites``, Starlight slugifies paths and obeys ``slug``. The packer
decides these paths once, per source, from the source path and its front matter; the runtime
only fills them into the URL template (``scidx.index.urls.url_parts``).

A page path is relative to the docs folder's URL: ``intro``, ``guide/`` (a folder's index
page), ``""`` (the top page).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from scidx.errors import ConfigError
from scidx.index.urls import UNPUBLISHED, page_problem
from scidx.pack.frontmatter import normalize_source, parse_front_matter
from scidx.pack.records import Record
from scidx.pack.site import Site

__all__ = [
    "blog_post_page",
    "docusaurus_page",
    "mkdocs_page",
    "page_path",
    "retitle",
    "source_pages",
    "starlight_page",
    "strip_number_prefix",
    "vitepress_page",
]

_EXT = re.compile(r"\.(md|mdx|markdown)$", re.IGNORECASE)
# Docusaurus's DefaultNumberPrefixParser: "01-intro", "1. intro", "2_intro"; not a date
# ("2021-01-31-x") or a version-like "1.2" or "1-2" (its IgnoredNumberPrefixPatterns).
_NUMBER_PREFIX = re.compile(r"^(\d+)\s*[-_.]+\s*([^-_.\s].*)$")
_NOT_A_PREFIX = re.compile(r"^(\d+-\d+-\d+|\d+\.\d+|\d+-\d+$)")


def strip_number_prefix(name: str) -> str:
    """A file or folder name without its Docusaurus number prefix (``01-intro`` → ``intro``)."""
    if _NOT_A_PREFIX.match(name):
        return name
    match = _NUMBER_PREFIX.match(name)
    return match.group(2) if match else name


def docusaurus_page(path: str, meta: Mapping[str, str], trailing_slash: bool | None) -> str:
    """The Docusaurus doc slug of ``path`` (relative to the docs folder), without its ``/``.

    Rules of plugin-content-docs (``getSlug``): a ``slug`` starting with ``/`` is the path; any
    other ``slug``, or else the ``id`` front matter, or else the file name without its number
    prefix, is resolved against the folder (folder names also lose their number prefixes). A
    page named ``index``, ``README`` or like its folder is the folder's page, served at
    ``folder/``. ``trailingSlash``: ``True`` adds a ``/`` to every page, ``False`` removes it
    from folder pages, unset keeps both forms as they are.
    """
    stem = _EXT.sub("", path)
    folder, _, name = stem.rpartition("/")
    folder_url = "/".join(strip_number_prefix(p) for p in folder.split("/")) if folder else ""
    dir_slug = f"/{folder_url}/" if folder_url else "/"
    slug = meta.get("slug")
    last_dir = folder.rpartition("/")[2].lower()
    if slug and slug.startswith("/"):
        page = slug
    elif not slug and name.lower() in ("index", "readme", last_dir or "\0"):
        page = dir_slug
    else:
        base = slug or meta.get("id") or strip_number_prefix(name)
        page = posixpath.normpath(posixpath.join(dir_slug, base)) + (
            "/" if base.endswith("/") else ""
        )
    page = re.sub(r"/+", "/", page).lstrip("/")
    if trailing_slash is True and page and not page.endswith("/"):
        page += "/"
    elif trailing_slash is False:
        page = page.rstrip("/")
    return page


def vitepress_page(path: str, rewrites: tuple[tuple[str, str], ...]) -> str:
    """The VitePress route of ``path`` (relative to ``srcDir``): ``index.md`` is its folder.

    The first ``rewrites`` entry ``"a/:rest*": "b/:rest*"`` whose prefix matches applies.
    """
    for old, new in rewrites:
        if path.startswith(old):
            path = new + path[len(old) :]
            break
    stem = _EXT.sub("", path)
    folder, _, name = stem.rpartition("/")
    if name == "index":
        return f"{folder}/" if folder else ""
    return stem


def _github_slug(segment: str) -> str:
    """github-slugger's slug of one path segment (what Astro's content IDs use)."""
    segment = segment.lower()
    segment = re.sub(r"[^\w\- ]", "", segment)
    return segment.replace(" ", "-")


def starlight_page(path: str, meta: Mapping[str, str]) -> str:
    """The Starlight page of ``path`` (relative to ``src/content/docs``).

    Astro's content collections slug each path segment (github-slugger) and drop a final
    ``index`` (its folder, ``guides/``); a ``slug`` front matter value replaces the whole
    path. Starlight links pages with a trailing ``/``: the template's ``{page}``.
    """
    slug = meta.get("slug")
    if slug is not None:
        stem = slug.strip("/")
    else:
        stem = "/".join(_github_slug(p) for p in _EXT.sub("", path).split("/"))
        if stem == "index" or stem.endswith("/index"):
            stem = stem[: -len("index")]
    return stem


def _unpublished(site: Site, source: str, meta: Mapping[str, str]) -> bool:
    """Whether the generator leaves the page out of the built site (it then has no URL).

    Docusaurus's default ``exclude`` drops ``_``-prefixed files and folders (partials that
    other pages import); Docusaurus and Starlight drop ``draft: true`` pages from production
    builds.
    """
    draft = meta.get("draft", "").lower() == "true"
    if site.pages == "docusaurus":
        return draft or any(part.startswith("_") for part in source.split("/"))
    return site.pages == "starlight" and draft


def page_path(site: Site, source: str, meta: Mapping[str, str], text: str | None = None) -> str:
    """``source``'s page path by ``site``'s rules, or ``""`` outside the docs folder.

    :data:`~scidx.index.urls.UNPUBLISHED` for a page the generator does not publish.

    ``""`` for a source outside the docs folder is never shown: its URL is None anyway (it is
    outside ``sourceRoot``, which is the docs folder whenever pages are stored).

    ``text`` is the source's Markdown, read for a Material blog post (its date and title).
    """
    docs = site.docs_dir or ""
    if docs:
        if not source.startswith(docs + "/"):
            return ""
        source = source[len(docs) + 1 :]
    if _unpublished(site, source, meta):
        return UNPUBLISHED
    if site.blog_dir is not None and source.startswith(f"{site.blog_dir}/posts/"):
        return blog_post_page(site, source, meta, text) if site.blog_known else UNPUBLISHED
    if site.pages == "docusaurus":
        page = docusaurus_page(source, meta, site.trailing_slash)
    elif site.pages == "vitepress":
        page = vitepress_page(source, site.rewrites)
    elif site.pages == "starlight":
        page = starlight_page(source, meta)
    elif site.pages == "mkdocs" and site.page_urls:
        page = dict(site.page_urls).get(docs + "/" + source if docs else source, UNPUBLISHED)
    elif site.pages == "mkdocs":
        page = mkdocs_page(source)
    else:
        raise ValueError(f"no page rules {site.pages!r}")
    return page


def source_pages(
    site: Site | None, records: Sequence[Record], root: Path | None = None
) -> dict[str, str] | None:
    """Every source's page path (None when ``site`` stores none), from its first record.

    ``root`` is the folder sources are relative to: a Material blog post's file is read again
    from there (its front matter's ``date`` mapping and its first line, which records do not
    keep).

    Raises:
        ConfigError: Front matter gives a page path no URL can hold (named, with the fix).
    """
    if site is None or site.pages is None:
        return None
    pages: dict[str, str] = {}
    for record in records:
        if record.source in pages:
            continue
        text = None
        if site.blog_dir is not None and root is not None and "/posts/" in record.source:
            text = _read_text(root / record.source)
        page = page_path(site, record.source, record.metadata, text)
        problem = page_problem(page)
        if problem:
            raise ConfigError(
                f"{record.source}: its page path {page!r} (from its file name or its `slug`/"
                f"`id` front matter) {problem}; fix the front matter or set urlTemplate"
            )
        pages[record.source] = page
    return pages


def _read_text(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            data = fh.read(_MAX_POST_BYTES)
    except OSError:
        return None
    return normalize_source(data.decode("utf-8", errors="replace"))


def mkdocs_page(path: str) -> str:
    """The MkDocs page of ``path`` (relative to ``docs_dir``).

    ``index.md`` and ``README.md`` are their folder's page (``guide/``, ``""`` at the top), any
    other page its path without ``.md``.
    """
    stem = _EXT.sub("", path)
    folder, _, name = stem.rpartition("/")
    if name in ("index", "README"):
        return f"{folder}/" if folder else ""
    return stem


_MAX_POST_BYTES = 1 << 20
_DATE = r"""[ \t]*['"]?(\d{4})-(\d{2})-(\d{2})"""
_POST_DATE = re.compile(rf"(?m)^date[ \t]*:{_DATE}")
_POST_CREATED = re.compile(
    rf"(?m)^date[ \t]*:[ \t]*(?:#.*)?\n(?:[ \t]+.*\n)*?[ \t]+created[ \t]*:{_DATE}"
)
_SLUG_TAGS = re.compile(r"</?[^>]*>")
_SLUG_INVALID = re.compile(r"[^\w\- ]")


def _post_title(name: str, meta: Mapping[str, str], body: str) -> str:
    """The title Material slugs: front matter, else a first line ``# Title``, else the name.

    MkDocs' ``Page.title`` before rendering (``get_markdown_title``), which the blog plugin
    reads when it decides the post's URL.
    """
    if "title" in meta:
        return meta["title"]
    for line in body.split("\n"):
        line = line.strip()
        if not line:
            continue
        if line.startswith("# "):
            return line.lstrip("# ")
        break
    title = name.replace("-", " ").replace("_", " ")
    return title.capitalize() if title.lower() == title else title


def blog_post_page(site: Site, path: str, meta: Mapping[str, str], text: str | None) -> str:
    """The page of a Material blog post with the plugin's default options.

    ``blog_dir/YYYY/MM/DD/<slug>`` (``post_url_format`` ``{date}/{slug}``, the date as
    ``yyyy/MM/dd``): the ``slug`` front matter, else the title as pymdownx's ``slugify(case=
    "lower")`` gives it. :data:`UNPUBLISHED` for a draft (not built) or a post whose date
    cannot be read.
    """
    if text is None or meta.get("draft", "").lower() == "true":
        return UNPUBLISHED
    end, _ = parse_front_matter(text)
    head = text[:end]
    date = _POST_DATE.search(head) or _POST_CREATED.search(head)
    if date is None:
        return UNPUBLISHED
    name = _EXT.sub("", path).rpartition("/")[2]
    slug = meta.get("slug") or _pymdownx_slug(_post_title(name, meta, text[end:]))
    if not slug.strip("/."):
        return UNPUBLISHED
    when = "/".join(date.groups())
    return posixpath.normpath(f"{site.blog_dir}/{when}/{slug.strip('/')}")


def _pymdownx_slug(text: str) -> str:
    """pymdownx.slugs ``slugify(case="lower")`` with ``-``: Material's ``post_slugify``."""
    slug = _SLUG_TAGS.sub("", unicodedata.normalize("NFC", text)).strip().lower()
    return _SLUG_INVALID.sub("", slug).replace(" ", "-")


def retitle(site: Site | None, records: Sequence[Record]) -> list[Record]:
    """``records`` with the titles ``site`` gives their sources (the MkDocs nav's), if any."""
    titles = dict(site.titles) if site is not None else {}
    if not titles:
        return list(records)
    return [replace(r, title=titles[r.source]) if r.source in titles else r for r in records]
