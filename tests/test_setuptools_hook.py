"""The setuptools build hook, end to end: real wheels, sdists and editable installs, offline.

Every build runs pip or ``python -m build`` in a subprocess with ``--no-build-isolation`` and no
index, using this environment's setuptools and scidx (whose
``setuptools.finalize_distribution_options`` entry point must be installed, as ``pip install -e .``
does). The sample project is the one in
``examples/packaged-docs``, copied to a temp folder, so the documented template is what is tested.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest
from setuptools.dist import Distribution

from scidx.integrations import setuptools_hook
from scidx.pack.config import config_from_dict
from scidx.pack.packer import pack_docs

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "examples" / "packaged-docs"
PIP_TIMEOUT = 120


def _has_entry_point() -> bool:
    from importlib.metadata import entry_points

    group = entry_points(group="setuptools.finalize_distribution_options")
    return any(
        ep.value == "scidx.integrations.setuptools_hook:finalize_distribution_options"
        for ep in group
    )


pytestmark = pytest.mark.skipif(
    not _has_entry_point(),
    reason="scidx's setuptools entry point is not installed; run `pip install -e .` again",
)


# ---------------------------------------------------------------------------------------------
# Helpers


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "OPENAI_"))}
    env.update(
        PIP_NO_INDEX="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        SCIDX_CACHE_DIR=str(cache),
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("SOURCE_DATE_EPOCH", None)
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False
    )


def _ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, f"{proc.args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _copy_template(dest: Path) -> Path:
    shutil.copytree(
        TEMPLATE,
        dest,
        ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "*.scidx", "*.scidx.*"),
    )
    return dest


def _pip_wheel(project: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-build-isolation",
            "--no-index",
            "--no-deps",
            "--wheel-dir",
            str(out),
            str(project),
        ],  # fmt: skip
        cwd=project,
        env=env,
    )


def _fresh_venv(path: Path) -> Path:
    """A new venv without packages of its own that sees this environment's site-packages.

    Returns:
        Its python executable.
    """
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(path)
    python = path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = _ok(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=False,
        )
    ).stdout.strip()
    # addsitedir (not a bare path line) so the parent's own .pth files, including scidx's
    # editable install, are processed too.
    parent = sysconfig.get_paths()["purelib"]
    Path(purelib, "_parent_env.pth").write_text(f"import site; site.addsitedir({parent!r})\n")
    return python


_LOAD = textwrap.dedent(
    """
    import json, sys
    import mypkg
    from scidx.index.index import load_resource
    idx = load_resource("mypkg", "docs.scidx")
    hits = idx.search("cache directory", k=1, mode="keyword")
    print(json.dumps({"file": mypkg.__file__, "source": idx.source, "chunks": len(idx),
                      "top": hits[0].id, "url": hits[0].url,
                      "links": mypkg.search_docs("timeouts")}))
    """
)


def _load_from(python: Path | str, cwd: Path, env: dict[str, str], prelude: str = "") -> dict:
    import json

    proc = _ok(_run([str(python), "-c", prelude + _LOAD], cwd=cwd, env=env))
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# A wheel built once for the module (each build costs about a second)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("hook")
    env = _env(base / "cache")
    project = _copy_template(base / "proj")
    _ok(_pip_wheel(project, base / "wheels", env))
    (wheel,) = (base / "wheels").glob("mypkg-*.whl")
    return {"base": base, "project": project, "wheel": wheel}


def test_wheel_holds_the_index_and_not_its_sidecar(built: dict[str, Path]) -> None:
    with zipfile.ZipFile(built["wheel"]) as zf:
        names = zf.namelist()
        data = zf.read("mypkg/docs.scidx")
    assert "mypkg/docs.scidx" in names
    assert not [n for n in names if ".inputs" in n or ".tmp" in n or n.startswith("docs/")]
    # The sidecar stayed in build/scidx (so an in-tree rebuild is incremental).
    assert (built["project"] / "build/scidx/mypkg/docs.scidx.inputs").is_file()
    # Exactly what `toolup-rag pack-docs` makes of the same settings.
    config = config_from_dict(
        {
            "include": ["docs/**/*.md"],
            "maxChunkChars": 1200,
            "urlTemplate": "https://github.com/example/mypkg/blob/main/{source}#{anchor}",
            "output": str(built["base"] / "direct.scidx"),
        },
        root=built["project"],
    )
    pack_docs(config, use_cache=False)
    assert data == (built["base"] / "direct.scidx").read_bytes()


def test_installed_wheel_loads_with_load_resource(built: dict[str, Path], tmp_path: Path) -> None:
    env = _env(tmp_path / "cache")
    python = _fresh_venv(tmp_path / "venv")
    _ok(
        _run([str(python), "-m", "pip", "install", "--no-deps", str(built["wheel"])], tmp_path, env)
    )
    got = _load_from(python, tmp_path, env)
    assert Path(got["file"]).is_relative_to(tmp_path / "venv")
    assert got["top"] == "docs/guide/configure.md:cache-directory:0"
    assert got["url"] == (
        "https://github.com/example/mypkg/blob/main/docs/guide/configure.md#cache-directory"
    )
    assert got["links"][0].endswith("configure.md#timeouts")
    assert got["chunks"] == 4  # "# Configuration" has no text of its own: folded


def test_wheel_loads_from_a_zip_import(built: dict[str, Path], tmp_path: Path) -> None:
    env = _env(tmp_path / "cache")
    prelude = f"import sys; sys.path.insert(0, {str(built['wheel'])!r})\n"
    got = _load_from(sys.executable, tmp_path, env, prelude)
    assert got["file"].startswith(str(built["wheel"]))  # imported from inside the zip
    assert got["source"] == "mypkg:docs.scidx"  # read into memory: no file to map
    assert got["top"] == "docs/guide/configure.md:cache-directory:0"


def test_sdist_carries_the_docs_and_its_wheel_the_same_index(
    built: dict[str, Path], tmp_path: Path
) -> None:
    """``python -m build``: sdist first, then the wheel from the unpacked sdist."""
    env = _env(tmp_path / "cache")
    project = _copy_template(tmp_path / "proj")
    # The staticcorpus.json variant: its "output" is ignored, the file itself goes in the sdist.
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text()
    start = text.index("include = ")
    pyproject.write_text(text[:start] + 'config = "staticcorpus.json"\n')
    (project / "staticcorpus.json").write_text(
        '{"include": ["docs/**/*.md"], "maxChunkChars": 1200, "output": "ignored.scidx",\n'
        ' "urlTemplate": "https://github.com/example/mypkg/blob/main/{source}#{anchor}"}\n'
    )
    proc = _run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path / "dist")],
        project,
        env,
    )
    _ok(proc)
    (sdist,) = (tmp_path / "dist").glob("*.tar.gz")
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    assert {"docs/index.md", "docs/guide/configure.md", "staticcorpus.json"} <= names
    assert not [n for n in names if n.endswith((".scidx", ".inputs"))]
    assert not (project / "ignored.scidx").exists()
    with zipfile.ZipFile(wheel) as zf, zipfile.ZipFile(built["wheel"]) as direct:
        assert zf.read("mypkg/docs.scidx") == direct.read("mypkg/docs.scidx")


@pytest.mark.parametrize("mode", ["lenient", "strict"])
def test_editable_install_packs_in_place(tmp_path: Path, mode: str) -> None:
    env = _env(tmp_path / "cache")
    project = _copy_template(tmp_path / "proj")
    python = _fresh_venv(tmp_path / "venv")
    install = [
        str(python), "-m", "pip", "install", "--no-build-isolation", "--no-deps",
        "--config-settings", f"editable_mode={mode}", "-e", str(project),
    ]  # fmt: skip
    _ok(_run(install, tmp_path, env))
    assert (project / "src/mypkg/docs.scidx").is_file()
    assert (project / "src/mypkg/docs.scidx.inputs").is_file()
    got = _load_from(python, tmp_path, env)
    assert got["top"] == "docs/guide/configure.md:cache-directory:0"

    # Edited docs show up after re-running the editable install.
    (project / "docs/guide/configure.md").write_text(
        "# Configuration\n\n## Proxies\n\nproxy text\n"
    )
    _ok(_run(install, tmp_path, env))
    code = (
        "from scidx.index.index import load_resource; "
        "print(load_resource('mypkg', 'docs.scidx').search('proxy', k=1)[0].id)"
    )
    out = _ok(_run([str(python), "-c", code], tmp_path, env)).stdout.strip()
    assert out == "docs/guide/configure.md:proxies:0"


def test_failing_pack_fails_the_build_with_the_scidx_message(tmp_path: Path) -> None:
    env = _env(tmp_path / "cache")
    project = _copy_template(tmp_path / "proj")
    (project / "docs/bad.md").write_bytes(b"# Bad\n\n\xff broken\n")
    proc = _pip_wheel(project, tmp_path / "wheels", env)
    assert proc.returncode != 0
    assert (
        "error: scidx: packing the docs for mypkg/docs.scidx failed: docs/bad.md: not valid "
        "UTF-8 at byte offset 7 (byte 0xff); re-save the file as UTF-8 or exclude it"
    ) in proc.stdout + proc.stderr
    assert not list((tmp_path / "wheels").glob("*.whl"))
    assert not list(project.glob("build/lib/mypkg/*.scidx*"))


def test_project_without_tool_scidx_is_untouched(tmp_path: Path) -> None:
    env = _env(tmp_path / "cache")
    project = tmp_path / "plain"
    (project / "plain").mkdir(parents=True)
    (project / "plain/__init__.py").write_text("")
    (project / "docs").mkdir()
    (project / "docs/index.md").write_text("# Docs\n")
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "plain"\nversion = "1"\n[tool.other]\nx = 1\n'
    )
    _ok(_pip_wheel(project, tmp_path / "wheels", env))
    (wheel,) = (tmp_path / "wheels").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert not [n for n in zf.namelist() if "scidx" in n]
    assert not (project / "build/scidx").exists()


# ---------------------------------------------------------------------------------------------
# The entry point and [tool.scidx] validation, in process


@pytest.mark.parametrize(
    "pyproject",
    [None, "", "[tool.other]\nx = 1\n", "this is not toml = = =\n", b"\xff\xfe"],
    ids=["no-pyproject", "empty", "other-tool", "invalid-toml", "not-utf8"],
)
def test_entry_point_is_a_noop_without_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pyproject: str | bytes | None
) -> None:
    monkeypatch.chdir(tmp_path)
    if isinstance(pyproject, bytes):
        (tmp_path / "pyproject.toml").write_bytes(pyproject)
    elif pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    dist = Distribution({"name": "plain", "packages": []})  # runs the entry point
    assert "get_command_class" not in vars(dist)
    assert dist.get_command_class("build").__name__ == "build"
    assert not any(n == "build_scidx" for n, _ in dist.get_command_obj("build").sub_commands)


def test_entry_point_adds_the_sub_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.scidx]\npackage-path = "p/d.scidx"\n')
    dist = Distribution({"name": "p", "packages": ["p"]})
    build = dist.get_command_obj("build")
    assert ("build_scidx", None) in build.sub_commands
    assert dist.get_command_class("build_scidx") is setuptools_hook.BuildScidx
    # Idempotent: a second call does not wrap twice.
    setuptools_hook.finalize_distribution_options(dist)
    assert [n for n, _ in dist.get_command_class("build").sub_commands].count("build_scidx") == 1


def test_sub_command_survives_a_project_build_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from setuptools.command.build import build

    class ProjectBuild(build):
        pass

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.scidx]\npackage-path = "p/d.scidx"\n')
    dist = Distribution({"name": "p", "packages": ["p"]})
    # What a [tool.setuptools.cmdclass] table does after the plugin ran: replace the mapping.
    dist.cmdclass = {"build": ProjectBuild}
    cls = dist.get_command_class("build")
    assert issubclass(cls, ProjectBuild)
    assert [n for n, _ in cls.sub_commands][-1] == "build_scidx"


def test_sdist_refuses_inputs_outside_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Globs cannot leave the config folder, but a config file outside the project can.
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared/a.md").write_text("# A\n")
    (tmp_path / "shared/staticcorpus.json").write_text('{"include": ["*.md"], "output": "x"}')
    project = tmp_path / "proj"
    (project / "mypkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[tool.scidx]\npackage-path = "mypkg/docs.scidx"\nconfig = "../shared/staticcorpus.json"\n'
    )
    monkeypatch.chdir(project)
    command = Distribution({"name": "p", "packages": ["mypkg"]}).get_command_obj("build_scidx")
    command.ensure_finalized()
    with pytest.raises(setuptools_hook.SetupError) as info:
        command.get_source_files()
    assert str(info.value) == (
        f"scidx: input {tmp_path / 'shared/staticcorpus.json'} is outside the project folder "
        f"{project}, so the sdist cannot include it; move it into the project or narrow the "
        "include globs"
    )


def _settings_error(tmp_path: Path, table: str, packages: list[str] | None = None) -> str:
    (tmp_path / "pyproject.toml").write_text("[tool.scidx]\n" + table)
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs/a.md").write_text("# A\n")
    with pytest.raises(setuptools_hook.SetupError) as info:
        setuptools_hook._read_settings(tmp_path, ["mypkg"] if packages is None else packages)
    return str(info.value).replace(str(tmp_path), "ROOT")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'package-path = "mypkg/docs.scidx"\ninclude = ["docs/*.md"]\noutput = "x.scidx"\n',
            'scidx: ROOT/pyproject.toml [tool.scidx]: remove "output"; the index is written '
            'inside the package at "package-path" (e.g. package-path = "mypkg/docs.scidx")',
        ),
        (
            'package_path = "mypkg/docs.scidx"\ninclude = ["docs/*.md"]\n',
            'scidx: ROOT/pyproject.toml [tool.scidx]: unknown key "package_path"; '
            'did you mean "package-path"?',
        ),
        (
            'include = ["docs/*.md"]\n',
            'scidx: ROOT/pyproject.toml [tool.scidx]: missing "package-path"; add e.g. '
            'package-path = "mypkg/docs.scidx"',
        ),
        (
            'package-path = "../docs.scidx"\ninclude = ["docs/*.md"]\n',
            "scidx: ROOT/pyproject.toml [tool.scidx]: package-path '../docs.scidx' must be a "
            'relative path inside a package, like package-path = "mypkg/docs.scidx"',
        ),
        (
            'package-path = "other/docs.scidx"\ninclude = ["docs/*.md"]\n',
            "scidx: ROOT/pyproject.toml [tool.scidx]: package-path 'other/docs.scidx' is not "
            "inside a package of this project (packages: mypkg); start it with the package's "
            'import path, like package-path = "mypkg/docs.scidx"',
        ),
        (
            'package-path = "mypkg/docs.scidx"\nconfig = "staticcorpus.json"\n'
            "maxChunkChars = 900\n",
            "scidx: ROOT/pyproject.toml [tool.scidx]: has both config = 'staticcorpus.json' and "
            "inline settings (maxChunkChars); keep one of them",
        ),
        (
            'package-path = "mypkg/docs.scidx"\n',
            'scidx: ROOT/pyproject.toml [tool.scidx]: missing "include"; add e.g. '
            'include = ["docs/**/*.md"] (or config = "staticcorpus.json")',
        ),
        (
            'package-path = "mypkg/docs.scidx"\nconfig = "missing.json"\n',
            "scidx: ROOT/missing.json: config file not found; create it (see "
            "staticcorpus.example.json) or pass the right path",
        ),
        (
            'package-path = "mypkg/docs.scidx"\ninclude = ["docs/*.md"]\nmaxChunkChars = 5\n',
            'scidx: ROOT/pyproject.toml: "maxChunkChars" must be an integer from 200 to 1000000, '
            "got 5",
        ),
        ("scidx = 1\n", 'scidx: ROOT/pyproject.toml [tool.scidx]: unknown key "scidx"'),
    ],
    ids=[
        "output",
        "typo",
        "no-package-path",
        "escaping-path",
        "unknown-package",
        "config-and-inline",
        "no-include",
        "missing-config",
        "bad-setting",
        "unknown",
    ],
)
def test_tool_table_errors_say_what_and_how_to_fix(
    tmp_path: Path, table: str, message: str
) -> None:
    assert _settings_error(tmp_path, table) == message


def test_package_path_goes_to_the_deepest_package(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.scidx]\npackage-path = "a/b/data/x.scidx"\ninclude = ["docs/*.md"]\n'
    )
    settings = setuptools_hook._read_settings(tmp_path, ["a", "a.b"])
    assert (settings.package, settings.resource) == ("a.b", "data/x.scidx")
