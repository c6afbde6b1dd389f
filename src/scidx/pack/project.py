"""A project's ``[tool.scidx]`` table: what the build-backend hooks pack, and the pack itself.

One home for what the setuptools hook (:mod:`scidx.integrations.setuptools_hook`) and the
hatchling hook (:mod:`scidx.integrations.hatch_hook`) share, so both read the same keys and give
the same guarantees::

    [tool.scidx]
    package-path = "mypkg/docs.scidx"   # import path of the package + file name inside it
    include = ["docs/**/*.md"]          # staticcorpus.json keys inline (no "output") ...
    # config = "staticcorpus.json"      # ... or a staticcorpus.json (its "output" is ignored)

* :func:`tool_table` reads the raw table (``None`` when the project has none);
* :func:`read_settings` validates it into :class:`ProjectSettings`, raising
  :class:`~scidx.errors.ConfigError` naming the key and the fix;
* :func:`pack_project` packs into a work path (where the incremental ``.inputs`` sidecar stays)
  and reports what it packed in one line, which each hook shows at its normal verbosity;
* :func:`copy_index` copies the index alone (never its sidecar or a temp file) to where the
  wheel takes it from.

Each backend keeps only what is its own: how it finds the project's packages, where its build
folder is, and its error type.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scidx.errors import ConfigError

if TYPE_CHECKING:
    from scidx.pack.config import Config

__all__ = [
    "HOOK_KEYS",
    "ProjectSettings",
    "copy_index",
    "pack_project",
    "read_settings",
    "source_files",
    "tool_table",
]

#: Keys of ``[tool.scidx]`` that belong to the hooks rather than to staticcorpus.json.
HOOK_KEYS = ("config", "package-path")
_SIDECAR_SUFFIX = ".inputs"
_EXAMPLE = 'package-path = "mypkg/docs.scidx"'

if sys.version_info >= (3, 11):
    import tomllib

    _toml_loads: Callable[[str], dict[str, Any]] = tomllib.loads
else:  # pragma: no cover - exercised on Python 3.10 only

    def _toml_loads(text: str) -> dict[str, Any]:
        import importlib

        # Python 3.10 has no tomllib; setuptools>=64 and hatchling read pyproject.toml with
        # tomli, installed or vendored, so one of these is present in any build environment.
        for name in ("tomli", "setuptools._vendor.tomli", "setuptools.extern.tomli"):
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            result: dict[str, Any] = module.loads(text)
            return result
        raise ConfigError("cannot read pyproject.toml on Python 3.10; pip install tomli")


def tool_table(root: Path) -> Any:
    """The raw ``[tool.scidx]`` value of ``root/pyproject.toml``, or ``None`` when absent.

    Raises:
        OSError: pyproject.toml exists but cannot be read.
        ValueError: pyproject.toml is not valid UTF-8 TOML.
    """
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    tool = _toml_loads(text).get("tool")
    return tool.get("scidx") if isinstance(tool, dict) else None


@dataclasses.dataclass(frozen=True)
class ProjectSettings:
    """The validated ``[tool.scidx]`` table of one project.

    Attributes:
        root: The project folder (where pyproject.toml is).
        config: The pack configuration (its ``output`` is a placeholder the hooks replace).
        config_file: The staticcorpus.json named by ``config``, if any.
        package_path: ``"mypkg/docs.scidx"``: where the index goes inside the wheel.
        package: ``"mypkg"``: the import path of the package that owns the file.
        resource: ``"docs.scidx"``: the file's path inside that package.
    """

    root: Path
    config: Config
    config_file: Path | None
    package_path: str
    package: str
    resource: str


def read_settings(root: Path, packages: Iterable[str]) -> ProjectSettings:
    """Validate ``[tool.scidx]`` of ``root/pyproject.toml`` into :class:`ProjectSettings`.

    Args:
        root: The project folder.
        packages: The import paths of the packages the wheel holds (``package-path`` must lie
            inside one of them).

    Raises:
        ConfigError: The table is missing or invalid, naming the key and how to fix it.
    """
    where = f"{root / 'pyproject.toml'} [tool.scidx]"
    try:
        table = tool_table(root)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {root / 'pyproject.toml'}: {exc}") from None
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table like: {_EXAMPLE}")

    from scidx.pack.config import KNOWN_KEYS, config_from_dict, load_config

    corpus_keys = [k for k in KNOWN_KEYS if k not in ("$schema", "output")]
    for key in table:
        if key == "output":
            raise ConfigError(
                f'{where}: remove "output"; the index is written inside the package at '
                f'"package-path" (e.g. {_EXAMPLE})'
            )
        if key not in HOOK_KEYS and key not in corpus_keys:
            close = difflib.get_close_matches(str(key), [*HOOK_KEYS, *corpus_keys], n=1)
            hint = f'; did you mean "{close[0]}"?' if close else ""
            raise ConfigError(f'{where}: unknown key "{key}"{hint}')

    package_path, package, resource = _package_path(table.get("package-path"), packages, where)

    config_file: Path | None = None
    if "config" in table:
        value = table["config"]
        inline = sorted(k for k in table if k not in HOOK_KEYS)
        if inline:
            raise ConfigError(
                f"{where}: has both config = {value!r} and inline settings "
                f"({', '.join(inline)}); keep one of them"
            )
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f'{where}: config must be a path like "staticcorpus.json"')
        config_file = Path(os.path.abspath(root / value))  # normalised, for messages
        config = load_config(config_file)
    else:
        data = {k: v for k, v in table.items() if k not in HOOK_KEYS}
        if "include" not in data:
            raise ConfigError(
                f'{where}: missing "include"; add e.g. include = ["docs/**/*.md"] '
                '(or config = "staticcorpus.json")'
            )
        # "output" is required by the config schema; the hooks always override it.
        data["output"] = package_path
        config = config_from_dict(data, root=root, path=root / "pyproject.toml")
    return ProjectSettings(root, config, config_file, package_path, package, resource)


def _package_path(value: object, packages: Iterable[str], where: str) -> tuple[str, str, str]:
    """Split ``package-path`` into ``(normalised path, package, resource)``."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f'{where}: missing "package-path"; add e.g. {_EXAMPLE}')
    parts = value.replace("\\", "/").split("/")
    if value.startswith(("/", "\\")) or any(p in ("", ".", "..") for p in parts) or len(parts) < 2:
        raise ConfigError(
            f"{where}: package-path {value!r} must be a relative path inside a package, "
            f"like {_EXAMPLE}"
        )
    known = set(packages)
    # The longest leading run of folders that is a package owns the file ("a/b/data/x.scidx"
    # with packages a, a.b goes into a.b as "data/x.scidx").
    for cut in range(len(parts) - 1, 0, -1):
        package = ".".join(parts[:cut])
        if package in known:
            return "/".join(parts), package, "/".join(parts[cut:])
    listed = ", ".join(sorted(known)) or "none"
    raise ConfigError(
        f"{where}: package-path {value!r} is not inside a package of this project "
        f"(packages: {listed}); start it with the package's import path, like {_EXAMPLE}"
    )


def source_files(settings: ProjectSettings) -> list[str]:
    """The config file and every input file, relative to the project (what an sdist carries).

    Raises:
        ScidxError: The inputs cannot be collected.
        ConfigError: An input lies outside the project folder (an sdist cannot carry it).
    """
    from scidx.pack.inputs import collect_inputs

    s = settings
    inputs = [item.path for item in collect_inputs(s.config)]
    files: list[str] = []
    for path in ([s.config_file] if s.config_file else []) + inputs:
        rel = os.path.relpath(path, s.root)
        if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
            raise ConfigError(
                f"input {path} is outside the project folder {s.root}, so the sdist cannot "
                "include it; move it into the project or narrow the include globs"
            )
        files.append(Path(rel).as_posix())
    return files


def pack_project(settings: ProjectSettings, output: Path) -> str:
    """Pack the project's docs into ``output`` (incremental: its sidecar stays beside it).

    Returns:
        One line saying what was packed, e.g. ``scidx: packed build/scidx/mypkg/docs.scidx
        into mypkg/docs.scidx (3 files, 12 chunks, hashing)``, for the build log.

    Raises:
        ScidxError: The pack failed; the message says what, where and how to fix it.
    """
    from scidx.pack.packer import pack_docs

    config = dataclasses.replace(settings.config, output=output)
    result = pack_docs(config)
    done = "is up to date" if result.up_to_date else "packed"
    return (
        f"scidx: {settings.package_path} {done}: {result.files} files, {result.chunks} chunks, "
        f"{config.embedding_provider} embeddings ({output})"
    )


def copy_index(index: Path, target: Path) -> None:
    """Copy ``index`` alone to ``target`` atomically, first removing a stale sidecar there.

    Raises:
        ScidxError: The copy failed (the target is unchanged).
    """
    from scidx.errors import OutputError
    from scidx.pack.fileio import atomic_write

    _remove_leftovers(target)
    try:
        with open(index, "rb") as src:
            atomic_write(target, lambda fh: shutil.copyfileobj(src, fh))
    except OSError as exc:
        raise OutputError(f"cannot copy {index} into the build folder: {exc}") from None


def _remove_leftovers(target: Path) -> None:
    """Delete a stale sidecar or temp file beside ``target`` so it cannot reach the wheel."""
    folder = target.parent
    if not folder.is_dir():
        return
    temp_prefix = f".{target.name}.tmp."  # scidx.pack.fileio.atomic_write's temp names
    for entry in folder.iterdir():
        if entry.name == target.name + _SIDECAR_SUFFIX or entry.name.startswith(temp_prefix):
            try:
                entry.unlink()
            except OSError:
                pass
