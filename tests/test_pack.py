"""Pack stage: determinism, incrementality, atomic writes, validation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import scidx.pack.fileio as fileio_mod
import scidx.pack.packer as pack_mod
from scidx.embed.hashing import HashingEmbedder
from scidx.errors import ChunkError, ConfigError, CorruptIndexError, InputError, OutputError
from scidx.index.format import read_header
from scidx.pack.incremental import sidecar_path
from scidx.pack.packer import pack_docs, pack_records
from scidx.pack.records import Record

ROOT = Path(__file__).resolve().parent.parent

DOC_A = """\
# Widget guide

Widgets are small.

## Install

Run `pip install widget`.

## Configure

Set `colour` in widget.toml.

### Advanced

Tune the frobnicator.
"""

DOC_B = """\
---
title: Troubleshooting
---

Intro text without a heading.

## Errors

If the widget fails, check the logs.
"""


def make_project(root: Path, **config: object) -> Path:
    (root / "docs" / "sub").mkdir(parents=True, exist_ok=True)
    (root / "docs" / "a.md").write_text(DOC_A, encoding="utf-8")
    (root / "docs" / "sub" / "b.md").write_text(DOC_B, encoding="utf-8")
    cfg = {"include": ["docs/**/*.md"], "output": "out/docs.scidx", "dimensions": 64, **config}
    path = root / "staticcorpus.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return path


def test_pack_writes_index_and_sidecar(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    result = pack_docs(cfg)
    out = tmp_path / "out" / "docs.scidx"
    assert result.output == out
    assert not result.up_to_date
    assert result.files == 2
    assert result.chunks >= 5
    assert result.output_bytes == out.stat().st_size
    side = json.loads(sidecar_path(out).read_text())
    assert set(side["files"]) == {"docs/a.md", "docs/sub/b.md"}
    assert side["chunks"] == result.chunks
    # The sidecar never records absolute paths.
    assert str(tmp_path) not in sidecar_path(out).read_text()
    header = read_header(out.read_bytes(), source=str(out))
    assert header.meta["counts"]["chunks"] == result.chunks
    assert header.meta["provider"]["provider"] == "hashing"
    assert header.built_utc == "1970-01-01T00:00:00Z"


def test_pack_twice_is_byte_identical(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg)
    first = (tmp_path / "out" / "docs.scidx").read_bytes()
    (tmp_path / "out" / "docs.scidx").unlink()  # a clean build: nothing to reuse
    pack_docs(cfg, use_cache=False)
    assert (tmp_path / "out" / "docs.scidx").read_bytes() == first


def test_pack_from_two_directories_is_byte_identical(tmp_path: Path) -> None:
    a = make_project(tmp_path / "one" / "deep")
    b = make_project(tmp_path / "two")
    pack_docs(a)
    pack_docs(b)
    assert (tmp_path / "one/deep/out/docs.scidx").read_bytes() == (
        tmp_path / "two/out/docs.scidx"
    ).read_bytes()
    side_a = sidecar_path(tmp_path / "one/deep/out/docs.scidx").read_bytes()
    side_b = sidecar_path(tmp_path / "two/out/docs.scidx").read_bytes()
    assert side_a == side_b


def test_pack_is_independent_of_listing_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg)
    first = (tmp_path / "out" / "docs.scidx").read_bytes()
    real = pack_mod.collect_inputs
    monkeypatch.setattr(pack_mod, "collect_inputs", lambda c: list(reversed(real(c))))
    pack_docs(cfg, force=True)
    assert (tmp_path / "out" / "docs.scidx").read_bytes() == first


def test_records_shuffled_give_identical_bytes() -> None:
    recs = [
        {"id": f"doc{i}", "title": f"T{i}", "text": f"text number {i} about widgets"}
        for i in range(30)
    ]
    a = pack_records(recs, None, dimensions=32).data
    b = pack_records(list(reversed(recs)), None, dimensions=32).data
    assert a is not None and a == b


def test_pack_identical_under_other_hashseed_tz_locale(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg)
    first = (tmp_path / "out" / "docs.scidx").read_bytes()
    env = {
        **os.environ,
        "PYTHONHASHSEED": "12345",
        "TZ": "Asia/Kolkata",
        "LC_ALL": "C",
        "LANG": "C",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }
    code = f"import scidx.pack.packer as p; p.pack_docs({str(cfg)!r}, force=True, use_cache=False)"
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert (tmp_path / "out" / "docs.scidx").read_bytes() == first


def test_source_date_epoch_sets_built_utc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = make_project(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    pack_docs(cfg)
    out = tmp_path / "out" / "docs.scidx"
    assert read_header(out.read_bytes()).built_utc == "2023-11-14T22:13:20Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(ConfigError, match="SOURCE_DATE_EPOCH='yesterday' is not a valid"):
        pack_docs(cfg, force=True)


def test_unchanged_repack_is_a_noop(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg)
    out = tmp_path / "out" / "docs.scidx"
    before = out.stat()
    time.sleep(0.01)
    again = pack_docs(cfg)
    assert again.up_to_date
    assert again.chunks > 0
    after = out.stat()
    assert (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns, before.st_ino)
    forced = pack_docs(cfg, force=True)
    assert not forced.up_to_date
    assert out.stat().st_ino != before.st_ino


def test_touch_without_change_is_still_a_noop(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg)
    os.utime(tmp_path / "docs" / "a.md", (1, 1))
    assert pack_docs(cfg).up_to_date


def test_rebuild_after_change_equals_clean_build(tmp_path: Path) -> None:
    cfg = make_project(tmp_path / "inc")
    pack_docs(cfg)
    (tmp_path / "inc" / "docs" / "a.md").write_text(DOC_A + "\n## New\n\nMore words.\n")
    result = pack_docs(cfg)
    assert not result.up_to_date
    clean = make_project(tmp_path / "clean")
    (tmp_path / "clean" / "docs" / "a.md").write_text(DOC_A + "\n## New\n\nMore words.\n")
    pack_docs(clean, use_cache=False)
    assert (tmp_path / "inc/out/docs.scidx").read_bytes() == (
        tmp_path / "clean/out/docs.scidx"
    ).read_bytes()


def test_damaged_output_is_rebuilt(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg)
    out = tmp_path / "out" / "docs.scidx"
    good = out.read_bytes()
    out.write_bytes(good[:-10])
    assert not pack_docs(cfg).up_to_date
    assert out.read_bytes() == good


def test_config_change_triggers_rebuild(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg)
    make_project(tmp_path, maxChunkChars=300)
    assert not pack_docs(cfg).up_to_date


def test_failed_write_keeps_previous_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg)
    out = tmp_path / "out" / "docs.scidx"
    good = out.read_bytes()
    good_side = sidecar_path(out).read_bytes()
    (tmp_path / "docs" / "a.md").write_text(DOC_A + "\nchanged\n")

    def boom(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileio_mod.os, "fsync", boom)
    with pytest.raises(OutputError) as info:
        pack_docs(cfg)
    assert "No space left on device" in str(info.value)
    assert "previous file (if any) is unchanged" in str(info.value)
    assert out.read_bytes() == good
    assert sidecar_path(out).read_bytes() == good_side
    assert sorted(p.name for p in out.parent.iterdir()) == ["docs.scidx", "docs.scidx.inputs"]


def test_output_is_directory(tmp_path: Path) -> None:
    cfg = make_project(tmp_path, output="out")
    (tmp_path / "out").mkdir()
    with pytest.raises(OutputError, match="is a directory; set 'output' to a file path") as info:
        pack_docs(cfg)
    assert info.value.exit_code == 3


def test_output_folder_cannot_be_created(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file, not a folder")
    cfg = make_project(tmp_path, output="blocker/docs.scidx")
    with pytest.raises(OutputError, match="cannot create the output folder"):
        pack_docs(cfg)


def test_undecodable_input_names_file_and_offset(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    (tmp_path / "docs" / "bad.md").write_bytes(b"# Title\n\nabc\xff\xfe def\n")
    with pytest.raises(InputError) as info:
        pack_docs(cfg)
    assert str(info.value) == (
        "docs/bad.md: not valid UTF-8 at byte offset 12 (byte 0xff); "
        "re-save the file as UTF-8 or exclude it"
    )
    assert info.value.exit_code == 1
    assert not (tmp_path / "out" / "docs.scidx").exists()


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"id": " ", "text": "x"}], "record #0: id is missing or blank"),
        ([{"text": "x"}], "record #0: id is missing or blank"),
        (
            [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}],
            "record #1: duplicate id 'a' (first used by record #0); chunk ids must be unique",
        ),
        ([{"id": "a"}], "record #0 (id 'a'): text is missing or not a string"),
        ([{"id": "a", "text": "x", "colour": 1}], "record #0: unknown field(s) ['colour']"),
        ([42], "record #0: expected a scidx.Record or a mapping, got int"),
    ],
)
def test_bad_records_write_nothing(tmp_path: Path, records: list[object], message: str) -> None:
    out = tmp_path / "x.scidx"
    pack_records([{"id": "ok", "text": "fine"}], out, dimensions=16)
    good = out.read_bytes()
    with pytest.raises(ChunkError) as info:
        pack_records(records, out, dimensions=16)  # type: ignore[arg-type]
    assert str(info.value).startswith(message)
    assert out.read_bytes() == good


def test_record_objects_and_mappings_agree() -> None:
    a = pack_records([Record(id="x", text="hello world", title="Greeting")], None, dimensions=16)
    b = pack_records([{"id": "x", "text": "hello world", "title": "Greeting"}], None, dimensions=16)
    assert a.data == b.data


def test_cache_hits_on_second_pack(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    out = tmp_path / "out" / "docs.scidx"
    first = pack_docs(cfg)
    assert first.embedded == first.chunks and first.cache_hits == 0
    out.unlink()
    second = pack_docs(cfg)
    assert second.cache_hits == second.chunks and second.embedded == 0
    out.unlink()
    off = pack_docs(cfg, use_cache=False)
    assert off.cache_hits == 0 and off.embedded == off.chunks


def test_vectors_reused_from_previous_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = make_project(tmp_path)
    first = pack_docs(cfg)
    out = tmp_path / "out" / "docs.scidx"
    good = out.read_bytes()
    (tmp_path / "docs" / "a.md").write_text(DOC_A + "\n## New\n\nMore words.\n")
    monkeypatch.setenv("SCIDX_CACHE_DIR", str(tmp_path / "empty-cache"))
    second = pack_docs(cfg)
    # Every unchanged chunk text comes from the previous index; only the new one is embedded.
    assert second.embedded == 1
    assert second.cache_hits == second.chunks - 1
    assert first.chunks + 1 == second.chunks
    assert out.read_bytes() != good
    # --no-cache embeds everything afresh, and still gives the same bytes.
    data = out.read_bytes()
    fresh = pack_docs(cfg, force=True, use_cache=False)
    assert (fresh.embedded, fresh.cache_hits) == (fresh.chunks, 0)
    assert out.read_bytes() == data


def test_reuse_from_another_index(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg, use_cache=False)
    out = tmp_path / "out" / "docs.scidx"
    saved = tmp_path / "saved.scidx"
    out.rename(saved)
    result = pack_docs(cfg, use_cache=False, reuse=saved)
    assert result.embedded == 0 and result.cache_hits == result.chunks
    assert out.read_bytes() == saved.read_bytes()
    saved.write_bytes(b"not an index")
    with pytest.raises(CorruptIndexError, match="--reuse .*saved.scidx: not a valid index"):
        pack_docs(cfg, force=True, reuse=saved)


def test_change_report(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    first = pack_docs(cfg)
    assert first.changes is not None and first.changes.previous is False
    assert first.changes.sources_added == ("docs/a.md", "docs/sub/b.md")
    (tmp_path / "docs" / "a.md").write_text(
        DOC_A.replace("Tune the", "Oil the") + "\n## New\n\nx\n"
    )
    (tmp_path / "docs" / "sub" / "b.md").unlink()
    (tmp_path / "docs" / "c.md").write_text("# C\n\nsee\n")
    second = pack_docs(cfg)
    ch = second.changes.to_dict() if second.changes is not None else None
    assert ch is not None
    assert ch["previous"] is True
    assert ch["chunksAdded"] == ["docs/a.md:new:0", "docs/c.md:c:0"]
    assert ch["chunksChanged"] == ["docs/a.md:advanced:0"]
    assert ch["chunksRemoved"] == ["docs/sub/b.md::0", "docs/sub/b.md:errors:0"]
    assert ch["sourcesAdded"] == ["docs/c.md"]
    assert ch["sourcesRemoved"] == ["docs/sub/b.md"]
    assert ch["bytesBefore"] == first.output_bytes
    assert ch["bytesAfter"] == second.output_bytes


def test_check_mode_writes_nothing(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    out = tmp_path / "out" / "docs.scidx"
    missing = pack_docs(cfg, check=True)
    assert missing.stale and not out.exists()
    pack_docs(cfg)
    assert not pack_docs(cfg, check=True).stale
    # Without the sidecar (a fresh CI checkout with a committed index) the bytes decide.
    sidecar_path(out).unlink()
    fresh = pack_docs(cfg, check=True)
    assert fresh.up_to_date and not fresh.stale
    assert not sidecar_path(out).exists()
    before = out.read_bytes()
    (tmp_path / "docs" / "a.md").write_text(DOC_A + "\n## New\n\nx\n")
    stale = pack_docs(cfg, check=True)
    assert stale.stale and stale.changes is not None
    assert stale.changes.chunks_added == ("docs/a.md:new:0",)
    assert out.read_bytes() == before
    assert not sidecar_path(out).exists()


def test_dry_run_reports_misses(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    plan = pack_docs(cfg, dry_run=True)
    assert plan.dry_run is not None
    assert plan.dry_run.chunks == plan.chunks and plan.dry_run.cached == 0
    assert not (tmp_path / "out" / "docs.scidx").exists()
    pack_docs(cfg)
    again = pack_docs(cfg, dry_run=True)
    assert again.dry_run is not None
    assert again.dry_run.chunks == 0 and again.dry_run.cached == again.chunks


def test_killed_pack_leaves_previous_index(tmp_path: Path) -> None:
    out = tmp_path / "docs.scidx"
    pack_records([{"id": "ok", "text": "fine"}], out, dimensions=16)
    good = out.read_bytes()
    script = textwrap.dedent(
        f"""
        import time, sys
        import numpy as np
        from scidx.embed.base import Embedder, l2_normalize
        from scidx.pack.packer import pack_records

        class Slow(Embedder):
            provider_id = "slow"; model_id = "slow-1"; dimensions = 16; batch_size = 1
            def embed_batch(self, texts):
                print("embedding", flush=True)
                time.sleep(0.5)
                return l2_normalize(np.ones((len(texts), 16)))

        recs = [{{"id": str(i), "text": "t" * i}} for i in range(100)]
        pack_records(recs, {str(out)!r}, embedder=Slow())
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "embedding"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    assert out.read_bytes() == good


def test_packs_every_shared_corpus_identically_twice(shared_dir: Path, tmp_path: Path) -> None:
    corpora = {
        "fastapi": ("corpora/fastapi-docs-en", ["**/*.md"]),
        "kubernetes": ("corpora/kubernetes-website-en", ["**/*.md"]),
        "rust": ("corpora/rust-book/src", ["**/*.md"]),
        "rails": ("corpora/rails-guides/source", ["**/*.md"]),
        "tldr": ("corpora/tldr-pages-en/pages", ["**/*.md"]),
        "commonmark": ("corpora/commonmark-spec", ["spec.txt"]),
    }
    for name, (folder, include) in corpora.items():
        # The corpus is read-only and globs may not leave the config folder, so the config
        # lives in tmp and reaches the corpus through a symlink.
        work = tmp_path / name
        work.mkdir()
        (work / "corpus").symlink_to(shared_dir / folder, target_is_directory=True)
        out = work / "index.scidx"
        cfg = work / "staticcorpus.json"
        cfg.write_text(
            json.dumps(
                {
                    "include": [f"corpus/{g}" for g in include],
                    "output": out.name,
                    "dimensions": 64,
                    "allowExternalSymlinks": True,
                }
            )
        )
        first = pack_docs(cfg, use_cache=False)
        assert first.chunks > 0, name
        data = out.read_bytes()
        second = pack_docs(cfg, force=True, use_cache=False)
        assert second.chunks == first.chunks
        assert out.read_bytes() == data, name
        out.unlink()


def test_worker_processes_do_not_change_bytes(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg, workers=1, use_cache=False)
    out = tmp_path / "out" / "docs.scidx"
    serial = out.read_bytes()
    out.unlink()  # so that nothing is reused from it
    result = pack_docs(cfg, workers=2, use_cache=False)
    assert result.embedded == result.chunks
    assert (tmp_path / "out" / "docs.scidx").read_bytes() == serial


def test_bad_workers_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = make_project(tmp_path)
    monkeypatch.setenv("SCIDX_WORKERS", "many")
    with pytest.raises(ConfigError, match="SCIDX_WORKERS='many' must be a whole number >= 1"):
        pack_docs(cfg)


@pytest.fixture
def json_snapshot(snapshot):  # type: ignore[no-untyped-def]
    from syrupy.extensions.json import JSONSnapshotExtension

    return snapshot.with_defaults(extension_class=JSONSnapshotExtension)


def test_example_corpus_header_snapshot(json_snapshot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The whole header of the example corpus index: any change to the bytes shows up here."""
    from scidx.index.format import header_to_dict

    cfg = json.loads((ROOT / "staticcorpus.example.json").read_text())
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures", target_is_directory=True)
    cfg["include"] = ["fixtures/docs/**/*.md"]
    cfg["output"] = "example.scidx"
    cfg["allowExternalSymlinks"] = True
    (tmp_path / "staticcorpus.json").write_text(json.dumps(cfg))
    pack_docs(tmp_path / "staticcorpus.json", use_cache=False)
    data = (tmp_path / "example.scidx").read_bytes()
    assert header_to_dict(read_header(data, file_size=len(data))) == json_snapshot


def test_temp_files_of_killed_packs_are_cleaned_up(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    # A pid that cannot be running (above the kernel's pid_max), and one that is (ours' parent).
    dead = out_dir / ".docs.scidx.tmp.99999999"
    alive = out_dir / f".docs.scidx.tmp.{os.getppid()}"
    dead.write_bytes(b"half an index")
    alive.write_bytes(b"another packer's work in progress")
    pack_docs(cfg)
    assert not dead.exists()
    assert alive.exists()


def test_records_with_worker_processes_give_identical_bytes() -> None:
    recs = [
        {"id": f"d{i}", "title": f"Title {i % 7}", "text": f"body {i} words widget {i % 13}"}
        for i in range(5000)
    ]
    serial = pack_records(recs, None, dimensions=32, workers=1, use_cache=False).data
    parallel = pack_records(recs, None, dimensions=32, workers=2, use_cache=False).data
    assert serial is not None and serial == parallel


def _slow_bm25_job(*args: object) -> object:
    from scidx.pack.arrays import bm25_job

    time.sleep(0.1)  # workers still tokenising when the embedding is done
    return bm25_job(*args)  # type: ignore[arg-type]


class _InProcessHashing(HashingEmbedder):
    """Not the built-in class, so the pool does not take over its batches (they run here)."""


def test_bm25_blocks_still_running_in_workers_are_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: the workers' term blocks were read after the pool closed, which cancelled
    the jobs still running (a loaded machine): CancelledError instead of an index."""
    import scidx.pack.workers as workers_mod

    monkeypatch.setattr(workers_mod, "bm25_job", _slow_bm25_job)
    monkeypatch.setattr(workers_mod, "BM25_BLOCK", 200)  # 45 jobs of 0.1 s on 2 workers
    recs = [{"id": f"d{i:05d}", "text": f"body {i} words widget {i % 13}"} for i in range(9000)]
    emb = _InProcessHashing(dimensions=16)
    serial = pack_records(recs, None, embedder=emb, workers=1, use_cache=False).data
    parallel = pack_records(recs, None, embedder=emb, workers=2, use_cache=False).data
    assert serial is not None and serial == parallel


def test_own_files_are_never_inputs(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(DOC_A)
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(json.dumps({"include": ["docs/**"], "output": "docs/o.scidx"}))
    first = pack_docs(cfg)
    assert first.files == 1
    # The index, its sidecar and a killed pack's temp file all sit inside the include glob.
    (tmp_path / "docs" / ".o.scidx.tmp.99999999").write_bytes(b"\xff half an index")
    again = pack_docs(cfg)
    assert again.up_to_date and again.files == 1
    assert not pack_docs(cfg, check=True).stale


def test_output_that_is_an_input_file_is_refused(tmp_path: Path) -> None:
    cfg = make_project(tmp_path, output="docs/a.md")
    before = (tmp_path / "docs" / "a.md").read_bytes()
    with pytest.raises(ConfigError, match='"output" is "docs/a.md", one of the input files'):
        pack_docs(cfg)
    assert (tmp_path / "docs" / "a.md").read_bytes() == before


def test_lone_surrogates_in_records_are_named() -> None:
    with pytest.raises(ChunkError) as info:
        pack_records([{"id": "a", "text": "ok \udcff there"}], None, dimensions=8)
    assert str(info.value) == (
        "record #0 (id 'a'): text holds a lone surrogate at character 3, which UTF-8 cannot "
        "store; clean the text first"
    )


def test_negative_source_date_epoch_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "-1")
    with pytest.raises(ConfigError, match="SOURCE_DATE_EPOCH='-1' is not a valid"):
        pack_docs(make_project(tmp_path))


def test_text_is_stored_as_written_not_normalised(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    decomposed = (
        "# Cafe\u0301\n\nCre\u0300me bru\u0302le\u0301e.\n"  # NFD, as macOS editors may save
    )
    (tmp_path / "docs" / "nfd.md").write_text(decomposed)
    pack_docs(cfg)
    import scidx

    with scidx.load(tmp_path / "out" / "docs.scidx") as idx:
        hit = idx.get("docs/nfd.md:cafe\u0301:0")  # GitHub keeps the combining accent
        assert hit is not None and hit.text == "Cre\u0300me bru\u0302le\u0301e."


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # The command may contain spaces and parentheses: the ppid follows the last ")".
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_workers_exit_when_the_packer_is_killed(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from scidx.pack.packer import pack_records

        recs = [{{"id": str(i), "text": "word " * 400 + str(i)}} for i in range(60000)]
        print("start", flush=True)
        pack_records(recs, {str(tmp_path / "x.scidx")!r}, workers=2, use_cache=False)
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "start"
        workers: list[int] = []
        deadline = time.monotonic() + 30
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            workers = _children(proc.pid)
        assert len(workers) >= 2, "the worker pool never started"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = [w for w in workers if _alive(w)]
    for pid in survivors:  # never leave strays behind, even when failing
        os.kill(pid, signal.SIGKILL)
    assert survivors == []


def test_front_matter_change_shows_in_the_change_report(tmp_path: Path) -> None:
    cfg = make_project(tmp_path)
    pack_docs(cfg)
    b = tmp_path / "docs" / "sub" / "b.md"
    b.write_text(DOC_B.replace("title: Troubleshooting", "title: Troubleshooting\ntags: faq"))
    check = pack_docs(cfg, check=True)
    assert check.stale and check.changes is not None
    assert check.changes.chunks_changed == ("docs/sub/b.md::0", "docs/sub/b.md:errors:0")


def test_index_from_an_older_tokenizer_is_refused_then_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import scidx.index.bm25 as bm25_mod
    import scidx.index.opening as opening_mod
    import scidx.pack.cache as cache_mod
    import scidx.pack.incremental as incremental_mod
    from scidx.errors import UnsupportedFormatVersionError
    from scidx.index.index import load
    from scidx.tokenize import TOKENIZER_VERSION

    cfg = make_project(tmp_path / "p")
    out = tmp_path / "p" / "out" / "docs.scidx"
    with monkeypatch.context() as m:  # what the previous scidx release wrote
        # opening_mod too: the writer verifies its output with the reader of the same release.
        for mod in (cache_mod, incremental_mod, bm25_mod, opening_mod):
            m.setattr(mod, "TOKENIZER_VERSION", "scidx-tok-1")
        pack_docs(cfg)
    assert read_header(out.read_bytes()).meta["bm25"]["tokenizer"] == "scidx-tok-1"
    with pytest.raises(UnsupportedFormatVersionError, match="rebuild the index"):
        load(out)
    # The sidecar does not call it up to date, and neither the old vectors nor the cache
    # entries written under the old tokenizer go into the new index.
    result = pack_docs(cfg)
    assert not result.up_to_date
    assert read_header(out.read_bytes()).meta["bm25"]["tokenizer"] == TOKENIZER_VERSION
    load(out).close()
    clean = make_project(tmp_path / "clean")
    pack_docs(clean, use_cache=False)
    assert out.read_bytes() == (tmp_path / "clean" / "out" / "docs.scidx").read_bytes()


def test_files_that_are_not_markdown_are_refused_together_with_advice(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(DOC_A)
    (tmp_path / "docs" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    (tmp_path / "docs" / "app.js").write_text("var x = 1;\n")
    (tmp_path / "docs" / "blob").write_bytes(b"abc\x00def")
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(json.dumps({"include": ["docs/**"], "output": "o.scidx"}))
    with pytest.raises(InputError) as info:
        pack_docs(cfg)
    assert str(info.value) == (
        "3 selected files are not Markdown: docs/app.js (.js file), docs/blob (binary data), "
        'docs/logo.png (a PNG image); leave them out with "exclude": ["**/*.js", "**/*.png"] '
        'or narrow "include" to Markdown files (e.g. "docs/**/*.md")'
    )
    assert "UTF-8" not in str(info.value) and not (tmp_path / "o.scidx").exists()
    cfg.write_text(
        json.dumps(
            {
                "include": ["docs/**"],
                "exclude": ["**/*.js", "**/*.png", "docs/blob"],
                "output": "o.scidx",
            }
        )  # fmt: skip
    )
    assert pack_docs(cfg).files == 1
