"""pack-docs with the OpenAI provider, end to end: real SDK, local server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

import scidx
from support.cli import run
from support.openai_server import Behaviour, FakeOpenAIServer

FAKE_KEY = "sk-scidxPACKCANARY-3Jd8QpL2vN6"

DOC = """\
# Service guide

An intro paragraph about the service.

## Install

Download the binary and put it on your PATH.

## Configure

Edit service.toml; every key has a default.

## Troubleshoot

Read the logs first, then open an issue.
"""


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def project(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(DOC)
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(
        json.dumps(
            {
                "include": ["docs/*.md"],
                "output": "docs.scidx",
                "embeddingProvider": "openai",
                "model": "text-embedding-3-small",
                "dimensions": 16,
                "baseUrl": server.base_url,
                "batchSize": 2,
                "concurrency": 2,
            }
        )
    )
    return cfg


def test_missing_key_exits_2_before_any_request(
    project: Path, server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["pack-docs", "--config", str(project), "--quiet"], capsys)
    assert code == 2
    assert "OPENAI_API_KEY is not set" in err and "4 chunks need embeddings" in err
    assert server.request_count == 0
    assert not (project.parent / "docs.scidx").exists()


def test_pack_rebuild_without_key_or_network_from_committed_index(
    project: Path,
    server: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    code, out, err = run(["pack-docs", "--config", str(project), "--json"], capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["embedded"] == 4 and summary["chunks"] == 4
    assert server.request_count == 2  # 4 chunks in batches of 2
    index = project.parent / "docs.scidx"
    data = index.read_bytes()
    assert FAKE_KEY.encode() not in data
    assert FAKE_KEY not in (project.parent / "docs.scidx.inputs").read_text()
    assert scidx.load(index).stamp["provider"] == "openai"

    # A fresh CI runner: the committed index, no sidecar, an empty cache, no key.
    (project.parent / "docs.scidx.inputs").unlink()
    monkeypatch.setenv("SCIDX_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("OPENAI_API_KEY")
    server.reset()
    code, out, err = run(["pack-docs", "--config", str(project), "--check"], capsys)
    assert code == 0, err
    code, out, err = run(["pack-docs", "--config", str(project), "--force", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["cacheHits"] == 4
    assert server.request_count == 0
    assert index.read_bytes() == data

    # One edited section: only that chunk is sent.
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    (project.parent / "docs" / "guide.md").write_text(DOC.replace("open an issue", "ask"))
    code, out, err = run(["pack-docs", "--config", str(project), "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["embedded"] == 1
    assert result["changes"]["chunksChanged"] == ["docs/guide.md:troubleshoot:0"]
    assert server.input_count == 1


def test_provider_failure_keeps_previous_index(
    project: Path,
    server: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    assert run(["pack-docs", "--config", str(project), "--quiet"], capsys)[0] == 0
    index = project.parent / "docs.scidx"
    good = index.read_bytes()
    good_sidecar = (project.parent / "docs.scidx.inputs").read_bytes()
    (project.parent / "docs" / "guide.md").write_text(DOC + "\n## New\n\nNew words.\n")
    server.script(Behaviour(status=401, message="bad key {key}"))
    code, _, err = run(["pack-docs", "--config", str(project), "--quiet"], capsys)
    assert code == 2
    assert err.startswith("error: ") and "401" in err
    assert FAKE_KEY not in err
    assert index.read_bytes() == good
    assert (project.parent / "docs.scidx.inputs").read_bytes() == good_sidecar


def test_dry_run_estimates_and_sends_nothing(
    project: Path, server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["pack-docs", "--config", str(project), "--dry-run", "--json"], capsys)
    assert code == 0
    plan = json.loads(out)["dryRun"]
    assert plan["chunks"] == 4 and plan["requests"] == 2 and plan["cached"] == 0
    assert plan["tokens"] > 0 and plan["cost_usd"] > 0
    assert server.request_count == 0
    assert not (project.parent / "docs.scidx").exists()


def test_search_an_openai_index(
    project: Path,
    server: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    assert run(["pack-docs", "--config", str(project), "--quiet"], capsys)[0] == 0
    index = str(project.parent / "docs.scidx")
    monkeypatch.delenv("OPENAI_API_KEY")
    server.reset()
    # Keyword search needs neither key nor network.
    code, out, _ = run(["search", index, "logs issue", "--mode", "keyword", "--json"], capsys)
    assert code == 0
    assert json.loads(out)[0]["id"] == "docs/guide.md:troubleshoot:0"
    assert server.request_count == 0
    # Hybrid needs the query embedded by the same model: without a key, a clear error.
    code, _, err = run(["search", index, "logs issue"], capsys)
    assert code == 2 and "keyword" in err
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    argv = ["search", index, "logs issue", "--json", "--base-url", server.base_url]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert json.loads(out)[0]["id"] == "docs/guide.md:troubleshoot:0"
    assert server.request_count == 1
    # A failing server: a query retries briefly, then exit 2 with what failed.
    for _ in range(5):
        server.script(Behaviour(status=500))
    code, _, err = run([*argv[:2], "other words", "--base-url", server.base_url], capsys)
    assert code == 2 and "500" in err and FAKE_KEY not in err


def test_check_gate_never_calls_the_provider(
    project: Path,
    server: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    assert run(["pack-docs", "--config", str(project), "--quiet"], capsys)[0] == 0
    monkeypatch.delenv("OPENAI_API_KEY")
    server.reset()
    (project.parent / "docs" / "guide.md").write_text(DOC + "\n## New\n\nNew words.\n")
    code, out, _ = run(["pack-docs", "--config", str(project), "--check"], capsys)
    assert code == 6
    assert "  + docs/guide.md:new:0" in out
    assert server.request_count == 0


def test_truncation_warning_names_the_chunk(
    project: Path,
    server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from scidx.pack.packer import pack_docs

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    huge = "word " * 30_000  # ~150 KB: over text-embedding-3-small's 8191-token input limit
    (project.parent / "docs" / "guide.md").write_text(DOC + f"\n## Huge section\n\n{huge}\n")
    # A budget above the paragraph, so it stays one chunk (a paragraph over the budget is split).
    cfg = json.loads(project.read_text())
    project.write_text(json.dumps({**cfg, "maxChunkChars": 200_000}))
    with caplog.at_level("WARNING"):
        result = pack_docs(project)
    assert result.chunks == 5
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("chunk docs/guide.md:huge-section:0 is about") for m in messages)
    import scidx

    with scidx.load(project.parent / "docs.scidx") as idx:
        hit = idx.get("docs/guide.md:huge-section:0")
        assert hit is not None and hit.text.strip() == huge.strip()  # stored whole


def test_check_after_a_model_change_is_stale_without_requests(
    project: Path,
    server: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    assert run(["pack-docs", "--config", str(project), "--quiet"], capsys)[0] == 0
    server.reset()
    cfg = json.loads(project.read_text())
    project.write_text(json.dumps({**cfg, "dimensions": 8}))
    code, _, _ = run(["pack-docs", "--config", str(project), "--check"], capsys)
    assert code == 6
    assert server.request_count == 0


def _connections_to(port: int) -> int:
    """This process's sockets whose peer is ``port``: the client ends of connections to the
    server. The server runs in this process too, and its end of a connection closes on the
    server's thread a moment after the client's; counting every socket raced that close."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                continue
            sock = socket.socket(fileno=os.dup(int(fd)))
        except (FileNotFoundError, OSError):
            continue  # the listing's own descriptor, or one closed while we looked
        try:
            peer = sock.getpeername()
        except OSError:
            continue  # not connected: the listening socket, a UDP or unix socket
        finally:
            sock.close()
        count += isinstance(peer, tuple) and len(peer) >= 2 and peer[1] == port
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_a_pack_leaves_no_connection_open(
    project: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pack_docs closes the embedder it made: a long-lived process (mkdocs serve) that packs
    again and again keeps no connection of a finished pack open."""
    from scidx.pack.packer import pack_docs

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    port = int(server.base_url.rsplit(":", 1)[1].split("/", 1)[0])
    assert _connections_to(port) == 0
    result = pack_docs(project)
    assert result.embedded == 4 and server.request_count >= 2
    assert _connections_to(port) == 0
