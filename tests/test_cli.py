"""The command-line interface: outputs and exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import run

ROOT = Path(__file__).resolve().parent.parent

DOC = """\
# Widget guide

Widgets are small.

## Install

Run `pip install widget` to install the widget.

## Configure CORS

Set `allow_origins` in widget.toml to configure cross-origin requests.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(DOC, encoding="utf-8")
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(
        json.dumps(
            {
                "include": ["docs/**/*.md"],
                "output": "docs.scidx",
                "urlTemplate": "https://example.org/{path}#{anchor}",
            }
        )
    )
    return cfg


def test_pack_counts_agree_and_name_duplicates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two copies of the same page: their 3 chunks share texts, embedded once and reused.
    (tmp_path / "docs").mkdir()
    for name in ("a.md", "b.md"):
        (tmp_path / "docs" / name).write_text(DOC, encoding="utf-8")
    (tmp_path / "docs" / "other.md").write_text("# Other\n\nSomething else.\n", encoding="utf-8")
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(json.dumps({"include": ["docs/**/*.md"], "output": "docs.scidx"}))

    code, out, err = run(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 0, err
    lines = err.splitlines()
    assert (
        "7 chunks: 4 distinct texts, 3 duplicates (each embedded once, its vector reused)" in lines
    )
    assert "cache hits: 0/4" in lines and "embed: 4/4" in lines
    assert "packed 3 files into 7 chunks" in out
    assert "; 4 distinct texts, 3 duplicates; cache hits 0/4; embedded 4;" in out

    code, out, err = run(["pack-docs", "--config", str(cfg), "--force"], capsys)
    assert code == 0, err
    assert "cache hits: 4/4" in err.splitlines()
    assert not any(line.startswith("embed:") for line in err.splitlines())  # nothing sent
    assert "; 4 distinct texts, 3 duplicates; cache hits 4/4; embedded 0;" in out

    code, out, _ = run(["pack-docs", "--config", str(cfg), "--force", "--json"], capsys)
    summary = json.loads(out)
    assert (summary["chunks"], summary["duplicates"]) == (7, 3)
    assert (summary["cacheHits"], summary["embedded"]) == (4, 0)


def test_pack_search_inspect(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["pack-docs", "--config", str(project)], capsys)
    assert code == 0, err
    assert out.startswith("packed 1 files into 3 chunks → ")
    assert "3 distinct texts, 0 duplicates; cache hits 0/3; embedded 3;" in out
    assert "read: 1/1" in err  # plain progress when stderr is not a terminal
    assert "cache hits: 0/3" in err
    code, _, err = run(["pack-docs", "--config", str(project), "--force"], capsys)
    assert code == 0 and "cache hits: 3/3" in err

    code, out, _ = run(["pack-docs", "--config", str(project)], capsys)
    assert code == 0
    assert out.endswith("is up to date (1 files, 3 chunks); use --force to rebuild\n")

    index = str(project.parent / "docs.scidx")
    code, out, _ = run(["search", index, "configure cors", "--json", "-k", "2"], capsys)
    assert code == 0
    hits = json.loads(out)
    # Hashing vectors only reorder keyword matches: the one section with a query term.
    assert len(hits) == 1
    assert hits[0]["id"] == "docs/guide.md:configure-cors:0"
    assert hits[0]["headingPath"] == ["Widget guide", "Configure CORS"]
    assert hits[0]["url"] == "https://example.org/docs/guide#configure-cors"
    assert {"id", "score", "source", "anchor", "headingPath", "snippet", "text"} <= set(hits[0])

    code, out, _ = run(["search", index, "configure cors", "--mode", "keyword"], capsys)
    assert code == 0
    assert "https://example.org/docs/guide#configure-cors" in out.splitlines()[0]

    code, out, _ = run(["inspect", index, "--json", "--verify"], capsys)
    assert code == 0
    info = json.loads(out)
    assert info["format"] == "10.0"
    assert info["counts"]["chunks"] == 3
    assert info["provider"]["provider"] == "hashing"
    assert info["verified"] is True
    assert "vectors.i8" in info["sections"]  # int8 is the default encoding

    code, out, _ = run(["inspect", index], capsys)
    assert code == 0
    assert "provider: hashing / hashing-v2 / 512 dims" in out


def test_pack_json_summary_and_change_report(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["pack-docs", "--config", str(project), "--json"], capsys)
    assert code == 0
    summary = json.loads(out)
    assert summary["chunks"] == 3 and summary["files"] == 1 and summary["upToDate"] is False
    assert summary["changes"]["chunksAdded"] == [
        "docs/guide.md:configure-cors:0",
        "docs/guide.md:install:0",
        "docs/guide.md:widget-guide:0",
    ]
    (project.parent / "docs" / "guide.md").write_text(DOC + "\n## Upgrade\n\nRun it again.\n")
    code, out, _ = run(["pack-docs", "--config", str(project), "--quiet"], capsys)
    assert (code, out) == (0, "")
    (project.parent / "docs" / "guide.md").write_text(DOC)
    code, out, _ = run(["pack-docs", "--config", str(project)], capsys)
    assert code == 0
    assert "changes: 0 chunks added, 0 changed, 1 removed; sources +0 -0;" in out
    assert "  - docs/guide.md:upgrade:0" in out


def test_check_gate(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["pack-docs", "--config", str(project), "--check"], capsys)
    assert code == 6
    assert "is stale" in out
    assert not (project.parent / "docs.scidx").exists()
    run(["pack-docs", "--config", str(project)], capsys)
    code, out, _ = run(["pack-docs", "--config", str(project), "--check"], capsys)
    assert (code, out.strip().endswith("is up to date")) == (0, True)
    (project.parent / "docs" / "guide.md").write_text(DOC.replace("small", "tiny"))
    code, out, _ = run(["pack-docs", "--config", str(project), "--check"], capsys)
    assert code == 6
    assert "  ~ docs/guide.md:widget-guide:0" in out


def test_dry_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["pack-docs", "--config", str(project), "--dry-run"], capsys)
    assert code == 0
    assert out.startswith("dry run: 3 chunks, 0 already embedded")
    assert "3 would be sent" in out
    assert not (project.parent / "docs.scidx").exists()


@pytest.mark.parametrize(
    ("config", "code", "message"),
    [
        ({"inclde": ["docs/*.md"], "output": "x.scidx"}, 1, 'did you mean "include"'),
        ({"include": ["nothing/*.md"], "output": "x.scidx"}, 1, "matches no file"),
        ({"include": ["docs/*.md"], "output": "docs"}, 3, "is a directory"),
        (
            {"include": ["docs/*.md"], "output": "x.scidx", "embeddingProvider": "openai"},
            2,
            "OPENAI_API_KEY is not set",
        ),
    ],
)
def test_pack_exit_codes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    config: dict[str, object],
    code: int,
    message: str,
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(DOC)
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(json.dumps(config))
    got, out, err = run(["pack-docs", "--config", str(cfg), "--quiet"], capsys)
    assert got == code
    assert err.startswith("error: ")
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_invalid_json_reports_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text('{\n  "include": ["a.md"],\n  "output": x\n}\n')
    code, _, err = run(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 1
    assert "line 3" in err and "column 13" in err


def test_usage_errors_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["pack-docs", "--bogus"], capsys)
    assert code == 1
    assert "No such option" in err
    code, _, _ = run(["search", "x.scidx", "q", "--mode", "fuzzy"], capsys)
    assert code in (1, 5)


def test_corrupt_and_missing_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.scidx"
    bad.write_bytes(b"not an index at all")
    for argv in (
        ["inspect", str(bad)],
        ["search", str(bad), "q"],
        ["inspect", "--verify", str(bad)],
    ):
        code, out, err = run(argv, capsys)
        assert code == 4
        assert err.startswith(f"error: {bad} is not a .scidx index")
        assert len(err.strip().splitlines()) == 1
    code, _, err = run(["search", str(tmp_path / "missing.scidx"), "q"], capsys)
    assert code == 1
    assert "No such file or directory" in err


def test_bad_query_exit_code(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(["pack-docs", "--config", str(project)], capsys)
    index = str(project.parent / "docs.scidx")
    code, _, err = run(["search", index, "widget", "-k", "0"], capsys)
    assert code == 5
    assert err.startswith("error: ")


def test_python_dash_m_and_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "scidx", "--version"],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("toolup-rag ")


@pytest.mark.parametrize("command", ["toolup-rag", "scidx"])
def test_each_console_script_names_itself_in_usage(command: str) -> None:
    script = Path(sys.executable).with_name(command)
    if not script.exists():
        pytest.skip(f"{script} is not installed; run `pip install -e .` again")
    proc = subprocess.run(
        [str(script), "search", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "100"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"Usage: {command} search " in proc.stdout


def test_every_command_has_help_and_is_in_readme() -> None:
    import typer.main

    import scidx.cli.run  # noqa: F401  (registers every command)
    from scidx.cli.app import app

    group = typer.main.get_command(app)
    readme = (ROOT / "README.md").read_text()
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        assert command.help, f"{name} has no help text"
        assert f"toolup-rag {name}" in readme, f"{name} is not documented in README.md"


def test_search_filters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "docs" / "api").mkdir(parents=True)
    (tmp_path / "docs" / "guide.md").write_text("---\nsection: guide\n---\n" + DOC)
    (tmp_path / "docs" / "api" / "ref.md").write_text("# API\n\n## Install API\n\nInstall it.\n")
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(json.dumps({"include": ["docs/**/*.md"], "output": "x.scidx"}))
    assert run(["pack-docs", "--config", str(cfg), "-q"], capsys)[0] == 0
    index = str(tmp_path / "x.scidx")

    def ids(*extra: str) -> list[str]:
        code, out, err = run(["search", index, "install", "--json", *extra], capsys)
        assert code == 0, err
        return [h["id"] for h in json.loads(out)]

    everything = ids("--mode", "keyword")
    assert {"docs/api/ref.md:install-api:0", "docs/guide.md:install:0"} <= set(everything)
    assert ids("--mode", "keyword", "--source", "docs/api/") == ["docs/api/ref.md:install-api:0"]
    assert ids("--mode", "keyword", "--source", "*/guide.md") == ["docs/guide.md:install:0"]
    assert ids("--mode", "keyword", "--meta", "section=guide") == ["docs/guide.md:install:0"]
    assert ids("--mode", "keyword", "--heading", "install api") == ["docs/api/ref.md:install-api:0"]
    assert ids("--mode", "keyword", "--min-score", "1e9") == []
    code, _, err = run(["search", index, "install", "--meta", "section"], capsys)
    assert code == 1 and "KEY=VALUE" in err


def test_terminal_table_prints_brackets_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# P\n\n## S\n\nUse [/] and [bold]x[/bold] zorblax.\n\n```toml\n[[source]]\n```\n"
    )
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(json.dumps({"include": ["docs/*.md"], "output": "m.scidx"}))
    assert run(["pack-docs", "--config", str(cfg), "-q"], capsys)[0] == 0
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, err = run(["search", str(tmp_path / "m.scidx"), "zorblax"], capsys)
    assert code == 0, err
    assert "[/]" in out and "[bold]x[/bold]" in out and "[[source]]" in out


def test_equal_scores_are_ordered_by_chunk_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs").mkdir()
    body = "The frobnicator widget hums.\n"
    # Title and heading are indexed with the text, so each chunk gets a one-word H1 and a
    # one-word H2: every chunk has the same length. (Without an H1 a page is titled by its
    # first heading, which later sections would carry as an extra word.)
    (tmp_path / "docs" / "berry.md").write_text(f"# Berry\n\n## Zeta\n\n{body}\n## Alpha\n\n{body}")
    (tmp_path / "docs" / "apple.md").write_text(f"# Apple\n\n## Mid\n\n{body}")
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(json.dumps({"include": ["docs/*.md"], "output": "t.scidx"}))
    assert run(["pack-docs", "--config", str(cfg), "-q"], capsys)[0] == 0
    # Headings are embedded too, so only keyword scores tie exactly here.
    code, out, _ = run(
        ["search", str(tmp_path / "t.scidx"), "frobnicator widget", "--json", "-m", "keyword"],
        capsys,
    )
    hits = json.loads(out)
    assert code == 0 and len({h["score"] for h in hits}) == 1
    assert [h["id"] for h in hits] == [
        "docs/apple.md:mid:0",
        "docs/berry.md:alpha:0",
        "docs/berry.md:zeta:0",
    ]


def test_help_follows_the_conventions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["-h"], capsys)
    assert code == 0
    listed = [line.split()[0] for line in out.split("Commands:\n")[1].splitlines() if line.strip()]
    assert listed[:10] == [
        "pack-docs", "search", "inspect", "serve", "query", "ask", "export", "llms-txt", "eval",
        "bench",
    ]  # fmt: skip
    for name in listed:
        code, out, _ = run([name, "-h"], capsys)
        assert code == 0, name
        assert "<" not in out.split("Options:")[0] and "{" not in out.splitlines()[0], out
        assert not re.search(r"--\S+ <|<bool>|<int>|<str>|<path>", out), (name, out)
        assert "Exit codes: 0 " in out or "Exit codes: 0" in " ".join(out.split()), (name, out)
    code, out, _ = run(["search", "-h"], capsys)
    assert out.startswith("Usage: toolup-rag search [OPTIONS] INDEX QUERY\n")
    assert "  -k INTEGER " in out and "--json  " in out and "--k" not in out


def test_one_spelling_per_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["search", str(tmp_path / "x.scidx"), "q", "--k", "3"], capsys)
    assert code == 1 and "No such option: --k" in err


def test_search_alpha(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(DOC)
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(json.dumps({"include": ["docs/**/*.md"], "output": "x.scidx"}))
    assert run(["pack-docs", "--config", str(cfg), "-q"], capsys)[0] == 0
    index = str(tmp_path / "x.scidx")

    def scores(*extra: str) -> list[float]:
        code, out, err = run(
            # "widget" is in every section, so the fused scores of several hits move with alpha.
            ["search", index, "widget", "--json", "--group", "none", *extra],
            capsys,
        )
        assert code == 0, err
        return [h["score"] for h in json.loads(out)]

    assert scores("--alpha", "0") != scores("--alpha", "1")
    code, _, err = run(["search", index, "install", "--alpha", "2"], capsys)
    assert code == 5 and "alpha" in err


def test_an_unwritable_output_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import tempfile

    try:  # /sys is read-only even for root; elsewhere this test has no such folder
        os.close(tempfile.mkstemp(dir="/sys")[0])
        pytest.skip("/sys takes files here")
    except OSError:
        pass
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(DOC)
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(json.dumps({"include": ["docs/**/*.md"], "output": "/sys/docs.scidx"}))
    code, out, err = run(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 3, (out, err)
    assert err.startswith("error: cannot write /sys/docs.scidx: the folder /sys does not take")
    assert "nothing was read or embedded" in err and "scanned" not in out + err


def test_readme_quickstart_finds_its_answer_and_nothing_for_nonsense(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's quickstart, run as written (in a copy), and its nonsense line."""
    import shutil

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pack = re.search(r"toolup-rag pack-docs --config (\S+)", readme)
    search = re.search(r'toolup-rag search (\S+) "([^"]+)"\n', readme)
    nonsense = re.search(r'toolup-rag search \S+ "([^"]+)"` prints `no results`', readme)
    assert pack and search and nonsense, "the README quickstart lost its commands"
    shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures")
    shutil.copy(ROOT / pack.group(1), tmp_path / pack.group(1))
    code, _, err = run(["pack-docs", "--config", str(tmp_path / pack.group(1)), "-q"], capsys)
    assert code == 0, err
    index = str(tmp_path / search.group(1))
    code, out, err = run(["search", index, search.group(2), "--json"], capsys)
    assert code == 0 and json.loads(out), err
    assert json.loads(out)[0]["id"] == "fixtures/docs/recipes.md:ship-nginx-logs:0"
    for mode in ("keyword", "vector", "hybrid"):
        code, out, err = run(["search", index, nonsense.group(1), "--mode", mode], capsys)
        assert (code, out, err.strip()) == (0, "", "no results"), mode  # the note: stderr
