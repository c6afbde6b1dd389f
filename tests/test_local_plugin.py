"""Provider plugins: a real package registering ``scidx.embedders``, installed into a fresh venv.

The plugin is built from source here and installed offline (``pip install --no-index
--no-build-isolation --no-deps``) into a temporary virtual environment that sees this
environment's packages (scidx, numpy, setuptools) through a ``.pth`` file. Packing and searching
then run in that venv, so the provider is found only through its entry point.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

PLUGIN_PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "scidx-tinyemb"
version = "0.1.0"
description = "A tiny scidx embedding provider (test fixture)"
requires-python = ">=3.10"

[project.entry-points."scidx.embedders"]
tinyemb = "scidx_tinyemb"

[tool.setuptools]
py-modules = ["scidx_tinyemb"]
"""

PLUGIN_MODULE = '''\
"""tinyemb: bag-of-words vectors, a minimal scidx provider plugin."""

import numpy as np
import xxhash

from scidx.embed.base import Embedder


class TinyEmbedder(Embedder):
    provider_id = "tinyemb"

    def __init__(self, dimensions=64, max_chars=200):
        self.dimensions = int(dimensions)
        self.max_chars = int(max_chars)
        # The model id is part of every cache key and of the stamp: anything that changes
        # vectors must change it.
        self.model_id = f"tiny-v1-c{self.max_chars}"
        self.truncated = []
        self.describe_input = None

    def embed_batch(self, texts):
        out = np.zeros((len(texts), self.dimensions), dtype=np.float64)
        for i, text in enumerate(texts):
            if len(text) > self.max_chars:
                label = self.describe_input(text) if self.describe_input else None
                self.truncated.append(label or f"input {i}")
                text = text[: self.max_chars]
            for word in text.lower().split():
                out[i, xxhash.xxh32_intdigest(word.strip(".,?!").encode()) % self.dimensions] += 1.0
        out[~out.any(axis=1), 0] = 1.0
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out.astype(np.float32)


def from_config(config):
    options = config.provider_options or {}
    return TinyEmbedder(config.dimensions or 64, options.get("maxChars", 200))


def query_embedder_from_stamp(stamp, **options):
    max_chars = int(str(stamp["model"]).rsplit("-c", 1)[1])
    return TinyEmbedder(stamp["dimensions"], max_chars)
'''

DOCS = {
    "pets.md": "# Pets\n\n## Cats\n\nCats purr and sleep.\n\n## Dogs\n\nDogs bark at the "
    "postman every single morning, loudly, for a long time, until he has gone away.\n",
}


@pytest.fixture(scope="module")
def plugin_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the tinyemb plugin installed from source, offline."""
    root = tmp_path_factory.mktemp("plugin")
    src = root / "src"
    src.mkdir()
    (src / "pyproject.toml").write_text(PLUGIN_PYPROJECT, encoding="utf-8")
    (src / "scidx_tinyemb.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # This environment's packages (scidx itself, numpy, setuptools) are visible in the new
    # venv, but the plugin is installed into the new venv only.
    ours = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "parent_env.pth").write_text(
        f"import site; site.addsitedir({ours!r})\n", encoding="utf-8"
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-index",
            "--no-build-isolation",
            "--no-deps",
            "--disable-pip-version-check",
            str(src),
        ],
        check=True,
    )
    return python


def cli(python: Path | str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = "import sys; from scidx.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([str(python), "-c", code, *args], capture_output=True, text=True, cwd=cwd)


def test_plugin_packs_and_searches(plugin_python: Path, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    for name, text in DOCS.items():
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    config = {
        "include": ["docs/**/*.md"],
        "output": "docs.scidx",
        "embeddingProvider": "tinyemb",
        "dimensions": 32,
        "providerOptions": {"maxChars": 60},
    }
    (tmp_path / "staticcorpus.json").write_text(json.dumps(config), encoding="utf-8")

    proc = cli(plugin_python, "pack-docs", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["embedded"] == 2 and summary["cacheHits"] == 0  # "# Pets" is folded
    assert summary["truncated"] == ["docs/pets.md:dogs:0"]  # the same contract as built-ins

    # Warm: the disk cache serves every vector (keyed by the plugin's model id).
    proc = cli(plugin_python, "pack-docs", "--json", "--force", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["embedded"] == 0

    proc = cli(plugin_python, "inspect", "docs.scidx", cwd=tmp_path)
    assert "provider: tinyemb / tiny-v1-c60 / 32 dims" in proc.stdout, proc.stdout
    proc = cli(
        plugin_python,
        "search",
        "docs.scidx",
        "cats purr",
        "--mode",
        "vector",
        "--json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["id"] == "docs/pets.md:cats:0"

    # Without the plugin (this environment): keyword search works, vector search says why not.
    proc = cli(sys.executable, "search", "docs.scidx", "cats", "--mode", "keyword", cwd=tmp_path)
    assert proc.returncode == 0 and "pets.md#cats" in proc.stdout, proc.stderr
    proc = cli(sys.executable, "search", "docs.scidx", "cats", cwd=tmp_path)
    assert proc.returncode == 2 and "'tinyemb'" in proc.stderr, proc.stderr
    proc = cli(sys.executable, "pack-docs", cwd=tmp_path)
    assert proc.returncode == 1 and '"tinyemb"' in proc.stderr, proc.stderr


def test_plugin_listed_as_a_provider(plugin_python: Path) -> None:
    code = textwrap.dedent(
        """
        from scidx.embed.registry import provider_names, resolve_provider
        assert provider_names() == ["hashing", "openai", "local", "static", "tinyemb"], (
            provider_names()
        )
        assert resolve_provider("tinyemb").TinyEmbedder.provider_id == "tinyemb"
        """
    )
    proc = subprocess.run([str(plugin_python), "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
