"""Builds of a docs-carrying package the way pip does them for a user: isolated, by name.

Each build runs pip or ``python -m build`` *with* build isolation: the build requirements
(``setuptools``/``hatchling`` and ``toolup-rag[cli]``) are resolved by name into a fresh
environment. ``toolup-rag`` itself comes from a wheel of this checkout built once per module and
offered through ``PIP_FIND_LINKS``; everything else comes from the package index as pip's own
configuration says (CI reaches it). The sample projects are ``examples/packaged-docs``
(setuptools) and ``examples/packaged-docs-hatch`` (hatchling), copied to a temp folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from scidx.index.index import load
from scidx.pack.config import config_from_dict
from scidx.pack.packer import pack_docs

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TIMEOUT = 480


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def user_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """pip's environment for a user build: this checkout's wheel findable by name.

    The wheel is built once (without isolation: it is this project's own build, not the one
    under test); the user's pip configuration (index, mirrors, other find-links) is kept.
    """
    wheels = tmp_path_factory.mktemp("toolup-rag-wheel")
    env = {
        k: v for k, v in os.environ.items() if k not in ("PIP_NO_INDEX", "PIP_NO_BUILD_ISOLATION")
    }
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(wheels),
            str(ROOT),
        ],  # fmt: skip
        ROOT,
        env,
    )
    assert list(wheels.glob("toolup_rag-*.whl"))
    env["PIP_FIND_LINKS"] = " ".join(filter(None, [str(wheels), os.environ.get("PIP_FIND_LINKS")]))
    env["SCIDX_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    return env


def _project(example: str, dest: Path) -> Path:
    shutil.copytree(
        EXAMPLES / example,
        dest,
        ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "*.scidx", "*.scidx.*"),
    )
    return dest


def _cli_pack(project: Path, out: Path) -> bytes:
    """The index ``toolup-rag pack-docs`` makes from the project's ``[tool.scidx]`` settings."""
    table = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["scidx"]
    data = {k: v for k, v in table.items() if k != "package-path"} | {"output": str(out)}
    pack_docs(config_from_dict(data, root=project, path=project / "pyproject.toml"))
    return out.read_bytes()


def _wheel_index(wheel: Path, tmp: Path) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert "mypkg/docs.scidx" in names, names
        assert not [n for n in names if n.endswith((".inputs", ".tmp"))], names
        data = zf.read("mypkg/docs.scidx")
    (tmp / "from-wheel.scidx").write_bytes(data)
    index = load(tmp / "from-wheel.scidx")
    assert index.search("cache directory", k=1, mode="keyword")
    return data


@dataclass
class Build:
    """One user build of a sample project: where it ran, what it printed, the wheel it made."""

    project: Path
    log: str
    wheel: Path


# What a user types (-v on pip only so that the backend's own output reaches the test: pip shows
# it at its normal verbosity only when the build fails). `python -m build` by default makes an
# isolated sdist, then an isolated wheel from that sdist.
_BUILDS = {
    "pip-setuptools": (
        "packaged-docs",
        ["-m", "pip", "wheel", "-v", "--no-deps", "-w", "dist", "."],
    ),
    "pip-hatchling": (
        "packaged-docs-hatch",
        ["-m", "pip", "wheel", "-v", "--no-deps", "-w", "dist", "."],
    ),
    "build-setuptools": ("packaged-docs", ["-m", "build", "--outdir", "dist", "."]),
}


@pytest.fixture(scope="module")
def builds(user_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Build]:
    """The user builds, run at once: each waits mostly on the package index, not the CPU."""
    base = tmp_path_factory.mktemp("builds")
    running = {}
    for name, (example, args) in _BUILDS.items():
        project = _project(example, base / name)
        proc = subprocess.Popen(
            [sys.executable, *args], cwd=project, env=user_env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        running[name] = (project, proc)
    done = {}
    for name, (project, proc) in running.items():
        log, _ = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, f"{name} failed:\n{log[-6000:]}"
        (wheel,) = (project / "dist").glob("mypkg-*.whl")
        done[name] = Build(project, log, wheel)
    return done


@pytest.mark.parametrize("name", list(_BUILDS))
def test_isolated_build_by_name_puts_the_index_in_the_wheel(
    name: str, builds: dict[str, Build], tmp_path: Path
) -> None:
    build = builds[name]
    assert "--no-build-isolation" not in _BUILDS[name][1]
    assert "toolup-rag[cli]" in build.log  # resolved by name in the isolated environment
    assert _wheel_index(build.wheel, tmp_path) == _cli_pack(build.project, tmp_path / "cli.scidx")
    # The hook's one line, at the backend's normal verbosity.
    assert "scidx: mypkg/docs.scidx packed: 2 files, 4 chunks, hashing embeddings" in build.log


def test_the_sdist_carries_the_docs_not_the_index(builds: dict[str, Build]) -> None:
    (sdist,) = (builds["build-setuptools"].project / "dist").glob("mypkg-*.tar.gz")
    with tarfile.open(sdist) as tf:
        names = tf.getnames()
    assert "mypkg-1.0.0/docs/index.md" in names
    assert not [n for n in names if n.endswith((".scidx", ".inputs"))]


def test_hatch_editable_install_packs_in_place(user_env: dict[str, str], tmp_path: Path) -> None:
    project = _project("packaged-docs-hatch", tmp_path / "proj")
    # PEP 660's build_editable, called as pip calls it (this environment has hatchling).
    _run(
        [sys.executable, "-c", "import hatchling.build as b; print(b.build_editable('out'))"],
        project,
        user_env,
    )
    (wheel,) = (project / "out").glob("mypkg-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert not [n for n in zf.namelist() if "scidx" in n]  # found via the source folder
    in_place = project / "src" / "mypkg" / "docs.scidx"
    assert in_place.read_bytes() == _cli_pack(project, tmp_path / "cli.scidx")
    assert (project / "src" / "mypkg" / "docs.scidx.inputs").exists()


def test_hatch_hook_failure_is_one_message_without_traceback(
    user_env: dict[str, str], tmp_path: Path
) -> None:
    project = _project("packaged-docs-hatch", tmp_path / "proj")
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("maxChunkChars = 1200", "maxChunkChars = 5"))
    # Offline and without isolation (this environment has hatchling): only the message matters.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(tmp_path / "w"),
            ".",
        ],  # fmt: skip
        cwd=project,
        env=user_env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode != 0
    assert (
        f'scidx: {project}/pyproject.toml: "maxChunkChars" must be an integer from 200 to '
        "1000000, got 5" in proc.stdout + proc.stderr
    )
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not list(tmp_path.glob("w/*.whl"))


def test_hatch_hook_table_refuses_scidx_settings(user_env: dict[str, str], tmp_path: Path) -> None:
    project = _project("packaged-docs-hatch", tmp_path / "proj")
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text().replace(
        "[tool.hatch.build.hooks.scidx]\n", '[tool.hatch.build.hooks.scidx]\ninclude = ["x"]\n'
    )
    pyproject.write_text(text)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(tmp_path / "w"),
            ".",
        ],  # fmt: skip
        cwd=project,
        env=user_env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode != 0
    assert (
        "scidx: [tool.hatch.build.hooks.scidx] has include; put the scidx settings in the "
        "[tool.scidx] table (the hook table only turns the hook on)" in proc.stdout + proc.stderr
    )


def test_metadata_names_the_distribution(tmp_path: Path) -> None:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert table["project"]["name"] == "toolup-rag"
    for example in ("packaged-docs", "packaged-docs-hatch"):
        requires = tomllib.loads((EXAMPLES / example / "pyproject.toml").read_text())
        assert "toolup-rag[cli]" in requires["build-system"]["requires"]
    for name, reqs in table["project"]["optional-dependencies"].items():
        assert not [r for r in reqs if r.startswith("scidx[")], name
