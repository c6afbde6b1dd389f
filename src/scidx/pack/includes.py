"""Includes expanded where they render: pymdownx.snippets, mdBook ``{{#include}}``, MDX partials.

A generator pastes an included file into the page before it renders it, so the included text
(often the real code of an example) is what a reader sees there. :func:`expand_includes` does
the same before chunking:

* **pymdownx.snippets** (generator ``mkdocs``): a ``--8<-- "path"`` line (also inside fenced
  code; ``-8<-`` too) and the block form (a ``--8<--`` line, one path per line, a closing
  ``--8<--`` line). Paths are looked up under the extension's ``base_path`` list (from
  ``mkdocs.yml``'s ``markdown_extensions``; default: the ``mkdocs.yml`` folder), then beside
  the including file. ``path:3:10`` takes lines 3-10, ``path:3`` line 3 to the end, ``path::10``
  lines 1-10, several ranges join with ``,``; ``path:name`` takes the section between
  ``--8<-- [start:name]`` and ``--8<-- [end:name]`` markers, and marker lines are removed. The
  directive's indentation is applied to every included line. ``;--8<--`` is the escaped
  literal (it includes nothing and is left as written).
* **mdBook** (generator ``mdbook``): ``{{#include path}}`` and ``{{#rustdoc_include path}}``
  anywhere on a line, relative to the including file; ``path:2`` is line 2, ``path:2:10``,
  ``path:2:``, ``path::10`` ranges, ``path:name`` the ``ANCHOR: name`` ... ``ANCHOR_END: name``
  part; anchor lines are removed.
* **MDX partials** (generator ``docusaurus``, and every ``.mdx`` file):
  ``import Foo from './_foo.md'`` (``.md``/``.mdx``, relative, or ``@site/`` for the project
  root), then a ``<Foo />`` line outside fenced code becomes the partial's body (its front
  matter removed). Imports of anything else (components) are left alone.

Bounds: includes nest at most :data:`MAX_DEPTH` deep and never in a loop; an included file
larger than :data:`MAX_INCLUDE_BYTES`, or more than :data:`MAX_EXPANDED_BYTES` of included text
in one document, is refused; a path must resolve (symlinks followed) to a regular file inside
the project root, so ``/etc/passwd`` and ``../../`` escapes are refused, never read. A refused or
missing include (or a URL: nothing is downloaded) is *unresolvable*: its directive is dropped
from the text and counted (:attr:`Expanded.unresolved`, the pack summary's ``includes``).

Pure except for reading the included files; deterministic for identical files.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import xxhash

from scidx.pack.chunk import Chunk
from scidx.pack.frontmatter import normalize_source, parse_front_matter

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPANDED_BYTES",
    "MAX_INCLUDE_BYTES",
    "Expanded",
    "IncludeReport",
    "IncludeSettings",
    "expand_includes",
    "include_settings",
    "included_files_changed",
    "map_chunks",
    "snippet_base_paths",
]

#: Includes inside included files, at most this deep (pymdownx and mdBook have no limit; real
#: sites nest two or three).
MAX_DEPTH = 8
#: An included file over this size is refused (a log or a data file, not an example).
MAX_INCLUDE_BYTES = 1 << 20
#: Included text per document, at most; later includes are refused.
MAX_EXPANDED_BYTES = 8 << 20
#: Unresolvable includes listed by name in the pack summary (all are counted).
MAX_EXAMPLES = 20
_MAX_CONFIG_BYTES = 1 << 20  # as scidx.pack.site reads generator configs


@dataclass(frozen=True)
class IncludeSettings:
    """Where includes may come from (picklable: worker processes get a copy).

    Attributes:
        root: The project root (absolute, resolved): no include is read outside it.
        generator: The docs generator; it decides which include syntaxes apply.
        snippet_bases: pymdownx.snippets ``base_path`` folders (absolute).
    """

    root: str
    generator: str
    snippet_bases: tuple[str, ...] = ()


@dataclass
class Expanded:
    """A document with its includes expanded.

    Attributes:
        text: The normalised text with every include replaced by what it renders.
        origin: For each line of ``text``, the 0-based line of the original it comes from, or
            ``None`` when nothing was expanded (the text is the original).
        own: For each line of ``text``, whether it is the original line itself (not included).
        unresolved: Directives dropped because their file could not be included.
        examples: ``"line N: directive (why)"`` for the first :data:`MAX_EXAMPLES` of them.
        resolved: Includes expanded.
        files: The included files read (root-relative path → xxh3-64 of their bytes).
    """

    text: str
    origin: list[int] | None = None
    own: list[bool] = field(default_factory=list)
    unresolved: int = 0
    examples: list[str] = field(default_factory=list)
    resolved: int = 0
    files: dict[str, str] = field(default_factory=dict)


@dataclass
class IncludeReport:
    """What the includes of a whole pack did (the pack summary's ``includes``).

    Attributes:
        resolved: Includes expanded.
        unresolved: Include directives dropped because their file could not be included.
        examples: ``"source line N: directive (why)"`` for the first :data:`MAX_EXAMPLES`.
        files: Every included file read (root-relative path → xxh3-64 of its bytes): the
            sidecar records them, so a changed included file makes the index out of date.
    """

    resolved: int = 0
    unresolved: int = 0
    examples: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)

    def add(self, source: str, expanded: Expanded) -> None:
        """Count one document's includes."""
        self.resolved += expanded.resolved
        self.unresolved += expanded.unresolved
        self.files.update(expanded.files)
        for example in expanded.examples:
            if len(self.examples) < MAX_EXAMPLES:
                self.examples.append(f"{source} {example}")

    def merge(self, other: IncludeReport) -> None:
        """Add another report's counts (a worker job's)."""
        self.resolved += other.resolved
        self.unresolved += other.unresolved
        self.files.update(other.files)
        room = MAX_EXAMPLES - len(self.examples)
        self.examples.extend(other.examples[: max(room, 0)])

    def to_dict(self) -> dict[str, object]:
        """The JSON form (``--json``'s ``includes``)."""
        return {
            "resolved": self.resolved,
            "unresolved": self.unresolved,
            "examples": list(self.examples),
        }


# --- mkdocs.yml: the snippets extension's base_path ------------------------------------------

_EXT_LINE = re.compile(
    r"""^(?P<pad>[ \t]*)(?:-[ \t]+)?['"]?pymdownx\.snippets['"]?[ \t]*:[ \t]*(?:#.*)?$"""
)
_BASE_PATH = re.compile(r"^[ \t]*base_path[ \t]*:[ \t]*(.*?)[ \t]*(?:#.*)?$")
_LIST_ITEM = re.compile(r"^([ \t]*)-[ \t]+(.*?)[ \t]*(?:#.*)?$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def snippet_base_paths(mkdocs_yml: Path, text: str) -> tuple[str, ...]:
    """The ``base_path`` list of ``pymdownx.snippets`` in a ``mkdocs.yml``'s text (absolute).

    Read with a line scan (the file may hold ``!!python/name`` tags a YAML loader refuses):
    ``base_path: x``, ``base_path: [x, y]`` or a block list under it. Paths are relative to the
    ``mkdocs.yml`` folder (where ``mkdocs build`` runs); without the key, that folder itself.
    """
    lines = text.split("\n")
    found: list[str] = []
    for i, line in enumerate(lines):
        match = _EXT_LINE.match(line)
        if match is None:
            continue
        pad = len(match.group("pad"))
        j = i + 1
        # The extension's options: the lines indented deeper than its own line.
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > pad):
            key = _BASE_PATH.match(lines[j])
            if key is not None:
                value = key.group(1)
                if value.startswith("["):
                    found += [v.strip().strip("'\"") for v in value.strip("[]").split(",")]
                elif value:
                    found.append(value.strip("'\""))
                else:
                    k = j + 1
                    while (
                        k < len(lines)
                        and _indent(lines[k]) > pad
                        and (item := _LIST_ITEM.match(lines[k])) is not None
                    ):
                        found.append(item.group(2).strip("'\""))
                        k += 1
            j += 1
        break
    bases = [b for b in found if b] or ["."]
    return tuple(os.path.abspath(mkdocs_yml.parent / b) for b in bases)


def include_settings(root: Path, generator: str) -> IncludeSettings:
    """The include settings of a project: its root and, for MkDocs, the snippets base paths."""
    bases: tuple[str, ...] = ()
    if generator == "mkdocs":
        from scidx.pack.site import find_generator_config

        config = find_generator_config("mkdocs", root)
        text = None
        if config is not None:
            try:
                with config.open("rb") as fh:
                    data = fh.read(_MAX_CONFIG_BYTES + 1)
                if len(data) <= _MAX_CONFIG_BYTES:
                    text = data.decode("utf-8", errors="replace")
            except OSError:
                text = None
        bases = (
            snippet_base_paths(config, text)
            if config is not None and text is not None
            else (str(root),)
        )
    return IncludeSettings(str(root), generator, bases)


# --- the expansion -----------------------------------------------------------------------------

_SNIPPET = re.compile(
    r"""^(?P<space>[ \t]*)(?P<escape>;*)(?P<marker>-+8<-+)[ \t]+"""
    r"""(?P<q>["'])(?P<path>.+?)(?P=q)[ \t]*$"""
)
_SNIPPET_BLOCK = re.compile(r"^(?P<space>[ \t]*)(?P<escape>;*)-+8<-+[ \t]*$")
_SNIPPET_SECTION = re.compile(
    r"-+8<-+[ \t]+\[[ \t]*(?P<type>start|end)[ \t]*:[ \t]*(?P<name>[A-Za-z][-_0-9A-Za-z]*)[ \t]*\]"
)
_SNIPPET_RANGES = re.compile(
    r"^(?P<path>.*?)(?P<ranges>(?::-?[0-9]*){1,2}(?:,-?[0-9]*(?::-?[0-9]*)?)*)$"
)
_SNIPPET_NAME = re.compile(r"^(?P<path>.*?):(?P<name>[A-Za-z][-_0-9A-Za-z]*)$")
_MDBOOK = re.compile(r"\{\{#(?:include|rustdoc_include)[ \t]+(?P<spec>[^}\s]+)[ \t]*\}\}")
_MDBOOK_ANCHOR = re.compile(r"\bANCHOR(?P<end>_END)?:[ \t]*(?P<name>[\w-]+)")
_IMPORT = re.compile(
    r"""^import[ \t]+(?P<name>[A-Z][\w$]*)[ \t]+from[ \t]+"""
    r"""(?P<q>['"])(?P<path>[^'"]+\.mdx?)(?P=q)[ \t]*;?[ \t]*$"""
)
_PARTIAL = re.compile(r"^(?P<space>[ \t]*)<(?P<name>[A-Z][\w$]*)(?:[ \t][^<>]*)?/>[ \t]*$")
_FENCE = re.compile(r"^(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})")


class _Refused(Exception):
    """An include that cannot be read; its message says why (for the pack summary)."""


class _Run:
    """One document's expansion: the settings, the include chain and the running totals."""

    def __init__(self, settings: IncludeSettings) -> None:
        self.settings = settings
        self.root = Path(settings.root)
        self.budget = MAX_EXPANDED_BYTES
        self.unresolved = 0
        self.resolved = 0
        self.examples: list[str] = []
        self.files: dict[str, str] = {}

    def refuse(self, line: int, directive: str, why: str, top: bool = True) -> None:
        self.unresolved += 1
        if len(self.examples) < MAX_EXAMPLES:
            where = f"line {line + 1}" if top else "included"
            self.examples.append(f"{where}: {directive.strip()[:120]} ({why})")

    def find(self, rel: str, folders: list[Path]) -> Path:
        """The file ``rel`` names, under the first folder that has it, inside the root."""
        if re.match(r"^[a-z][a-z0-9+.-]*://", rel, re.IGNORECASE):
            raise _Refused("a URL; nothing is downloaded")
        if os.path.isabs(rel) or rel.startswith("~"):
            raise _Refused("an absolute path; includes are read inside the project only")
        outside = False
        for folder in folders:
            candidate = Path(os.path.realpath(folder / rel))
            try:
                candidate.relative_to(self.root)
            except ValueError:
                outside = True
                continue
            if candidate.is_file():
                return candidate
        if outside:
            raise _Refused("outside the project root")
        raise _Refused("not found")

    def read(self, path: Path, chain: tuple[Path, ...]) -> str:
        if path in chain:
            raise _Refused("an include loop")
        if len(chain) > MAX_DEPTH:
            raise _Refused(f"nested more than {MAX_DEPTH} deep")
        try:
            with path.open("rb") as fh:
                data = fh.read(MAX_INCLUDE_BYTES + 1)
        except OSError as exc:
            raise _Refused(f"unreadable: {exc.strerror or exc}") from None
        if len(data) > MAX_INCLUDE_BYTES:
            raise _Refused(f"larger than {MAX_INCLUDE_BYTES >> 20} MiB")
        if len(data) > self.budget:
            raise _Refused(f"over {MAX_EXPANDED_BYTES >> 20} MiB of included text in one page")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _Refused("not UTF-8 text") from None
        self.budget -= len(data)
        self.files[path.relative_to(self.root).as_posix()] = xxhash.xxh3_64_hexdigest(data)
        return normalize_source(text).replace("\0", "\ufffd")


def _line_ranges(lines: list[str], ranges: str, *, mdbook: bool) -> list[str]:
    """The lines a ``:a:b[,c:d]`` spec selects (1-based, inclusive)."""
    out: list[str] = []
    for part in ranges[1:].split(","):  # one leading ":" (``::10`` is "from 1 to 10")
        bits = part.split(":")
        start = int(bits[0]) if bits[0].lstrip("-").isdigit() else None
        if len(bits) > 1:
            end = int(bits[1]) if bits[1].lstrip("-").isdigit() else None
        else:
            # mdBook `file:2` is line 2 alone; pymdownx `file:2` is line 2 to the end.
            end = start if mdbook else None
        lo = max((start or 1) - 1, 0)
        out.extend(lines[lo:end] if end is None or end > 0 else [])
    return out


def _section(lines: list[str], name: str, *, mdbook: bool) -> list[str] | None:
    """The lines between a file's start and end markers named ``name``, or None without them."""
    inside = False
    seen = False
    out: list[str] = []
    for line in lines:
        marker = _MDBOOK_ANCHOR.search(line) if mdbook else _SNIPPET_SECTION.search(line)
        if marker is not None:
            is_end = bool(marker.group("end")) if mdbook else marker.group("type") == "end"
            if marker.group("name") == name:
                if not is_end:
                    inside, seen = True, True
                else:
                    inside = False
            continue
        if inside:
            out.append(line)
    return out if seen else None


def _without_markers(lines: list[str], *, mdbook: bool) -> list[str]:
    marker = _MDBOOK_ANCHOR if mdbook else _SNIPPET_SECTION
    return [line for line in lines if marker.search(line) is None]


Line = tuple[str, int, bool]  # text, original line, is the original line itself


def _snippet(run: _Run, spec: str, here: Path, chain: tuple[Path, ...]) -> list[str]:
    path, ranges, name = spec, "", ""
    found = _SNIPPET_RANGES.match(spec)
    if found is not None and found.group("ranges"):
        path, ranges = found.group("path"), found.group("ranges")
    else:
        named = _SNIPPET_NAME.match(spec)
        if named is not None:
            path, name = named.group("path"), named.group("name")
    folders = [Path(b) for b in run.settings.snippet_bases] + [here.parent]
    target = run.find(path.strip(), folders)
    lines = run.read(target, chain).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if name:
        part = _section(lines, name, mdbook=False)
        if part is None:
            raise _Refused(f"no section {name!r} in the file")
        lines = part
    elif ranges:
        lines = _line_ranges(lines, ranges, mdbook=False)
    lines = _without_markers(lines, mdbook=False)
    return _expand_lines(run, lines, target, chain + (target,))


def _mdbook(run: _Run, spec: str, here: Path, chain: tuple[Path, ...]) -> list[str]:
    path, ranges, name = spec, "", ""
    head, sep, tail = spec.partition(":")
    if sep:
        path = head
        if re.fullmatch(r"[0-9]*(?::[0-9]*)?", tail):
            ranges = ":" + tail
        else:
            name = tail
    target = run.find(path, [here.parent])
    lines = run.read(target, chain).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if name:
        part = _section(lines, name, mdbook=True)
        if part is None:
            raise _Refused(f"no anchor {name!r} in the file")
        lines = part
    elif ranges:
        lines = _line_ranges(lines, ranges, mdbook=True)
    lines = _without_markers(lines, mdbook=True)
    return _expand_lines(run, lines, target, chain + (target,))


def _partial(run: _Run, rel: str, here: Path, chain: tuple[Path, ...]) -> list[str]:
    if rel.startswith("@site/"):
        folders, rel = [run.root], rel[len("@site/") :]
    elif rel.startswith("."):  # ./x.md, ../x.md: MDX resolves imports like ES modules
        folders = [here.parent]
    else:
        raise _Refused("not a relative or @site/ path")
    target = run.find(rel, folders)
    text = run.read(target, chain)
    fm_end, _ = parse_front_matter(text)
    body = text[fm_end:].split("\n")
    if body and body[-1] == "":
        body.pop()
    return _expand_lines(run, body, target, chain + (target,))


def _expand_lines(run: _Run, lines: list[str], here: Path, chain: tuple[Path, ...]) -> list[str]:
    """Included lines with their own includes expanded (their line numbers are not kept)."""
    return [text for text, _, _ in _expand(run, lines, here, chain, 0)]


def _expand(
    run: _Run, lines: list[str], here: Path, chain: tuple[Path, ...], first: int
) -> list[Line]:
    """Each output line with the input line it comes from (``first`` = input line 0)."""
    gen = run.settings.generator
    snippets = gen == "mkdocs"
    mdbook = gen == "mdbook"
    mdx = gen == "docusaurus" or here.suffix.lower() == ".mdx"
    partials: dict[str, str] = {}
    if mdx:
        for line in lines:
            imp = _IMPORT.match(line)
            if imp is not None:
                partials[imp.group("name")] = imp.group("path")
    top = len(chain) <= 1
    out: list[Line] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        at = first + i if top else first
        if mdx:
            opener = _FENCE.match(line)
            if opener is not None:
                marker = opener.group(1)
                if fence is None:
                    fence = marker
                elif marker[0] == fence[0] and len(marker) >= len(fence):
                    fence = None
        if snippets and "8<" in line:
            handled = _snippet_line(run, lines, i, here, chain, out, at, top)
            if handled:
                i += handled
                continue
        if mdbook and "{{#" in line:
            _mdbook_line(run, line, here, chain, out, at)
            i += 1
            continue
        if mdx and fence is None and partials and "<" in line:
            tag = _PARTIAL.match(line)
            if tag is not None and tag.group("name") in partials:
                _partial_line(run, tag, partials[tag.group("name")], here, chain, out, at)
                i += 1
                continue
        out.append((line, at, True))
        i += 1
    return out


def _partial_line(
    run: _Run,
    tag: re.Match[str],
    rel: str,
    here: Path,
    chain: tuple[Path, ...],
    out: list[Line],
    at: int,
) -> None:
    """A ``<Partial />`` line: the partial's body, indented as the tag."""
    try:
        body = _partial(run, rel, here, chain)
    except _Refused as why:
        _fail(run, at, tag.group(0), str(why), here, len(chain) <= 1)
        out.append(("", at, False))
        return
    run.resolved += 1
    pad = tag.group("space")
    out.extend((pad + b if b else b, at, False) for b in body)


def _snippet_line(
    run: _Run,
    lines: list[str],
    i: int,
    here: Path,
    chain: tuple[Path, ...],
    out: list[Line],
    at: int,
    top: bool,
) -> int:
    """Expand a snippet directive at line ``i``; the number of lines it took (0: none)."""
    line = lines[i]
    if _SNIPPET_SECTION.search(line) is not None:
        out.append(("", at, False))  # a section marker renders as nothing
        return 1
    single = _SNIPPET.match(line)
    block = _SNIPPET_BLOCK.match(line) if single is None else None
    if single is None and block is None:
        return 0
    match = single or block
    assert match is not None
    if match.group("escape"):
        # `;--8<--` is the escaped literal (a page showing the syntax): no include. It stays
        # as the author wrote it, like the rest of the chunk's Markdown.
        out.append((line, at, True))
        return 1
    pad = match.group("space")
    if single is not None:
        specs = [(single.group("path"), i)]
        taken = 1
    else:
        close = next((k for k in range(i + 1, len(lines)) if _SNIPPET_BLOCK.match(lines[k])), None)
        if close is None:
            _fail(run, at, line, "a block with no closing --8<-- line", here, top)
            out.append(("", at, False))
            return 1
        specs = [
            (lines[k].strip(), k)
            for k in range(i + 1, close)
            if lines[k].strip() and not lines[k].strip().startswith(";")
        ]
        taken = close - i + 1
    emitted = False
    for spec, k in specs:
        try:
            body = _snippet(run, spec, here, chain)
        except _Refused as why:
            _fail(run, at + (k - i if top else 0), f'--8<-- "{spec}"', str(why), here, top)
            continue
        run.resolved += 1
        emitted = emitted or bool(body)
        out.extend((pad + b if b else b, at, False) for b in body)
    if not emitted:
        out.append(("", at, False))  # the dropped directive leaves a blank line
    return taken


def _mdbook_line(
    run: _Run, line: str, here: Path, chain: tuple[Path, ...], out: list[Line], at: int
) -> None:
    top = len(chain) <= 1
    pieces: list[str] = []
    pos = 0
    changed = False
    for match in _MDBOOK.finditer(line):
        changed = True
        pieces.append(line[pos : match.start()])
        try:
            body = _mdbook(run, match.group("spec"), here, chain)
        except _Refused as why:
            _fail(run, at, match.group(0), str(why), here, top)
            body = []
        else:
            run.resolved += 1
        pieces.append("\n".join(body))
        pos = match.end()
    if not changed:
        out.append((line, at, True))
        return
    pieces.append(line[pos:])
    joined = "".join(pieces)
    out.extend((piece, at, False) for piece in joined.split("\n"))


def _fail(run: _Run, at: int, directive: str, why: str, here: Path, top: bool) -> None:
    run.refuse(at, directive if top else f"{directive} in {here.name}", why, top)


def expand_includes(text: str, path: str | Path, settings: IncludeSettings) -> Expanded:
    """Expand the includes of one document (see the module docstring for the syntaxes).

    Args:
        text: The document, normalised (:func:`~scidx.pack.frontmatter.normalize_source`).
        path: The document's file (absolute): relative includes start from its folder.
        settings: The project's :class:`IncludeSettings`.

    Returns:
        The expanded text and the origin of each of its lines; ``origin`` is None (and the
        text unchanged) when the document has no include directive.
    """
    gen = settings.generator
    here = Path(path)
    mdx = gen == "docusaurus" or here.suffix.lower() == ".mdx"
    if not (
        (gen == "mkdocs" and "8<" in text)
        or (gen == "mdbook" and "{{#" in text)
        or (mdx and "import" in text)
    ):
        return Expanded(text)
    fm_end, _ = parse_front_matter(text)
    head_lines = text.count("\n", 0, fm_end) if fm_end else 0
    lines = text.split("\n")
    run = _Run(settings)
    real = Path(os.path.realpath(here))
    body = _expand(run, lines[head_lines:], here, (real,), head_lines)
    if run.resolved == 0 and run.unresolved == 0 and all(own for _, _, own in body):
        return Expanded(text)
    head = [(line, k, True) for k, line in enumerate(lines[:head_lines])]
    rows = head + body
    return Expanded(
        "\n".join(r[0] for r in rows),
        origin=[r[1] for r in rows],
        own=[r[2] for r in rows],
        unresolved=run.unresolved,
        examples=run.examples,
        resolved=run.resolved,
        files=run.files,
    )


def map_chunks(chunks: list[Chunk], expanded: Expanded, original: str) -> list[Chunk]:
    """Chunks of an expanded text with their spans pointed back at the original document.

    A chunk's ``text`` keeps the included text (it is what the page shows); its character and
    line spans are the original's: an included line counts as its directive's line.
    """
    origin = expanded.origin
    if origin is None:
        return chunks
    exp_starts = _starts(expanded.text)
    orig_starts = _starts(original)

    def back(offset: int, end: bool) -> int:
        line = min(bisect.bisect_right(exp_starts, offset) - 1, len(origin) - 1)
        src = origin[line]
        lo = orig_starts[src] if src < len(orig_starts) else len(original)
        hi = (orig_starts[src + 1] - 1) if src + 1 < len(orig_starts) else len(original)
        if expanded.own[line]:
            return min(lo + offset - exp_starts[line], hi)
        return hi if end else lo

    out: list[Chunk] = []
    for chunk in chunks:
        start = back(chunk.char_start, False)
        stop = max(
            back(chunk.char_end, True) if chunk.char_end > chunk.char_start else start, start
        )
        out.append(
            replace(
                chunk,
                char_start=start,
                char_end=max(stop, start),
                line_start=origin[min(chunk.line_start - 1, len(origin) - 1)] + 1,
                line_end=origin[min(chunk.line_end - 1, len(origin) - 1)] + 1,
            )
        )
    return out


def _starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def included_files_changed(root: Path, recorded: object) -> bool:
    """Whether any included file a sidecar recorded (path → xxh3-64) changed or went away."""
    if not isinstance(recorded, dict):
        return recorded is not None
    for rel, digest in recorded.items():
        path = root / str(rel)
        try:
            with path.open("rb") as fh:
                data = fh.read(MAX_INCLUDE_BYTES + 1)
        except OSError:
            return True
        if xxhash.xxh3_64_hexdigest(data) != digest:
            return True
    return False
