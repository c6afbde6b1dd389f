"""URL templates (``urlTemplate``): validation, parsing and rendering of ``source#anchor`` links.

The template comes from the index file, so it is parsed strictly, never handed to ``str.format``.
"""

from __future__ import annotations

import re
import string

__all__ = [
    "URL_PLACEHOLDERS",
    "parse_url_template",
    "render_url",
    "url_parts",
    "url_template_problem",
]


def render_url(template: str | None, source: str, anchor: str) -> str | None:
    """Render a URL template; see :func:`url_parts` for the placeholders."""
    if not template:
        return None
    pieces = parse_url_template(template if anchor else template.replace("#{anchor}", ""))
    if pieces is None:
        return None
    values = {"anchor": anchor, **url_parts(source)}
    return "".join(literal + (values[name] if name else "") for literal, name in pieces)


URL_PLACEHOLDERS = ("source", "path", "page", "anchor")


def parse_url_template(template: str) -> list[tuple[str, str]] | None:
    """Split a ``urlTemplate`` into ``(literal, placeholder)`` pairs; None if it is not valid.

    Only plain ``{source}``, ``{path}``, ``{page}`` and ``{anchor}`` are placeholders (``{{``
    and ``}}`` are literal braces). The template comes from the index file, so it is never
    handed to ``str.format``: no attribute access, conversions or format specs.
    """
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None
    pieces: list[tuple[str, str]] = []
    for literal, name, spec, conversion in parsed:
        if name is not None and (name not in URL_PLACEHOLDERS or spec or conversion):
            return None
        pieces.append((literal, name or ""))
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


def url_template_problem(template: str) -> str:
    """Why ``template`` is not a usable ``urlTemplate`` (a message fragment), or "" if it is."""
    """Explain why ``template`` is not a usable URL template, or return ``""``."""
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
    if not {"source", "path", "page"} & set(names):
        return (
            "it has no {path}, {page} or {source} placeholder, so every hit would get the same URL"
        )
    return ""
