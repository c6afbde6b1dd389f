"""Typo tolerance and search as you type in the static bundle's reader: identical to Python.

Every question of the development set (``../shared/docs-questions``: each corpus's questions
and ``robustness.jsonl``'s typo and cut-short variants), each with completions off and on, is
ranked by ``Index.rank(mode="keyword", group=None)`` and by the bundle reader run in node over
a loopback server: the same chunk rows in the same order, the same corrections. The same
harness checks nonsense stays empty and that a typed query fetches dictionary shards, not the
whole word list.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scidx.export.web_bundle import MANIFEST_NAME, write_web_bundle
from scidx.index.index import Index, load

ROOT = Path(__file__).resolve().parent.parent
READER = ROOT / "src" / "scidx" / "web" / "static" / "scidx-bundle.js"
HARNESS = Path(__file__).resolve().parent / "support" / "bundle_node.mjs"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs node to run the bundle's reader")

CORPORA = ["fastapi-docs-en", "vitepress-docs-en", "starlight-docs-en", "rust-book"]
NONSENSE = ["xyzzyplugh", "qwxzv jkplm", "zzqqxxvv", "kjhgfdsa qpwoeiru", "bcdfghjklm"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("bundles")
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    folder_url = f"http://127.0.0.1:{server.server_address[1]}/"
    (folder / ".url").write_text(folder_url)
    yield folder
    server.shutdown()
    server.server_close()


def _pack(shared: Path, corpus: str, out: Path) -> Path:
    from scidx.pack.config import config_from_dict
    from scidx.pack.packer import pack_docs

    data = {
        "include": ["**/*.md", "**/*.mdx"] if corpus == "starlight-docs-en" else ["**/*.md"],
        "output": str(out),
        "embeddingProvider": "hashing",
    }
    pack_docs(config_from_dict(data, root=shared / "corpora" / corpus))
    return out


def _questions(shared: Path, corpus: str) -> list[str]:
    base = shared / "docs-questions"
    lines = (base / f"{corpus}.jsonl").read_text(encoding="utf-8").splitlines()
    qs = [json.loads(line)["question"] for line in lines]
    for line in (base / "robustness.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["corpus"] == corpus:
            qs.append(row["question"])
    return qs


def _node(folder: Path, name: str, queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    spec = folder / f"{name}.queries.json"
    spec.write_text(json.dumps(queries))
    url = (folder / ".url").read_text() + f"{name}/{MANIFEST_NAME}"
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(HARNESS), str(READER), url, str(spec)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


def _python(idx: Index, q: str, fuzzy: bool, prefix: bool, k: int) -> tuple[list[int], list[Any]]:
    searcher = idx._live()
    from scidx.index.params import SearchParams

    params = SearchParams(k=k, mode="keyword", group=None, fuzzy=fuzzy, prefix=prefix)
    rows, _, terms = searcher.select(q, params)
    fixed = [c.to_dict() for c in getattr(terms, "corrections", ())]
    return rows, fixed


@pytest.mark.parametrize("corpus", CORPORA)
def test_bundle_expands_as_python(
    corpus: str, shared_dir: Path, served: Path, tmp_path: Path
) -> None:
    index_path = _pack(shared_dir, corpus, tmp_path / f"{corpus}.scidx")
    write_web_bundle(index_path, served / corpus)
    questions = _questions(shared_dir, corpus) + NONSENSE
    # Each question as typed so far, too: its prefixes at the last three keystrokes.
    typed = [q[: len(q) - cut] for q in questions for cut in (1, 2, 3) if len(q) > cut]
    cases = [
        {"q": q, "fuzzy": fuzzy, "prefix": prefix, "k": 10}
        for q in questions + typed
        for fuzzy, prefix in ((True, False), (True, True), (False, True))
    ]
    got = _node(served, corpus, cases)
    with load(index_path) as idx:
        mismatches = []
        for case, js in zip(cases, got, strict=True):
            rows, fixed = _python(idx, case["q"], case["fuzzy"], case["prefix"], case["k"])
            if rows != js["rows"] or fixed != js["corrections"]:
                mismatches.append((case, rows[:5], js["rows"][:5], fixed, js["corrections"]))
        assert not mismatches, mismatches[:5]
        for q in NONSENSE:
            for prefix in (False, True):
                assert not _python(idx, q, True, prefix, 10)[0], q
