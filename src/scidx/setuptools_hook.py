"""setuptools plugin: pack a project's Markdown docs into its wheel at build time.

A project opts in with ``scidx`` in ``[build-system] requires`` and a ``[tool.scidx]`` table in its
``pyproject.toml``::

    [build-system]
    requires = ["setuptools>=64", "scidx"]
    build-backend = "setuptools.build_meta"

    [tool.scidx]
    package-path = "mypkg/docs.scidx"   # import path of the package + file name inside it
    include = ["docs/**/*.md"]          # staticcorpus.json keys inline (no "output") ...
    # config = "staticcorpus.json"      # ... or a staticcorpus.json (its "output" is ignored)

At run time the package opens it with ``scidx.load_resource("mypkg", "docs.scidx")``.

How it hooks in, using setuptools' documented extension points only:

* The ``setuptools.finalize_distribution_options`` entry point runs
  :func:`finalize_distribution_options` for *every* setuptools build on a machine where scidx is
  installed. Without a ``[tool.scidx]`` table it returns at once and changes nothing.
* With one, the project's ``build`` command gains the sub-command ``build_scidx``
  (:class:`BuildScidx`), which implements setuptools' ``SubCommand`` protocol:

  - wheel (``pip wheel .``, ``pip install .``, ``python -m build``): packs into
    ``build/scidx/<package-path>``, where the incremental ``.inputs`` sidecar also stays, then
    copies the index alone into ``build_lib``. The wheel holds the ``.scidx``, never its sidecar,
    and an unchanged in-tree rebuild skips the pack.
  - editable install (PEP 660, ``pip install -e .``): packs in place into the package's source
    folder (``src/mypkg/docs.scidx`` plus its sidecar), where the editable install finds it.
    Re-run ``pip install -e .`` (or ``toolup-rag pack-docs``) after editing the docs.
  - sdist: :meth:`BuildScidx.get_source_files` lists the config file and every input Markdown
    file, so the sdist carries the docs (not the index) and a wheel built from it packs the same,
    byte-identical index.

A failing pack raises :class:`setuptools.errors.SetupError` carrying the scidx message; the build
stops, so no wheel and no half-written index is produced.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

# setuptools ships no type information (types-setuptools would add it); "unused-ignore" keeps
# mypy quiet in environments where the stubs are installed.
from setuptools import Command  # type: ignore[import-untyped,unused-ignore]
from setuptools.errors import SetupError  # type: ignore[import-untyped,unused-ignore]

from scidx.errors import ScidxError

if TYPE_CHECKING:
    from setuptools.dist import Distribution  # type: ignore[import-untyped,unused-ignore]

    from scidx.pack.config import Config

__all__ = ["COMMAND", "BuildScidx", "finalize_distribution_options"]

# setuptools routes the root logger to the build output (Command.announce takes distutils' own
# log levels before setuptools 65 and logging's after, so it is avoided).
_log = logging.getLogger(__name__)

#: Name of the build sub-command added to projects that have a ``[tool.scidx]`` table.
COMMAND = "build_scidx"

# Keys of [tool.scidx] that belong to the hook rather than to staticcorpus.json.
_HOOK_KEYS = ("config", "package-path")
_SIDECAR_SUFFIX = ".inputs"

if sys.version_info >= (3, 11):
    import tomllib

    _toml_loads: Callable[[str], dict[str, Any]] = tomllib.loads
else:  # pragma: no cover - exercised on Python 3.10 only

    def _toml_loads(text: str) -> dict[str, Any]:
        import importlib

        # Python 3.10 has no tomllib; setuptools>=64 itself reads pyproject.toml with tomli,
        # installed or vendored, so one of these is always present.
        for name in ("tomli", "setuptools._vendor.tomli", "setuptools.extern.tomli"):
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            result: dict[str, Any] = module.loads(text)
            return result
        raise SetupError("scidx: cannot read pyproject.toml on Python 3.10; pip install tomli")


# ---------------------------------------------------------------------------------------------
# Reading [tool.scidx]


def _project_root(dist: Distribution) -> Path:
    # setuptools itself reads pyproject.toml from src_root or the current folder (the build
    # backend always runs in the project folder).
    return Path(getattr(dist, "src_root", None) or os.curdir).absolute()


def _tool_table(root: Path) -> Any:
    """The raw ``[tool.scidx]`` value, or ``None`` when absent.

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
class _Settings:
    """The validated ``[tool.scidx]`` table of one project."""

    root: Path
    config: Config
    config_file: Path | None  # the staticcorpus.json named by ``config``, if any
    package_path: str  # "mypkg/docs.scidx"
    package: str  # "mypkg"
    resource: str  # "docs.scidx"


def _fail(message: str) -> SetupError:
    return SetupError(f"scidx: {message}")


def _read_settings(root: Path, packages: list[str] | None) -> _Settings:
    """Validate ``[tool.scidx]`` into :class:`_Settings`.

    Raises:
        SetupError: The table is missing or invalid, naming the key and how to fix it.
    """
    where = f"{root / 'pyproject.toml'} [tool.scidx]"
    try:
        table = _tool_table(root)
    except (OSError, ValueError) as exc:
        raise _fail(f"cannot read {root / 'pyproject.toml'}: {exc}") from None
    if not isinstance(table, dict):
        raise _fail(f'{where} must be a table like: package-path = "mypkg/docs.scidx"')

    from scidx.pack.config import KNOWN_KEYS, config_from_dict, load_config

    corpus_keys = [k for k in KNOWN_KEYS if k not in ("$schema", "output")]
    for key in table:
        if key == "output":
            raise _fail(
                f'{where}: remove "output"; the index is written inside the package at '
                '"package-path" (e.g. package-path = "mypkg/docs.scidx")'
            )
        if key not in _HOOK_KEYS and key not in corpus_keys:
            close = difflib.get_close_matches(str(key), [*_HOOK_KEYS, *corpus_keys], n=1)
            hint = f'; did you mean "{close[0]}"?' if close else ""
            raise _fail(f'{where}: unknown key "{key}"{hint}')

    package_path, package, resource = _package_path(table.get("package-path"), packages, where)

    config_file: Path | None = None
    try:
        if "config" in table:
            value = table["config"]
            inline = sorted(k for k in table if k not in _HOOK_KEYS)
            if inline:
                raise _fail(
                    f"{where}: has both config = {value!r} and inline settings "
                    f"({', '.join(inline)}); keep one of them"
                )
            if not isinstance(value, str) or not value.strip():
                raise _fail(f'{where}: config must be a path like "staticcorpus.json"')
            config_file = Path(os.path.abspath(root / value))  # normalised, for messages
            config = load_config(config_file)
        else:
            data = {k: v for k, v in table.items() if k not in _HOOK_KEYS}
            if "include" not in data:
                raise _fail(
                    f'{where}: missing "include"; add e.g. include = ["docs/**/*.md"] '
                    '(or config = "staticcorpus.json")'
                )
            # "output" is required by the config schema; the hook always overrides it.
            data["output"] = package_path
            config = config_from_dict(data, root=root, path=root / "pyproject.toml")
    except ScidxError as exc:
        raise _fail(str(exc)) from None
    return _Settings(root, config, config_file, package_path, package, resource)


def _package_path(value: object, packages: list[str] | None, where: str) -> tuple[str, str, str]:
    """Split ``package-path`` into ``(normalised path, package, resource)``."""
    example = 'package-path = "mypkg/docs.scidx"'
    if not isinstance(value, str) or not value.strip():
        raise _fail(f'{where}: missing "package-path"; add e.g. {example}')
    parts = value.replace("\\", "/").split("/")
    if value.startswith(("/", "\\")) or any(p in ("", ".", "..") for p in parts) or len(parts) < 2:
        raise _fail(
            f"{where}: package-path {value!r} must be a relative path inside a package, "
            f"like {example}"
        )
    known = set(packages or ())
    # The longest leading run of folders that is a package owns the file ("a/b/data/x.scidx"
    # with packages a, a.b goes into a.b as "data/x.scidx").
    for cut in range(len(parts) - 1, 0, -1):
        package = ".".join(parts[:cut])
        if package in known:
            return "/".join(parts), package, "/".join(parts[cut:])
    listed = ", ".join(sorted(known)) or "none"
    raise _fail(
        f"{where}: package-path {value!r} is not inside a package of this project "
        f"(packages: {listed}); start it with the package's import path, like {example}"
    )


# ---------------------------------------------------------------------------------------------
# The build sub-command


class BuildScidx(Command):  # type: ignore[misc,unused-ignore]
    """Pack the docs named by ``[tool.scidx]`` into the package (``build_scidx``).

    Implements setuptools' ``SubCommand`` protocol (``editable_mode``, ``build_lib``,
    ``get_outputs``, ``get_output_mapping``, ``get_source_files``) so wheels, editable installs
    and sdists all handle the index.
    """

    description = "pack the Markdown docs named in [tool.scidx] into a .scidx index"
    user_options: ClassVar[list[tuple[str, str | None, str]]] = []

    editable_mode: bool = False
    build_lib: str | None
    build_base: str | None

    def initialize_options(self) -> None:
        """Reset the options (setuptools calls this before :meth:`finalize_options`)."""
        self.editable_mode = False
        self.build_lib = None
        self.build_base = None
        self._settings: _Settings | None = None

    def finalize_options(self) -> None:
        """Take ``build_lib`` from ``build_py`` and ``build_base`` from ``build``."""
        self.set_undefined_options("build_py", ("build_lib", "build_lib"))
        self.set_undefined_options("build", ("build_base", "build_base"))

    # -- helpers -------------------------------------------------------------------------------

    def settings(self) -> _Settings:
        """The validated ``[tool.scidx]`` table (read once per command object).

        Raises:
            SetupError: The table is invalid.
        """
        if self._settings is None:
            dist = self.distribution
            self._settings = _read_settings(_project_root(dist), list(dist.packages or ()))
        return self._settings

    def _in_build_lib(self) -> str:
        assert self.build_lib is not None  # set by finalize_options
        return os.path.join(self.build_lib, *self.settings().package_path.split("/"))

    def _in_place(self) -> Path:
        s = self.settings()
        build_py = self.get_finalized_command("build_py")
        package_dir = Path(build_py.get_package_dir(s.package))
        return (s.root / package_dir).joinpath(*s.resource.split("/"))

    # -- SubCommand protocol -------------------------------------------------------------------

    def get_outputs(self) -> list[str]:
        """The index inside ``build_lib``."""
        return [self._in_build_lib()]

    def get_output_mapping(self) -> dict[str, str]:
        """In editable mode, the ``build_lib`` path of the index → its in-place source path."""
        if not self.editable_mode:
            return {}
        return {self._in_build_lib(): str(self._in_place())}

    def get_source_files(self) -> list[str]:
        """The config file and every input file, relative to the project (for the sdist).

        Raises:
            SetupError: The inputs cannot be collected, or one lies outside the project folder
                (an sdist cannot carry it).
        """
        from scidx.pack.inputs import collect_inputs

        s = self.settings()
        try:
            inputs = [item.path for item in collect_inputs(s.config)]
        except ScidxError as exc:
            raise _fail(str(exc)) from None
        files: list[str] = []
        for path in ([s.config_file] if s.config_file else []) + inputs:
            rel = os.path.relpath(path, s.root)
            if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
                raise _fail(
                    f"input {path} is outside the project folder {s.root}, so the sdist cannot "
                    "include it; move it into the project or narrow the include globs"
                )
            files.append(Path(rel).as_posix())
        return files

    def run(self) -> None:
        """Pack the index (in place when editable, else via ``build/scidx`` into ``build_lib``).

        Raises:
            SetupError: The pack failed; the message is scidx's (what, where, how to fix).
        """
        from scidx.pack.fileio import atomic_write
        from scidx.pack.packer import pack_docs

        s = self.settings()
        if self.editable_mode:
            output = self._in_place()
        else:
            assert self.build_base is not None  # set by finalize_options
            # Outside build_lib, so the incremental sidecar never reaches the wheel while an
            # in-tree rebuild (pip builds in the project folder) still finds it.
            output = Path(self.build_base, "scidx", *s.package_path.split("/")).absolute()
        config = dataclasses.replace(s.config, output=output)
        try:
            result = pack_docs(config)
        except ScidxError as exc:
            raise _fail(f"packing the docs for {s.package_path} failed: {exc}") from None
        done = f"{output} is up to date" if result.up_to_date else f"packed {output}"
        _log.info("scidx: %s (%d files, %d chunks)", done, result.files, result.chunks)
        if self.editable_mode:
            return

        target = Path(self._in_build_lib())
        _remove_leftovers(target)
        try:
            with open(output, "rb") as src:
                atomic_write(target, lambda fh: shutil.copyfileobj(src, fh))
        except (OSError, ScidxError) as exc:
            raise _fail(f"cannot copy {output} into the build folder: {exc}") from None


def _remove_leftovers(target: Path) -> None:
    """Delete a stale sidecar or temp file beside ``target`` so it cannot reach the wheel."""
    folder = target.parent
    if not folder.is_dir():
        return
    temp_prefix = f".{target.name}.tmp."  # scidx.pack.packer.atomic_write's temp names
    for entry in folder.iterdir():
        if entry.name == target.name + _SIDECAR_SUFFIX or entry.name.startswith(temp_prefix):
            try:
                entry.unlink()
            except OSError:
                pass


# ---------------------------------------------------------------------------------------------
# The entry point


_BUILD_CLASSES: dict[type[Any], type[Any]] = {}


def _with_sub_command(build_cls: type[Any]) -> type[Any]:
    """A subclass of the project's ``build`` command that also runs ``build_scidx``, last."""
    if any(name == COMMAND for name, _ in build_cls.sub_commands):
        return build_cls
    cached = _BUILD_CLASSES.get(build_cls)
    if cached is None:
        # Last, so that it overwrites whatever build_py may have copied (a stale in-place index
        # left by an editable install) and runs after generated packages exist.
        sub_commands = [*build_cls.sub_commands, (COMMAND, None)]
        cached = type(build_cls.__name__, (build_cls,), {"sub_commands": sub_commands})
        _BUILD_CLASSES[build_cls] = cached
    return cached


def finalize_distribution_options(dist: Distribution) -> None:
    """Add ``build_scidx`` to projects whose pyproject.toml has a ``[tool.scidx]`` table.

    Registered as the ``setuptools.finalize_distribution_options`` entry point, so setuptools
    calls it for every distribution built where scidx is installed. Projects without the table
    are left untouched, and an unreadable pyproject.toml is left for setuptools to report.

    Args:
        dist: The distribution being built.
    """
    try:
        table = _tool_table(_project_root(dist))
    except (OSError, ValueError):
        return
    if table is None:
        return
    original: Callable[[str], type[Any]] = dist.get_command_class
    if getattr(original, "_scidx", False):
        return

    def get_command_class(command: str) -> type[Any]:
        # Wrapping the lookup (rather than editing dist.cmdclass, which a
        # [tool.setuptools.cmdclass] table later replaces wholesale) keeps build_scidx in the
        # build even when the project brings its own build command.
        if command == COMMAND:
            return BuildScidx
        cls = original(command)
        return _with_sub_command(cls) if command == "build" else cls

    get_command_class._scidx = True  # type: ignore[attr-defined]
    # An instance attribute shadows the method for this distribution only.
    setattr(dist, "get_command_class", get_command_class)  # noqa: B010
