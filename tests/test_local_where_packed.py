"""A local-model index is searchable where it was packed, and `serve` says when it is not.

Issue 22 item 6: packed with ``"model": "<absolute path>"``, the index is searchable on the same
machine with no flag (through :mod:`scidx.embed.model_record`, outside the index, so the index
bytes stay the same on every machine); ``serve --model-dir``; ``serve`` refuses to start (exit 2)
when the query model is missing unless ``--keyword-only``; visitors never see server paths.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from scidx.embed import model_record
from scidx.pack.packer import pack_docs
from support.cli import run
from support.models import copy_model, make_project
from support.served import Served

pytestmark = pytest.mark.usefixtures("_no_model_env")


@pytest.fixture
def packed(minilm: Path, tmp_path: Path) -> tuple[Path, Path]:
    """An index packed with a private copy of the model, by absolute path: (index, model)."""
    model = copy_model(minilm, tmp_path / "models" / "all-MiniLM-L6-v2-int8")
    pack_docs(make_project(tmp_path / "proj", model.absolute()))
    return tmp_path / "proj" / "docs.scidx", model


def test_searchable_right_after_packing_with_no_flag(
    packed: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    index, model = packed
    code, out, err = run(["search", str(index), "which pet purrs and sleeps all day"], capsys)
    assert code == 0 and "pets.md#cats" in out.splitlines()[0], err
    # The record lives outside the index, which holds no path of this machine.
    assert str(model).encode() not in index.read_bytes()
    assert model_record.recall(json.loads(_stamp(index))["modelHash"]) == model


def _stamp(index: Path) -> str:
    from scidx.index.index import load

    with load(index) as idx:
        return json.dumps(idx.stamp)


def test_the_record_stays_out_of_the_index(
    minilm: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two machines with the model at the same path, one with a record, one without (and
    # --no-cache, so nothing is shared): the same bytes.
    model = copy_model(minilm, tmp_path / "m" / "all-MiniLM-L6-v2-int8")
    outs = []
    for machine in ("a", "b"):
        monkeypatch.setenv("SCIDX_CACHE_DIR", str(tmp_path / machine / "cache"))
        cfg = make_project(tmp_path / machine / "proj", model.absolute())
        pack_docs(cfg, use_cache=False)
        outs.append((tmp_path / machine / "proj" / "docs.scidx").read_bytes())
        assert (tmp_path / machine / "cache" / model_record.RECORD_NAME).exists()
    assert outs[0] == outs[1]


def test_a_moved_model_is_an_error_naming_the_fix(
    packed: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    index, model = packed
    shutil.rmtree(model)
    code, _, err = run(["search", str(index), "cat"], capsys)
    assert code == 2
    assert "all-MiniLM-L6-v2-int8" in err and "--model-dir" in err and "SCIDX_MODEL_DIR" in err


def test_a_corrupt_record_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCIDX_CACHE_DIR", str(tmp_path))
    for junk in (b"\xff\xfe", b"[1, 2]", b'{"abc": 5}', b'{"abc": "relative/path"}'):
        (tmp_path / model_record.RECORD_NAME).write_bytes(junk)
        assert model_record.recall("abc") is None
    model_record.remember("abc", tmp_path)
    assert model_record.recall("abc") == tmp_path


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scidx", "serve", *args, "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_serve_refuses_an_index_whose_query_model_is_missing(packed: tuple[Path, Path]) -> None:
    index, model = packed
    shutil.rmtree(model)
    result = _serve(str(index))
    assert result.returncode == 2, result.stderr
    err = result.stderr
    assert err.startswith(f"error: index docs ({index}) cannot embed queries here: ")
    assert err.rstrip().endswith(
        "Fix: pass --model-dir DIR (the model's folder), or serve it with keyword search only: "
        "--keyword-only"
    )
    assert "Traceback" not in err and result.stdout == ""


def test_serve_model_dir_and_keyword_only(
    packed: tuple[Path, Path],
    minilm: Path,
) -> None:
    index, model = packed
    shutil.rmtree(model)
    served = Served(str(index), "--port", "0", "--model-dir", str(minilm))
    try:
        with httpx.Client(base_url=served.url, timeout=30) as c:
            answer = c.get("/search", params={"q": "which pet purrs", "mode": "vector"})
            assert (
                answer.status_code == 200 and answer.json()["hits"][0]["source"] == "docs/pets.md"
            )
    finally:
        assert served.stop() == 0
    served = Served(str(index), "--port", "0", "--keyword-only")
    try:
        with httpx.Client(base_url=served.url, timeout=30) as c:
            assert c.get("/search", params={"q": "cat"}).json()["hits"][0]["anchor"] == "cats"
            refused = c.get("/search", params={"q": "cat", "mode": "vector"})
            assert refused.status_code == 503
            message = refused.json()["error"]["message"]
            # What a visitor sees: no server path, no Python call, no flag of the server.
            assert message == (
                "vector and hybrid search are not available for this index on this server (its "
                'query embeddings cannot be computed here); search with mode="keyword"'
            )
    finally:
        assert served.stop() == 0
