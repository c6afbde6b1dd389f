"""The static search bundle (``toolup-rag export-web``): bytes, names, atomic writes, refusals.

Keyword parity with Python in a real browser is tests/test_web_bundle_browser.py.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import xxhash

from scidx.cli import main
from scidx.errors import OutputError
from scidx.export.web_bundle import MANIFEST_NAME, build_web_bundle, write_web_bundle
from scidx.index.index import load
from scidx.pack.packer import pack_docs

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def docs_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    shutil.copytree(ROOT / "fixtures" / "docs", folder / "docs")
    config = folder / "staticcorpus.json"
    config.write_text(
        json.dumps(
            {
                "include": ["docs/**/*.md"],
                "output": "site.scidx",
                "urlTemplate": "/site/{page}#{anchor}",
            }
        ),
        encoding="utf-8",
    )
    pack_docs(config, use_cache=False)
    return folder / "site.scidx"


def test_same_index_same_bytes_and_content_hashed_names(docs_index: Path) -> None:
    with load(docs_index) as idx:
        first = build_web_bundle(idx)
    with load(docs_index) as idx:
        assert build_web_bundle(idx) == first
    manifest = json.loads(first[MANIFEST_NAME])
    assert manifest["format"] == "scidx-web/2"
    assert manifest["vectors"] is None  # the hashing provider: keyword only
    immutable = [n for n in first if n not in (MANIFEST_NAME, "index.html")]
    assert immutable
    for name in immutable:
        if name.endswith(".bin"):
            gzip.decompress(first[name])  # every shard and fragment is one gzip member
        if name.startswith("pages/"):
            continue
        digest = name.rsplit("/", 1)[-1].split(".")[-2]
        assert xxhash.xxh3_64_hexdigest(first[name]).startswith(digest), name
    # A page's fragment files are named by the hash of all of them, in order: immutable too.
    table = json.loads(gzip.decompress(first[manifest["pages"]]))
    per = table["pageChunks"]
    starts = list(np.cumsum(table["pageRows"])) + [manifest["chunks"]]
    assert len(table["files"]) == len(starts) - 1
    for page, name in enumerate(table["files"]):
        rows = int(starts[page + 1] - starts[page])
        pieces = [first[f"pages/{name}-{n}.bin"] for n in range(-(-rows // per))]
        assert xxhash.xxh3_64_hexdigest(b"".join(pieces)).startswith(name)
        sizes = [len(json.loads(gzip.decompress(b))["chunks"]) for b in pieces]
        assert sum(sizes) == rows and max(sizes) <= per
    assert sum(1 for n in first if n.startswith("pages/")) == sum(
        -(-int(b - a) // per) for a, b in zip(starts, starts[1:], strict=False)
    )
    referenced = {s[1] for s in manifest["shards"]} | {manifest["pages"], manifest["reader"]}
    assert referenced <= set(first)
    assert manifest["terms"] > 100 and manifest["chunks"] == len(load(docs_index))
    assert manifest["fusion"]["vectorFloor"] is None  # hashing: vectors add no chunk


def test_manifest_carries_the_index_vector_floor() -> None:
    """The reader's evidence rule reads ``fusion.vectorFloor``: the index's own, as opened."""
    import numpy as np

    from scidx.fusion import DEFAULT_FUSION
    from scidx.index.index import load_bytes
    from support.indexes import DOCS, build_arrays, write_arrays

    stamp = {"provider": "openai", "model": "m", "dimensions": 4, "normalize": True}
    vectors = np.eye(len(DOCS), 4, dtype=np.float32)
    arrays, meta = build_arrays(DOCS, vectors=vectors, stamp=stamp)
    meta["fusion"] = {"method": "weighted-sum", "alpha": 0.4, "vectorFloor": 0.3}
    with load_bytes(write_arrays(arrays, meta), source="floor.scidx") as idx:
        manifest = json.loads(build_web_bundle(idx)[MANIFEST_NAME])
    assert manifest["fusion"] == {**DEFAULT_FUSION, "alpha": 0.4, "vectorFloor": 0.3}
    assert manifest["vectors"]["dimensions"] == 4


def test_write_replaces_a_previous_bundle_atomically(docs_index: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    report = write_web_bundle(docs_index, out)
    assert (out / MANIFEST_NAME).is_file() and (out / "index.html").is_file()
    assert report.files == sum(1 for p in out.rglob("*") if p.is_file())
    (out / "stale.txt").write_text("left from an old bundle", encoding="utf-8")
    write_web_bundle(docs_index, out)
    assert not (out / "stale.txt").exists()  # the folder was swapped as a whole
    assert [p.name for p in tmp_path.iterdir()] == ["bundle"]  # no temp folder left behind


def test_a_folder_that_is_not_a_bundle_is_never_replaced(docs_index: Path, tmp_path: Path) -> None:
    precious = tmp_path / "site"
    precious.mkdir()
    (precious / "notes.md").write_text("mine", encoding="utf-8")
    with pytest.raises(OutputError, match="holds other files"):
        write_web_bundle(docs_index, precious)
    assert (precious / "notes.md").read_text(encoding="utf-8") == "mine"
    afile = tmp_path / "file"
    afile.write_text("x", encoding="utf-8")
    with pytest.raises(OutputError, match="not a folder"):
        write_web_bundle(docs_index, afile)


def test_cli_export_web(
    docs_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["export-web", str(docs_index), str(tmp_path / "b"), "--title", "Kelpie <docs>"])
    assert done.value.code == 0
    assert "terms in" in capsys.readouterr().err
    page = (tmp_path / "b" / "index.html").read_text(encoding="utf-8")
    assert (
        "<title>Kelpie &lt;docs&gt;</title>" in page and 'data-bundle="scidx-bundle.json"' in page
    )
    with pytest.raises(SystemExit) as done:
        main(["export-web", str(tmp_path / "missing.scidx"), str(tmp_path / "c")])
    assert done.value.code != 0
    err = capsys.readouterr().err
    assert "missing.scidx" in err and "Traceback" not in err
    assert not (tmp_path / "c").exists()


# Starlette (the serve extra) made unimportable: the cli extra alone is what remains.
_NO_STARLETTE = (
    "import sys; sys.modules['starlette'] = None; sys.modules['uvicorn'] = None; "
    "from scidx.cli import main; main(sys.argv[1:])"
)


def test_export_web_needs_only_the_cli_extra(docs_index: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _NO_STARLETTE, "export-web", str(docs_index), str(tmp_path / "b")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and (tmp_path / "b" / "index.html").is_file()
    assert (tmp_path / "b" / MANIFEST_NAME).is_file()


def test_terms_the_text_does_not_make_are_refused(
    docs_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index packed by another tokenizer cannot be searched identically: a clear error."""
    from scidx.errors import CorruptIndexError
    from scidx.export import web_bundle

    real = web_bundle._vocabulary
    monkeypatch.setattr(web_bundle, "_vocabulary", lambda chunks: real(chunks)[1:])
    with load(docs_index) as idx, pytest.raises(CorruptIndexError, match="different tokenizer"):
        build_web_bundle(idx)


def test_embeddings_url_must_be_http(docs_index: Path) -> None:
    from scidx.errors import ConfigError

    with load(docs_index) as idx, pytest.raises(ConfigError, match="http"):
        build_web_bundle(idx, embeddings_url="file:///etc/passwd")


def test_page_ids_number_the_runs_of_a_page_split_by_the_id_order() -> None:
    """``group="page"`` keys by page: a page whose chunks are two runs keeps one number."""
    from scidx.export.web_bundle import _Chunk, _page_ids, _page_runs

    def chunk(source: str) -> _Chunk:
        return _Chunk("", source, "", "", [], None, "", "", [])

    together = [chunk("a.md"), chunk("a.md"), chunk("b.md")]
    assert _page_runs(together) == [(0, 2), (2, 3)]
    assert _page_ids(together, _page_runs(together)) is None  # one run a page: implied
    # Ids are source:anchor:n, so a path with a colon sorts inside another page's run
    # ("a.md:b.md:intro:0" between "a.md:a:0" and "a.md:c:0"): a.md's runs share a number.
    split = [chunk("a.md"), chunk("a.md:b.md"), chunk("a.md"), chunk("b.md")]
    assert _page_ids(split, _page_runs(split)) == [0, 1, 0, 2]
