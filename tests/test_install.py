"""Installing scidx: the runtime alone is numpy + msgpack + xxhash, and it loads and searches.

A real virtual environment gets the wheel built from this working tree and nothing else but the
runtime's three dependencies (wheels of the versions installed here, from pip's cache or the
package index); ``pip list`` must show exactly those. The CLI, run without its extra, names the
pip command and exits 1. The setuptools plugin, loaded by every setuptools build in an
environment where scidx is installed, imports nothing heavy for a project without [tool.scidx].
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest

from scidx.pack.packer import pack_records

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = {"numpy", "msgpack", "xxhash"}


def _run(cmd: list[str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(
        cmd,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="module")
def runtime_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("runtime-venv")
    wheels = base / "wheels"
    pins = [f"{name}=={metadata.version(name)}" for name in sorted(RUNTIME)]
    got = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--only-binary=:all:",
            "--no-deps",
            "-d",
            str(wheels),
            *pins,
        ],
        base,
    )
    if got.returncode != 0:
        if os.environ.get("SCIDX_REQUIRE_SHARED") == "1":
            pytest.fail(f"cannot fetch the runtime wheels: {got.stderr[-2000:]}")
        pytest.skip("the runtime dependencies' wheels are neither cached nor downloadable here")
    built = _run(
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
        ],
        base,
    )
    assert built.returncode == 0, built.stderr
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True, symlinks=os.name != "nt").create(env_dir)
    python = env_dir / "bin" / "python"
    wheel = next(wheels.glob("toolup_rag-*.whl"))
    installed = _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--find-links",
            str(wheels),
            str(wheel),
        ],
        base,
    )
    assert installed.returncode == 0, installed.stderr
    return env_dir


def test_the_runtime_installs_alone(runtime_venv: Path) -> None:
    python = runtime_venv / "bin" / "python"
    listed = _run([str(python), "-m", "pip", "list", "--format=json"], runtime_venv)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert names - {"pip", "setuptools"} == RUNTIME | {"toolup-rag"}


def test_the_runtime_loads_and_searches(runtime_venv: Path, tmp_path: Path) -> None:
    index = tmp_path / "docs.scidx"
    pack_records(
        [
            {"id": "a", "title": "Logs", "text": "Ship nginx access logs to the collector."},
            {"id": "b", "title": "Cache", "text": "The embedding cache lives in a folder."},
        ],
        index,
        use_cache=False,
    )
    script = (
        "import json, sys, scidx\n"
        "idx = scidx.load(sys.argv[1])\n"
        "out = {m: [h.id for h in idx.search('nginx logs', k=1, mode=m)]\n"
        "       for m in ('keyword', 'hybrid')}\n"
        "heavy = {'openai', 'typer', 'rich', 'markdown_it', 'platformdirs'} & set(sys.modules)\n"
        "print(json.dumps({'hits': out, 'heavy': sorted(heavy)}))\n"
    )
    proc = _run([str(runtime_venv / "bin" / "python"), "-c", script, str(index)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"hits": {"keyword": ["a"], "hybrid": ["a"]}, "heavy": []}


def test_a_static_index_searches_with_the_runtime_alone(runtime_venv: Path, tmp_path: Path) -> None:
    """The shipped token table is in the wheel: hybrid search needs no extra and no model."""
    from scidx.embed.static import StaticEmbedder, load_table

    index = tmp_path / "static.scidx"
    pack_records(
        [
            {"id": "a", "title": "Logs", "text": "Ship nginx access logs to the collector."},
            {"id": "b", "title": "Cache", "text": "The embedding cache lives in a folder."},
        ],
        index,
        embedder=StaticEmbedder(load_table()),
        use_cache=False,
    )
    script = (
        "import json, sys, scidx\n"
        "idx = scidx.load(sys.argv[1])\n"
        "hits = [h.id for h in idx.search('nginx logs', k=2, mode='hybrid')]\n"
        "heavy = {'onnxruntime', 'tokenizers', 'typer'} & set(sys.modules)\n"
        "print(json.dumps({'hits': hits, 'heavy': sorted(heavy)}))\n"
    )
    proc = _run([str(runtime_venv / "bin" / "python"), "-c", script, str(index)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"hits": ["a"], "heavy": []}


def test_the_cli_without_its_extra_names_the_pip_command(runtime_venv: Path) -> None:
    proc = _run([str(runtime_venv / "bin" / "toolup-rag"), "--help"], runtime_venv)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "error: the toolup-rag command needs the CLI extra "
        "(typer, rich, markdown_it, platformdirs missing): pip install 'toolup-rag[cli]'"
    ]


def test_the_setuptools_plugin_is_light_without_a_scidx_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "plain"\nversion = "1"\n')
    script = (
        "import sys, setuptools\n"
        "before = set(sys.modules)\n"
        "from setuptools.dist import Distribution\n"
        "from scidx.integrations.setuptools_hook import finalize_distribution_options\n"
        "finalize_distribution_options(Distribution())\n"
        "new = set(sys.modules) - before\n"
        "print(sorted(m for m in new if m.split('.')[0] in\n"
        "      {'numpy', 'msgpack', 'xxhash', 'openai', 'typer', 'rich', 'markdown_it'}\n"
        "      or m.startswith(('scidx.pack.', 'scidx.index', 'scidx.embed'))\n"
        # The [tool.scidx] reader is the one packer module it needs: stdlib only.
        "      and m != 'scidx.pack.project'))\n"
    )
    proc = _run([sys.executable, "-c", script], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_the_wheel_and_sdist_carry_the_licence(tmp_path: Path) -> None:
    import tarfile
    import zipfile

    proc = _run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    wheel = next(tmp_path.glob("toolup_rag-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    # The vendored Snowball stemmers (Python and JS) travel with their BSD licence.
    assert "License-Expression: MIT AND BSD-3-Clause" in meta
    assert any(
        n.endswith(".dist-info/licenses/src/scidx/snowball/_generated/COPYING") for n in names
    )
    assert {
        "scidx/snowball/_generated/COPYING",
        "scidx/snowball/_generated/german_stemmer.py",
        "scidx/web/static/scidx-stem.js",
    } <= set(names)
    # The static token table and its licence, attribution and provenance (issue 41).
    data = "scidx/embed/data/"
    for name in ("all-MiniLM-L6-v2-static-d128.scidxtok", "LICENSE", "NOTICE.md"):
        assert data + name in names, name
    assert data + "all-MiniLM-L6-v2-static-d128.scidxtok.provenance.json" in names
    sdist = next(tmp_path.glob("toolup_rag-*.tar.gz"))
    with tarfile.open(sdist) as tf:
        assert any(n.endswith("/LICENSE") for n in tf.getnames())
