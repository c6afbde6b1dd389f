"""Each page's docs version, from the generator's layout or the config (stored per source).

Where versions come from, first found wins:

* ``"version"`` in ``staticcorpus.json``: every page is that version (mike builds one version
  per run); for MkDocs, mike's ``MIKE_DOCS_VERSION`` environment variable when the key is
  absent.
* ``"versions"`` in ``staticcorpus.json``: ``{"folders": {"docs/v1": "1.0", ...}, "default":
  "2.0"}``; a source under a listed folder (the longest that matches) is that version; the
  default is ``default``, else the first version listed.
* Docusaurus: ``versions.json`` beside ``docusaurus.config.*`` (a JSON list of names, newest
  first) makes ``versioned_docs/version-X/`` version ``X`` and the docs folder ``"current"``;
  the default is the docs plugin's ``lastVersion`` when it is a plain string literal, else the
  newest entry of ``versions.json`` (what Docusaurus publishes at the site root).

A source outside every versioned folder (a blog post, a page of ``src/pages``) has no version
and is found whatever version is searched. The runtime side is :mod:`scidx.index.versions`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scidx.errors import ConfigError

__all__ = [
    "CURRENT",
    "MAX_VERSION_CHARS",
    "Versions",
    "config_versions",
    "describe_versions",
    "docusaurus_versions",
]

#: Docusaurus' name for the unreleased ``docs/`` folder's version.
CURRENT = "current"
#: The longest version name (a real one is a few characters; it is shown in every hit).
MAX_VERSION_CHARS = 100
_MAX_VERSIONS_JSON = 1 << 20
#: Names a version cannot take: ``"*"`` means "every version" in a search.
_RESERVED = frozenset({"*", ""})


@dataclass(frozen=True)
class Versions:
    """The version layout of a pack.

    Attributes:
        names: Every version, in the order the generator lists them.
        default: The version searched when a search names none (the one published at the
            site root).
        folders: ``(folder, version)`` pairs, root-relative folders, longest first.
        every: The one version of every page (mike), or None.
        origin: Where the versions came from, for the pack summary.
    """

    names: tuple[str, ...]
    default: str
    folders: tuple[tuple[str, str], ...] = ()
    every: str | None = None
    origin: str = ""

    def of(self, source: str) -> str | None:
        """The version of root-relative ``source``, or None when it has none."""
        if self.every is not None:
            return self.every
        for folder, version in self.folders:
            if not folder or source.startswith(folder + "/"):
                return version
        return None

    def canonical(self) -> dict[str, Any]:
        """What changes the stored versions (for the config hash)."""
        return {
            "names": list(self.names),
            "default": self.default,
            "folders": [list(f) for f in self.folders],
            "every": self.every,
        }

    def meta(self) -> dict[str, Any]:
        """The header's ``meta.versions`` (FORMAT.md §2.3)."""
        return {"names": list(self.names), "default": self.default}


def _name_problem(name: object) -> str:
    if not isinstance(name, str):
        return "is not a string"
    if name.strip() != name or name in _RESERVED:
        return "is empty, `*` or has surrounding blanks"
    if len(name) > MAX_VERSION_CHARS:
        return f"is longer than {MAX_VERSION_CHARS} characters"
    if any(ord(ch) < 32 or ch == "\x7f" or 0xD800 <= ord(ch) < 0xE000 for ch in name):
        return "holds a control character or a lone surrogate"
    return ""


def _folder(label: str, folder: object) -> str:
    if not isinstance(folder, str):
        raise ConfigError(f"{label}: `versions.folders` keys must be folder paths")
    clean = folder.strip("/")
    parts = clean.split("/")
    if folder.startswith("/") or "\\" in folder or any(p in ("..", ".") for p in parts):
        raise ConfigError(
            f"{label}: `versions.folders` key {folder!r} must be a folder relative to the "
            'config\'s folder, like "docs/v2" (no "..", no absolute path)'
        )
    return clean


def config_versions(
    data: Mapping[str, Any], label: str, generator: str, environ: Mapping[str, str] | None = None
) -> Versions | None:
    """The versions ``staticcorpus.json`` sets (``version`` / ``versions``), or None.

    Raises:
        ConfigError: A key of the wrong shape, named with the fix.
    """
    env = os.environ if environ is None else environ
    one = data.get("version")
    many = data.get("versions")
    if one is not None and many is not None:
        raise ConfigError(
            f"{label}: set `version` (every page is one version) or `versions` (folders to "
            "versions), not both"
        )
    if one is None and many is None and generator == "mkdocs" and env.get("MIKE_DOCS_VERSION"):
        one = env["MIKE_DOCS_VERSION"]
        origin = "MIKE_DOCS_VERSION (mike)"
    else:
        origin = "version in staticcorpus.json"
    if one is not None:
        problem = _name_problem(one)
        if problem:
            raise ConfigError(
                f'{label}: `version` {one!r} {problem}; use the version name, like "2.0"'
            )
        return Versions((one,), one, every=one, origin=origin)
    if many is None:
        return None
    if not isinstance(many, Mapping) or not isinstance(many.get("folders"), Mapping):
        raise ConfigError(
            f"{label}: `versions` must be an object like "
            '{"folders": {"docs/v1": "1.0", "docs/v2": "2.0"}, "default": "2.0"}'
        )
    unknown = set(many) - {"folders", "default"}
    if unknown:
        raise ConfigError(
            f"{label}: `versions` has unknown key(s) {sorted(unknown)}; it takes `folders` "
            "and `default`"
        )
    folders: list[tuple[str, str]] = []
    names: list[str] = []
    for folder, version in many["folders"].items():
        problem = _name_problem(version)
        if problem:
            raise ConfigError(
                f"{label}: `versions.folders` value {version!r} for {folder!r} {problem}"
            )
        folders.append((_folder(label, folder), version))
        if version not in names:
            names.append(version)
    if not folders:
        raise ConfigError(f"{label}: `versions.folders` is empty; map at least one folder")
    default = many.get("default", names[0])
    if default not in names:
        raise ConfigError(
            f"{label}: `versions.default` {default!r} is none of the versions in "
            f"`versions.folders` ({', '.join(names)})"
        )
    ordered = tuple(sorted(folders, key=lambda f: (-len(f[0]), f[0])))
    return Versions(tuple(names), default, ordered, origin="versions in staticcorpus.json")


_LAST_VERSION = re.compile(r"""\blastVersion\s*:\s*(?:'([^'\\\n]*)'|"([^"\\\n]*)")""")
_ANY_LAST_VERSION = re.compile(r"\blastVersion\s*:")


def docusaurus_versions(
    config: Path, config_text: str, root: Path, docs_dir: str | None
) -> Versions | None:
    """The versions of a Docusaurus site (``versions.json`` beside its config), or None.

    Args:
        config: The ``docusaurus.config.*`` file (absolute).
        config_text: Its text.
        root: The ``staticcorpus.json`` folder (absolute, resolved).
        docs_dir: The docs folder relative to ``root`` (``None``: outside it).

    Raises:
        ConfigError: ``versions.json`` is not a JSON list of version names.
    """
    path = config.parent / "versions.json"
    if not path.is_file():
        return None
    try:
        with path.open("rb") as fh:
            data = fh.read(_MAX_VERSIONS_JSON + 1)
        if len(data) > _MAX_VERSIONS_JSON:
            raise ValueError("larger than 1 MiB")
        listed = json.loads(data.decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: cannot read it as JSON ({exc}); Docusaurus expects a list of version "
            'names, newest first, like ["2.0", "1.0"]'
        ) from None
    if not isinstance(listed, list):
        kind = type(listed).__name__.replace("dict", "an object").replace("str", "a string")
        raise ConfigError(
            f"{path}: must be a JSON list of version names, newest first, like "
            f'["2.0", "1.0"], got {kind}; fix it (Docusaurus reads it the same way)'
        )
    for entry in listed:
        problem = _name_problem(entry)
        if problem or entry == CURRENT:
            raise ConfigError(
                f"{path}: entry {entry!r} {problem or 'is the reserved name `current`'}; list "
                'version names, like ["2.0", "1.0"]'
            )
    if not listed:
        return None
    try:
        site = config.parent.resolve().relative_to(root)
    except (ValueError, OSError):
        return None
    base = "" if str(site) == "." else site.as_posix() + "/"
    folders = [(f"{base}versioned_docs/version-{v}", v) for v in listed]
    if docs_dir is not None:
        folders.append((docs_dir, CURRENT))
    names = (CURRENT, *dict.fromkeys(listed))
    default = listed[0]
    found = _LAST_VERSION.findall(config_text)
    values = {a or b for a, b in found}
    if len(values) == 1 and len(_ANY_LAST_VERSION.findall(config_text)) == len(found):
        (last,) = values
        if last in names:
            default = last
    ordered = tuple(sorted(folders, key=lambda f: (-len(f[0]), f[0])))
    return Versions(names, default, ordered, origin=f"{_rel(path, root)}")


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return path.as_posix()


def describe_versions(versions: Versions | None) -> str:
    """One line for the pack summary: the versions, the default, where they came from."""
    if versions is None:
        return ""
    listed = ", ".join(f"{n} (default)" if n == versions.default else n for n in versions.names)
    return f"{listed}; from {versions.origin}" if versions.origin else listed
