"""MkDocs plugin: pack the site's Markdown into a ``.scidx`` index at ``mkdocs build``.

Enable it in ``mkdocs.yml`` (``toolup-rag[cli]`` must be installed where MkDocs runs)::

    plugins:
      - search
      - scidx:
          output: search.scidx      # where the index goes inside the built site (the default)
          llms_txt: true            # also write llms.txt and llms-full.txt into the site
          web_bundle: find/         # also a static search bundle there (docs/web-bundle.md)
          pack:                     # any other staticcorpus.json keys
            maxChunkChars: 1200

What it takes from MkDocs rather than from a staticcorpus.json: the flavour (MkDocs, whatever
the config file is called: ``mkdocs build -f other.yml``), the pages (the Markdown pages MkDocs
built, so ``exclude_docs``, drafts and the blog plugin's unpublished posts are left out, and
``include``/``exclude`` narrow them further), the links (``site_url`` + each page's
``page.url``, as MkDocs and its plugins gave it: ``guide/install/`` with
``use_directory_urls``, else ``guide/install.html``, a Material blog post at
``blog/YYYY/MM/DD/<slug>/``; relative to the site root without a ``site_url``), the title
MkDocs shows for a page without an H1 (its nav title) and the anchors (``anchorStyle:
"mkdocs"``, the ids Python-Markdown's ``toc`` extension gives headings).

The pack goes into a work folder the plugin keeps for the life of the MkDocs process, with its
incremental sidecar, and the index alone is copied into the site. Under ``mkdocs serve`` a
rebuild whose docs did not change copies the index without packing, and a changed page is
packed again with the embedding cache, so only changed chunks reach the provider.

A failing pack stops the build with the scidx message (:class:`mkdocs.exceptions.PluginError`).
The configuration is one :class:`ScidxPluginConfig`; each output is written by its own method
of :class:`ScidxPlugin` from :meth:`~ScidxPlugin.on_post_build`, so an option that adds an
output adds a field and a method.
"""

from __future__ import annotations

import logging
import re
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from scidx.errors import ScidxError

if TYPE_CHECKING:
    from scidx.pack.config import Config

__all__ = ["ScidxPlugin", "ScidxPluginConfig"]

_log = logging.getLogger("mkdocs.plugins.scidx")

# Keys the plugin sets from mkdocs.yml itself; "pack" may not override them.
_FROM_MKDOCS = (
    "include",
    "exclude",
    "output",
    "urlTemplate",
    "anchorStyle",
    "sourceRoot",
    "generator",
)


# MkDocs' Config.__init_subclass__ is untyped; its subclassing is its documented API.
class ScidxPluginConfig(base.Config):  # type: ignore[no-untyped-call,unused-ignore]
    """The ``scidx`` entry of ``plugins:`` in mkdocs.yml."""

    #: Where the index goes, relative to ``site_dir``.
    output = c.Type(str, default="search.scidx")
    #: Also write ``llms.txt`` and ``llms-full.txt`` at the top of the site.
    llms_txt = c.Type(bool, default=False)
    #: Also write a static search bundle (``export-web``) into this folder of the site, e.g.
    #: ``find/`` (its search page is ``find/index.html``); unset: none.
    web_bundle = c.Optional(c.Type(str))
    #: Globs of pages to pack, relative to ``docs_dir``.
    include = c.ListOfItems(c.Type(str), default=["**/*.md"])
    #: Globs to leave out, relative to ``docs_dir``.
    exclude = c.ListOfItems(c.Type(str), default=[])
    #: Further staticcorpus.json keys (``embeddingProvider``, ``model``, ``maxChunkChars``...).
    pack = c.Type(dict, default={})


class ScidxPlugin(BasePlugin[ScidxPluginConfig]):  # type: ignore[no-untyped-call,unused-ignore]
    """Packs ``docs_dir`` at every build and writes the index (and llms.txt) into the site."""

    def __init__(self) -> None:
        self._work: Path | None = None
        self._settings: dict[str, Any] = {}
        self._root = Path()
        self._label = Path("mkdocs.yml")
        # src_uri -> (page URL, title for a page without an H1 or ""), for the pages built.
        self._built: dict[str, tuple[str, str]] = {}
        self._listed: dict[str, str] = {}  # src_uri -> page URL, for every page included
        self._dirty = False

    def on_startup(self, *, command: str, dirty: bool) -> None:
        """Make the work folder, kept for the process.

        Defining this hook keeps the plugin alive across ``mkdocs serve`` rebuilds, so the
        incremental sidecar in the work folder is found again.
        """
        self._work = Path(tempfile.mkdtemp(prefix="scidx-mkdocs-"))
        self._dirty = dirty

    def on_shutdown(self) -> None:
        """Remove the work folder."""
        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = None

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        """Derive the pack settings from mkdocs.yml and check them before any page is built.

        Raises:
            PluginError: An option is invalid (named, with the fix).
        """
        from scidx.pack.config import config_from_dict

        output = self.config.output.replace("\\", "/")
        parts = output.split("/")
        if output.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise PluginError(
                f"scidx: output {self.config.output!r} must be a file path inside the site, "
                'like "search.scidx"'
            )
        bundle = self.config.web_bundle
        if bundle is not None and (
            bundle.startswith(("/", "\\"))
            or any(p in (".", "..") for p in bundle.replace("\\", "/").split("/"))
            or not bundle.strip("/\\")
        ):
            raise PluginError(
                f'scidx: web_bundle {bundle!r} must be a folder inside the site, like "find/"'
            )
        overridden = sorted(set(self.config.pack) & set(_FROM_MKDOCS))
        if overridden:
            raise PluginError(
                f"scidx: pack sets {', '.join(overridden)}, which the plugin takes from "
                "mkdocs.yml (docs_dir, site_url, use_directory_urls) or from its own include, "
                "exclude and output options; remove them from pack"
            )
        site_url = config.site_url or ""
        if site_url and not site_url.endswith("/"):
            site_url += "/"
        self._root = Path(config.docs_dir)
        self._label = Path(config.config_file_path or "mkdocs.yml")
        self._settings = {
            **self.config.pack,
            "include": list(self.config.include),
            "exclude": list(self.config.exclude),
            "anchorStyle": "mkdocs",
            "generator": "mkdocs",
            # {path} is each page's stored page.url (pages="mkdocs" in the site).
            "urlTemplate": site_url + "{path}#{anchor}",
        }
        try:
            config_from_dict(
                self._pack_settings(Path("check.scidx")), root=self._root, path=self._label
            )
        except ScidxError as exc:
            raise PluginError(f"scidx: {exc}") from None
        return config

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        """Forget the pages of the previous build (``mkdocs serve`` builds again)."""
        self._built = {}
        self._listed = {}

    def on_env(self, env: Any, *, config: MkDocsConfig, files: Files) -> Any:
        """Note every page the build includes, with its URL (all plugins have set it by now).

        Only a ``--dirty`` build uses these: it renders the changed pages alone, and the
        others keep the URL MkDocs gave their file.
        """
        self._listed = {
            f.src_uri: _page_url(f.url)
            for f in files.documentation_pages()
            if getattr(f, "generated_by", None) is None and f.src_uri.endswith(".md")
        }
        return env

    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str | None:
        """Note a page MkDocs built from a Markdown file in ``docs_dir``: its URL and title.

        Pages the blog plugin generates (archive, category, pagination views) have no source
        in ``docs_dir`` and are not packed.
        """
        file = page.file
        # generated_by is MkDocs 1.6's; before it, a generated page has no file in docs_dir.
        if getattr(file, "generated_by", None) is not None or not file.src_uri.endswith(".md"):
            return output
        if not file.abs_src_path:
            return output
        try:
            Path(file.abs_src_path).resolve().relative_to(Path(config.docs_dir).resolve())
        except ValueError:
            return output
        has_h1 = any(item.level == 1 for item in page.toc)
        title = "" if has_h1 or page.meta.get("title") else (page.title or "")
        self._built[file.src_uri] = (_page_url(page.url), title)
        return output

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        """Pack (or find up to date) the index, then write the outputs into ``site_dir``.

        Raises:
            PluginError: The pack or a write failed; the message is scidx's.
        """
        site = Path(config.site_dir)
        index = self._pack()
        try:
            self._write_index(index, site)
            if self.config.llms_txt:
                self._write_llms_txt(index, site)
            if self.config.web_bundle is not None:
                self._write_web_bundle(index, site, config.site_name)
        except ScidxError as exc:
            raise PluginError(f"scidx: {exc}") from None

    # -- the steps -------------------------------------------------------------------------------

    def _pack_settings(self, output: Path) -> dict[str, Any]:
        return {**self._settings, "output": str(output)}

    def _built_config(self, index: Path) -> Config:
        """The pack config of the pages this build made, with MkDocs' URLs and titles.

        Raises:
            ScidxError: A setting is invalid or no built page is left to pack.
        """
        from scidx.errors import ConfigError
        from scidx.pack.config import config_from_dict
        from scidx.pack.flavours.detect import Detection
        from scidx.pack.globs import compile_glob
        from scidx.pack.site import Site

        settings = self._pack_settings(index)
        includes = [compile_glob(g) for g in settings["include"]]
        excludes = [compile_glob(g) for g in settings["exclude"]]
        built = dict(self._built)
        if self._dirty:  # the pages this build did not render are still in the site
            built = {**{s: (url, "") for s, url in self._listed.items()}, **built}
        sources = sorted(
            s
            for s in built
            if any(g.fullmatch(s) for g in includes) and not any(g.fullmatch(s) for g in excludes)
        )
        if not sources:
            raise ConfigError(
                f"{self._label}: MkDocs built no Markdown page that the plugin's include and "
                "exclude options keep; loosen them"
            )
        # Each built page by name (glob characters escaped), not a glob over docs_dir.
        literal = [re.sub(r"([*?\[])", r"[\1]", s) for s in sources]
        cfg = config_from_dict(
            {**settings, "include": literal, "exclude": []}, root=self._root, path=self._label
        )
        site = Site(
            "mkdocs",
            self._label.name,
            "",
            pages="mkdocs",
            page_urls=tuple((s, built[s][0]) for s in sources),
            titles=tuple((s, built[s][1]) for s in sources if built[s][1]),
        )
        detection = Detection(
            "mkdocs", "config", self._label, (self._label,), "the MkDocs plugin, inside MkDocs"
        )
        return replace(cfg, site=site, source_root=None, detection=detection)

    def _pack(self) -> Path:
        from scidx.pack.packer import pack_docs

        if self._work is None:  # MkDocs older than 1.4 has no on_startup
            self.on_startup(command="build", dirty=False)
        assert self._work is not None
        index = self._work / Path(self.config.output).name
        try:
            cfg = self._built_config(index)
            result = pack_docs(cfg)
        except ScidxError as exc:
            raise PluginError(f"scidx: packing {self._root} failed: {exc}") from None
        done = "is up to date" if result.up_to_date else "packed"
        _log.info(
            "scidx: %s %s: %d files, %d chunks, %s embeddings (%d computed, %d reused)",
            self.config.output,
            done,
            result.files,
            result.chunks,
            cfg.embedding_provider,
            result.embedded,
            result.chunks - result.embedded,
        )
        return index

    def _write_index(self, index: Path, site: Path) -> None:
        from scidx.pack.project import copy_index

        copy_index(index, site.joinpath(*self.config.output.replace("\\", "/").split("/")))

    def _write_llms_txt(self, index: Path, site: Path) -> None:
        from scidx.export.llms_txt import write_llms_txt

        written = write_llms_txt(index, site)
        _log.info("scidx: wrote %s", ", ".join(p.name for p in written))

    def _write_web_bundle(self, index: Path, site: Path, title: str) -> None:
        from scidx.export.web_bundle import write_web_bundle

        parts = [p for p in str(self.config.web_bundle).replace("\\", "/").split("/") if p]
        # Without a site_url the index's links are relative to the site root: from the bundle's
        # folder that is one "../" per level.
        report = write_web_bundle(
            index, site.joinpath(*parts), title=f"Search {title}", link_base="../" * len(parts)
        )
        _log.info(
            "scidx: wrote the search bundle %s/ (%d files, %d bytes)",
            "/".join(parts),
            report.files,
            report.bytes,
        )


def _page_url(url: str) -> str:
    """A page's URL as a stored page path: unquoted (scidx quotes it), the top page ``""``.

    A file's URL is ``./`` for the top page, which ``Page.url`` gives as ``""``.
    """
    return "" if url in (".", "./") else unquote(url)
