"""URL templates (``urlTemplate``): validation, parsing and rendering of ``source#anchor`` links.

The template comes from the index file, so it is parsed strictly, never handed to ``str.format``.
A hit's URL is built so that a hostile index or input cannot turn it into something else:

* the template is at most :data:`~scidx.index.safety.MAX_URL_TEMPLATE_CHARS` characters with at
  most :data:`~scidx.index.safety.MAX_URL_PLACEHOLDERS` placeholders and no control characters or
  whitespace (so a URL is never much longer than the template plus its own source and anchor);
* it is an ``http://`` or ``https://`` URL or a relative one: any other scheme (``javascript:``,
  ``data:``, ``file:``) is refused;
* placeholder values are percent-encoded (``/`` kept in paths), so a source named
  ``javascript:alert(1)`` renders as the harmless relative ``javascript%3Aalert%281%29``.
"""

from __future__ import annotations

import re
import string

from scidx.index.safety import MAX_URL_PLACEHOLDERS, MAX_URL_TEMPLATE_CHARS

__all__ = [
    "URL_PLACEHOLDERS",
    "UNPUBLISHED",
    "URL_SCHEMES",
    "UrlRenderer",
    "page_problem",
    "parse_url_template",
    "render_url",
    "source_root_problem",
    "url_parts",
    "url_parts_encoded",
    "url_template_problem",
]

URL_SCHEMES = ("http", "https")
"""The only schemes a URL template may start with; otherwise it must be relative."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# Controls and whitespace: browsers drop or normalise them ("java\tscript:"), terminals obey them.
_BAD_CHARS = re.compile(r"[\x00-\x20\x7f-\x9f\u2028\u2029]")


def render_url(
    template: str | None,
    source: str,
    anchor: str,
    source_root: str | None = None,
    page: str | None = None,
) -> str | None:
    """Render a URL template; see :func:`url_parts` for the placeholders.

    Placeholder values are percent-encoded. Returns None without a template, or for a template
    that is not valid (:func:`url_template_problem`), or whose result is not an http(s) or
    relative URL, or for a source outside ``source_root``.

    Args:
        template: The ``urlTemplate`` (``None`` or ``""``: no URL).
        source: The chunk's source path.
        anchor: The heading anchor (``""`` drops a ``#{anchor}`` from the template).
        source_root: The ``sourceRoot`` the placeholders are relative to.
        page: The source's published page path stored at pack time (``source.page``), or
            ``None`` to derive it from ``source`` (:func:`url_parts`).

    Returns:
        The URL, or ``None``.

    Example:
        >>> render_url("https://x.org/book/{page}.html#{anchor}", "src/ch01.md", "a", "src")
        'https://x.org/book/ch01.html#a'
    """
    if not template:
        return None
    pieces = parse_url_template(template if anchor else template.replace("#{anchor}", ""))
    if pieces is None:
        return None
    parts = url_parts_encoded(source, source_root, page)
    if parts is None:
        return None
    values = {"anchor": _quote(anchor, ""), **parts}
    out: list[str] = []
    for i, (literal, name) in enumerate(pieces):
        out.append(literal)
        if name == "page" and i + 1 < len(pieces) and pieces[i + 1][0].startswith("."):
            # "{page}.html": the page as a file (mdBook, Sphinx), not as a folder.
            out.append(values["page_file"])
        elif name:
            out.append(values[name])
    url = "".join(out)
    return url if _scheme_ok(url) else None


URL_PLACEHOLDERS = ("source", "path", "page", "anchor")


class UrlRenderer:
    """:func:`render_url` for one template, parsed once, with each source's URL pre-rendered.

    A results page renders a URL per hit; parsing the template and percent-encoding the path
    of each hit again costs more than ranking. For each source the template is rendered once
    around its ``{anchor}`` placeholders, so a hit's URL is one ``join`` of its quoted anchor.
    ``render(source, anchor)`` returns exactly what
    ``render_url(template, source, anchor, source_root)`` does.

    Args:
        template: The ``urlTemplate`` (``None`` or ``""``: every URL is ``None``).
        source_root: The ``sourceRoot`` the placeholders are relative to.
    """

    #: The most sources (and anchors) whose rendered pieces are remembered.
    MEMO = 1 << 14

    def __init__(self, template: str | None, source_root: str | None = None) -> None:
        self._root = source_root
        self._with = parse_url_template(template) if template else None
        self._without = parse_url_template(template.replace("#{anchor}", "")) if template else None
        # source -> (segments around {anchor} with an anchor, the URL without one)
        self._sources: dict[str, tuple[list[str] | None, str | None]] = {}
        self._anchors: dict[str, str] = {}

    def render(self, source: str, anchor: str, page: str | None = None) -> str | None:
        """The URL of ``anchor`` in ``source``, or ``None`` (as :func:`render_url`).

        ``page`` is the source's stored page path; an index gives each source one, so the
        memo stays keyed by source.
        """
        memo = self._sources
        made = memo.get(source)
        if made is None:
            if len(memo) >= self.MEMO:
                memo.clear()  # bounded; a race only renders a source twice
            made = memo[source] = self._source(source, page)
        if not anchor:
            return made[1]
        segments = made[0]
        if segments is None:
            return None
        anchors = self._anchors
        quoted = anchors.get(anchor)
        if quoted is None:
            if len(anchors) >= self.MEMO:
                anchors.clear()
            quoted = anchors[anchor] = _quote(anchor, "")
        url = quoted.join(segments)
        return url if _scheme_ok(url) else None

    def _source(self, source: str, page: str | None) -> tuple[list[str] | None, str | None]:
        parts = url_parts_encoded(source, self._root, page)
        if parts is None:
            return None, None
        segments = _segments(self._with, parts) if self._with is not None else None
        bare = _segments(self._without, parts) if self._without is not None else None
        url = "".join(bare) if bare is not None else None  # no {anchor} left to fill ("")
        return segments, url if url is None or _scheme_ok(url) else None


def _segments(pieces: list[tuple[str, str]], parts: dict[str, str]) -> list[str]:
    """The template filled with ``parts``, split where ``{anchor}`` goes (render_url's rules)."""
    segments: list[str] = []
    out: list[str] = []
    for i, (literal, name) in enumerate(pieces):
        out.append(literal)
        if name == "anchor":
            segments.append("".join(out))
            out = []
        elif name == "page" and i + 1 < len(pieces) and pieces[i + 1][0].startswith("."):
            out.append(parts["page_file"])  # "{page}.html": the page as a file
        elif name:
            out.append(parts[name])
    segments.append("".join(out))
    return segments


def _scheme_ok(url: str) -> bool:
    match = _SCHEME.match(url)
    return match is None or match.group(1).lower() in URL_SCHEMES


def parse_url_template(template: str) -> list[tuple[str, str]] | None:
    """Split a ``urlTemplate`` into ``(literal, placeholder)`` pairs; None if it is not valid.

    Only plain ``{source}``, ``{path}``, ``{page}`` and ``{anchor}`` are placeholders (``{{``
    and ``}}`` are literal braces). The template comes from the index file, so it is never
    handed to ``str.format``: no attribute access, conversions or format specs. The size,
    character and scheme rules of the module docstring apply.
    """
    if (
        not isinstance(template, str)
        or len(template) > MAX_URL_TEMPLATE_CHARS
        or _BAD_CHARS.search(template)
    ):
        return None
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None
    pieces: list[tuple[str, str]] = []
    for literal, name, spec, conversion in parsed:
        if name is not None and (name not in URL_PLACEHOLDERS or spec or conversion):
            return None
        pieces.append((literal, name or ""))
    if sum(1 for _, name in pieces if name) > MAX_URL_PLACEHOLDERS:
        return None
    if not _scheme_ok(pieces[0][0] if pieces else ""):
        return None
    return pieces


# Pages that site generators serve at their folder's URL (MkDocs, Hugo, GitHub, Docusaurus), or
# as the folder's index.html (mdBook turns README.md into index.html).
_FOLDER_PAGES = frozenset({"index", "_index", "readme"})


def source_root_problem(root: str) -> str:
    """Why ``root`` is not a usable ``sourceRoot`` (a message fragment), or ``""`` if it is."""
    if "\\" in root:
        return 'contains "\\"; use "/" as the path separator'
    if root.startswith("/") or re.match(r"^[A-Za-z]:", root):
        return "is absolute; write it relative to the folder of the config file"
    stripped = root[:-1] if root.endswith("/") else root
    if stripped != "." and any(p in ("", ".", "..") for p in stripped.split("/")):
        return 'must be a plain folder path like "docs/src" (no "..", "." or "//")'
    return ""


def url_parts(
    source: str, source_root: str | None = None, page: str | None = None
) -> dict[str, str] | None:
    """The ``urlTemplate`` placeholders of a source path, relative to ``source_root``.

    * ``{source}``: the path relative to ``source_root``, e.g. ``guide/install.md``;
    * ``{path}``: without the ``.md``/``.markdown``/``.mdx`` extension, ``guide/install``;
    * ``{page}``: the URL path site generators publish. As a folder (``guide/install/``; an
      ``index.md``, ``_index.md`` or ``README.md`` is its folder, ``guide/`` or ``""`` at the
      top) — except when the template continues with a suffix such as ``.html``: then the page
      is a file (``guide/install``; an index or README page is ``guide/index``), the
      ``page_file`` value here.

    With a ``page`` (the published page path the packer stored for the source, e.g. ``intro``
    or ``guide/`` for a Docusaurus page: :func:`page_problem` must have passed it; None for
    :data:`UNPUBLISHED`), ``{path}``
    is that page path as published, ``{page}`` the same as a folder (a ``/`` added unless it
    ends with one or is empty) and the file form is the page path, ``index`` added to a
    folder.

    Args:
        source: The source path as packed (relative to the config root).
        source_root: The folder the site is built from (``sourceRoot``); ``None``/``""`` is the
            config root.
        page: The source's stored page path (``source.page``), or ``None``.

    Returns:
        The values, or ``None`` when ``source`` is not inside ``source_root``.

    Example:
        >>> url_parts("docs/guide/index.md", "docs")["page"]
        'guide/'
    """
    root = (source_root or "").strip("/")
    if root and root != ".":
        if not source.startswith(root + "/"):
            return None
        source = source[len(root) + 1 :]
    if page == UNPUBLISHED:
        return None
    if page is not None:
        folder_form = page == "" or page.endswith("/")
        return {
            "source": source,
            "path": page,
            "page": page if folder_form else f"{page}/",
            "page_file": f"{page}index" if folder_form else page,
        }
    path = re.sub(r"\.(md|markdown|mdx)$", "", source, flags=re.IGNORECASE)
    folder, _, name = path.rpartition("/")
    if name.lower() in _FOLDER_PAGES:
        page = f"{folder}/" if folder else ""
        page_file = f"{folder}/index" if folder else "index"
    else:
        page = f"{path}/"
        page_file = path
    return {"source": source, "path": path, "page": page, "page_file": page_file}


def url_parts_encoded(
    source: str, source_root: str | None = None, page: str | None = None
) -> dict[str, str] | None:
    """:func:`url_parts` with each value percent-encoded for a URL path (``/`` kept)."""
    parts = url_parts(source, source_root, page)
    return None if parts is None else {k: _quote(v, "/") for k, v in parts.items()}


#: The ``source.page`` row of a source the generator does not publish (a Docusaurus partial
#: ``_x.md``, a draft): it has no URL.
UNPUBLISHED = "\x00"

#: The longest stored page path (``source.page``); a real one is a few dozen characters.
MAX_PAGE_CHARS = 1024
_PAGE_BAD_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\\]")


def page_problem(page: object) -> str:
    """Why ``page`` is not a usable stored page path (a message fragment), or "" if it is.

    A page path is relative to the template's base: at most :data:`MAX_PAGE_CHARS`
    characters, no control characters or ``\\``, no leading ``/`` (``/{path}`` would then
    start ``//host``: another site), and no empty, ``.`` or ``..`` segment; ``""`` is the
    site's top page; :data:`UNPUBLISHED` marks a page that is not published. Its value is
    percent-encoded when rendered, so ``:``, ``?`` and ``#`` cannot make a scheme, query or
    fragment.
    """
    if not isinstance(page, str):
        return f"is {type(page).__name__}, not a string"
    if page == UNPUBLISHED:
        return ""
    if len(page) > MAX_PAGE_CHARS:
        return f"is {len(page)} characters long, over {MAX_PAGE_CHARS}"
    bad = _PAGE_BAD_CHARS.search(page)
    if bad:
        return f"contains {bad.group()!r}"
    if page.startswith("/"):
        return 'starts with "/"'
    body = page[:-1] if page.endswith("/") else page
    if page and any(part in ("", ".", "..") for part in body.split("/")):
        return 'has an empty, "." or ".." segment'
    return ""


def _quote(value: str, safe: str) -> str:
    """``urllib.parse.quote``, imported on first use (it pulls in ipaddress: start-up cost)."""
    from urllib.parse import quote

    return quote(value, safe=safe)


def url_template_problem(template: str) -> str:
    """Why ``template`` is not a usable ``urlTemplate`` (a message fragment), or "" if it is."""
    if len(template) > MAX_URL_TEMPLATE_CHARS:
        return (
            f"it is {len(template)} characters long; a URL template may have at most "
            f"{MAX_URL_TEMPLATE_CHARS}"
        )
    bad = _BAD_CHARS.search(template)
    if bad:
        return (
            f"it contains {bad.group()!r} at position {bad.start()}; write spaces and other "
            "special characters percent-encoded (%20)"
        )
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        return f'{exc}; write "{{{{" or "}}}}" for a literal brace'
    names: list[str] = []
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in URL_PLACEHOLDERS or spec or conversion:
            shown = (
                "{"
                + name
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
                + "}"
            )
            allowed = ", ".join("{" + p + "}" for p in URL_PLACEHOLDERS)
            return f"unknown placeholder {shown}; use only {allowed}"
        names.append(name)
    if len(names) > MAX_URL_PLACEHOLDERS:
        return f"it has {len(names)} placeholders; at most {MAX_URL_PLACEHOLDERS} are allowed"
    first = template.split("{", 1)[0]
    scheme = _SCHEME.match(first)
    if scheme is not None and scheme.group(1).lower() not in URL_SCHEMES:
        return (
            f"its scheme {scheme.group(1)!r} is not allowed; a URL template must start with "
            "http:// or https://, or be relative (e.g. /docs/{page})"
        )
    if not {"source", "path", "page"} & set(names):
        return (
            "it has no {path}, {page} or {source} placeholder, so every hit would get the same URL"
        )
    return ""
