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
from collections.abc import Mapping, Sequence
from dataclasses import replace

from scidx.errors import ConfigError
from scidx.index.urls import UNPUBLISHED, page_problem
from scidx.pack.records import Record
from scidx.pack.site import Site

__all__ = [
    "docusaurus_page",
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


def page_path(site: Site, source: str, meta: Mapping[str, str]) -> str:
    """``source``'s page path by ``site``'s rules, or ``""`` outside the docs folder.

    :data:`~scidx.index.urls.UNPUBLISHED` for a page the generator does not publish.

    ``""`` for a source outside the docs folder is never shown: its URL is None anyway (it is
    outside ``sourceRoot``, which is the docs folder whenever pages are stored).
    """
    docs = site.docs_dir or ""
    if docs:
        if not source.startswith(docs + "/"):
            return ""
        source = source[len(docs) + 1 :]
    if _unpublished(site, source, meta):
        return UNPUBLISHED
    if site.pages == "docusaurus":
        page = docusaurus_page(source, meta, site.trailing_slash)
    elif site.pages == "vitepress":
        page = vitepress_page(source, site.rewrites)
    elif site.pages == "starlight":
        page = starlight_page(source, meta)
    elif site.pages == "mkdocs":
        page = dict(site.page_urls).get(source, UNPUBLISHED)
    else:
        raise ValueError(f"no page rules {site.pages!r}")
    return page


def source_pages(site: Site | None, records: Sequence[Record]) -> dict[str, str] | None:
    """Every source's page path (None when ``site`` stores none), from its first record.

    Raises:
        ConfigError: Front matter gives a page path no URL can hold (named, with the fix).
    """
    if site is None or site.pages is None:
        return None
    pages: dict[str, str] = {}
    for record in records:
        if record.source in pages:
            continue
        page = page_path(site, record.source, record.metadata)
        problem = page_problem(page)
        if problem:
            raise ConfigError(
                f"{record.source}: its page path {page!r} (from its file name or its `slug`/"
                f"`id` front matter) {problem}; fix the front matter or set urlTemplate"
            )
        pages[record.source] = page
    return pages


def retitle(site: Site | None, records: Sequence[Record]) -> list[Record]:
    """``records`` with the titles ``site`` gives their sources (the MkDocs nav's), if any."""
    titles = dict(site.titles) if site is not None else {}
    if not titles:
        return list(records)
    return [replace(r, title=titles[r.source]) if r.source in titles else r for r in records]
