"""Shared fixtures.

Tests that need the read-only material in ``../shared`` use the ``shared_dir`` fixture. On a user's
fresh clone it is absent and those tests skip; CI sets ``SCIDX_REQUIRE_SHARED=1``, which turns the
skip into a failure so CI always runs them.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def _need_shared(sub: str = "") -> Path:
    path = SHARED / sub if sub else SHARED
    if not path.exists():
        msg = f"{path} is absent (the shared corpora live beside the project root)"
        if os.environ.get("SCIDX_REQUIRE_SHARED") == "1":
            pytest.fail(msg + "; SCIDX_REQUIRE_SHARED=1 requires it", pytrace=False)
        pytest.skip(msg)
    return path


@pytest.fixture
def shared_dir() -> Path:
    """The ``../shared`` folder (skip, or fail under SCIDX_REQUIRE_SHARED=1, when absent)."""
    return _need_shared()


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Point the embedding cache at a temp dir and clear the OpenAI env for every test."""
    monkeypatch.setenv("SCIDX_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The web tests' folder: ``docs.scidx`` and ``faq.scidx`` of the web server's records."""
    from scidx.pack.packer import pack_records
    from support.web_server import OTHER, RECORDS, URL_TEMPLATE

    folder = tmp_path_factory.mktemp("web")
    pack_records(RECORDS, folder / "docs.scidx", url_template=URL_TEMPLATE, use_cache=False)
    pack_records(OTHER, folder / "faq.scidx", url_template=URL_TEMPLATE, use_cache=False)
    return folder


@pytest.fixture(scope="session")
def minilm() -> Path:
    """The shared int8 MiniLM folder, its files verified against PROVENANCE.md's sha256 sums."""
    folder = _need_shared("models/all-MiniLM-L6-v2-int8")
    provenance = (folder / "PROVENANCE.md").read_text(encoding="utf-8")
    sums = dict(re.findall(r"\|\s*`([^`]+)`\s*\|.*\|\s*([0-9a-f]{64})\s*\|", provenance))
    from support.models import MODEL_FILES

    assert set(sums) == set(MODEL_FILES), sums
    for name, want in sums.items():
        got = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        assert got == want, f"{folder / name}: sha256 {got}, PROVENANCE.md says {want}"
    return folder


@pytest.fixture
def _no_model_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No model location or Hugging Face cache leaks in from the machine; never go online.

    The local-provider modules use it for every test (``pytest.mark.usefixtures``).
    """
    monkeypatch.delenv("SCIDX_MODEL_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path_factory.mktemp("hf-empty")))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
