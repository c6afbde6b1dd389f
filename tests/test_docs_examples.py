"""The examples in ``docs/ci.md`` and ``docs/usage-docs-site.md`` run as written.

* ci.md: the GitHub Actions and GitLab CI YAML is parsed, and each job's shell commands run in a
  temp project with the job's environment. Only vendor actions (``uses: actions/...``) and the
  ``python -m pip install toolup-rag[cli]`` lines are skipped: this environment has it. The
  scenario is the one CI lives through: first pack, a later run that restores the cache, the
  ``--check`` gate on an up-to-date and on a stale committed index.
* usage-docs-site.md: the config and command pack a small site, the URL mapping in the text is
  what the hits carry, the server program equals ``examples/docs_site_server.py`` and is run and
  queried over loopback, and the assistant snippet runs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
CI_DOC = ROOT / "docs" / "ci.md"
SITE_DOC = ROOT / "docs" / "usage-docs-site.md"
SERVER = ROOT / "examples" / "docs_site_server.py"
BIN = Path(sys.executable).parent
STALE_EXIT = 6
INSTALL_LINE = re.compile(r'python -m pip install "toolup-rag(\[cli\])?==[0-9.]+"')


def fenced_blocks(path: Path, lang: str) -> list[str]:
    """The bodies of the ```lang fenced blocks in a Markdown file, in order."""
    text = path.read_text(encoding="utf-8")
    return [m.group(1) for m in re.finditer(rf"^```{lang}\n(.*?)^```$", text, re.M | re.S)]


# ---------------------------------------------------------------------------------------------
# A YAML subset parser (PyYAML is not a test dependency)


class _Literal(str):
    """A ``|`` block scalar."""


def _yaml_scalar(text: str) -> Any:
    if text.startswith("[") and text.endswith("]"):
        return [_yaml_scalar(item.strip()) for item in text[1:-1].split(",") if item.strip()]
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


_KEY = re.compile(r"[A-Za-z_][\w.-]*:(?: |$)")


def parse_yaml(text: str) -> Any:
    """Parse the block-style YAML used in the docs: mappings, lists, ``|`` scalars, flow lists.

    Anything outside that subset (anchors, flow mappings, ``>`` scalars, inline comments) makes
    the test fail rather than be misread.
    """
    lines = text.split("\n")
    tokens: list[tuple[int, str, _Literal | None]] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        assert " #" not in stripped and not stripped.startswith(("{", "&", "*")), raw
        indent = len(raw) - len(raw.lstrip(" "))
        block = re.fullmatch(r"(.*?:) *([|>])", stripped)
        if block is None:
            tokens.append((indent, stripped, None))
            continue
        assert block.group(2) == "|", f"folded scalars are not supported: {raw!r}"
        body: list[str] = []
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip(" ")) > indent
        ):
            body.append(lines[i])
            i += 1
        pad = min(len(b) - len(b.lstrip(" ")) for b in body if b.strip())
        literal = _Literal("\n".join(b[pad:] for b in body).strip("\n") + "\n")
        tokens.append((indent, block.group(1), literal))

    def parse_node(pos: int, indent: int) -> tuple[Any, int]:
        if tokens[pos][1].startswith("- "):
            items: list[Any] = []
            while pos < len(tokens) and tokens[pos][0] == indent and tokens[pos][1][:2] == "- ":
                rest, literal = tokens[pos][1][2:], tokens[pos][2]
                if _KEY.match(rest):
                    tokens[pos] = (indent + 2, rest, literal)
                    value, pos = parse_map(pos, indent + 2)
                else:
                    value, pos = _yaml_scalar(rest), pos + 1
                items.append(value)
            return items, pos
        return parse_map(pos, indent)

    def parse_map(pos: int, indent: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        while pos < len(tokens) and tokens[pos][0] == indent and tokens[pos][1][:2] != "- ":
            _, content, literal = tokens[pos]
            assert _KEY.match(content), f"not a 'key: value' line: {content!r}"
            key, _, value = content.partition(":")
            assert key not in out, f"duplicate key {key!r}"
            pos += 1
            if literal is not None:
                out[key] = literal
            elif value.strip():
                out[key] = _yaml_scalar(value.strip())
            elif pos < len(tokens) and tokens[pos][0] > indent:
                out[key], pos = parse_node(pos, tokens[pos][0])
            else:
                out[key] = None
        return out, pos

    value, end = parse_node(0, tokens[0][0])
    assert end == len(tokens), f"unparsed YAML from {tokens[end]!r}"
    return value


def test_yaml_subset_parser() -> None:
    doc = parse_yaml(
        "a:\n  b: [x, 'y']\n  c: |\n    one\n\n    two\n  d:\n    - p\n    - k: v\n      m: n\ne:\n"
    )
    assert doc == {
        "a": {"b": ["x", "y"], "c": "one\n\ntwo\n", "d": ["p", {"k": "v", "m": "n"}]},
        "e": None,
    }


# ---------------------------------------------------------------------------------------------
# ci.md: the CI jobs


@dataclass
class Job:
    """What a CI job would do here: its environment, shell scripts and declared outputs."""

    env: dict[str, str]
    scripts: list[str]
    skipped: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    cache_paths: list[str] = field(default_factory=list)


def _no_expressions(value: str) -> str:
    assert "${{" not in value, f"unsupported CI expression in a tested command: {value!r}"
    return value


def github_jobs(project: Path) -> dict[str, Job]:
    (block,) = [b for b in fenced_blocks(CI_DOC, "yaml") if b.startswith("name: docs-index")]
    workflow = parse_yaml(block)
    jobs: dict[str, Job] = {}
    for name, spec in workflow["jobs"].items():
        env = {**(workflow.get("env") or {}), **(spec.get("env") or {})}
        env = {
            k: _no_expressions(v.replace("${{ github.workspace }}", str(project)))
            for k, v in env.items()
        }
        job = Job(env=env, scripts=[])
        for step in spec["steps"]:
            if "uses" in step:
                assert step["uses"].startswith("actions/"), step  # vendor actions only
                paths = (step.get("with") or {}).get("path", "")
                if step["uses"].startswith("actions/upload-artifact@"):
                    job.artifacts += paths.split()
                if step["uses"].startswith("actions/cache@"):
                    job.cache_paths += paths.split()
                continue
            script = step["run"]
            if INSTALL_LINE.fullmatch(script.strip()):
                job.skipped.append(script.strip())
                continue
            job.scripts.append(_no_expressions(script))
        jobs[name] = job
    return jobs


def gitlab_jobs(project: Path) -> dict[str, Job]:
    (block,) = [b for b in fenced_blocks(CI_DOC, "yaml") if b.startswith("stages:")]
    pipeline = parse_yaml(block)
    gitlab_vars = {"CI_PROJECT_DIR": str(project)}

    def expand(value: str) -> str:
        return re.sub(r"\$\{?(\w+)\}?", lambda m: gitlab_vars.get(m.group(1), m.group(0)), value)

    variables = {k: expand(v) for k, v in (pipeline.get("variables") or {}).items()}
    default = pipeline.get("default") or {}
    jobs: dict[str, Job] = {}
    reserved = {"stages", "variables", "default", "workflow", "include"}
    for name, spec in pipeline.items():
        if name in reserved or name.startswith("."):
            continue
        job = Job(env={**gitlab_vars, **variables}, scripts=[])
        for line in [*default.get("before_script", []), *spec["script"]]:
            if INSTALL_LINE.fullmatch(line):
                job.skipped.append(line)
            else:
                job.scripts.append(line)
        # GitLab runs a job's script lines in one shell, stopping at the first failure.
        job.scripts = ["\n".join(job.scripts)]
        job.artifacts = list((spec.get("artifacts") or {}).get("paths", []))
        job.cache_paths = list((spec.get("cache") or default.get("cache") or {}).get("paths", []))
        jobs[name] = job
    return jobs


def run_job(job: Job, project: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.pop("SCIDX_CACHE_DIR", None)  # the job sets its own, as the doc says
    env.update(job.env)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    out = subprocess.CompletedProcess[str]([], 0, "", "")
    for script in job.scripts:
        # GitHub's default shell for `run` is `bash -eo pipefail`; GitLab's fails on any error.
        proc = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", script],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        out = subprocess.CompletedProcess(proc.args, proc.returncode, out.stdout + proc.stdout,
                                          out.stderr + proc.stderr)  # fmt: skip
        if proc.returncode:
            break
    return out


def _checkout(path: Path) -> Path:
    """A fresh checkout of a docs repository (Markdown + staticcorpus.json)."""
    (path / "docs/guide").mkdir(parents=True)
    (path / "docs/index.md").write_text("# Widgets\n\n## Install\n\nRun `pip install widgets`.\n")
    (path / "docs/guide/cache.md").write_text(
        "# Cache\n\n## Location\n\nThe cache lives in the user cache folder.\n\n"
        "## Size\n\nThe cache is trimmed to 1 GiB.\n"
    )
    (path / "staticcorpus.json").write_text(
        json.dumps({"include": ["docs/**/*.md"], "output": "docs.scidx"})
    )
    return path


@pytest.mark.parametrize(
    ("vendor", "check_job", "index_job"),
    [("github", "check", "index"), ("gitlab", "docs-check", "docs-index")],
)
def test_ci_example_jobs(tmp_path: Path, vendor: str, check_job: str, index_job: str) -> None:
    parse = github_jobs if vendor == "github" else gitlab_jobs
    first = _checkout(tmp_path / "run1")
    jobs = parse(first)
    assert set(jobs) == {check_job, index_job}
    for job in jobs.values():
        # Exactly the install line is skipped, and the cache the CI restores is SCIDX_CACHE_DIR.
        assert len(job.skipped) == 1
        assert [str(first / p.rstrip("/")) for p in job.cache_paths] == [job.env["SCIDX_CACHE_DIR"]]

    # First run: packs, verifies, and leaves the artifacts and a filled cache behind.
    proc = run_job(jobs[index_job], first)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all checksums OK" in proc.stdout
    assert jobs[index_job].artifacts == ["docs.scidx", "pack-report.json"]
    for artifact in jobs[index_job].artifacts:
        assert (first / artifact).is_file(), artifact
    report = json.loads((first / "pack-report.json").read_text())
    # Three sections with text (the two H1s have none of their own and are folded).
    assert report["chunks"] == 3 and report["embedded"] == 3 and report["cacheHits"] == 0

    # A later run on a fresh checkout with the cache restored embeds nothing.
    second = _checkout(tmp_path / "run2")
    shutil.copytree(first / ".scidx-cache", second / ".scidx-cache")
    proc = run_job(parse(second)[index_job], second)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((second / "pack-report.json").read_text())
    assert report["embedded"] == 0 and report["cacheHits"] == 3
    assert (second / "docs.scidx").read_bytes() == (first / "docs.scidx").read_bytes()

    # The gate, on a checkout that commits docs.scidx (no sidecar, no cache): up to date ...
    committed = _checkout(tmp_path / "run3")
    shutil.copy(first / "docs.scidx", committed / "docs.scidx")
    gate = parse(committed)[check_job]
    proc = run_job(gate, committed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "is up to date" in proc.stdout
    # ... and stale once a doc changes without a re-pack: exit 6 with the change report.
    (committed / "docs/guide/cache.md").write_text("# Cache\n\n## Location\n\nElsewhere.\n")
    proc = run_job(gate, committed)
    assert proc.returncode == STALE_EXIT, proc.stdout + proc.stderr
    assert "is stale" in proc.stdout
    assert "~ docs/guide/cache.md:location:0" in proc.stdout
    assert "- docs/guide/cache.md:size:0" in proc.stdout
    assert (committed / "docs.scidx").read_bytes() == (first / "docs.scidx").read_bytes()


def test_ci_doc_pre_commit_config_uses_the_declared_hooks() -> None:
    (block,) = [b for b in fenced_blocks(CI_DOC, "yaml") if "repos:" in b]
    config = parse_yaml(block)
    hooks_file = (ROOT / ".pre-commit-hooks.yaml").read_text()
    declared = set(re.findall(r"^- id: (\S+)$", hooks_file, re.M))
    used = {hook["id"] for repo in config["repos"] for hook in repo["hooks"]}
    assert used and used <= declared
    args = [a for repo in config["repos"] for h in repo["hooks"] for a in h.get("args", [])]
    assert args == ["--config", "docs/staticcorpus.json"]


def test_ci_doc_tool_scidx_table_is_valid(tmp_path: Path) -> None:
    from scidx.integrations.setuptools_hook import _read_settings

    block, hatch_block = fenced_blocks(CI_DOC, "toml")
    hatch = tomllib.loads(hatch_block)
    hatch_example = tomllib.loads(
        (ROOT / "examples/packaged-docs-hatch/pyproject.toml").read_text()
    )
    assert hatch["build-system"] == hatch_example["build-system"]
    assert hatch["tool"]["hatch"] == hatch_example["tool"]["hatch"]
    table = tomllib.loads(block)
    assert table["build-system"]["requires"] == ["setuptools>=64", "toolup-rag[cli]"]
    (tmp_path / "pyproject.toml").write_text(block)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/a.md").write_text("# A\n")
    settings = _read_settings(tmp_path, ["mypkg"])
    assert (settings.package, settings.resource) == ("mypkg", "docs.scidx")
    assert settings.config.max_chunk_chars == 1200
    # The template project in examples/ uses the same settings.
    example = tomllib.loads((ROOT / "examples/packaged-docs/pyproject.toml").read_text())
    assert {k: v for k, v in example["tool"]["scidx"].items() if k != "urlTemplate"} == (
        table["tool"]["scidx"]
    )


# ---------------------------------------------------------------------------------------------
# usage-docs-site.md


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small MkDocs-style site packed with the doc's config and command."""
    root = tmp_path_factory.mktemp("site")
    (root / "docs/guide").mkdir(parents=True)
    (root / "docs/index.md").write_text("# Widgets\n\nWidgets frobnicate everything.\n")
    (root / "docs/guide/index.md").write_text("# Guide\n\nStart here.\n")
    (root / "docs/guide/install.md").write_text(
        "# Installation\n\n## Linux\n\nInstall the package with apt on Linux.\n\n"
        "## Windows\n\nRun the installer on Windows.\n"
    )
    (root / "docs/guide/faq.md").write_text("Answers for widget users.\n\n## Why\n\nBecause.\n")
    (root / "docs/guide/configure.md").write_text(
        "# Configure\n\n## Cache\n\nSet the cache folder to configure the cache.\n"
    )
    (config,) = [b for b in fenced_blocks(SITE_DOC, "json") if '"include"' in b]
    (root / "docs/staticcorpus.json").write_text(config)
    (command,) = fenced_blocks(SITE_DOC, "sh")
    argv = shlex.split(command.strip())
    env = {**os.environ, "SCIDX_CACHE_DIR": str(root / "cache")}
    proc = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], cwd=root, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert (root / "site-search/docs.scidx").is_file()
    return root


def test_site_urls_follow_the_template_table(site: Path) -> None:
    from scidx.index.index import load

    with load(site / "site-search/docs.scidx") as idx:
        urls = {hit.id: hit.url for hit in idx.search("linux install guide widgets", k=20)}
    assert urls["guide/install.md:linux:0"] == "https://docs.example.com/guide/install/#linux"
    # Text before the first heading has no anchor: the URL is the page's.
    assert urls["guide/faq.md::0"] == "https://docs.example.com/guide/faq/"
    # {page} serves an index.md at its folder's URL, as MkDocs does.
    assert urls["guide/index.md:guide:0"] == "https://docs.example.com/guide/#guide"
    text = SITE_DOC.read_text()
    assert "`https://docs.example.com/guide/install/#linux`" in text


def test_site_doc_shows_the_whole_example_program() -> None:
    blocks = fenced_blocks(SITE_DOC, "python")
    assert SERVER.read_text(encoding="utf-8") in blocks


def _get(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_example_server_answers_search_over_loopback(site: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), str(site / "site-search/docs.scidx"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"on (http://127\.0\.0\.1:\d+)/search\?q=", line)
        assert match, line + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        base = match.group(1)

        status, body = _get(f"{base}/search?q=install+on+linux&k=2")
        assert status == 200
        assert body["query"] == "install on linux"
        assert len(body["hits"]) == 2
        top = body["hits"][0]
        assert top["url"] == "https://docs.example.com/guide/install/#linux"
        assert top["section"] == "Installation > Linux"
        (documented,) = [b for b in fenced_blocks(SITE_DOC, "json") if '"hits"' in b]
        assert set(top) == set(json.loads(documented)["hits"][0])

        status, body = _get(f"{base}/search?q=cache&k=1&mode=keyword")
        assert status == 200 and body["hits"][0]["url"].endswith("/guide/configure/#cache")
        assert _get(f"{base}/search?q=")[1] == {"query": "", "hits": []}
        status, body = _get(f"{base}/search?q=x&k=abc")
        assert status == 400 and "abc" in body["error"]
        status, body = _get(f"{base}/search?q=x&mode=fuzzy")
        assert status == 400 and "fuzzy" in body["error"]
        assert _get(f"{base}/other")[0] == 404
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_example_server_in_a_thread(site: Path) -> None:
    sys.path.insert(0, str(SERVER.parent))
    try:
        from docs_site_server import make_server
    finally:
        sys.path.remove(str(SERVER.parent))
    from scidx.index.index import load

    with load(site / "site-search/docs.scidx") as idx:
        server = make_server(idx, port=0)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            host, port = server.server_address[:2]
            assert host == "127.0.0.1"
            status, body = _get(f"http://{host}:{port}/search?q=windows+installer")
            assert status == 200
            assert body["hits"][0]["url"] == "https://docs.example.com/guide/install/#windows"
            status, body = _get(f"http://{host}:{port}/search?q=x&k=0")
            assert status == 400
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=10)


def test_assistant_snippet_runs(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = [b for b in fenced_blocks(SITE_DOC, "python") if "Pipeline" in b]
    monkeypatch.chdir(site / "site-search")
    namespace: dict[str, Any] = {}
    exec(compile(block, str(SITE_DOC), "exec"), namespace)  # the doc's own code
    messages, sources = namespace["messages"], namespace["sources"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "How do I configure the cache?" in messages[1]["content"]
    assert sources[0] == "[1] https://docs.example.com/guide/configure/#cache"
    namespace["pipeline"].retriever.index.close()
