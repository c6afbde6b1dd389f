"""hatchling plugin: pack a project's Markdown docs into its wheel at build time.

A project opts in with ``toolup-rag[cli]`` in ``[build-system] requires``, an (empty)
``[tool.hatch.build.hooks.scidx]`` table, which is how hatchling turns a build hook on, and the
same ``[tool.scidx]`` table the setuptools hook reads (:mod:`scidx.pack.project`)::

    [build-system]
    requires = ["hatchling", "toolup-rag[cli]"]
    build-backend = "hatchling.build"

    [tool.hatch.build.hooks.scidx]

    [tool.scidx]
    package-path = "mypkg/docs.scidx"
    include = ["docs/**/*.md"]

The guarantees are the setuptools hook's:

* wheel (``pip wheel .``, ``python -m build``, ``hatch build``): packs into
  ``build/scidx/<package-path>`` (the incremental ``.inputs`` sidecar stays there) and adds the
  index alone to the wheel at ``package-path``; an unchanged in-tree rebuild skips the pack.
* editable install (``pip install -e .``): packs in place into the package's source folder,
  where hatchling's editable wheel finds it.
* sdist: hatchling's sdist carries the project's files, so the docs (not the index) go along and
  a wheel built from it packs the same, byte-identical index.
* a failing pack stops the build with the scidx message (no traceback) and no wheel.

The hook is registered with hatchling's ``hatch`` entry-point group (``hatch_register_build_hook``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.plugin import hookimpl

from scidx.errors import ScidxError
from scidx.pack import project

__all__ = ["ScidxBuildHook", "hatch_register_build_hook"]

# Options hatchling itself reads from every [tool.hatch.build.hooks.<name>] table.
_HATCH_HOOK_KEYS = frozenset(
    ("dependencies", "require-runtime-dependencies", "require-runtime-features")
    + ("enable-by-default",)
)


class ScidxBuildHook(BuildHookInterface):  # type: ignore[type-arg,unused-ignore]
    """Pack the docs named by ``[tool.scidx]`` into the wheel (hook name ``scidx``)."""

    PLUGIN_NAME = "scidx"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Pack the index and add it to the wheel (or, editable, write it into the package).

        Args:
            version: The target's version: ``"standard"`` or ``"editable"``.
            build_data: hatchling's per-build data; the index joins its ``force_include``.
        """
        if self.target_name != "wheel":
            return  # the sdist carries the docs; a wheel built from it packs them
        misplaced = sorted(set(self.config) - _HATCH_HOOK_KEYS)
        if misplaced:
            self._abort(
                f"[tool.hatch.build.hooks.scidx] has {', '.join(misplaced)}; put the scidx "
                "settings in the [tool.scidx] table (the hook table only turns the hook on)"
            )
        root = Path(self.root)
        sources = self._package_sources()
        try:
            settings = project.read_settings(root, sources)
        except ScidxError as exc:
            self._abort(str(exc))
        if version == "editable":
            output = sources[settings.package].joinpath(*settings.resource.split("/"))
        else:
            output = root.joinpath("build", "scidx", *settings.package_path.split("/"))
        try:
            self.app.display_info(project.pack_project(settings, output))
        except ScidxError as exc:
            self._abort(f"packing the docs for {settings.package_path} failed: {exc}")
        if version != "editable":
            build_data["force_include"][str(output)] = settings.package_path

    def _package_sources(self) -> dict[str, Path]:
        """Each import package the wheel holds → its source folder.

        hatchling's ``packages`` (given or detected: ``src/mypkg``, ``mypkg``) name the top
        folders; every folder below one of them is a (sub)package, as setuptools'
        ``find_namespace_packages`` would list it.
        """
        config: Any = self.build_config
        packages: list[str] = list(getattr(config, "packages", ()))
        found: dict[str, Path] = {}
        for relative in packages:
            top = Path(self.root, relative)
            name = config.get_distribution_path(relative).replace("\\", "/").strip("/")
            if not top.is_dir() or not name:
                continue
            found[name.replace("/", ".")] = top
            for folder, dirs, _files in os.walk(top):
                dirs[:] = sorted(d for d in dirs if d.isidentifier())
                for d in dirs:
                    path = Path(folder, d)
                    dotted = ".".join(path.relative_to(top).parts)
                    found[f"{name.replace('/', '.')}.{dotted}"] = path
        return found

    def _abort(self, message: str) -> NoReturn:
        # app.abort prints the message and exits: a build error, not a traceback.
        self.app.abort(f"scidx: {message}")
        raise SystemExit(1)  # pragma: no cover - abort() has exited


@hookimpl
def hatch_register_build_hook() -> type[ScidxBuildHook]:
    """Register the ``scidx`` build hook (hatchling's plugin hook)."""
    return ScidxBuildHook
