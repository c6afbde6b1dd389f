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
from urllib.parse import quote

from scidx.index.safety import MAX_URL_PLACEHOLDERS, MAX_URL_TEMPLATE_CHARS

__all__ = [
    "URL_PLACEHOLDERS",
    "URL_SCHEMES",
    "parse_url_template",
    "render_url",
    "url_parts",
    "url_parts_encoded",
    "url_template_problem",
]

URL_SCHEMES = ("http", "https")
"""The only schemes a URL template may start with; otherwise it must be relative."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# Controls and whitespace: browsers drop or normalise them ("java\tscript:"), terminals obey them.
_BAD_CHARS = re.compile(r"[\x00-\x20\x7f-\x9f\u2028\u2029]")


def render_url(template: str | None, source: str, anchor: str) -> str | None:
    """Render a URL template; see :func:`url_parts` for the placeholders.

    Placeholder values are percent-encoded. Returns None without a template, or for a template
    that is not valid (:func:`url_template_problem`), or whose result is not an http(s) or
    relative URL.
    """
    if not template:
        return None
    pieces = parse_url_template(template if anchor else template.replace("#{anchor}", ""))
    if pieces is None:
        return None
    values = {"anchor": quote(anchor, safe=""), **url_parts_encoded(source)}
    url = "".join(literal + (values[name] if name else "") for literal, name in pieces)
    return url if _scheme_ok(url) else None


URL_PLACEHOLDERS = ("source", "path", "page", "anchor")


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


# Pages that site generators serve at their folder's URL (MkDocs, Hugo, GitHub, Docusaurus).
_FOLDER_PAGES = frozenset({"index", "_index", "readme"})


def url_parts(source: str) -> dict[str, str]:
    """The ``urlTemplate`` placeholders of a source path.

    * ``{source}``: the path as packed, e.g. ``guide/install.md``;
    * ``{path}``: without the ``.md``/``.markdown``/``.mdx`` extension, ``guide/install``;
    * ``{page}``: the folder-style URL path site generators use, ``guide/install/``; an
      ``index.md``, ``_index.md`` or ``README.md`` is its folder (``guide/index.md`` →
      ``guide/``, a top-level ``index.md`` → ``""``).

    Example:
        >>> url_parts("guide/index.md")["page"]
        'guide/'
    """
    path = re.sub(r"\.(md|markdown|mdx)$", "", source, flags=re.IGNORECASE)
    folder, _, name = path.rpartition("/")
    if name.lower() in _FOLDER_PAGES:
        page = f"{folder}/" if folder else ""
    else:
        page = f"{path}/"
    return {"source": source, "path": path, "page": page}


def url_parts_encoded(source: str) -> dict[str, str]:
    """:func:`url_parts` with each value percent-encoded for a URL path (``/`` kept)."""
    return {k: quote(v, safe="/") for k, v in url_parts(source).items()}


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
