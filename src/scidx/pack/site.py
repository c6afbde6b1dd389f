"""The site a docs generator publishes, read from its config: URL template, docs folder, page rules.

Config files are read as text with conservative regular expressions, never executed (a
``docusaurus.config.ts`` or ``conf.py`` is a program). A value counts only when it is a plain
literal (or, for VitePress's sitemap host, a ``const`` bound once to a literal); anything else
is "not certain", and then nothing is derived from it. A ``urlTemplate`` in
``staticcorpus.json`` always wins; see docs/configuration.md ("URLs derived from the
generator's config").
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scidx.index.urls import parse_url_template

__all__ = ["Site", "derive_site", "describe_urls", "find_generator_config"]

_MAX_CONFIG_BYTES = 1 << 20


@dataclass(frozen=True)
class Site:
    """What a generator's config says about the URLs of the pages it publishes.

    Attributes:
        generator: The generator (``"mkdocs"``, ``"docusaurus"``, ...).
        config: The generator's config file, relative to the ``staticcorpus.json`` folder.
        docs_dir: The folder the generator builds pages from, relative to that folder
            (``""``: the folder itself), or ``None`` when it lies outside it.
        template: The URL template the config implies, or ``None`` when not certain.
        pages: The page-path rules stored per source (``"docusaurus"``, ``"vitepress"``,
            ``"starlight"``), or ``None`` when the source path says it all.
        trailing_slash: Docusaurus ``trailingSlash`` (``None``: not set).
        rewrites: VitePress ``rewrites`` of the form ``"a/:rest*": "b/:rest*"`` as
            ``(from_prefix, to_prefix)`` pairs.
        note: Why no template was derived (for the pack summary), or ``""``.
        derived: True when ``template`` is the index's ``urlTemplate`` (the config set none).
        page_urls: ``(source, page URL)`` pairs the generator itself gave (the MkDocs plugin:
            MkDocs' ``page.url``), with ``pages="mkdocs"``; a source not listed is unpublished.
        titles: ``(source, title)`` pairs that replace the title the chunker finds (the MkDocs
            plugin: the nav title of a page without an H1).
        blog_dir: Material's blog plugin is on (``pages="mkdocs"``): its folder in the docs,
            whose ``posts/`` are published at ``blog_dir/YYYY/MM/DD/<slug>/``.
        blog_known: The blog plugin's options are those defaults (else posts get no URL).
    """

    generator: str
    config: str
    docs_dir: str | None
    template: str | None = None
    pages: str | None = None
    trailing_slash: bool | None = None
    rewrites: tuple[tuple[str, str], ...] = ()
    note: str = ""
    derived: bool = False
    page_urls: tuple[tuple[str, str], ...] = ()
    titles: tuple[tuple[str, str], ...] = ()
    blog_dir: str | None = None
    blog_known: bool = False

    def canonical(self) -> dict[str, Any]:
        """The settings that change stored page paths (for the config hash)."""
        out: dict[str, Any] = {
            "pages": self.pages,
            "docsDir": self.docs_dir,
            "trailingSlash": self.trailing_slash,
            "rewrites": [list(r) for r in self.rewrites],
        }
        # Only when set, so other configs keep their hash.
        if self.page_urls:
            out["pageUrls"] = [list(p) for p in self.page_urls]
        if self.titles:
            out["titles"] = [list(t) for t in self.titles]
        if self.blog_dir is not None:
            out["blog"] = [self.blog_dir, self.blog_known]
        return out


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            data = fh.read(_MAX_CONFIG_BYTES + 1)
    except OSError:
        return None
    if len(data) > _MAX_CONFIG_BYTES:
        return None
    return data.decode("utf-8", errors="replace")


def find_generator_config(generator: str, root: Path) -> Path | None:
    """The generator's config file at the nearest level detection looks in, or None."""
    from scidx.pack.flavours.detect import find_configs

    found = [p for g, p in find_configs(root) if g == generator and p.is_file()]
    return found[0] if found else None


_STR = r"""(?:'([^'\\\n]*)'|"([^"\\\n]*)"|`([^`\\$\n]*)`)"""


def _literal(match: re.Match[str] | None, first: int = 1) -> str | None:
    if match is None:
        return None
    for group in range(first, first + 3):
        if match.group(group) is not None:
            return match.group(group)
    return None


def _js_value(text: str, key: str, indent: str | None = None) -> tuple[bool, str | None]:
    """``(present, literal)`` of ``key: '...'`` (at ``indent`` when given); literal None if not one.

    Present more than once at that indent, or not as a plain string literal: not certain.
    """
    pad = re.escape(indent) if indent is not None else r"[ \t]*"
    lines = re.findall(rf"(?m)^{pad}{key}\s*:\s*(.*)$", text)
    if indent is not None:
        lines = [v for v in lines if v]  # (the pattern already pins the indent)
    if not lines:
        return False, None
    if len(lines) > 1:
        return True, None
    return True, _literal(re.match(rf"{_STR}\s*,?\s*(?://.*)?$", lines[0]))


def _indent_of(text: str, key: str) -> str | None:
    found = re.findall(rf"(?m)^([ \t]*){key}\s*:", text)
    return found[0] if len(found) == 1 else None


def _join(*parts: str) -> str:
    """URL pieces joined with single slashes (the scheme's ``//`` kept), ending in ``/``."""
    out = ""
    for part in parts:
        if not part:
            continue
        out = (out.rstrip("/") + "/" + part.lstrip("/")) if out else part
    return out.rstrip("/") + "/" if out else "/"


def _checked(template: str) -> str | None:
    return template if parse_url_template(template) is not None else None


def _relative(docs: Path, root: Path) -> str | None:
    try:
        rel = docs.resolve().relative_to(root)
    except (ValueError, OSError):
        return None
    return "" if str(rel) == "." else rel.as_posix()


_MKDOCS_KEYS = ("INHERIT", "site_url", "docs_dir", "use_directory_urls")
_MAX_INHERIT = 8
_YAML = re.compile(r"\.ya?ml$", re.IGNORECASE)


def _mkdocs_own(text: str) -> dict[str, str | None]:
    """One file's top-level keys URLs depend on (a key set twice reads as None: not certain)."""
    own: dict[str, str | None] = {}
    for key in _MKDOCS_KEYS:
        found = re.findall(rf"(?m)^{key}\s*:\s*(.*?)\s*(?:#.*)?$", text)
        if found:
            own[key] = found[0].strip("'\"") if len(found) == 1 else None
    return own


def _mkdocs_chain(path: Path, text: str) -> tuple[list[str], bool]:
    """The texts of ``path`` and the configs it INHERITs (child first); False: a link broke.

    A parent that is missing, unreadable, not YAML, a loop or more than ``_MAX_INHERIT`` deep
    breaks the chain.
    """
    texts = [text]
    seen = {path.resolve()}
    current = path
    while "INHERIT" in (own := _mkdocs_own(texts[-1])):
        parent = own["INHERIT"]
        # Only another YAML config is read: `INHERIT: /etc/passwd` reads nothing.
        nxt = current.parent / parent if parent and _YAML.search(parent) else None
        if nxt is None or nxt.resolve() in seen or len(texts) > _MAX_INHERIT:
            return texts, False
        body = _read(nxt)
        if body is None:
            return texts, False
        texts.append(body)
        seen.add(nxt.resolve())
        current = nxt
    return texts, True


def _mkdocs_keys(texts: Sequence[str], whole: bool) -> dict[str, str | None]:
    """The keys merged along the chain as MkDocs merges them (the child wins).

    ``INHERIT`` is ``""`` when the chain was read whole, else None.
    """
    keys: dict[str, str | None] = {}
    for body in reversed(texts):
        keys.update(_mkdocs_own(body))
    keys["INHERIT"] = "" if whole else None
    return keys


#: Material's blog plugin options that move its posts' URLs away from the defaults scidx knows.
_BLOG_RULES = (
    "post_dir",
    "post_url_format",
    "post_url_date_format",
    "post_slugify",
    "post_slugify_separator",
    "draft",
    "draft_if_future_date",
    "enabled",
)
_PLUGINS = re.compile(r"(?m)^plugins[ \t]*:[ \t]*(?:#.*)?\n((?:(?:[ \t]+.*|-.*|[ \t]*)(?:\n|$))*)")
_BLOG_ITEM = re.compile(r"^([ \t]*)(?:-[ \t]*)?(?:material/)?blog[ \t]*:?[ \t]*(?:#.*)?$")
_OPTION = re.compile(r"^[ \t]+(\w+)[ \t]*:[ \t]*(.*?)[ \t]*(?:#.*)?$")


def _mkdocs_blog(texts: Sequence[str]) -> tuple[str, bool] | None:
    """Material's blog plugin in the nearest ``plugins:`` of the chain: ``(blog_dir, known)``.

    ``known`` is False when an option changes where posts are published (or ``blog_dir`` is not
    a plain folder); None: no blog plugin.
    """
    for body in texts:
        block = _PLUGINS.search(body)
        if block is None:
            continue
        lines = block.group(1).split("\n")
        for i, line in enumerate(lines):
            item = _BLOG_ITEM.match(line)
            if item is None:
                continue
            indent = len(item.group(1))
            found: dict[str, str] = {}
            for rest in lines[i + 1 :]:
                if rest.strip() and len(rest) - len(rest.lstrip()) <= indent:
                    break
                option = _OPTION.match(rest)
                if option is not None:
                    found[option.group(1)] = option.group(2).strip("'\"")
            blog_dir = found.get("blog_dir", "blog").strip("/")
            plain = re.fullmatch(r"[\w\-.]+(?:/[\w\-.]+)*", blog_dir) is not None
            return blog_dir, plain and not set(found) & set(_BLOG_RULES)
        return None
    return None


def _mkdocs(path: Path, text: str, root: Path) -> Site:
    texts, whole = _mkdocs_chain(path, text)
    keys = _mkdocs_keys(texts, whole)
    # docs_dir is relative to the config MkDocs is run with (the child), whoever sets it.
    docs = _relative(path.parent / (keys.get("docs_dir") or "docs"), root)
    site = Site("mkdocs", _rel(path, root), docs)
    if keys.get("INHERIT") is None:
        return _note(site, f"{path.name} INHERITs a config that cannot be read")
    blog = _mkdocs_blog(texts)
    if blog is not None:
        # Posts are published at dates and slugs, not at their paths: stored per source.
        site = replace(site, pages="mkdocs", blog_dir=blog[0], blog_known=blog[1])
    site_url = keys.get("site_url")
    directory = (keys.get("use_directory_urls") or "true").lower() not in ("false", "no", "off")
    if not site_url or not re.match(r"https?://", site_url):
        return _note(site, f"{path.name} has no site_url")
    page = "{page}" if directory else "{page}.html"
    return _with_template(site, _join(site_url) + page + "#{anchor}")


def _mkdocs_choice(configs: Sequence[Path], root: Path, include: Sequence[str]) -> Site | None:
    """The site of a split MkDocs config (several ``mkdocs*.yml`` at one level).

    The one config no other INHERITs is the one built; with several such, the one whose docs
    folder holds the included files; several that disagree derive nothing.
    """
    texts: dict[Path, str | None] = {p: _read(p) for p in configs}
    inherited: set[Path] = set()
    for p, text in texts.items():
        parent = _mkdocs_own(text).get("INHERIT") if text is not None else None
        if parent:
            inherited.add((p.parent / parent).resolve())
    leaves = [p for p in configs if p.resolve() not in inherited and texts[p] is not None]
    sites = [_mkdocs(p, texts[p] or "", root) for p in leaves]
    if not sites:
        return None
    distinct = {(s.docs_dir, s.template, s.note) for s in sites}
    if len(distinct) == 1:
        return sites[0]
    holding = [s for s in sites if _holds_inputs(s.docs_dir, include)]
    if len(holding) == 1:
        return holding[0]
    names = ", ".join(s.config for s in sites)
    return _note(
        replace(sites[0], template=None),
        f"the MkDocs configs {names} publish different sites; set urlTemplate, or build "
        "with the MkDocs plugin",
    )


def _holds_inputs(docs_dir: str | None, include: Sequence[str]) -> bool:
    """Whether some ``include`` glob's fixed folder is inside ``docs_dir``, or covers it."""
    if docs_dir is None:
        return False
    if not include:
        return True
    for glob in include:
        parts: list[str] = []
        for part in glob.split("/")[:-1]:
            if any(c in part for c in "*?["):
                break
            parts.append(part)
        prefix = "/".join(parts)
        if not docs_dir or not prefix:
            return True
        if (prefix + "/").startswith(docs_dir + "/") or (docs_dir + "/").startswith(prefix + "/"):
            return True
    return False


def _docusaurus(path: Path, text: str, root: Path) -> Site:
    indent = _indent_of(text, "baseUrl")
    _, base = _js_value(text, "baseUrl", indent) if indent is not None else (False, None)
    _, url = _js_value(text, "url", indent) if indent is not None else (False, None)
    slash = re.findall(rf"(?m)^{re.escape(indent or '')}trailingSlash\s*:\s*(\w+)", text)
    trailing = {"true": True, "false": False}.get(slash[0]) if len(slash) == 1 else None
    docs_block = _block(text, "docs")
    route: str | None = "docs"
    folder: str | None = "docs"
    if docs_block is not None:
        present, route = _js_value(docs_block, "routeBasePath")
        route = route if present else "docs"
        present, folder = _js_value(docs_block, "path")
        folder = folder if present else "docs"
    docs = _relative(path.parent / folder, root) if folder is not None else None
    site = Site("docusaurus", _rel(path, root), docs, pages="docusaurus", trailing_slash=trailing)
    if folder is None:
        return _note(site, "the docs `path` is not a plain string")
    if base is None or route is None:
        return _note(site, "`baseUrl` or the docs `routeBasePath` is not a plain string")
    versions = path.parent / "versions.json"
    if versions.is_file():
        try:
            listed = json.loads(_read(versions) or "[]")
        except ValueError:
            listed = None
        if listed:
            return _note(site, "a versioned site: which version the docs folder is is not certain")
    elif "versions.json" in text:
        return _note(site, "the config reads versions.json, which is missing")
    prefix = url if url and re.match(r"https?://", url) else ""
    return _with_template(site, _join(prefix, base, route) + "{path}#{anchor}")


def _block(text: str, key: str) -> str | None:
    """The ``{...}`` after the first ``key: {`` (braces counted; strings are not parsed)."""
    start = re.search(rf"\b{key}\s*:\s*\{{", text)
    if start is None:
        return None
    depth = 0
    for i in range(start.end() - 1, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start.end() : i]
    return None


def _vitepress(path: Path, text: str, root: Path) -> Site:
    project = path.parent.parent  # the folder holding .vitepress/
    indent = _indent_of(text, "cleanUrls") or _indent_of(text, "title")
    present, src_dir = _js_value(text, "srcDir", indent) if indent is not None else (False, None)
    docs = _relative(project / src_dir, root) if src_dir is not None else None
    if not present:
        docs = _relative(project, root)
    clean = re.findall(r"(?m)^[ \t]*cleanUrls\s*:\s*(\w+)", text)
    rewrites = _rewrites(text)
    site = Site(
        "vitepress",
        _rel(path, root),
        docs,
        pages="vitepress",
        rewrites=rewrites or (),
    )
    if rewrites is None:
        return _note(site, "its `rewrites` are not all of the form 'a/:rest*': 'b/:rest*'")
    if len(clean) > 1 or (clean and clean[0] not in ("true", "false")):
        return _note(site, "`cleanUrls` is not a plain true or false")
    base_present, base = _js_value(text, "base", indent) if indent else (False, None)
    if base_present and base is None:
        return _note(site, "`base` is not a plain string")
    host = _sitemap_host(text)
    page = "{path}" if clean and clean[0] == "true" else "{page}.html"
    return _with_template(site, _join(host or "", base or "/") + page + "#{anchor}")


def _sitemap_host(text: str) -> str | None:
    block = _block(text, "sitemap")
    if block is None:
        return None
    present, host = _js_value(block, "hostname")
    if present and host is None:
        name = re.search(r"(?m)^[ \t]*hostname\s*:\s*([A-Za-z_$][\w$]*)\s*,?\s*$", block)
        if name is not None:
            bound = re.findall(rf"(?m)^\s*const\s+{re.escape(name.group(1))}\s*=\s*(.*)$", text)
            if len(bound) == 1:
                host = _literal(re.match(rf"{_STR}\s*;?\s*$", bound[0]))
    return host if host and re.match(r"https?://", host) else None


def _rewrites(text: str) -> tuple[tuple[str, str], ...] | None:
    """VitePress ``rewrites`` of the prefix form; None when some entry is of another form."""
    block = _block(text, "rewrites")
    if block is None:
        return ()
    out: list[tuple[str, str]] = []
    for entry in (e.strip() for e in block.split(",")):
        if not entry:
            continue
        pair = re.fullmatch(
            r"""['"]([\w\-./]*):rest\*['"]\s*:\s*['"]([\w\-./]*):rest\*['"]""", entry
        )
        if pair is None:
            return None
        out.append((pair.group(1), pair.group(2)))
    return tuple(out)


def _starlight(path: Path, text: str, root: Path) -> Site:
    docs = _relative(path.parent / "src" / "content" / "docs", root)
    site = Site("starlight", _rel(path, root), docs, pages="starlight")
    present, base = _js_value(text, "base")
    if present and base is None:
        return _note(site, "`base` is not a plain string")
    slash = re.findall(r"""(?m)^[ \t]*trailingSlash\s*:\s*['"](\w+)['"]""", text)
    _, url = _js_value(text, "site")
    host = url if url and re.match(r"https?://", url) else ""
    page = "{path}" if slash == ["never"] else "{page}"
    return _with_template(site, _join(host, base or "/") + page + "#{anchor}")


def _myst(path: Path, text: str, root: Path) -> Site:
    site = Site("myst", _rel(path, root), _relative(path.parent, root))
    found = re.findall(r"""(?m)^html_baseurl\s*=\s*(?:'([^'\\\n]*)'|"([^"\\\n]*)")\s*$""", text)
    base = next((a or b for a, b in found), None) if len(found) == 1 else None
    if not base or not re.match(r"https?://", base):
        return _note(site, "conf.py sets no plain html_baseurl")
    return _with_template(site, _join(base) + "{page}.html#{anchor}")


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _note(site: Site, note: str) -> Site:
    return replace(site, note=note)


def _with_template(site: Site, template: str) -> Site:
    checked = _checked(template)
    if checked is None:
        return _note(site, "the URL it gives is not a valid urlTemplate")
    return replace(site, template=checked)


_READERS = {
    "mkdocs": _mkdocs,
    "docusaurus": _docusaurus,
    "vitepress": _vitepress,
    "starlight": _starlight,
    "myst": _myst,
}


def derive_site(
    generator: str,
    root: Path,
    configs: Sequence[Path] | None = None,
    include: Sequence[str] = (),
) -> Site | None:
    """What ``generator``'s config near ``root`` says about published URLs (None: no config).

    Args:
        generator: The detected or configured generator.
        root: The ``staticcorpus.json`` folder (absolute, resolved).
        configs: The generator's config files detection found (None: look for them).
        include: The ``include`` globs: with a split MkDocs config, the config whose docs
            folder holds them is the one built; a docs folder holding none of them derives
            no URLs.
    """
    reader = _READERS.get(generator)
    if reader is None:
        return None
    if configs is None:
        found = find_generator_config(generator, root)
        configs = [found] if found is not None else []
    configs = [p for p in configs if p.is_file()]
    if not configs:
        return None
    if generator == "mkdocs" and len(configs) > 1:
        site = _mkdocs_choice(configs, root, include)
    else:
        text = _read(configs[0])
        site = reader(configs[0], text, root) if text is not None else None
    if site is None or site.template is None or site.docs_dir is None:
        return site
    if not (root / site.docs_dir).is_dir():
        return _note(
            replace(site, template=None), f"its docs folder {site.docs_dir}/ does not exist"
        )
    if not _holds_inputs(site.docs_dir, include):
        return _note(
            replace(site, template=None),
            f"the included files are not in its docs folder {site.docs_dir or '.'}/",
        )
    return site


def describe_urls(site: Site | None, url_template: str | None, generator: str | None = None) -> str:
    """One line for the pack summary: the URL template used and where it came from, or why none.

    Args:
        site: What the generator's config said (None: no config read).
        url_template: The template the index uses.
        generator: The generator the pack reads the Markdown as (names it when no config
            was read).
    """
    if site is None:
        if url_template:
            return f"{url_template} (from urlTemplate)"
        if generator is None:
            return ""
        if generator in _READERS:
            why = f"no {generator} config was found to derive them from"
        elif generator in ("github", "commonmark"):
            why = "no generator config was found to derive them from"
        else:
            why = f"scidx does not read {generator}'s config"
        return f"none: {why}; set urlTemplate in staticcorpus.json"
    pages = f"; page paths by {site.pages}'s rules" if site.pages else ""
    if site.derived:
        return f"{url_template} (derived from {site.config}{pages})"
    if url_template:
        return f"{url_template} (from urlTemplate{pages})"
    why = site.note or "its docs folder is not inside the config's folder"
    return f"none: {why} ({site.config}); set urlTemplate in staticcorpus.json"
