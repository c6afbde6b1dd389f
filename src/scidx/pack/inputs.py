"""Input discovery: the files a validated config selects (globs, excludes, own outputs)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from scidx.errors import ConfigError, InputError
from scidx.index.format import MAGIC
from scidx.pack.config import CONFIG_FILENAME, Config, show_value
from scidx.pack.globs import Glob, compile_glob

__all__ = ["InputFile", "collect_inputs"]


class InputFile(NamedTuple):
    """One input file found by :func:`collect_inputs`.

    Attributes:
        source: Path relative to the config root with ``/`` separators (the chunk ``source``).
        path: Absolute path to read.
    """

    source: str
    path: Path


def _literal_prefix(glob: str) -> str:
    """The leading segments of ``glob`` without wildcards: the folder the walk can start in."""
    prefix: list[str] = []
    for part in glob.split("/")[:-1]:
        if any(c in part for c in "*?["):
            break
        prefix.append(part)
    return "/".join(prefix)


def _utf8_key(source: str) -> bytes:
    # surrogateescape: undecodable names sort consistently until they are rejected below.
    return source.encode("utf-8", "surrogateescape")


def collect_inputs(config: Config) -> list[InputFile]:
    """Find the input files: ``include`` globs minus ``exclude`` globs, under ``config.root``.

    An ``exclude`` glob that matches a folder removes everything inside it. Directories are
    never returned, even if their name matches (a folder ``foo.md``). Symlinks inside the
    config folder are followed, but each real directory is entered once, so symlink loops end;
    a symlink (file or folder) that resolves outside the config folder is refused unless the
    config sets ``allowExternalSymlinks``. The output file is never an input.

    Args:
        config: A validated configuration.

    Returns:
        The files, sorted bytewise by their UTF-8 ``source`` and without duplicates.

    Raises:
        ConfigError: An ``include`` glob matches no file, or the root is not a folder.
        InputError: A matched file name is not valid UTF-8.
    """
    label = str(config.path) if config.path is not None else CONFIG_FILENAME
    root = config.root
    if not root.is_dir():
        raise ConfigError(f"{label}: the config folder {root} does not exist or is not a folder")
    includes = [(g, compile_glob(g)) for g in dict.fromkeys(config.include)]
    excludes = [compile_glob(g) for g in dict.fromkeys(config.exclude)]
    keep = _Keep(config, excludes, label)

    # Globs without wildcards name one file: look it up instead of walking the tree for it.
    literal = [g for g, _ in includes if not any(c in g for c in "*?[")]
    starts = sorted({_literal_prefix(g) for g, _ in includes if g not in literal}, key=_utf8_key)
    # A start folder below another start is covered by the walk of the outer one.
    starts = [s for s in starts if not any(_is_below(s, t) for t in starts if t != s)]

    matched: dict[str, str] = {}  # source -> absolute path
    hit: set[str] = set()
    folders: list[str] = []
    for start in starts:
        walk = _walk(str(root), start, excludes, None if config.allow_external_symlinks else label)
        for source, abspath, is_dir in walk:
            if is_dir:
                folders.append(source)
                continue
            # Every glob that matches is recorded: each must learn that it matched something.
            globs = [glob for glob, rx in includes if rx.fullmatch(source)]
            hit.update(globs)
            if globs and keep(abspath, source):
                matched[source] = abspath

    for glob in literal:
        abspath = os.path.join(str(root), *glob.split("/"))
        if os.path.isfile(abspath):
            hit.add(glob)
            if keep(abspath, glob):
                matched[glob] = abspath
        elif os.path.isdir(abspath):
            folders.append(glob)

    _check_all_matched(includes, hit, folders, root, label)
    if not matched:
        raise ConfigError(
            f'{label}: every file matched by "include" is removed by "exclude" '
            f"{show_value(list(config.exclude))}; loosen the exclude globs"
        )
    _check_sources(matched, config, label)
    return [InputFile(s, Path(matched[s])) for s in sorted(matched, key=_utf8_key)]


class _Keep:
    """Whether a file an ``include`` glob matched is an input: not excluded, not our own file."""

    def __init__(self, config: Config, excludes: list[Glob], label: str) -> None:
        self.excludes = excludes
        self.label = label
        self.output = os.path.abspath(config.output)
        self.own_files = {self.output, self.output + ".inputs"}
        self.temp_prefix = os.path.join(
            os.path.dirname(self.output), f".{os.path.basename(self.output)}.tmp."
        )

    def __call__(self, abspath: str, source: str) -> bool:
        """True for an input; raises when the output would overwrite a real input file."""
        return not self.is_own(abspath, source) and not self.excluded(source)

    def excluded(self, source: str) -> bool:
        # A glob that matches a folder excludes everything in it ("node_modules", "drafts/**").
        if not self.excludes:
            return False
        parts = source.split("/")
        return any(
            rx.fullmatch("/".join(parts[:n]))
            for n in range(len(parts), 0, -1)
            for rx in self.excludes
        )

    def is_own(self, abspath: str, source: str) -> bool:
        """The index, its sidecar and the packer's temp files are never inputs."""
        if abspath == self.output and not _is_index_or_empty(self.output):
            raise ConfigError(
                f'{self.label}: "output" is {show_value(source)}, one of the input files matched '
                'by "include"; packing would overwrite it. Choose an output path such as '
                '"docs.scidx"'
            )
        return abspath in self.own_files or abspath.startswith(self.temp_prefix)


def _check_all_matched(
    includes: list[tuple[str, Glob]], hit: set[str], folders: list[str], root: Path, label: str
) -> None:
    """Refuse an ``include`` glob that matched no file (a likely typo or wrong root)."""
    for glob, rx in includes:
        if glob not in hit:
            message = (
                f'{label}: "include" glob {show_value(glob)} matches no file; check the path is '
                f"relative to {root}"
            )
            if any(rx.fullmatch(f) for f in folders):
                message += f' (it matches a folder; to take the files in it use "{glob}/**/*.md")'
            raise ConfigError(message)


def _check_sources(matched: dict[str, str], config: Config, label: str) -> None:
    """Refuse inputs outside the config folder (unless allowed) and non-UTF-8 names."""
    if not config.allow_external_symlinks:
        real_root = os.path.realpath(config.root)
        for source, abspath in matched.items():
            _inside_root(abspath, source, real_root, label)
    for source in matched:
        try:
            source.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                f"{label}: input file name {source!r} is not valid UTF-8; rename the file or "
                'add it to "exclude"'
            ) from None


def _inside_root(abspath: str, source: str, real_root: str, label: str) -> None:
    """Refuse a path that resolves (through symlinks) outside the config folder.

    A link such as ``docs/passwd.md -> /etc/passwd`` would otherwise put a file the config
    author never meant to publish into a searchable index.
    """
    real = os.path.realpath(abspath)
    try:
        inside = os.path.commonpath([real, real_root]) == real_root
    except ValueError:  # different drives (Windows)
        inside = False
    if not inside:
        raise ConfigError(
            f"{label}: {source} is a symlink (or lies below one) that points outside the config "
            f"folder {real_root}, to {real}; scidx only packs files inside that folder. Remove "
            'the link, add it to "exclude", or move staticcorpus.json to a folder that '
            "contains the target"
        )


def _is_index_or_empty(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC))
    except OSError:
        return True  # not readable as an input either; the pack reports it when writing
    return head in (b"", MAGIC)


def _is_below(path: str, folder: str) -> bool:
    return folder == "" or path.startswith(folder + "/")


def _walk(
    root: str, start: str, prunes: list[Glob], label: str | None = CONFIG_FILENAME
) -> Iterator[tuple[str, str, bool]]:
    """Yield ``(source, absolute path, is_dir)`` for everything below ``root/start``.

    Each real folder is entered once. Real (non-symlink) routes are walked first and folder
    symlinks afterwards, in sorted order, so a folder reachable both ways is listed under its
    real path, a symlink loop ends, and the result never depends on the file system's order.
    """
    top = os.path.join(root, *start.split("/")) if start else root
    try:
        st = os.stat(top)
    except OSError:
        return
    if not os.path.isdir(top):
        return
    seen: set[tuple[int, int]] = {(st.st_dev, st.st_ino)}
    real_root = os.path.realpath(root)
    stack: list[tuple[str, str]] = [(top, start)]
    linked: list[tuple[str, str]] = []  # folder symlinks, followed once the real tree is done
    while stack or linked:
        if not stack:
            target = _next_link(linked, seen)
            if target is not None:
                stack.append(target)
            continue
        folder, rel = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: _utf8_key(e.name))
        except OSError:
            # An unreadable folder is skipped like one that does not exist; a glob that needed
            # it then reports "matches no file".
            continue
        subfolders: list[tuple[str, str]] = []
        for entry in entries:
            source = f"{rel}/{entry.name}" if rel else entry.name
            kind = _kind(entry)
            if kind is None:
                continue
            yield source, entry.path, kind != "file"
            # Excluded folders are not entered: nothing below them can be an input.
            if kind == "file" or any(
                rx.fullmatch(source) or rx.fullmatch(source + "/") for rx in prunes
            ):
                continue
            if kind == "link":
                # Never walk out of the config folder (a link to "/" would list the disk),
                # unless the config opted in (label None).
                if label is not None:
                    _inside_root(entry.path, source, real_root, label)
                linked.append((entry.path, source))
                continue
            try:
                dst = entry.stat()
            except OSError:
                continue
            ident = (dst.st_dev, dst.st_ino)
            if ident not in seen:
                seen.add(ident)
                subfolders.append((entry.path, source))
        # Reversed so that folders pop (and are walked) in ascending order.
        stack.extend(reversed(subfolders))


def _kind(entry: os.DirEntry[str]) -> str | None:
    """The entry's kind: ``"file"``, ``"dir"``, ``"link"`` (a symlink to a folder) or None.

    None: neither a file nor a folder (a fifo, a dangling link), or unreadable.
    """
    try:
        if entry.is_dir():  # follows symlinks
            return "link" if entry.is_symlink() else "dir"
        return "file" if entry.is_file() else None
    except OSError:
        return None


def _next_link(linked: list[tuple[str, str]], seen: set[tuple[int, int]]) -> tuple[str, str] | None:
    """Take the first (by source) linked folder; None when its target was already walked."""
    linked.sort(key=lambda item: _utf8_key(item[1]), reverse=True)
    path, source = linked.pop()
    try:
        dst = os.stat(path)
    except OSError:
        return None
    if (dst.st_dev, dst.st_ino) in seen:
        return None
    seen.add((dst.st_dev, dst.st_ino))
    return path, source
