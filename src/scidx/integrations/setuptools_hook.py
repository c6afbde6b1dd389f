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

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

# setuptools ships no type information (types-setuptools would add it); "unused-ignore" keeps
# mypy quiet in environments where the stubs are installed.
from setuptools import Command  # type: ignore[import-untyped,unused-ignore]
from setuptools.errors import SetupError  # type: ignore[import-untyped,unused-ignore]

from scidx.errors import ScidxError
from scidx.pack import project
from scidx.pack.project import ProjectSettings

if TYPE_CHECKING:
    from setuptools.dist import Distribution  # type: ignore[import-untyped,unused-ignore]

__all__ = ["COMMAND", "BuildScidx", "finalize_distribution_options"]

# setuptools routes the root logger to the build output (Command.announce takes distutils' own
# log levels before setuptools 65 and logging's after, so it is avoided).
_log = logging.getLogger(__name__)

#: Name of the build sub-command added to projects that have a ``[tool.scidx]`` table.
COMMAND = "build_scidx"


def _project_root(dist: Distribution) -> Path:
    # setuptools itself reads pyproject.toml from src_root or the current folder (the build
    # backend always runs in the project folder).
    return Path(getattr(dist, "src_root", None) or os.curdir).absolute()


def _fail(message: str) -> SetupError:
    return SetupError(f"scidx: {message}")


def _read_settings(root: Path, packages: list[str] | None) -> ProjectSettings:
    """:func:`scidx.pack.project.read_settings`, failing the build with its message.

    Raises:
        SetupError: The table is missing or invalid, naming the key and how to fix it.
    """
    try:
        return project.read_settings(root, packages or ())
    except ScidxError as exc:
        raise _fail(str(exc)) from None


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
        self._settings: ProjectSettings | None = None

    def finalize_options(self) -> None:
        """Take ``build_lib`` from ``build_py`` and ``build_base`` from ``build``."""
        self.set_undefined_options("build_py", ("build_lib", "build_lib"))
        self.set_undefined_options("build", ("build_base", "build_base"))

    # -- helpers -------------------------------------------------------------------------------

    def settings(self) -> ProjectSettings:
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
        try:
            return project.source_files(self.settings())
        except ScidxError as exc:
            raise _fail(str(exc)) from None

    def run(self) -> None:
        """Pack the index (in place when editable, else via ``build/scidx`` into ``build_lib``).

        Raises:
            SetupError: The pack failed; the message is scidx's (what, where, how to fix).
        """
        s = self.settings()
        if self.editable_mode:
            output = self._in_place()
        else:
            assert self.build_base is not None  # set by finalize_options
            # Outside build_lib, so the incremental sidecar never reaches the wheel while an
            # in-tree rebuild (pip builds in the project folder) still finds it.
            output = Path(self.build_base, "scidx", *s.package_path.split("/")).absolute()
        try:
            _log.info("%s", project.pack_project(s, output))
        except ScidxError as exc:
            raise _fail(f"packing the docs for {s.package_path} failed: {exc}") from None
        if self.editable_mode:
            return
        try:
            project.copy_index(output, Path(self._in_build_lib()))
        except ScidxError as exc:
            raise _fail(str(exc)) from None


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
        table = project.tool_table(_project_root(dist))
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
