"""The `query`, `ask`, `eval` and `bench` commands through the real `toolup-rag` entry point."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scidx.pack.packer import pack_docs
from support.chat_server import ChatServer, Reply
from support.cli import run

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-cli-test-0123456789abcdefghij"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kelpie")
    shutil.copytree(ROOT / "fixtures" / "docs", root / "fixtures" / "docs")
    shutil.copy(ROOT / "staticcorpus.example.json", root / "staticcorpus.json")
    result = pack_docs(root / "staticcorpus.json", use_cache=False)
    assert result.output is not None
    return result.output


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as s:
        yield s


def test_every_command_is_registered_once() -> None:
    import scidx.cli.run  # noqa: F401  (importing it registers every command module)
    from scidx.cli.app import app

    names = [c.name for c in app.registered_commands]
    assert sorted(names) == sorted(set(names))
    assert {"pack-docs", "search", "inspect", "query", "ask", "eval", "bench"} <= set(names)


def test_query_prints_matches(index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["query", str(index), "default batch size", "-k", "2"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(" 1. ")
    assert "fixtures/docs/configuration.md#agent-options  Configuration > Agent options" in lines[0]
    assert "--- user ---" not in out


def test_query_show_prompt_assembles_without_a_model(
    index: Path, capsys: pytest.CaptureFixture[str], server: ChatServer
) -> None:
    code, out, _ = run(
        ["query", str(index), "default batch size", "-k", "2", "--show-prompt"], capsys
    )
    assert code == 0
    assert "--- system ---\nYou answer questions about a product's documentation." in out
    assert (
        "--- user ---\nContext from the documentation:\n\n[1] Configuration > Agent options" in out
    )
    assert out.rstrip().endswith("Question: default batch size")
    assert server.requests == []


def test_query_json(index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["query", str(index), "install on linux", "--json", "--show-prompt", "-m", "keyword"],
        capsys,
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["matches"][0]["link"] == "fixtures/docs/installation.md#linux"
    assert doc["prompt"]["sources"][0]["number"] == 1
    assert doc["trace"]["mode"] == "keyword" and "install" not in json.dumps(doc["trace"])
    code, out, _ = run(["query", str(index), "install", "--json"], capsys)
    assert "prompt" not in json.loads(out)


def test_query_with_a_second_index_and_a_trace(
    index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "copy.scidx"
    shutil.copy(index, other)
    trace = tmp_path / "trace.jsonl"
    code, out, _ = run(
        ["query", str(index), "journald", "--also", str(other), "-k", "2", "--trace", str(trace)],
        capsys,
    )
    assert code == 0
    assert "[fixtures.scidx]" in out and "[copy.scidx]" in out
    record = json.loads(trace.read_text(encoding="utf-8"))
    assert record["retriever"] == "multi" and record["results"] == 2
    assert "journald" not in trace.read_text(encoding="utf-8")


def test_query_errors(index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["query", str(index), "x", "--mode", "fuzzy"], capsys)
    assert (code, err) == (
        5,
        "error: unknown search mode 'fuzzy'; use one of hybrid, keyword, vector\n",
    )
    code, _, err = run(["query", str(tmp_path / "none.scidx"), "x"], capsys)
    assert code == 1 and "does not exist; pack it with `toolup-rag pack-docs`" in err
    template = tmp_path / "t.txt"
    template.write_text("{question}", encoding="utf-8")
    code, _, err = run(["query", str(index), "x", "--template", str(template)], capsys)
    assert code == 1 and "no {context} placeholder" in err
    (tmp_path / "bad.scidx").write_bytes(b"not an index at all")
    code, _, err = run(["query", str(tmp_path / "bad.scidx"), "x"], capsys)
    assert code == 4 and err.startswith("error: ")


def test_ask_prints_answer_then_sources(
    index: Path,
    server: ChatServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    code, out, err = run(["ask", str(index), "default batch size", "-k", "2"], capsys)
    assert code == 0, err
    assert out.startswith("Set `batch_size` in the [agent] table [1].\n\nSources:\n")
    assert "  [1] fixtures/docs/configuration.md#agent-options\n" in out
    assert KEY not in out + err
    assert server.requests[0].body["model"] == "gpt-4o-mini"


def test_ask_model_base_url_and_json(
    index: Path,
    server: ChatServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    argv = ["ask", str(index), "install", "--model", "m1", "--base-url", server.base_url, "--json"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    doc: dict[str, Any] = json.loads(out)
    assert doc["answer"].startswith("Set `batch_size`")
    assert doc["sources"][0]["number"] == 1
    assert server.requests[0].body["model"] == "m1"


def test_ask_without_a_key_exits_2(
    index: Path, server: ChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["ask", str(index), "batch", "--base-url", server.base_url], capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("error: OPENAI_API_KEY is not set;")
    assert server.requests == []


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        (Reply(status=429, message="Rate limit reached for gpt-4o-mini"), "(HTTP 429)"),
        (Reply(status=502, message="bad gateway"), "failed with HTTP 502: bad gateway"),
        (Reply(status=401, message="Incorrect API key provided: {key}"), "check OPENAI_API_KEY"),
    ],
)
def test_ask_provider_errors_exit_2_without_leaking_the_key(
    index: Path,
    server: ChatServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reply: Reply,
    needle: str,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.default = reply
    argv = ["ask", str(index), "batch", "--base-url", server.base_url, "--max-retries", "0"]
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("error: the chat provider at http://127.0.0.1:")
    assert needle in err
    assert err.count("\n") == 1  # one line, no traceback
    assert KEY not in err


def test_eval_reports_and_gates(
    index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = ROOT / "docs" / "eval" / "kelpie.json"
    baseline = ROOT / "docs" / "eval" / "kelpie.baseline.json"
    out_file = tmp_path / "latest.json"
    code, out, err = run(
        ["eval", str(fixture), "--index", str(index), "--baseline", str(baseline),
         "--out", str(out_file)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0].split() == [
        "mode", "recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "queries",
    ]  # fmt: skip
    assert f"baseline {baseline}: OK (hybrid, keyword, vector)" in out
    latest = json.loads(out_file.read_text(encoding="utf-8"))
    assert set(latest["modes"]) == {"hybrid", "keyword", "vector"}

    # A baseline that is better than reality: the gate fails with exit code 7.
    raised = json.loads(baseline.read_text(encoding="utf-8"))
    summary = raised["modes"]["keyword"]["summary"]
    summary["ndcg@10"] = 1.5  # unreachable on purpose: whatever retrieval does, this fails
    raised["modes"]["keyword"]["queries"]["doctor"]["recall@5"] = 2.0
    high = tmp_path / "high.json"
    high.write_text(json.dumps(raised), encoding="utf-8")
    code, _, err = run(
        ["eval", str(fixture), "--index", str(index), "--baseline", str(high), "-m", "keyword"],
        capsys,
    )
    assert code == 7
    assert "regressed queries:\n" in err
    assert "  keyword query doctor: recall@5 2.0000 → " in err
    assert "error: retrieval quality fell more than 5% below" in err
    assert "keyword mean: ndcg@10 1.5000 → " in err


def test_eval_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["eval", str(tmp_path / "nope.json")], capsys)
    assert code == 1 and "cannot read eval fixture" in err
    bad = tmp_path / "b.json"
    bad.write_text("{}", encoding="utf-8")
    code, _, err = run(["eval", str(bad)], capsys)
    assert code == 1 and "`queries` must be a non-empty list" in err


def test_bench_appends_a_csv_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from support.datasets import make_beir

    root = make_beir(tmp_path / "tiny")
    out_file = tmp_path / "bench.csv"
    argv = ["bench", "--beir", str(root), "--split", "test", "--mode", "keyword,vector",
            "-k", "10", "--out", str(out_file)]  # fmt: skip
    code, out, err = run(argv, capsys)
    assert code == 0, err
    header = "dataset,split,provider,model,mode,mmr,reranker,vectors,replicate,k,queries,ndcg@10"
    assert out.splitlines()[0].startswith(header)
    with open(out_file, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["mode"] for r in rows] == ["keyword", "vector"]
    code, out, _ = run(
        ["bench", "--beir", str(root), "--split", "test", "--mode", "keyword", "--json"], capsys
    )
    assert code == 0 and json.loads(out)["queries"] == 3
    code, out, err = run(
        ["bench", "--beir", str(root), "--split", "test", "--mode", "keyword", "--json",
         "--vectors", "int8", "--replicate", "2"],
        capsys,
    )  # fmt: skip
    doc = json.loads(out)
    assert code == 0, err
    assert (doc["vectors"], doc["replicate"], doc["ndcg@10"], doc["reranker"]) == (
        "int8",
        2,
        "",
        "",
    )
    code, _, err = run(
        ["bench", "--beir", str(root), "--split", "test", "--vectors", "postgres"], capsys
    )
    assert code == 1 and "--vectors postgres needs --postgres DSN" in err
    code, _, err = run(["bench", "--beir", str(root), "--split", "test", "--mode", "x"], capsys)
    assert code == 1 and "--mode must be" in err
