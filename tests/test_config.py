"""Tests for scidx.pack.config: loading, validation messages, globbing and input collection."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from scidx.errors import ConfigError, InputError
from scidx.pack.config import Config, config_from_dict, load_config
from scidx.pack.inputs import InputFile, collect_inputs

BASE: dict[str, Any] = {"include": ["docs/**/*.md"], "output": "docs.scidx"}


def write_config(folder: Path, data: Any, name: str = "staticcorpus.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def touch(root: Path, *paths: str) -> None:
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n", encoding="utf-8")


def sources(config: Config) -> list[str]:
    return [f.source for f in collect_inputs(config)]


def err(data: dict[str, Any], tmp_path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        config_from_dict(data, root=tmp_path)
    return str(info.value)


# --------------------------------------------------------------------------------------------
# Loading


def test_load_minimal_defaults(tmp_path: Path) -> None:
    path = write_config(tmp_path, BASE)
    config = load_config(path)
    root = tmp_path.resolve()
    assert config == Config(
        root,
        root / "staticcorpus.json",
        ("docs/**/*.md",),
        output=root / "docs.scidx",
        model="hashing-v2",
        generator="github",  # no generator config beside the file: GitHub renders it
    )
    assert config.embedding_provider == "hashing"
    assert config.dimensions == 512
    assert config.max_chunk_chars == 1500
    assert config.anchor_style == "github"
    assert config.cache_dir is None
    assert config.url_template is None
    assert config.base_url is None
    # batchSize absent: each provider uses its own default (OpenAI 128, local 32).
    assert (config.batch_size, config.concurrency, config.timeout) == (None, 4, 60.0)


def test_load_all_keys(tmp_path: Path) -> None:
    data = {
        "$schema": "https://example.com/staticcorpus.schema.json",
        "include": ["a/*.md", "b/**/*.md"],
        "exclude": ["a/draft-*.md"],
        "embeddingProvider": "openai",
        "model": "text-embedding-3-large",
        "dimensions": 1024,
        "maxChunkChars": 4000,
        "output": "out/site.scidx",
        "anchorStyle": "mkdocs",
        "cacheDir": ".cache",
        "urlTemplate": "https://docs.example.com/{path}#{anchor}",
        "baseUrl": "http://localhost:8080/v1",
        "batchSize": 64,
        "concurrency": 8,
        "timeoutSeconds": 12.5,
    }
    config = load_config(write_config(tmp_path, data))
    root = tmp_path.resolve()
    assert config.include == ("a/*.md", "b/**/*.md")
    assert config.exclude == ("a/draft-*.md",)
    assert config.embedding_provider == "openai"
    assert config.model == "text-embedding-3-large"
    assert config.dimensions == 1024
    assert config.max_chunk_chars == 4000
    assert config.output == root / "out" / "site.scidx"
    assert config.anchor_style == "mkdocs"
    assert config.cache_dir == root / ".cache"
    assert config.url_template == "https://docs.example.com/{path}#{anchor}"
    assert config.base_url == "http://localhost:8080/v1"
    assert (config.batch_size, config.concurrency, config.timeout) == (64, 8, 12.5)


def test_openai_default_model(tmp_path: Path) -> None:
    config = config_from_dict({**BASE, "embeddingProvider": "openai"}, root=tmp_path)
    assert config.model == "text-embedding-3-small"
    assert config.model_id == "text-embedding-3-small"


def test_single_string_include_is_accepted(tmp_path: Path) -> None:
    config = config_from_dict(
        {"include": "docs/*.md", "exclude": "docs/x.md", "output": "o.scidx"}, root=tmp_path
    )
    assert config.include == ("docs/*.md",)
    assert config.exclude == ("docs/x.md",)


def test_cache_dir_expands_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = config_from_dict({**BASE, "cacheDir": "~/c"}, root=tmp_path)
    assert config.cache_dir == tmp_path / "home" / "c"


def test_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "staticcorpus.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(BASE).encode())
    assert load_config(path).include == ("docs/**/*.md",)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (
        f"{path}: config file not found; create it (see staticcorpus.example.json) "
        "or pass the right path"
    )


def test_folder_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}: is a folder, not a config file; pass the path of staticcorpus.json"
    )


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs POSIX permissions")
def test_unreadable_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, BASE)
    path.chmod(0)
    try:
        with pytest.raises(ConfigError) as info:
            load_config(path)
    finally:
        path.chmod(0o644)
    assert str(info.value) == f"{path}: cannot read config file: Permission denied"


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "staticcorpus.json"
    path.write_text('{\n  "include": ["a"]\n  "output": "x"\n}\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}: invalid JSON at line 3, column 3: Expecting ',' delimiter")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "staticcorpus.json"
    path.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: invalid JSON at line 1, column 1: Expecting value"


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "staticcorpus.json"
    path.write_bytes(b'{"include": ["\xff"]}')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: not valid UTF-8 (byte 14); save the file as UTF-8"


def test_top_level_not_object(tmp_path: Path) -> None:
    path = write_config(tmp_path, ["docs/*.md"])
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (
        f"{path}: the top level must be a JSON object like "
        '{"include": ["docs/**/*.md"], "output": "docs.scidx"}, got an array'
    )


def test_duplicate_key(tmp_path: Path) -> None:
    path = tmp_path / "staticcorpus.json"
    path.write_text('{"include": ["a"], "include": ["b"], "output": "o"}', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f'{path}: key "include" appears twice; keep only one'


def test_nan_rejected(tmp_path: Path) -> None:
    path = tmp_path / "staticcorpus.json"
    path.write_text('{"include": ["a"], "output": "o", "timeoutSeconds": NaN}', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: NaN is not valid JSON; use a finite number"


def test_message_uses_path_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, {**BASE, "inclde": ["x"]})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_config("staticcorpus.json")
    assert str(info.value) == 'staticcorpus.json: unknown key "inclde"; did you mean "include"?'


# --------------------------------------------------------------------------------------------
# Validation messages (config_from_dict labels them "staticcorpus.json")

P = "staticcorpus.json"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {**BASE, "inclde": ["x"]},
            f'{P}: unknown key "inclde"; did you mean "include"?',
        ),
        (
            {**BASE, "max_chunk_chars": 10},
            f'{P}: unknown key "max_chunk_chars"; did you mean "maxChunkChars"?',
        ),
        (
            {**BASE, "zzzzzz": 1},
            f'{P}: unknown key "zzzzzz"; known keys: include, exclude, embeddingProvider, '
            "model, dimensions, maxChunkChars, output, anchorStyle, generator, vectors, "
            "snippetOffsets, cacheDir, urlTemplate, sourceRoot, baseUrl, batchSize, concurrency, "
            "timeoutSeconds, threads, maxTokens, windowOverlap, allowDownload, providerOptions, "
            "allowExternalSymlinks, version, versions, language, locale",
        ),
        (
            {"output": "o"},
            f'{P}: missing required key "include"; add e.g. "include": ["docs/**/*.md"]',
        ),
        (
            {"include": ["a/*.md"]},
            f'{P}: missing required key "output"; add e.g. "output": "docs.scidx"',
        ),
        (
            {**BASE, "include": []},
            f'{P}: "include" must be a non-empty array of globs, got []; add e.g. "docs/**/*.md"',
        ),
        (
            {**BASE, "include": {"a": 1}},
            f'{P}: "include" must be an array of glob strings like ["docs/**/*.md"], '
            'got {"a": 1}',
        ),
        (
            {**BASE, "include": ["a", 3]},
            f'{P}: "include" must be an array of glob strings like ["docs/**/*.md"], got ["a", 3]',
        ),
        (
            {**BASE, "exclude": None},
            f'{P}: "exclude" must be an array of glob strings like ["docs/**/*.md"], got null',
        ),
        (
            {**BASE, "include": ["../other/*.md"]},
            f'{P}: "include" glob "../other/*.md" leaves the config folder through ".."; '
            "move the config file to a folder that contains every input, or use a symlink "
            'inside it with "allowExternalSymlinks": true',
        ),
        (
            {**BASE, "include": ["/abs/*.md"]},
            f'{P}: "include" glob "/abs/*.md" is absolute; write it relative to the folder '
            "of the config file",
        ),
        (
            {**BASE, "include": ["docs\\*.md"]},
            f'{P}: "include" glob "docs\\\\*.md" contains "\\"; use "/" as the path separator',
        ),
        (
            {**BASE, "include": ["docs/"]},
            f'{P}: "include" glob "docs/" ends with "/"; to match the files inside use '
            '"docs/**/*.md"',
        ),
        (
            {**BASE, "include": ["docs//a.md"]},
            f'{P}: "include" glob "docs//a.md" contains an empty segment ("//"); remove the '
            'extra "/"',
        ),
        (
            {**BASE, "include": [" "]},
            f'{P}: "include" glob " " is empty; remove it or write a pattern like "docs/**/*.md"',
        ),
        (
            {**BASE, "exclude": ["a[b"]},
            f'{P}: "exclude" glob "a[b" has an unbalanced "["; write "[[]" to match a literal "["',
        ),
        (
            {**BASE, "embeddingProvider": "OpenAI"},
            f'{P}: "embeddingProvider" must be "hashing" or "openai" or "local" or "static", got '
            '"OpenAI"; '
            'did you mean "openai"?',
        ),
        (
            {**BASE, "embeddingProvider": "cohere"},
            f'{P}: "embeddingProvider" must be "hashing" or "openai" or "local" or "static", got '
            '"cohere"; '
            "no installed plugin provides it (see docs/providers.md)",
        ),
        (
            {**BASE, "embeddingProvider": None},
            f'{P}: "embeddingProvider" must be "hashing" or "openai" or "local" or "static", got '
            "null",
        ),
        (
            {**BASE, "anchorStyle": "gitlab"},
            f'{P}: "anchorStyle" must be "github" or "mkdocs" or "vitepress" or "docutils", '
            'got "gitlab"; did you mean "github"?',
        ),
        (
            {**BASE, "model": "bert"},
            f'{P}: "model" must be "hashing-v2" (or absent) for embeddingProvider "hashing", '
            'got "bert"; remove "model" or set "embeddingProvider": "openai" or "local"',
        ),
        (
            {**BASE, "model": ""},
            f'{P}: "model" must be a non-empty string or null, got ""',
        ),
        (
            {**BASE, "dimensions": True},
            f'{P}: "dimensions" must be an integer from 8 to 8192 for embeddingProvider '
            '"hashing", got true',
        ),
        (
            {**BASE, "dimensions": 4},
            f'{P}: "dimensions" must be an integer from 8 to 8192 for embeddingProvider '
            '"hashing", got 4',
        ),
        (
            {**BASE, "embeddingProvider": "openai", "dimensions": 0},
            f'{P}: "dimensions" must be an integer from 1 to 8192, got 0',
        ),
        (
            {**BASE, "dimensions": 512.0},
            f'{P}: "dimensions" must be an integer from 8 to 8192 for embeddingProvider '
            '"hashing", got 512.0',
        ),
        (
            {**BASE, "maxChunkChars": 199},
            f'{P}: "maxChunkChars" must be an integer from 200 to 1000000, got 199',
        ),
        (
            {**BASE, "maxChunkChars": "1500"},
            f'{P}: "maxChunkChars" must be an integer from 200 to 1000000, got "1500"',
        ),
        (
            {**BASE, "batchSize": 0},
            f'{P}: "batchSize" must be an integer from 1 to 2048, got 0',
        ),
        (
            {**BASE, "concurrency": 65},
            f'{P}: "concurrency" must be an integer from 1 to 64, got 65',
        ),
        (
            {**BASE, "concurrency": False},
            f'{P}: "concurrency" must be an integer from 1 to 64, got false',
        ),
        (
            {**BASE, "timeoutSeconds": 0},
            f'{P}: "timeoutSeconds" must be a number of seconds above 0 and at most 3600, got 0',
        ),
        (
            {**BASE, "timeoutSeconds": True},
            f'{P}: "timeoutSeconds" must be a number of seconds above 0 and at most 3600, got true',
        ),
        (
            {**BASE, "timeoutSeconds": float("inf")},
            f'{P}: "timeoutSeconds" must be a number of seconds above 0 and at most 3600, '
            "got Infinity",
        ),
        (
            {**BASE, "output": ""},
            f'{P}: "output" must be a file path like "docs.scidx", got ""',
        ),
        (
            {**BASE, "output": 3},
            f'{P}: "output" must be a file path like "docs.scidx", got 3',
        ),
        (
            {**BASE, "output": "out/"},
            f'{P}: "output" must be a file path, not a folder, got "out/"; add a file name '
            'like "docs.scidx"',
        ),
        (
            {**BASE, "cacheDir": 1},
            f'{P}: "cacheDir" must be a non-empty string or null, got 1',
        ),
        (
            {**BASE, "urlTemplate": "https://x/{path}#{anchr}"},
            f'{P}: "urlTemplate" must be a URL pattern like '
            '"https://docs.example.com/{path}#{anchor}", got "https://x/{path}#{anchr}"; '
            "unknown placeholder {anchr}; use only {source}, {path}, {page}, {anchor}",
        ),
        (
            {**BASE, "urlTemplate": "https://x/{path!r}"},
            f'{P}: "urlTemplate" must be a URL pattern like '
            '"https://docs.example.com/{path}#{anchor}", got "https://x/{path!r}"; '
            "unknown placeholder {path!r}; use only {source}, {path}, {page}, {anchor}",
        ),
        (
            {**BASE, "urlTemplate": "https://x/{}"},
            f'{P}: "urlTemplate" must be a URL pattern like '
            '"https://docs.example.com/{path}#{anchor}", got "https://x/{}"; '
            "unknown placeholder {}; use only {source}, {path}, {page}, {anchor}",
        ),
        (
            {**BASE, "urlTemplate": "https://x/{path"},
            f'{P}: "urlTemplate" must be a URL pattern like '
            '"https://docs.example.com/{path}#{anchor}", got "https://x/{path"; '
            'expected \'}\' before end of string; write "{{" or "}}" for a literal brace',
        ),
        (
            {**BASE, "urlTemplate": "https://x/#{anchor}"},
            f'{P}: "urlTemplate" must be a URL pattern like '
            '"https://docs.example.com/{path}#{anchor}", got "https://x/#{anchor}"; '
            "it has no {path}, {page} or {source} placeholder, so every hit would get the same URL",
        ),
        (
            {**BASE, "baseUrl": "http://localhost/v1"},
            f'{P}: "baseUrl" must be absent for embeddingProvider "hashing", got '
            '"http://localhost/v1"; remove "baseUrl" or set "embeddingProvider": "openai"',
        ),
        (
            {**BASE, "embeddingProvider": "openai", "baseUrl": "localhost:8080"},
            f'{P}: "baseUrl" must be an http(s) URL like "http://localhost:8080/v1", got '
            '"localhost:8080"',
        ),
    ],
)
def test_validation_messages(data: dict[str, Any], message: str, tmp_path: Path) -> None:
    assert err(data, tmp_path) == message


def test_long_value_is_shortened(tmp_path: Path) -> None:
    message = err({**BASE, "anchorStyle": "x" * 200}, tmp_path)
    assert message == (
        f'{P}: "anchorStyle" must be "github" or "mkdocs" or "vitepress" or "docutils", '
        f'got "{"x" * 76}...'
    )


def test_url_template_literal_braces_ok(tmp_path: Path) -> None:
    config = config_from_dict({**BASE, "urlTemplate": "https://x/{{v}}/{source}"}, root=tmp_path)
    assert config.url_template == "https://x/{{v}}/{source}"


def test_config_from_dict_rejects_non_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict(["x"], root=tmp_path)  # type: ignore[arg-type]
    assert str(info.value) == "config: expected a mapping of settings, got list"


# --------------------------------------------------------------------------------------------
# canonical / config_hash


def test_hash_is_independent_of_location(tmp_path: Path) -> None:
    data = {
        **BASE,
        "exclude": ["docs/drafts/**"],
        "cacheDir": "cache",
        "urlTemplate": "https://d/{path}#{anchor}",
    }
    (tmp_path / "one").mkdir()
    (tmp_path / "two" / "deeper").mkdir(parents=True)
    a = load_config(write_config(tmp_path / "one", data))
    b = load_config(write_config(tmp_path / "two" / "deeper", data))
    assert a.root != b.root
    assert a.canonical() == b.canonical()
    assert a.config_hash() == b.config_hash()
    text = json.dumps(a.canonical())
    assert str(tmp_path) not in text
    assert len(a.config_hash()) == 32


def test_canonical_content(tmp_path: Path) -> None:
    config = config_from_dict(
        {**BASE, "include": ["b/*.md", "a/*.md", "b/*.md"], "batchSize": 7}, root=tmp_path
    )
    assert config.canonical() == {
        "include": ["a/*.md", "b/*.md"],
        "exclude": [],
        "embeddingProvider": "hashing",
        "model": "hashing-v2",
        "dimensions": 512,
        "maxChunkChars": 1500,
        "anchorStyle": "github",
        "generator": "github",
        "urlTemplate": None,
        "vectors": "int8",  # the default since packer 7; float32 is left out (older configs)
    }


def test_hash_ignores_operational_settings(tmp_path: Path) -> None:
    a = config_from_dict(BASE, root=tmp_path)
    b = config_from_dict(
        {
            **BASE,
            "output": "elsewhere.scidx",
            "cacheDir": "/var/cache",
            "batchSize": 3,
            "concurrency": 9,
            "timeoutSeconds": 5,
            "model": "hashing-v2",
        },
        root=tmp_path,
    )
    assert a.config_hash() == b.config_hash()


@pytest.mark.parametrize(
    "change",
    [
        {"dimensions": 256},
        {"maxChunkChars": 800},
        {"anchorStyle": "mkdocs"},
        {"exclude": ["x.md"]},
        {"include": ["docs/*.md"]},
        {"urlTemplate": "https://x/{path}"},
        {"embeddingProvider": "openai"},
    ],
)
def test_hash_changes_with_content_settings(change: dict[str, Any], tmp_path: Path) -> None:
    a = config_from_dict(BASE, root=tmp_path)
    b = config_from_dict({**BASE, **change}, root=tmp_path)
    assert a.config_hash() != b.config_hash()


# --------------------------------------------------------------------------------------------
# collect_inputs


def make(tmp_path: Path, **data: Any) -> Config:
    return config_from_dict({"output": "out.scidx", **data}, root=tmp_path)


def test_globs_and_excludes(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "README.md",
        "docs/index.md",
        "docs/a/b/deep.md",
        "docs/a/notes.txt",
        "docs/drafts/wip.md",
        "docs/drafts/x/more.md",
        "docs/skip-me.md",
        "other/z.md",
    )
    config = make(
        tmp_path, include=["docs/**/*.md", "README.md"], exclude=["docs/drafts/**", "**/skip-*"]
    )
    files = collect_inputs(config)
    assert [f.source for f in files] == ["README.md", "docs/a/b/deep.md", "docs/index.md"]
    root = tmp_path.resolve()
    assert files[1] == InputFile("docs/a/b/deep.md", root / "docs" / "a" / "b" / "deep.md")
    assert all(f.path.is_absolute() for f in files)


def test_exclude_a_folder_excludes_its_contents(tmp_path: Path) -> None:
    touch(tmp_path, "a.md", "node_modules/p/README.md", "docs/drafts/x/y.md", "docs/ok.md")
    config = make(tmp_path, include=["**/*.md"], exclude=["node_modules", "docs/drafts"])
    assert sources(config) == ["a.md", "docs/ok.md"]
    config = make(tmp_path, include=["docs/drafts/x/*.md", "a.md"], exclude=["**/drafts"])
    assert sources(config) == ["a.md"]


def test_glob_semantics(tmp_path: Path) -> None:
    touch(tmp_path, "a.md", "b.md", "x/a.md", "x/y/a.md", "ab.md", "c1.md", "c2.md")
    assert sources(make(tmp_path, include=["*.md"])) == ["a.md", "ab.md", "b.md", "c1.md", "c2.md"]
    assert sources(make(tmp_path, include=["?.md"])) == ["a.md", "b.md"]
    assert sources(make(tmp_path, include=["c[12].md"])) == ["c1.md", "c2.md"]
    assert sources(make(tmp_path, include=["c[!1].md"])) == ["c2.md"]
    assert sources(make(tmp_path, include=["**/a.md"])) == ["a.md", "x/a.md", "x/y/a.md"]
    assert sources(make(tmp_path, include=["x/**"])) == ["x/a.md", "x/y/a.md"]
    assert sources(make(tmp_path, include=["x/**/a.md"])) == ["x/a.md", "x/y/a.md"]
    # "*" never crosses "/".
    assert sources(make(tmp_path, include=["x/*.md"])) == ["x/a.md"]


def test_duplicates_across_globs(tmp_path: Path) -> None:
    touch(tmp_path, "docs/a.md", "docs/b.md")
    config = make(tmp_path, include=["docs/*.md", "docs/a.md", "**/*.md", "docs/*.md"])
    assert sources(config) == ["docs/a.md", "docs/b.md"]


def test_folder_named_like_markdown_is_skipped(tmp_path: Path) -> None:
    touch(tmp_path, "docs/real.md", "docs/foo.md/inner.md")
    assert sources(make(tmp_path, include=["docs/*.md"])) == ["docs/real.md"]
    assert sources(make(tmp_path, include=["docs/**/*.md"])) == [
        "docs/foo.md/inner.md",
        "docs/real.md",
    ]


def test_dot_dot_md_file(tmp_path: Path) -> None:
    touch(tmp_path, "pages/common/..md", "pages/common/.hidden.md", "pages/common/ls.md")
    assert sources(make(tmp_path, include=["pages/**/*.md"])) == [
        "pages/common/..md",
        "pages/common/.hidden.md",
        "pages/common/ls.md",
    ]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loop_terminates(tmp_path: Path) -> None:
    touch(tmp_path, "docs/a.md", "docs/sub/b.md")
    os.symlink(tmp_path / "docs", tmp_path / "docs" / "sub" / "loop")
    os.symlink(tmp_path / "docs" / "sub", tmp_path / "docs" / "sub" / "self")
    os.symlink(tmp_path / "missing", tmp_path / "docs" / "dangling.md")
    # Finishing at all is the check: a walk that followed the loops would never end.
    assert sources(make(tmp_path, include=["**/*.md"])) == ["docs/a.md", "docs/sub/b.md"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlinked_folder_outside_root_is_followed_once(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    touch(outside, "x.md")
    project = tmp_path / "project"
    touch(project, "docs/a.md")
    os.symlink(outside, project / "docs" / "ext")
    os.symlink(outside, project / "docs" / "ext2")
    with pytest.raises(ConfigError, match="docs/ext is a symlink .* points outside"):
        collect_inputs(make(project, include=["docs/**/*.md"]))
    files = collect_inputs(make(project, include=["docs/**/*.md"], allowExternalSymlinks=True))
    # The real folder is entered once, through the first route in sorted order.
    assert [f.source for f in files] == ["docs/a.md", "docs/ext/x.md"]
    assert files[1].path == project.resolve() / "docs" / "ext" / "x.md"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_real_route_wins_over_symlink(tmp_path: Path) -> None:
    touch(tmp_path, "b/real/x.md")
    # "a/link" sorts before "b/real" but is a symlink: the file is listed under its real path.
    (tmp_path / "a").mkdir()
    os.symlink(tmp_path / "b" / "real", tmp_path / "a" / "link")
    assert sources(make(tmp_path, include=["**/*.md"])) == ["b/real/x.md"]
    # Only through the symlink when the real folder is outside the walk.
    assert sources(make(tmp_path, include=["a/**/*.md"])) == ["a/link/x.md"]


def test_order_independent_of_creation_order(tmp_path: Path) -> None:
    names = ["b.md", "a.md", "Z.md", "é.md", "e.md", "a/b.md", "a-b.md", "a_b.md", "_.md"]
    results = []
    for seed in range(3):
        root = tmp_path / str(seed)
        shuffled = names[:]
        random.Random(seed).shuffle(shuffled)
        touch(root, *shuffled)
        results.append(sources(make(root, include=["**/*.md"])))
    assert results[0] == results[1] == results[2]
    assert results[0] == sorted(results[0], key=lambda s: s.encode("utf-8"))
    assert results[0] == [
        "Z.md",
        "_.md",
        "a-b.md",
        "a.md",
        "a/b.md",
        "a_b.md",
        "b.md",
        "e.md",
        "é.md",
    ]


def test_output_is_never_an_input(tmp_path: Path) -> None:
    touch(tmp_path, "a.md", "out.scidx.inputs", ".out.scidx.tmp.4242")
    (tmp_path / "out.scidx").write_bytes(b"SCIDX\x00\r\n and the rest of an index")
    assert sources(make(tmp_path, include=["*"])) == ["a.md"]
    # An output path that names a real document is refused, not silently overwritten.
    (tmp_path / "out.scidx").write_text("# not an index\n")
    with pytest.raises(ConfigError, match='"output" is "out.scidx", one of the input files'):
        collect_inputs(make(tmp_path, include=["*"]))


def test_include_matches_nothing(tmp_path: Path) -> None:
    touch(tmp_path, "docs/a.md")
    config = make(tmp_path, include=["docs/*.md", "guides/**/*.md"])
    with pytest.raises(ConfigError) as info:
        collect_inputs(config)
    assert str(info.value) == (
        f'{P}: "include" glob "guides/**/*.md" matches no file; check the path is relative to '
        f"{tmp_path.resolve()}"
    )


def test_include_matching_only_a_folder_hints(tmp_path: Path) -> None:
    touch(tmp_path, "docs/a.md")
    with pytest.raises(ConfigError) as info:
        collect_inputs(make(tmp_path, include=["docs"]))
    assert str(info.value) == (
        f'{P}: "include" glob "docs" matches no file; check the path is relative to '
        f"{tmp_path.resolve()} (it matches a folder; to take the files in it use "
        '"docs/**/*.md")'
    )


def test_everything_excluded(tmp_path: Path) -> None:
    touch(tmp_path, "docs/a.md")
    with pytest.raises(ConfigError) as info:
        collect_inputs(make(tmp_path, include=["docs/*.md"], exclude=["**"]))
    assert str(info.value) == (
        f'{P}: every file matched by "include" is removed by "exclude" ["**"]; '
        "loosen the exclude globs"
    )


def test_error_names_config_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"include": ["nothing/*.md"], "output": "o.scidx"})
    with pytest.raises(ConfigError) as info:
        collect_inputs(load_config(path))
    assert str(info.value).startswith(f'{path.resolve()}: "include" glob "nothing/*.md"')


def test_missing_root(tmp_path: Path) -> None:
    config = make(tmp_path / "gone", include=["*.md"])
    with pytest.raises(ConfigError) as info:
        collect_inputs(config)
    assert str(info.value) == (
        f"{P}: the config folder {(tmp_path / 'gone').resolve()} does not exist or is not a folder"
    )


@pytest.mark.skipif(os.uname().sysname == "Darwin", reason="macOS refuses non-UTF-8 names")
def test_undecodable_file_name(tmp_path: Path) -> None:
    touch(tmp_path, "ok.md")
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xff.md"), "wb"):
        pass
    with pytest.raises(InputError) as info:
        collect_inputs(make(tmp_path, include=["*.md"]))
    assert str(info.value) == (
        f"{P}: input file name 'bad\\udcff.md' is not valid UTF-8; rename the file or add it "
        'to "exclude"'
    )
    assert sources(make(tmp_path, include=["*.md"], exclude=["bad*"])) == ["ok.md"]


def test_shared_kubernetes_corpus(shared_dir: Path) -> None:
    # Its speed is measured by benchmarks/bench_pack.py (the no-op re-pack walks it).
    root = shared_dir / "corpora" / "kubernetes-website-en"
    config = config_from_dict({"include": ["**/*.md"], "output": "/tmp/k.scidx"}, root=root)
    files = collect_inputs(config)
    assert len(files) == len({f.source for f in files}) > 1000
    assert all(f.path.is_file() for f in files)  # the folder named *.md is not an input


def test_shared_tldr_has_dot_dot_md(shared_dir: Path) -> None:
    root = shared_dir / "corpora" / "tldr-pages-en"
    config = config_from_dict(
        {"include": ["pages/common/*.md"], "output": "/tmp/t.scidx"}, root=root
    )
    assert "pages/common/..md" in sources(config)


def test_example_config_loads_and_copies(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parent.parent / "staticcorpus.example.json"
    config = load_config(example)
    assert config.include == ("fixtures/docs/**/*.md",)
    assert config.output == example.parent / "fixtures.scidx"
    copy = tmp_path / "staticcorpus.json"
    shutil.copy(example, copy)
    assert load_config(copy).config_hash() == config.config_hash()


def test_openai_dimensions_default_to_the_models_native_length(tmp_path: Path) -> None:
    from scidx.embed.openai import MODELS
    from scidx.pack.config import OPENAI_NATIVE_DIMENSIONS

    assert OPENAI_NATIVE_DIMENSIONS == {m: info.native_dimensions for m, info in MODELS.items()}
    base = {"include": ["*.md"], "output": "x.scidx", "embeddingProvider": "openai"}
    assert config_from_dict(base, root=tmp_path).dimensions == 1536
    large = {**base, "model": "text-embedding-3-large"}
    assert config_from_dict(large, root=tmp_path).dimensions == 3072
    short = {**base, "dimensions": 256}
    assert config_from_dict(short, root=tmp_path).dimensions == 256
    with pytest.raises(ConfigError) as info:
        config_from_dict({**base, "model": "nomic-embed-text"}, root=tmp_path)
    assert str(info.value) == (
        'staticcorpus.json: "dimensions" is required for the model "nomic-embed-text" (scidx '
        'does not know its vector length); set "dimensions" to the length of the vectors it '
        "returns"
    )
    assert config_from_dict({**base, "model": "nomic-embed-text", "dimensions": 768}, root=tmp_path)


def test_deeply_nested_json_is_a_config_error(tmp_path: Path) -> None:
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text('{"include": ["*.md"], "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_config(cfg)


def test_generator_is_detected_and_can_be_set(tmp_path: Path) -> None:
    (tmp_path / "website").mkdir()
    (tmp_path / "website" / "docusaurus.config.ts").write_text("export default {}\n")
    assert config_from_dict(BASE, root=tmp_path).generator == "docusaurus"
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    detected = config_from_dict(BASE, root=tmp_path)
    assert (detected.generator, detected.anchor_style) == ("mkdocs", "mkdocs")
    chosen = config_from_dict({**BASE, "generator": "myst"}, root=tmp_path)
    assert (chosen.generator, chosen.anchor_style) == ("myst", "docutils")
    assert err({**BASE, "generator": "mkdoc"}, tmp_path).endswith('did you mean "mkdocs"?')
