"""Which docs generator a folder is built with: its config file, the ``generator`` key, or its text.

The generator's config is looked for beside the ``staticcorpus.json`` (its folder), then one
folder below it (``docs/``, ``website/``), then two below a docs folder (``docs/en/``,
``doc/book/``; not ``tests/fixtures/``): where MkDocs, Docusaurus, VitePress, Starlight, Sphinx
and mdBook projects keep it, then in the folders above
it up to the repository root (the folder holding ``.git``) or three levels. The nearest level
with a config decides. MkDocs is recognised by any ``mkdocs*.yml`` (a config split into
``mkdocs-base.yml`` + ``mkdocs-en.yml`` joined by ``INHERIT`` is still one MkDocs site).

When that level holds the configs of several generators (ambiguous), or no level holds one,
the Markdown itself is read (:func:`detect_from_content`): constructs only one generator
renders (``!!! note`` and ``=== "Tab"``: MkDocs; ``:::tip`` and MDX imports: Docusaurus;
``::: tip`` and ``{{ $frontmatter }}``: VitePress; ```` ```{directive} ````: MyST) count per
file, and a generator wins only with clear evidence. The result says where it came from
(:class:`Detection`), for the pack summary.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DEFAULT_GENERATOR",
    "MARKERS",
    "Detection",
    "detect",
    "detect_from_content",
    "detect_generator",
    "find_configs",
    "sample_texts",
]

#: (file or folder name, generator), in precedence order within one folder. ``mkdocs*.yml``
#: beyond these two names is matched by :data:`_MKDOCS_NAME`.
MARKERS: tuple[tuple[str, str], ...] = (
    ("mkdocs.yml", "mkdocs"),
    ("mkdocs.yaml", "mkdocs"),
    *((f"docusaurus.config.{ext}", "docusaurus") for ext in ("js", "ts", "mjs", "cjs", "mts")),
    (".vitepress", "vitepress"),
    *((f"astro.config.{ext}", "starlight") for ext in ("mjs", "ts", "js", "mts", "cjs")),
    ("conf.py", "myst"),
    ("book.toml", "mdbook"),
    *((f"hugo.{ext}", "hugo") for ext in ("toml", "yaml", "yml", "json")),
)
_PRECEDENCE = list(dict.fromkeys(g for _, g in MARKERS))
_MKDOCS_NAME = re.compile(r"^mkdocs[\w.-]*\.ya?ml$")
_VITEPRESS_CONFIGS = tuple(f"config.{e}" for e in ("js", "ts", "mjs", "mts", "cjs"))
#: The generator of a folder with no known config and no telling constructs: GitHub renders it.
DEFAULT_GENERATOR = "github"
_UP_LEVELS = 3
# Folders that are never a docs project's home (dependencies, build output).
_SKIP = {"node_modules", "site", "build", "_build", "dist", "venv", "__pycache__"}
_MAX_FOLDERS = 400  # level-two folders looked into, at most (a huge tree stays quick)
# Level two is looked into only below these: where docs projects nest their config
# (docs/en/mkdocs.yml, doc/book/book.toml), and not tests/fixtures/mkdocs.yml.
_DOCS_FOLDERS = {"docs", "doc", "documentation", "website", "book", "guide", "manual", "handbook"}


@dataclass(frozen=True)
class Detection:
    """The generator a pack reads its Markdown as, and why.

    Attributes:
        generator: A name of :data:`~scidx.pack.flavours.GENERATORS`.
        origin: ``"key"`` (the config's ``generator``), ``"config"`` (the generator's config
            file), ``"content"`` (constructs in the Markdown) or ``"default"`` (none of these).
        config: The generator's config file that decided (absolute), or None.
        configs: Every config of that generator at the level that decided (a split MkDocs
            config has several), in name order.
        reason: What decided, in words, for the pack summary.
    """

    generator: str
    origin: str
    config: Path | None = None
    configs: tuple[Path, ...] = field(default=())
    reason: str = ""

    def describe(self, root: Path) -> str:
        """One line for the pack summary: ``mkdocs (from docs/en/mkdocs.yml)``."""
        if self.origin == "config" and self.config is not None:
            where = f"from {_rel(self.config, root)}"
            if self.reason:
                where += f"; {self.reason}"
        elif self.origin == "key":
            where = "from the generator key"
        else:
            where = self.reason or self.origin
        return f"{self.generator} ({where})"

    def to_dict(self, root: Path) -> dict[str, str]:
        """The detection as JSON (``--json``'s ``generator``)."""
        out = {"name": self.generator, "from": self.origin}
        if self.config is not None:
            out["config"] = _rel(self.config, root)
        if self.reason:
            out["reason"] = self.reason
        return out


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return os.path.relpath(path, root).replace(os.sep, "/")


def _markers(folder: Path) -> list[tuple[str, Path]]:
    """(generator, config path) for each generator config in ``folder``, in precedence order."""
    found: list[tuple[str, Path]] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:  # unreadable or gone: no marker
        return found
    mkdocs = [n for n in names if _MKDOCS_NAME.match(n) and (folder / n).is_file()]
    found += [("mkdocs", folder / n) for n in sorted(mkdocs, key=lambda n: (len(n), n))]
    for name, generator in MARKERS:
        if generator == "mkdocs" or name not in names:
            continue
        path = folder / name
        if generator == "vitepress":
            if not path.is_dir():
                continue
            config = next((path / c for c in _VITEPRESS_CONFIGS if (path / c).is_file()), path)
            found.append((generator, config))
        elif path.is_file():
            found.append((generator, path))
    return found


def _children(folder: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _SKIP:
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                out.append(Path(entry.path))
        except OSError:
            continue
    return out


def _levels(root: Path) -> Iterator[list[Path]]:
    """The folders looked in, nearest level first: beside, one below, two below, then above."""
    yield [root]
    children = _children(root)
    yield children
    grandchildren: list[Path] = []
    for child in children:
        if child.name.lower() not in _DOCS_FOLDERS:
            continue
        grandchildren += _children(child)
        if len(grandchildren) >= _MAX_FOLDERS:
            break
    yield grandchildren[:_MAX_FOLDERS]
    folder = root
    for _ in range(_UP_LEVELS):
        if (folder / ".git").exists() or folder.parent == folder:
            break
        folder = folder.parent
        yield [folder]


def find_configs(root: Path) -> list[tuple[str, Path]]:
    """The generator configs at the nearest level that has any, as ``(generator, path)``.

    Args:
        root: The ``staticcorpus.json`` folder.
    """
    for level in _levels(root):
        found = [m for folder in level for m in _markers(folder)]
        if found:
            return found
    return []


def detect(root: Path, texts: Iterable[tuple[str, str]] = ()) -> Detection:
    """The generator of ``root``'s docs, from the nearest generator config or else the text.

    Args:
        root: The ``staticcorpus.json`` folder.
        texts: ``(source, text)`` of (some of) the input files, read only when no config
            decides (:func:`sample_texts`).
    """
    found = find_configs(root)
    generators = list(dict.fromkeys(g for g, _ in found))
    if len(generators) == 1:
        generator = generators[0]
        configs = tuple(p for g, p in found if g == generator)
        return Detection(generator, "config", configs[0], configs)
    content, reason = detect_from_content(texts)
    if not generators:
        if content is None:
            why = "no generator config found" + (f", and {reason}" if reason else "")
            return Detection(DEFAULT_GENERATOR, "default", reason=f"default: {why}")
        return Detection(content, "content", reason=f"from the content: {reason}")
    names = ", ".join(_rel(p, root) for _, p in found)
    if content in generators:
        configs = tuple(p for g, p in found if g == content)
        why = f"configs of several generators ({names}); the content decided: {reason}"
        return Detection(content, "config", configs[0], configs, why)
    generator = min(generators, key=_PRECEDENCE.index)
    configs = tuple(p for g, p in found if g == generator)
    why = f"configs of several generators ({names}) and the content does not decide; "
    why += 'set "generator" to choose'
    return Detection(generator, "config", configs[0], configs, why)


def detect_generator(root: Path) -> str:
    """The generator whose config sits beside, just below or above ``root`` (no content read).

    Args:
        root: The ``staticcorpus.json`` folder.

    Returns:
        A generator name (``"mkdocs"``, ``"docusaurus"``, ...) or :data:`DEFAULT_GENERATOR`.
    """
    return detect(root).generator


# -- content ------------------------------------------------------------------------------------

_R = re.compile
#: Per generator, constructs no other generator renders (checked outside fenced code).
_CONSTRUCTS: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    "mkdocs": (
        ("`!!! note` admonitions", _R(r"^[ \t]*(?:!!!|\?\?\?\+?)[ \t]+[\w-]+")),
        ('`=== "Tab"` content tabs', _R(r'^[ \t]*===[!+]?[ \t]+"')),
        ("`--8<--` snippets", _R(r"^[ \t]*-{1,2}8<-{1,2}[ \t]")),
        (
            "`/// tip` blocks",
            _R(r"^[ \t]*///[ \t]*(?:admonition|details|note|tip|info|warning|danger|tab)\b"),
        ),
        ("`::: module` mkdocstrings", _R(r"^:::[ \t]+[A-Za-z_]\w*(?:\.\w+)+[ \t]*$")),
    ),
    "docusaurus": (
        ("`:::tip` admonitions", _R(r"^[ \t]*:::(?:note|tip|info|warning|danger|caution)\b")),
        (
            "MDX imports",
            _R(r"""^import[ \t]+[\w{}, \t*]+[ \t]+from[ \t]+['"][^'"]+['"];?[ \t]*$"""),
        ),
        ("`<TabItem>` components", _R(r"<TabItem\b")),
    ),
    "vitepress": (
        ("`::: tip` containers", _R(r"^[ \t]*:::[ \t]+(?:tip|warning|danger|info|details)\b")),
        ("`{{ $frontmatter }}` expressions", _R(r"\{\{[ \t]*\$(?:frontmatter|params)")),
        ("`[[toc]]`", _R(r"^\[\[toc\]\][ \t]*$")),
        ("`<<< @/` snippet imports", _R(r"^<<<[ \t]+@/")),
        ("`::: code-group`", _R(r"^[ \t]*:::[ \t]+code-group\b")),
    ),
    "myst": (
        ("```` ```{directive} ```` fences", _R(r"^[ \t]*(?:`{3,}|:{3,})\{[\w:-]+\}")),
        ("`(target)=` labels", _R(r"^\([\w:.-]+\)=[ \t]*$")),
        ("`{role}` roles", _R(r"\{(?:ref|doc|term|math|eq|numref|py:\w+)\}`")),
    ),
    "starlight": (
        ("Starlight component imports", _R(r"""^import[ \t]+.*from[ \t]+['"]@astrojs/starlight""")),
    ),
}
_FENCE = _R(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_MAX_FILES = 300
_MAX_CHARS = 65_536


def _file_hits(text: str) -> dict[str, str]:
    """Generator -> the first of its constructs found in one file."""
    hits: dict[str, str] = {}
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                if not match.group(2).strip():
                    fence = None
            continue
        if match is not None and not match.group(2).lstrip().startswith("{"):
            fence = match.group(1)
            continue
        for generator, constructs in _CONSTRUCTS.items():
            if generator in hits:
                continue
            for name, rx in constructs:
                if rx.search(line):
                    hits[generator] = name
                    break
    # Starlight's asides are written like Docusaurus' admonitions: its imports decide.
    if "starlight" in hits:
        hits.pop("docusaurus", None)
    return hits


def detect_from_content(texts: Iterable[tuple[str, str]]) -> tuple[str | None, str]:
    """The generator whose constructs the files use, with the evidence; None: no clear winner.

    A generator wins when its constructs are in at least two files and one in twenty of the
    files read (one, when only one file was read), and in at least twice as many files as any
    other generator's: a GitHub repository with two pages written for another site stays
    GitHub's.
    """
    files: dict[str, int] = {}
    named: dict[str, dict[str, int]] = {}
    read = 0
    for _source, text in texts:
        read += 1
        for generator, construct in _file_hits(text[:_MAX_CHARS]).items():
            files[generator] = files.get(generator, 0) + 1
            counts = named.setdefault(generator, {})
            counts[construct] = counts.get(construct, 0) + 1
        if read >= _MAX_FILES:
            break
    if not files:
        return None, f"none of the {read} files read uses a generator's own syntax" if read else ""
    ranked = sorted(files.items(), key=lambda kv: (-kv[1], _PRECEDENCE.index(kv[0])))
    best, count = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0
    evidence = ", ".join(
        f"{name} in {n}" for name, n in sorted(named[best].items(), key=lambda kv: -kv[1])
    )
    summary = f"{evidence} of {read} files"
    if count < min(2, read) or count * 20 < read or count < 2 * second:
        others = ", ".join(f"{g} in {n}" for g, n in ranked)
        return None, f"no generator's own syntax is clearly used ({others} of {read} files)"
    return best, summary


def sample_texts(
    root: Path, include: Sequence[str], exclude: Sequence[str]
) -> Iterator[tuple[str, str]]:
    """``(source, text)`` of the first input files (folder by folder, names sorted).

    Globs without wildcards are looked up, the others walked from their fixed folders
    (``docs/`` for ``docs/**/*.md``). Symlinks are not followed (a path through one is skipped)
    and at most ``_MAX_FILES`` files of ``_MAX_CHARS`` characters are read, so a detection never
    reads outside ``root`` and stays quick on a huge tree.
    """
    from scidx.pack.globs import compile_glob

    try:
        includes = [compile_glob(g) for g in include]
        excludes = [compile_glob(g) for g in exclude]
    except re.error:
        return
    literal = sorted(g for g in include if not any(c in g for c in "*?["))
    starts = {_fixed_folder(g) for g in include if g not in literal}
    # A start inside another start is walked with it.
    walks = sorted(
        s for s in starts if not any(t != s and (not t or s.startswith(t + "/")) for t in starts)
    )
    found = [(g, str(root / g)) for g in literal]
    candidates = (f for start in walks for f in _walk(root, start))
    count = 0
    for source, path in _chain(found, candidates):
        if not any(g.fullmatch(source) for g in includes):
            continue
        if any(g.fullmatch(source) for g in excludes) or _through_link(root, source):
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read(_MAX_CHARS * 4)
        except OSError:
            continue
        yield source, data.decode("utf-8", errors="replace")
        count += 1
        if count >= _MAX_FILES:
            return


def _chain(
    first: Sequence[tuple[str, str]], rest: Iterator[tuple[str, str]]
) -> Iterator[tuple[str, str]]:
    yield from first
    yield from rest


def _fixed_folder(glob: str) -> str:
    """The leading segments of ``glob`` without wildcards (``docs`` for ``docs/**/*.md``)."""
    fixed: list[str] = []
    for part in glob.split("/")[:-1]:
        if any(c in part for c in "*?["):
            break
        fixed.append(part)
    return "/".join(fixed)


def _through_link(root: Path, source: str) -> bool:
    """Whether some part of ``source`` below ``root`` is a symlink (or cannot be checked)."""
    path = root
    for part in source.split("/"):
        path = path / part
        try:
            if path.is_symlink():
                return True
        except OSError:
            return True
    return False


def _walk(root: Path, start: str) -> Iterator[tuple[str, str]]:
    """``(source, path)`` of the Markdown files below ``root/start``, depth first, names sorted.

    A loop with an explicit stack: a hostile tree thousands of folders deep cannot reach the
    interpreter's recursion limit.
    """
    if start and _through_link(root, start):
        return
    stack = [start]
    while stack:
        prefix = stack.pop()
        try:
            entries = sorted(os.scandir(root / prefix if prefix else root), key=lambda e: e.name)
        except OSError:
            continue
        folders: list[str] = []
        for entry in entries:
            source = f"{prefix}/{entry.name}" if prefix else entry.name
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    if entry.name not in _SKIP and entry.name != ".git":
                        folders.append(source)
                elif entry.name.endswith((".md", ".mdx", ".markdown")):
                    yield source, entry.path
            except OSError:
                continue
        stack.extend(reversed(folders))
