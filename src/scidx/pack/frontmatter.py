"""Source normalisation and front matter: YAML/TOML scalar fields as read-only :class:`Metadata`.

Front matter is recognised only on the very first line and only when it is closed (see
:func:`parse_front_matter`); :func:`normalize_source` defines the text every chunk span refers to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

__all__ = ["Metadata", "normalize_source", "parse_front_matter"]


class Metadata(Mapping[str, str]):
    """A read-only, hashable ``str → str`` mapping (front-matter scalars), keys sorted.

    Example:
        >>> m = Metadata({"title": "Install", "weight": "10"})
        >>> dict(m), hash(m) == hash(Metadata({"weight": "10", "title": "Install"}))
        ({'title': 'Install', 'weight': '10'}, True)
    """

    __slots__ = ("_data",)

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        """Copy ``items`` (a mapping or key/value pairs); the copy is sorted by key.

        Args:
            items: the fields; keys and values must be strings.
        """
        pairs = items.items() if isinstance(items, Mapping) else items
        self._data: dict[str, str] = dict(sorted(pairs))

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(tuple(self._data.items()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return self._data == dict(other.items())

    def __repr__(self) -> str:
        return f"Metadata({self._data!r})"


def normalize_source(text: str) -> str:
    """Return ``text`` as the chunker sees it: leading BOM removed, CRLF/CR turned into LF.

    All chunk spans are offsets into this string.

    Args:
        text: decoded file content.

    Returns:
        The normalised text (``text`` itself when nothing needed changing).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


# Linear time: the bare key runs greedily to the first ":" (it cannot contain one) and its
# trailing blanks are stripped afterwards. The lazy form ``[^:]*?\s*:`` took O(n^2) on a line
# like "a<200k spaces>b:" (31 s).
_YAML_KEY = re.compile(r"""("[^"]*"\s*|'[^']*'\s*|[^\s#'"\-?:][^:]*):(?:[ \t]+(.*))?$""")
_TOML_KEY = re.compile(r"""("[^"]*"|'[^']*'|[A-Za-z0-9_.\-]+)\s*=\s*(.*)$""")
_DQ_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r", "0": "\0"}
_DQ_ESCAPE = re.compile(r"\\(.)")


def _unquote_double(body: str) -> str:
    return _DQ_ESCAPE.sub(lambda m: _DQ_ESCAPES.get(m.group(1), m.group(0)), body)


def _scalar(raw: str, single_quote_doubling: bool) -> str | None:
    """Interpret one inline scalar value; ``None`` if it is not a scalar (list, map, ...)."""
    value = raw.strip()
    if not value:
        return None
    first = value[0]
    if first == '"':
        end = value.find('"', 1)
        while end != -1 and value[end - 1] == "\\" and not value[: end - 1].endswith("\\"):
            end = value.find('"', end + 1)
        return _unquote_double(value[1:end] if end != -1 else value[1:])
    if first == "'":
        if single_quote_doubling:
            match = re.match(r"'((?:[^']|'')*)'", value)
            inner = match.group(1) if match else value[1:]
            return inner.replace("''", "'")
        end = value.find("'", 1)
        return value[1:end] if end != -1 else value[1:]
    if first in "[{":
        return None
    # An unquoted value ends at a comment introduced by whitespace + "#".
    hash_at = value.find(" #")
    if hash_at != -1:
        value = value[:hash_at].rstrip()
    return value or None


def _yaml_block_scalar(style: str, lines: list[str]) -> str:
    texts = [line.strip() for line in lines]
    while texts and not texts[-1]:
        texts.pop()
    if style.startswith("|"):
        return "\n".join(texts)
    # Folded: single newlines become spaces, blank lines become newlines.
    paragraphs: list[str] = []
    current: list[str] = []
    for line in texts:
        if line:
            current.append(line)
        else:
            paragraphs.append(" ".join(current))
            current = []
    paragraphs.append(" ".join(current))
    return "\n".join(paragraphs).strip()


def _parse_yaml_scalars(lines: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        # Indented lines belong to nested structures, "-" starts a sequence, "#" a comment.
        if not line or line[0] in " \t#-":
            continue
        match = _YAML_KEY.match(line.rstrip())
        if match is None:
            continue
        key = match.group(1).rstrip()
        if key[0] in "\"'":
            key = key[1:-1]
        raw = (match.group(2) or "").strip()
        if raw[:1] in ("|", ">"):
            block: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
                block.append(lines[i])
                i += 1
            fields[key] = _yaml_block_scalar(raw, block)
            continue
        value = _scalar(raw, single_quote_doubling=True)
        if value is not None:
            fields[key] = value
    return fields


def _parse_toml_scalars(lines: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            break  # keys after a [table] header are not top-level
        match = _TOML_KEY.match(stripped)
        if match is None:
            continue
        key = match.group(1)
        if key[0] in "\"'":
            key = key[1:-1]
        raw = match.group(2)
        if raw.startswith(('"""', "'''")):
            continue  # multi-line strings are not worth a TOML parser here
        value = _scalar(raw, single_quote_doubling=False)
        if value is not None:
            fields[key] = value
    return fields


def parse_front_matter(text: str) -> tuple[int, dict[str, str]]:
    """Find YAML (``---``) or TOML (``+++``) front matter at the very start of ``text``.

    Only top-level scalar fields are kept (strings, numbers, booleans, dates, as their literal
    text; quoted strings unquoted; YAML ``|``/``>`` block scalars joined). Lists and mappings are
    skipped. This is deliberately not a full YAML/TOML parser and never raises.

    Args:
        text: normalised text (see :func:`normalize_source`).

    Returns:
        ``(end, fields)``: ``end`` is the offset just past the closing delimiter line (``0``
        when there is no closed front matter), ``fields`` the scalar fields.
    """
    if text.startswith("---"):
        closers: tuple[str, ...] = ("---", "...")
    elif text.startswith("+++"):
        closers = ("+++",)
    else:
        return 0, {}
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].rstrip() != text[:3]:
        return 0, {}
    pos = first_nl + 1
    body: list[str] = []
    while pos <= len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl == -1 else nl
        line = text[pos:line_end]
        if line.rstrip() in closers:
            end = len(text) if nl == -1 else nl + 1
            parser = _parse_toml_scalars if closers == ("+++",) else _parse_yaml_scalars
            return end, _without_nul(parser(body))
        body.append(line)
        if nl == -1:
            break
        pos = nl + 1
    return 0, {}


def _without_nul(fields: dict[str, str]) -> dict[str, str]:
    """NUL (written raw or as a ``"\\0"`` escape) becomes U+FFFD, as in bodies.

    A NUL in a title or metadata value is no text anyone means, and databases refuse it
    (PostgreSQL's text type cannot hold one), so it never reaches the index.
    """
    if not any("\0" in k or "\0" in v for k, v in fields.items()):
        return fields
    return {k.replace("\0", "\ufffd"): v.replace("\0", "\ufffd") for k, v in fields.items()}
