"""Regression tests for the defects of issue 11 (hostile indexes, configs and queries).

Each test names the defect number of the issue it holds; docs/RELIABILITY.md points back here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scidx.errors import CorruptIndexError, IndexFormatError
from scidx.index.index import load, load_bytes
from scidx.index.safety import (
    MAX_DIMENSIONS,
    MAX_URL_PLACEHOLDERS,
    json_dumps_safe,
    terminal_safe,
)
from scidx.index.urls import parse_url_template, render_url, url_template_problem
from support.indexes import (
    DOCS,
    build_arrays,
    build_index,
    postings_of,
    rewrite,
    set_postings,
    write_arrays,
)


def _forge(mutate: Any) -> bytes:
    return rewrite(build_index(DOCS), mutate)


def empty_arrays(dims: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and meta of an index with no chunks (N = 0) and ``dims`` dimensions."""
    from scidx.index.format import encode_strings

    arrays, meta = build_arrays(DOCS)
    for name in [n for n in arrays if n.startswith("snippet.")]:
        del arrays[name]  # no chunk, no snippet offsets (else they describe DOCS' words)
    meta.pop("snippets", None)
    for name in list(arrays):
        if name.endswith(".offsets"):
            arrays[name], arrays[name[: -len("offsets")] + "data"] = encode_strings([])
    for name in ("chunk.source", "chunk.ordinal", "bm25.doc_len"):
        arrays[name] = np.zeros(0, dtype="<u2")
    arrays["chunk.span"] = np.zeros((0, 4), dtype="<u8")
    arrays["bm25.term_hash"] = np.zeros(0, dtype="<u8")
    arrays["bm25.term_df"] = np.zeros(0, dtype="<u1")
    arrays["bm25.term_width"] = np.zeros((0, 2), dtype="<u1")
    arrays["bm25.run_ptr"] = np.zeros(1, dtype="<u4")
    arrays["bm25.runs"] = np.zeros(0, dtype="<u1")
    for name in ("bm25.tf_values", "bm25.idf_values"):
        arrays[name] = np.zeros(0, dtype="<f8")
    arrays["bm25.df_values"] = np.zeros(0, dtype="<u4")
    arrays["vectors"] = np.zeros((0, dims), dtype="<f4")
    meta["provider"]["dimensions"] = dims
    return arrays, meta


# -- 1: memory amplification through urlTemplate ------------------------------------------------


def test_1_a_url_template_of_many_placeholders_is_refused_at_load() -> None:
    data = _forge(lambda a, m: m.__setitem__("urlTemplate", "{source}" * 120_000))
    assert len(data) < 2_000_000
    with pytest.raises(CorruptIndexError, match="urlTemplate"):
        load_bytes(data, source="amp.scidx")


def test_1_url_length_is_bounded_by_the_template_and_the_hit() -> None:
    template = "https://x/" + "{source}" * MAX_URL_PLACEHOLDERS
    assert parse_url_template(template) is not None
    assert parse_url_template(template + "{path}") is None
    assert parse_url_template("https://x/" + "a" * 5000 + "{page}") is None
    data = _forge(lambda a, m: m.__setitem__("urlTemplate", template))
    tracemalloc.start()
    try:
        with load_bytes(data) as idx:
            hits = idx.search("install", k=20, mode="keyword")
            urls = [h.url or "" for h in hits]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert urls and all(len(u) <= len(template) + 8 * 64 for u in urls)
    assert peak < 5_000_000


# -- 2: declared sizes without data -----------------------------------------------------------


@pytest.mark.parametrize("dims", [MAX_DIMENSIONS + 1, 1 << 28, 1 << 33])
def test_2_an_empty_index_cannot_declare_huge_dimensions(dims: int) -> None:
    arrays, meta = empty_arrays(dims)
    meta["provider"]["dimensions"] = dims
    data = write_arrays(arrays, meta)
    assert len(data) < 4096
    with pytest.raises(CorruptIndexError, match=f"{dims} dimensions, over the limit of 65536"):
        load_bytes(data)


# -- 3: deep JSON in source.meta --------------------------------------------------------------


def test_3_deep_json_in_source_meta_is_a_corrupt_index_not_a_recursion_error() -> None:
    from scidx.index.format import encode_strings

    def mutate(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        rows = ["[" * 200_000, "{}"]
        a["source.meta.offsets"], a["source.meta.data"] = encode_strings(rows)

    data = _forge(mutate)
    with load_bytes(data) as idx:  # lazy: opening does not parse it
        with pytest.raises(CorruptIndexError, match="`source.meta` row 0"):
            idx.search("install", metadata={"section": "guide"})
        with pytest.raises(CorruptIndexError, match="`source.meta` row 0"):
            idx.source_metadata()
    with pytest.raises(CorruptIndexError, match="`source.meta` row 0 is not a JSON object"):
        load_bytes(data, verify=True)


# -- 5: URLs and terminal output --------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "javascript:alert(1)//{source}",
        "JavaScript:{source}",
        "data:text/html,{source}",
        "file:///etc/{source}",
        "java\tscript:{source}",
        " https://x/{source}",
        "https://x/{source}\x1b]8;;",
    ],
)
def test_5_only_http_and_relative_templates(template: str) -> None:
    assert parse_url_template(template) is None
    assert url_template_problem(template)
    data = _forge(lambda a, m: m.__setitem__("urlTemplate", template))
    with pytest.raises(CorruptIndexError, match="urlTemplate"):
        load_bytes(data)


def test_5_placeholders_are_percent_encoded() -> None:
    assert render_url("{source}", "javascript:alert(1)", "") == "javascript%3Aalert%281%29"
    assert render_url("https://d.io/{path}#{anchor}", "a b/c?d.md", "x\x1by") == (
        "https://d.io/a%20b/c%3Fd#x%1By"
    )
    assert render_url("/docs/{page}", "guide/index.md", "") == "/docs/guide/"
    assert render_url("{anchor}javascript:{path}", "x.md", "") is None


def test_5_terminal_and_json_text_carry_no_controls() -> None:
    hostile = "a\x1b[2J\x1b]8;;https://evil\x07b\x9bc\rd\u202ee\tf\ng"
    shown = terminal_safe(hostile)
    assert not any(ch in shown for ch in "\x1b\x07\x9b\r\u202e")
    assert "\t" in shown and "\n" in shown
    assert "\n" not in terminal_safe(hostile, one_line=True)
    text = json_dumps_safe({"t": hostile})
    assert "\x9b" not in text and "\x1b" not in text and "\u202e" not in text
    assert json.loads(text) == {"t": hostile}


# -- 8: in-place overwrite of a mapped index ---------------------------------------------------


_OVERWRITE = """
import sys
from scidx.errors import CorruptIndexError
from scidx.index.index import load
path, fresh, in_memory = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
idx = load(path, in_memory=in_memory)
idx.search("install", mode="keyword")
new = open(fresh, "rb").read()
with open(path, "r+b") as fh:   # what `cp fresh path` does: truncate the same inode, rewrite
    fh.truncate(0)
    fh.flush()
    try:
        for h in idx.search("install kubectl", mode="hybrid"):
            h.text, h.snippet, h.url
        print("searched")
    except CorruptIndexError as exc:
        print("error:", exc)
    fh.write(new)
"""


@pytest.mark.parametrize("in_memory", [False, True])
def test_8_in_place_overwrite_is_an_error_or_harmless_never_sigbus(
    tmp_path: Path, in_memory: bool
) -> None:
    path = tmp_path / "docs.scidx"
    path.write_bytes(build_index(DOCS))
    fresh = tmp_path / "fresh.scidx"
    fresh.write_bytes(build_index(DOCS[:1]))
    proc = subprocess.run(
        [sys.executable, "-c", _OVERWRITE, str(path), str(fresh), "1" if in_memory else "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    if in_memory:
        assert proc.stdout.strip() == "searched"
    else:
        assert "was changed on disk while it was open" in proc.stdout
        assert "in_memory=True" in proc.stdout


_HELD_HITS = """
import os, sys
from scidx.errors import CorruptIndexError
from scidx.index.index import load
path, close_first = sys.argv[1], sys.argv[2] == "1"
idx = load(path)
fields = ("text", "snippet", "url", "to_dict", "title", "source", "heading_path")
held = {f: idx.search("install kubectl", mode="hybrid", k=2) for f in fields}
if close_first:
    idx.close()  # hits outlive their index: their reads are still checked
os.truncate(path, 0)   # what `cp new path` does first, while hits are held
for name, hits in held.items():
    try:
        value = getattr(hits[0], name)
        value() if callable(value) else value
        print(name, "read")
    except CorruptIndexError as exc:
        print(name, "error:", "was changed on disk while it was open" in str(exc))
"""


@pytest.mark.parametrize("close_first", [False, True])
def test_8_hit_fields_read_after_a_truncation_are_an_error_never_sigbus(
    tmp_path: Path, close_first: bool
) -> None:
    """Issue 24 #8: held hits' lazy fields check the file as searches do (no SIGBUS, exit 135)."""
    path = tmp_path / "docs.scidx"
    path.write_bytes(build_index(DOCS))
    proc = subprocess.run(
        [sys.executable, "-c", _HELD_HITS, str(path), "1" if close_first else "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    lines = proc.stdout.splitlines()
    assert len(lines) == 7
    assert all(line.endswith("error: True") for line in lines), lines


def test_8_fifo_and_devices_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "docs.scidx"
    os.mkfifo(fifo)
    with pytest.raises(IndexFormatError, match="not a regular file"):
        load(fifo)  # would block forever in open() without O_NONBLOCK
    with pytest.raises(IndexFormatError, match="not a regular file"):
        load("/dev/null")
    with pytest.raises(IndexFormatError, match="is a folder"):
        load(tmp_path)


def test_8_close_releases_the_watched_descriptor(tmp_path: Path) -> None:
    path = tmp_path / "docs.scidx"
    path.write_bytes(build_index(DOCS))
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        load(path).close()
        load(path)  # dropped without close(): __del__ releases it
    assert len(os.listdir("/proc/self/fd")) <= before + 2


# -- 14: what verify checks --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda a, m: a.__setitem__("vectors", a["vectors"] * np.float32(3e37)),
            "row 0 is not L2-normalised",
        ),
        (
            lambda a, m: a.__setitem__("vectors", a["vectors"] * np.float32(0.5)),
            "row 0 has L2 norm 0.5",
        ),
        (
            lambda a, m: a.__setitem__("bm25.tf_values", -a["bm25.tf_values"]),
            r"`bm25.tf_values` holds a frequency outside \(0, ",
        ),
        (
            lambda a, m: a.__setitem__("bm25.idf_values", -a["bm25.idf_values"] - 1),
            r"`bm25.idf_values` holds a value outside \[0, ",
        ),
    ],
)
def test_14_verify_checks_vector_norms_and_weight_signs(mutate: Any, message: str) -> None:
    data = _forge(mutate)
    load_bytes(data).close()
    with pytest.raises(CorruptIndexError, match=message):
        load_bytes(data, verify=True)


@pytest.mark.parametrize("block", [1, 2, 5, 1 << 22])
def test_14_verify_checks_postings_in_blocks(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """verify=True decodes the runs a block of terms at a time; a fault in any block is found."""
    import scidx.index.bm25 as bm25_module

    monkeypatch.setattr(bm25_module, "_IMPACT_BLOCK", block)
    load_bytes(_forge(lambda a, m: None), verify=True).close()

    def code_past_the_table(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        ptr, rows, codes = postings_of(a)
        codes = codes.copy()
        codes[-1] = a["bm25.tf_values"].shape[0]
        set_postings(a, ptr, rows, codes)

    with pytest.raises(
        CorruptIndexError, match="`bm25.runs` holds frequency code 3, but `bm25.tf_values` has 3"
    ):
        load_bytes(_forge(code_past_the_table), verify=True)

    def descending(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        ptr, rows, codes = postings_of(a)
        t = int(np.flatnonzero(np.diff(ptr) >= 2)[-1])  # a term in 2+ chunks
        rows = rows.copy()
        rows[int(ptr[t]) + 1] = rows[int(ptr[t])]  # a zero gap: not strictly ascending
        set_postings(a, ptr, rows, codes)

    with pytest.raises(CorruptIndexError, match="not ascending within a term"):
        load_bytes(_forge(descending), verify=True)


def test_14_verify_accepts_zero_rows() -> None:
    def mutate(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        v = a["vectors"].copy()
        v[1] = 0
        a["vectors"] = v

    load_bytes(_forge(mutate), verify=True).close()


def test_scripts_in_this_module_are_valid_python() -> None:
    compile(textwrap.dedent(_OVERWRITE), "<overwrite>", "exec")


_CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d", "\r", "\x00")


def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from scidx.cli import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    code = info.value.code
    return (code if isinstance(code, int) else 1), out, err


def test_5_cli_output_carries_no_terminal_controls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import io as _io

    from scidx.index import format as fmt

    evil = "\x1b[2J\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \x9b31m \r\x00"
    records = [dict(DOCS[0]), dict(DOCS[1])]
    records[0]["text"] = f"Install kubectl {evil} now."
    records[0]["heading_path"] = ["Guide", f"Install {evil}"]
    records[0]["title"] = f"Guide {evil}"
    arrays, meta = build_arrays(records)
    meta["provider"]["model"] = meta["provider"]["model"]  # keep it loadable
    meta["packer"] = f"pack {evil}"
    buf = _io.BytesIO()
    fmt.write_index(buf, arrays, meta, built_utc="1970-01-01T00:00:00Z", generator=f"scidx {evil}")
    index = tmp_path / "evil.scidx"
    index.write_bytes(buf.getvalue())
    outputs = []
    for argv in (
        ["search", str(index), "install kubectl", "--mode", "keyword"],
        ["search", str(index), "install kubectl", "--mode", "keyword", "--json"],
        ["query", str(index), "install kubectl", "--mode", "keyword", "--show-prompt"],
        ["query", str(index), "install kubectl", "--mode", "keyword", "--json", "--show-prompt"],
        ["inspect", str(index)],
        ["inspect", str(index), "--json"],
        ["search", str(index), "x", "--source", f"{evil}*", "--mode", "keyword"],
    ):
        code, out, err = _run_cli(argv, capsys)
        assert code == 0, (argv, err)
        outputs.append((argv, out + err))
        if "--json" in argv:
            json.loads(out)
    for argv, text in outputs:
        bad = [c for c in _CONTROLS if c in text]
        assert not bad, (argv, bad)
    assert "\\x1b[2J" in outputs[0][1]  # shown, not obeyed


# -- 6 and 12: outputs and config values --------------------------------------------------------


def _project(tmp_path: Path, **settings: Any) -> Path:
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "a.md").write_text("# Title\n\nSome text about pods.\n")
    cfg = tmp_path / "staticcorpus.json"
    body = {"include": ["docs/*.md"], "output": "docs.scidx", **settings}
    cfg.write_text(json.dumps(body))
    return cfg


def test_6_a_fifo_output_is_refused_without_blocking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _project(tmp_path, output="out.fifo")
    os.mkfifo(tmp_path / "out.fifo")
    code, _, err = _run_cli(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 3
    assert "out.fifo is a FIFO; scidx writes only regular files" in err
    assert Path(tmp_path / "out.fifo").is_fifo()


def test_6_a_character_device_output_is_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import stat as _stat

    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | _stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null
    except (PermissionError, OSError):
        pytest.skip("creating a device node needs root")
    cfg = _project(tmp_path, output="null")
    code, _, err = _run_cli(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 3
    assert "is a character device" in err
    assert _stat.S_ISCHR(os.stat(node).st_mode)
    assert not (tmp_path / "null.inputs").exists()


def test_6_pack_records_refuses_a_special_output(tmp_path: Path) -> None:
    from scidx.errors import OutputError
    from scidx.pack.packer import pack_records

    os.mkfifo(tmp_path / "p")
    with pytest.raises(OutputError, match="is a FIFO"):
        pack_records([{"id": "a", "text": "x"}], tmp_path / "p", dimensions=8)


def test_6_reuse_of_a_fifo_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _project(tmp_path)
    os.mkfifo(tmp_path / "old.scidx")
    code, _, err = _run_cli(
        ["pack-docs", "--config", str(cfg), "--reuse", str(tmp_path / "old.scidx")], capsys
    )
    assert code == 1
    assert "not a regular file" in err


@pytest.mark.parametrize(
    ("settings", "code", "message"),
    [
        ({"exclude": ["\ud800"]}, 1, '"exclude" contains the lone surrogate U+D800'),
        ({"urlTemplate": "https://x/{path}\ud800"}, 1, '"urlTemplate" contains the lone'),
        ({"output": "o\ud800.scidx"}, 1, '"output" contains the lone surrogate'),
        ({"cacheDir": "c\ud800"}, 1, '"cacheDir" contains the lone surrogate'),
        ({"output": "o\x00.scidx"}, 1, '"output" contains a NUL character'),
        ({"cacheDir": "c\x00"}, 1, '"cacheDir" contains a NUL character'),
        ({"output": "a" * 300 + ".scidx"}, 3, "cannot use the output path"),
        ({"urlTemplate": "https://x/{path}" + "a" * (1 << 20)}, 1, "at most 2048"),
        ({"urlTemplate": "javascript:{path}"}, 1, "its scheme 'javascript' is not allowed"),
    ],
)
def test_12_config_values_are_messages_not_tracebacks(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    settings: dict[str, Any],
    code: int,
    message: str,
) -> None:
    cfg = _project(tmp_path, **settings)
    got, out, err = _run_cli(["pack-docs", "--config", str(cfg)], capsys)
    assert (got, message in err) == (code, True), err
    assert "Traceback" not in err and "read:" not in err  # validated before any work


def test_12_a_huge_integer_literal_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _project(tmp_path)
    cfg.write_text(
        '{"include": ["docs/*.md"], "output": "o.scidx", "dimensions": 1' + "0" * 5000 + "}"
    )
    code, _, err = _run_cli(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 1
    assert "a number with 5001 digits is far outside the range of any setting" in err


# -- 4: symlinks out of the config folder --------------------------------------------------------


def test_4_a_file_symlink_outside_the_root_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:secret\n")
    project = tmp_path / "project"
    project.mkdir()
    cfg = _project(project)
    os.symlink(secret, project / "docs" / "passwd.md")
    code, _, err = _run_cli(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 1
    assert "docs/passwd.md is a symlink (or lies below one) that points outside" in err
    assert not (project / "docs.scidx").exists()


def test_4_a_folder_symlink_outside_the_root_is_refused_unless_opted_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("# Outside\n\nexternal words\n")
    project = tmp_path / "project"
    project.mkdir()
    cfg = _project(project)
    os.symlink(outside, project / "docs" / "ext")
    os.symlink(project / "docs" / "a.md", project / "docs" / "inner.md")  # inside: fine
    cfg.write_text(json.dumps({"include": ["docs/**/*.md"], "output": "docs.scidx"}))
    code, _, err = _run_cli(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 1 and "docs/ext is a symlink" in err
    cfg.write_text(
        json.dumps(
            {"include": ["docs/**/*.md"], "output": "docs.scidx", "allowExternalSymlinks": True}
        )
    )
    code, _, err = _run_cli(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 0, err
    with load(project / "docs.scidx") as idx:
        assert {idx.chunk(i).source for i in range(len(idx))} == {
            "docs/a.md",
            "docs/ext/x.md",
            "docs/inner.md",
        }


# -- 10: linear-time globs and front matter ------------------------------------------------------


def _old_glob_regex(glob: str) -> Any:
    """The regex translation the matcher replaced (the oracle for its semantics)."""
    import re

    def segment_regex(segment: str) -> str:
        out: list[str] = []
        i, n = 0, len(segment)
        while i < n:
            c = segment[i]
            if c == "*":
                while i < n and segment[i] == "*":
                    i += 1
                out.append("[^/]*")
                continue
            if c == "?":
                out.append("[^/]")
            elif c == "[":
                j = i + 1
                if j < n and segment[j] in "!^":
                    j += 1
                if j < n and segment[j] == "]":
                    j += 1
                while j < n and segment[j] != "]":
                    j += 1
                if j >= n:
                    raise re.error("unbalanced [")
                body = segment[i + 1 : j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("^", "\\^")
                out.append(f"[^/{body}]" if negate else f"[{body}]")
                i = j
            else:
                out.append(re.escape(c))
            i += 1
        return "".join(out)

    parts = glob.split("/")
    out = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".+" if last else "(?:[^/]+/)*")
            continue
        out.append(segment_regex(part) + ("" if last else "/"))
    return re.compile("".join(out), re.DOTALL)


def test_10_glob_matcher_agrees_with_the_regex_translation() -> None:
    import random

    from scidx.pack.globs import compile_glob

    rnd = random.Random(10)
    atoms = ["a", "b", "*", "**", "?", "[ab]", "[!a]", "[a-c]", ".md", "/", "x"]
    letters = ["a", "b", "c", "x", ".md", "/", "d"]
    checked = 0
    for _ in range(3000):
        glob = "".join(rnd.choice(atoms) for _ in range(rnd.randint(1, 7)))
        if "//" in glob or glob.startswith("/"):
            continue
        oracle = _old_glob_regex(glob)
        mine = compile_glob(glob)
        for _ in range(8):
            path = "".join(rnd.choice(letters) for _ in range(rnd.randint(0, 9)))
            assert mine.fullmatch(path) == bool(oracle.fullmatch(path)), (glob, path)
            checked += 1
    assert checked > 10_000


def test_10_a_backtracking_glob_is_linear() -> None:
    code = (
        "from scidx.pack.globs import compile_glob\n"
        "g = compile_glob('docs/*a*a*a*a*a*a*a*ab.md')\n"
        "assert not any(g.fullmatch('docs/' + 'a' * n + '.md') for n in range(150, 250))\n"
    )
    # A hang guard, not a speed assertion: the regex took over 250 s for one 200-char name.
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_10_front_matter_key_regex_is_linear() -> None:
    from scidx.pack.frontmatter import parse_front_matter

    code = (
        "from scidx.pack.frontmatter import parse_front_matter\n"
        "for tail in ('b', 'b: c', ':x'):\n"
        "    parse_front_matter('---\\na' + ' ' * 200_000 + tail + '\\ntitle: T\\n---\\nbody')\n"
    )
    # A hang guard: the lazy key regex took 31 s on one such line.
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    _, meta = parse_front_matter('---\n"quoted key"  : v\nplain key :  w\nk: "x: y"\n---\n')
    assert meta == {"quoted key": "v", "plain key": "w", "k": "x: y"}


def test_14_the_writer_verifies_its_own_output(tmp_path: Path, monkeypatch: Any) -> None:
    """A corrupt write (here: a flipped byte after the fsync) never replaces the old index."""
    from scidx.errors import OutputError
    from scidx.pack import fileio
    from scidx.pack.packer import pack_records

    out = tmp_path / "docs.scidx"
    pack_records([{"id": "a", "text": "first version"}], out, dimensions=8)
    before = out.read_bytes()
    real = fileio.atomic_write

    def damaging(path: Path, write: Any, *, check: Any = None) -> int:
        def corrupting_check(tmp: Path) -> None:
            data = bytearray(tmp.read_bytes())
            data[-1] ^= 0x40  # the last vector byte: only a checksum can tell
            tmp.write_bytes(bytes(data))
            assert check is not None
            check(tmp)

        return real(path, write, check=corrupting_check)

    monkeypatch.setattr("scidx.pack.packer.atomic_write", damaging)
    with pytest.raises(OutputError, match="failed its own verification"):
        pack_records([{"id": "a", "text": "second version"}], out, dimensions=8)
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["docs.scidx"]


# -- 7: --check and reuse never trust a swapped vector -------------------------------------------


def _swap_vector_rows(path: Path, a: int, b: int) -> None:
    """Swap two stored vector rows and re-encode the file, so every checksum is valid again."""
    import io as _io

    from scidx.index import format as fmt

    data = path.read_bytes()
    header = fmt.read_header(data)
    arrays = {name: np.array(fmt.array_view(data, header, name)) for name in header.arrays}
    # Whichever encoding stores the rows (int8, the default, keeps a scale per row).
    for name in ("vectors", "vectors.i8", "vectors.scale", "vectors.bits"):
        if name in arrays:
            rows = arrays[name]
            rows[[a, b]] = rows[[b, a]]
    assert any(name in arrays for name in ("vectors", "vectors.i8")), sorted(arrays)
    buf = _io.BytesIO()
    fmt.write_index(
        buf, arrays, header.meta, built_utc=header.built_utc, generator=header.generator
    )
    path.write_bytes(buf.getvalue())


def test_7_a_committed_index_with_swapped_vectors_is_stale_and_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _project(tmp_path)
    (tmp_path / "docs" / "b.md").write_text("# Other\n\nA page about services and ports.\n")
    code, _, err = _run_cli(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 0, err
    out = tmp_path / "docs.scidx"
    clean = out.read_bytes()
    _swap_vector_rows(out, 0, 1)
    (tmp_path / "docs.scidx.inputs").unlink()  # a fresh checkout: no sidecar, no cache
    tampered = out.read_bytes()
    assert tampered != clean
    load(out).close()  # loads: the checksums were recomputed
    with pytest.raises(CorruptIndexError, match="`vectors.key` row 0 does not match"):
        load(out, verify=True)
    env_cache = tmp_path / "fresh-cache"
    os.environ["SCIDX_CACHE_DIR"] = str(env_cache)  # restored by the autouse fixture
    code, out_text, err = _run_cli(["pack-docs", "--config", str(cfg), "--check"], capsys)
    assert code == 6, (out_text, err)
    code, _, err = _run_cli(["pack-docs", "--config", str(cfg), "--force"], capsys)
    assert code == 0, err
    assert out.read_bytes() == clean  # the swapped rows were re-embedded, not reused


# -- 11: no chunk over the documented maximum ----------------------------------------------------


def test_11_a_huge_paragraph_is_split_on_sentences_then_hard_limits() -> None:
    from scidx.pack.chunk import HARD_LIMIT_FACTOR, chunk_markdown
    from scidx.pack.frontmatter import normalize_source

    sentences = " ".join(f"Sentence number {i} is here." for i in range(20_000))
    one_word = "x" * 9000  # no space at all: hard cuts
    code = "```\n" + "\n".join(f"code line {i}" for i in range(2000)) + "\n```"
    doc = f"# T\n\n## Big\n\n{sentences}\n\n{one_word}\n\n{code}\n"
    budget = 500
    chunks = chunk_markdown(doc, "b.md", max_chunk_chars=budget)
    norm = normalize_source(doc)
    assert all(norm[c.char_start : c.char_end] == c.text for c in chunks)
    assert max(len(c.text) for c in chunks) <= budget  # all three were split
    prose = [c.text for c in chunks if c.text.startswith("Sentence")]
    assert all(t.endswith("here.") for t in prose)  # cut after sentence ends
    covered = "".join(c.text for c in chunks)
    assert covered.count("Sentence number") == 20_000
    assert covered.count("x") >= 9000
    assert HARD_LIMIT_FACTOR == 4


def test_11_a_block_under_the_hard_limit_stays_whole() -> None:
    from scidx.pack.chunk import chunk_markdown

    fence = "```\n" + "\n".join(f"line {i:03d} " + "x" * 40 for i in range(30)) + "\n```"
    chunks = chunk_markdown(f"## S\n\nBefore.\n\n{fence}\n", "c.md", max_chunk_chars=500)
    assert [c.text for c in chunks] == ["Before.", fence]  # 1.5 KB < 4 x 500: kept whole


# -- 13: API inputs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 10**400}, "alpha must be a number in [0, 1], got 1000"),
        ({"alpha": True}, "alpha must be a number in [0, 1], got True"),
        ({"alpha": np.bool_(True)}, "alpha must be a number in [0, 1]"),
        ({"alpha": float("nan")}, "alpha must be a number in [0, 1], got nan"),
        ({"min_score": 10**400}, "min_score must be a number, got 1000"),
        ({"min_score": -(10**400)}, "min_score must be a number"),
        ({"min_score": True}, "min_score must be a number, got True"),
        ({"query_vector": [[1.0, 2.0], [3.0]]}, "the query vector is not a flat array"),
        ({"query_vector": [10**400] * 64}, "the query vector must hold real numbers"),
    ],
)
def test_13_api_inputs_raise_query_error(kwargs: dict[str, Any], message: str) -> None:
    from scidx.errors import QueryError

    with load_bytes(build_index(DOCS)) as idx:
        for mode in ("hybrid", "vector", "keyword"):
            with pytest.raises(QueryError) as info:
                idx.search("install", mode=mode, **kwargs)
            assert message in str(info.value)
        if "query_vector" in kwargs:
            with pytest.raises(QueryError, match="query vector"):
                idx.search_vector(kwargs["query_vector"])
    assert len(str(info.value)) < 300  # a huge value is shortened in the message


# -- 9: bounded query-embedder memo ---------------------------------------------------------------


def test_9_the_term_memo_is_bounded_and_per_call_work_is_flat() -> None:
    from scidx.embed import hashing

    emb = hashing.HashingEmbedder(64)
    emb._table.capacity = 1000  # the default is 32768; small here to keep the test fast
    probe = "configure cors origins"
    first = emb.embed_batch([probe])
    for i in range(0, 5000, 50):
        emb.embed_batch([" ".join(f"novel{j}term" for j in range(i, i + 50))])
    assert len(emb._table.memo) <= 1000
    # The arrays a call builds cover that call's distinct terms only, however much was seen.
    ids, term_hash, gram_start, gram_len, grams = emb._table.lookup(["a", "b", "a"])
    assert ids.tolist() == [0, 1, 0] and term_hash.shape == (2,) and gram_len.shape == (2,)
    # Evicted terms are recomputed identically: results never depend on the memo's history.
    assert np.array_equal(emb.embed_batch([probe]), first)
    assert np.array_equal(hashing.HashingEmbedder(64).embed_batch([probe]), first)
    assert hashing.MEMO_TERMS == 1 << 15


def test_14_an_input_over_the_size_limit_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    from scidx.pack import sources

    monkeypatch.setattr(sources, "MAX_INPUT_BYTES", 1000)  # 16 MiB in production
    cfg = _project(tmp_path)
    (tmp_path / "docs" / "big.md").write_text("word " * 1000)
    code, _, err = _run_cli(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 1
    assert "input file docs/big.md is larger than 1,000 bytes, the limit for one" in err
