"""Tests for scidx.pack.cache: keys, the SQLite store and the CachedEmbedder wrapper."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from scidx.embed.base import Embedder, Vectors, l2_normalize
from scidx.errors import ProviderError
from scidx.pack.cache import (
    CACHE_FILENAME,
    CachedEmbedder,
    EmbeddingCache,
    cache_key,
    default_cache_dir,
)

DIM = 8


class CountingEmbedder(Embedder):
    """Deterministic test provider: vectors from the text's bytes; records every batch."""

    provider_id = "test"
    model_id = "count-v1"
    dimensions = DIM
    batch_size = 3

    def __init__(self, fail_on_batch: int | None = None) -> None:
        self.batches: list[list[str]] = []
        self.fail_on_batch = fail_on_batch

    @property
    def texts(self) -> list[str]:
        return [t for batch in self.batches for t in batch]

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if self.fail_on_batch is not None and len(self.batches) == self.fail_on_batch:
            raise ProviderError("provider down")
        self.batches.append(list(texts))
        return l2_normalize(np.stack([vector_for(t) for t in texts]))


def vector_for(text: str) -> np.ndarray:
    data = text.encode("utf-8")
    out = np.zeros(DIM, dtype=np.float32)
    for i, byte in enumerate(data):
        out[i % DIM] += byte
    out[0] += len(data) + 1
    return out


def expected(texts: Sequence[str]) -> Vectors:
    return l2_normalize(np.stack([vector_for(t) for t in texts]))


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[EmbeddingCache]:
    with EmbeddingCache(tmp_path / "cache") as c:
        yield c


# --------------------------------------------------------------------------------------------
# keys and folders


def test_cache_key_shape_and_determinism() -> None:
    key = cache_key("openai", "text-embedding-3-small", 512, "hello")
    assert isinstance(key, bytes) and len(key) == 16
    assert key == cache_key("openai", "text-embedding-3-small", 512, "hello")


def test_cache_key_fields_are_unambiguous() -> None:
    keys = {
        cache_key("ab", "c", 8, "t"),
        cache_key("a", "bc", 8, "t"),
        cache_key("a", "b", 8, "ct"),
        cache_key("a", "b", 88, "t"),
        cache_key("a", "b", 8, "t"),
        cache_key("a", "b", 8, "t "),
    }
    assert len(keys) == 6


def test_cache_key_accepts_lone_surrogate() -> None:
    assert len(cache_key("p", "m", 8, "bad \udcff")) == 16


def test_default_cache_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCIDX_CACHE_DIR", str(tmp_path / "env"))
    assert default_cache_dir(tmp_path / "cfg") == tmp_path / "cfg"
    assert default_cache_dir() == tmp_path / "env"
    monkeypatch.delenv("SCIDX_CACHE_DIR")
    import platformdirs

    assert default_cache_dir() == Path(platformdirs.user_cache_dir("scidx"))


# --------------------------------------------------------------------------------------------
# EmbeddingCache


def test_put_get_roundtrip(cache: EmbeddingCache) -> None:
    a, b = b"a" * 16, b"b" * 16
    va = np.arange(4, dtype=np.float32)
    assert cache.put_many([(a, va), (b, np.ones(3, dtype=np.float64))]) == 2
    got = cache.get_many([a, b, b"c" * 16])
    assert set(got) == {a, b}
    assert got[a].dtype == np.float32 and np.array_equal(got[a], va)
    assert np.array_equal(got[b], np.ones(3, dtype=np.float32))
    # INSERT OR IGNORE: an existing key keeps its value.
    assert cache.put_many([(a, np.zeros(4, dtype=np.float32))]) == 0
    assert np.array_equal(cache.get_many([a])[a], va)
    assert len(cache) == 2


def test_put_skips_invalid_vectors(cache: EmbeddingCache) -> None:
    items = [
        (b"1" * 16, np.array([1.0, np.nan], dtype=np.float32)),
        (b"2" * 16, np.zeros((2, 2), dtype=np.float32)),
        (b"3" * 16, np.zeros(0, dtype=np.float32)),
    ]
    assert cache.put_many(items) == 0
    assert len(cache) == 0


def test_stored_as_little_endian_float32(cache: EmbeddingCache) -> None:
    cache.put_many([(b"k" * 16, np.array([1.5, -2.0], dtype=np.float32))])
    with sqlite3.connect(cache.path) as conn:
        dim, blob = conn.execute("SELECT dim, vec FROM embeddings").fetchone()
    assert dim == 2
    assert blob == np.array([1.5, -2.0], dtype="<f4").tobytes()


def test_wal_mode(cache: EmbeddingCache) -> None:
    with sqlite3.connect(cache.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_invalid_rows_are_misses_and_deleted(
    cache: EmbeddingCache, caplog: pytest.LogCaptureFixture
) -> None:
    good = np.array([0.6, 0.8], dtype=np.float32)
    with sqlite3.connect(cache.path) as conn:
        conn.executemany(
            "INSERT INTO embeddings VALUES (?, ?, ?)",
            [
                (b"short".ljust(16), 3, good.tobytes()),
                (b"nan".ljust(16), 2, np.array([np.nan, 1], dtype="<f4").tobytes()),
                (b"zero-dim".ljust(16), 0, b""),
                (b"good".ljust(16), 2, good.tobytes()),
            ],
        )
    with caplog.at_level(logging.WARNING, logger="scidx.pack.cache"):
        got = cache.get_many([b"short".ljust(16), b"nan".ljust(16), b"zero-dim".ljust(16)])
    assert got == {}
    assert "3 invalid rows ignored" in caplog.text
    assert len(cache) == 1
    # The deleted keys can now be stored properly.
    assert cache.put_many([(b"nan".ljust(16), good)]) == 1


def test_uncreatable_dir_disables_cache(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with caplog.at_level(logging.WARNING, logger="scidx.pack.cache"):
        cache = EmbeddingCache(blocker / "sub")
    assert not cache.enabled
    assert f"embedding cache disabled: cannot create {blocker / 'sub'}" in caplog.text
    assert cache.get_many([b"x" * 16]) == {}
    assert cache.put_many([(b"x" * 16, np.ones(2))]) == 0
    inner = CountingEmbedder()
    out = CachedEmbedder(inner, cache).embed(["a", "b"])
    assert np.array_equal(out, expected(["a", "b"]))
    cache.close()


def test_corrupt_file_is_moved_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / CACHE_FILENAME).write_bytes(b"this is not sqlite" * 100)
    with caplog.at_level(logging.WARNING, logger="scidx.pack.cache"):
        cache = EmbeddingCache(folder)
    assert cache.enabled
    assert "is corrupt (file is not a database); moved it to" in caplog.text
    aside = [p.name for p in folder.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and aside[0].startswith(CACHE_FILENAME + ".corrupt-")
    assert cache.put_many([(b"k" * 16, np.ones(2))]) == 1
    cache.close()


def test_corrupt_pages_found_mid_run(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "c"
    with EmbeddingCache(folder) as cache:
        cache.put_many(
            (i.to_bytes(16, "little"), np.full(256, 0.1, dtype=np.float32)) for i in range(2000)
        )
    path = folder / CACHE_FILENAME
    data = bytearray(path.read_bytes())
    assert len(data) > 100_000
    # Keep the first half intact (so opening succeeds) and scribble over the rest of the b-tree.
    half = len(data) // 2
    data[half:] = b"\xa5" * (len(data) - half)
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="scidx.pack.cache"):
        cache = EmbeddingCache(folder)
        got = cache.get_many(i.to_bytes(16, "little") for i in range(2000))
        cache.put_many([(b"x" * 16, np.ones(2))])
    assert isinstance(got, dict)  # no exception: a corrupt cache never fails a pack
    assert "embedding cache disabled for this run: reading" in caplog.text
    assert "(database disk image is malformed); moved it to" in caplog.text
    assert not cache.enabled
    cache.close()
    # The next run starts from a working file.
    with EmbeddingCache(folder) as again:
        assert again.enabled
        assert again.put_many([(b"y" * 16, np.ones(2))]) == 1


def test_busy_writer_skips_batch(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "c"
    with EmbeddingCache(folder, timeout=0.2) as cache:
        blocker = sqlite3.connect(cache.path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            with caplog.at_level(logging.WARNING, logger="scidx.pack.cache"):
                assert cache.put_many([(b"k" * 16, np.ones(2))]) == 0
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert "write to" in caplog.text and "skipped (database is locked)" in caplog.text
        assert cache.enabled  # a busy file is not corrupt
        assert cache.put_many([(b"k" * 16, np.ones(2))]) == 1


# --------------------------------------------------------------------------------------------
# CachedEmbedder


def test_identity_matches_inner(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, cache)
    assert (wrapped.provider_id, wrapped.model_id, wrapped.dimensions) == ("test", "count-v1", DIM)
    assert wrapped.stamp() == inner.stamp()
    assert wrapped.batch_size == inner.batch_size


def test_hits_misses_and_only_misses_reach_inner(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, cache)
    texts = ["alpha", "beta", "gamma", "delta"]
    assert np.array_equal(wrapped.embed(texts), expected(texts))
    assert (wrapped.hits, wrapped.misses) == (0, 4)
    assert inner.texts == texts

    more = ["beta", "epsilon", "alpha", "zeta"]
    assert np.array_equal(wrapped.embed(more), expected(more))
    assert (wrapped.hits, wrapped.misses) == (2, 6)
    assert inner.texts == texts + ["epsilon", "zeta"]


def test_dedupes_within_a_call(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, cache)
    texts = ["x", "y", "x", "x", "z", "y"]
    assert np.array_equal(wrapped.embed(texts), expected(texts))
    assert inner.texts == ["x", "y", "z"]
    assert (wrapped.hits, wrapped.misses) == (0, 3)


def test_embed_iter_yields_each_position_once(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    CachedEmbedder(inner, cache).embed(["a", "b"])
    wrapped = CachedEmbedder(inner, cache)
    texts = ["a", "c", "b", "a", "d", "e", "f", "c"]
    seen: list[int] = []
    for positions, vectors in wrapped.embed_iter(texts):
        assert vectors.shape == (len(positions), DIM) and vectors.dtype == np.float32
        assert np.array_equal(vectors, expected([texts[p] for p in positions]))
        seen.extend(positions)
    assert sorted(seen) == list(range(len(texts)))


def test_embed_batch_and_empty(cache: EmbeddingCache) -> None:
    wrapped = CachedEmbedder(CountingEmbedder(), cache)
    assert np.array_equal(wrapped.embed_batch(["q"]), expected(["q"]))
    assert wrapped.embed([]).shape == (0, DIM)


def test_persistence_across_instances(tmp_path: Path) -> None:
    texts = ["one", "two", "three"]
    with EmbeddingCache(tmp_path / "c") as cache:
        CachedEmbedder(CountingEmbedder(), cache).embed(texts)
    inner = CountingEmbedder()
    with EmbeddingCache(tmp_path / "c") as cache:
        wrapped = CachedEmbedder(inner, cache)
        assert np.array_equal(wrapped.embed(texts), expected(texts))
    assert inner.batches == []
    assert (wrapped.hits, wrapped.misses) == (3, 0)


def test_keys_depend_on_model_and_dimensions(cache: EmbeddingCache) -> None:
    CachedEmbedder(CountingEmbedder(), cache).embed(["t"])
    other = CountingEmbedder()
    other.model_id = "count-v2"
    CachedEmbedder(other, cache).embed(["t"])
    assert other.texts == ["t"]


def test_no_cache_passes_through() -> None:
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, None)
    wrapped.embed(["a", "b", "a"])
    wrapped.embed(["a"])
    assert inner.texts == ["a", "b", "a"]
    assert (wrapped.hits, wrapped.misses) == (0, 3)


def test_seed_vectors_are_used(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    probe = CachedEmbedder(inner, None)
    seed = {
        probe.key("old"): expected(["old"])[0],
        probe.key("wrong-size"): np.ones(3, dtype=np.float32),
        probe.key("not-unit"): np.ones(DIM, dtype=np.float32),
    }
    wrapped = CachedEmbedder(inner, cache, seed=seed)
    texts = ["old", "new", "wrong-size", "not-unit"]
    assert np.array_equal(wrapped.embed(texts), expected(texts))
    assert inner.texts == ["new", "wrong-size", "not-unit"]
    assert (wrapped.hits, wrapped.misses) == (1, 3)
    # Seed vectors are not copied into the cache; embedded ones are.
    assert len(cache) == 3


def test_finished_batches_survive_a_failure(tmp_path: Path) -> None:
    texts = [f"text {i}" for i in range(8)]  # batches of 3: [0-2], [3-5], [6-7]
    with EmbeddingCache(tmp_path / "c") as cache:
        wrapped = CachedEmbedder(CountingEmbedder(fail_on_batch=2), cache)
        with pytest.raises(ProviderError, match="provider down"):
            wrapped.embed(texts)
    inner = CountingEmbedder()
    with EmbeddingCache(tmp_path / "c") as cache:
        assert np.array_equal(CachedEmbedder(inner, cache).embed(texts), expected(texts))
    assert inner.texts == texts[6:]


def test_rows_with_wrong_norm_are_misses(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, cache)
    cache.put_many([(wrapped.key("a"), np.full(DIM, 5.0, dtype=np.float32))])
    assert np.array_equal(wrapped.embed(["a"]), expected(["a"]))
    assert inner.texts == ["a"]
    # The bad row was replaced by the good vector.
    assert np.array_equal(cache.get_many([wrapped.key("a")])[wrapped.key("a")], expected(["a"])[0])


class BadShapeEmbedder(CountingEmbedder):
    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        return np.zeros((len(texts), DIM + 1), dtype=np.float32)


class NaNEmbedder(CountingEmbedder):
    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        return np.full((len(texts), DIM), np.nan, dtype=np.float32)


class ForgetfulEmbedder(CountingEmbedder):
    def embed_iter(self, texts: Sequence[str]) -> Iterator[tuple[list[int], Vectors]]:
        yield [0], expected(texts[:1])


def test_bad_inner_output_raises(cache: EmbeddingCache) -> None:
    with pytest.raises(ProviderError) as info:
        CachedEmbedder(BadShapeEmbedder(), cache).embed(["a", "b"])
    assert str(info.value) == (
        "test model count-v1 returned vectors of shape (2, 9) for 2 texts; expected (2, 8)"
    )
    with pytest.raises(ProviderError) as info:
        CachedEmbedder(NaNEmbedder(), cache).embed(["a"])
    assert str(info.value) == (
        "test model count-v1 returned non-finite values (NaN or infinity); retry, or report "
        "the failing provider"
    )
    with pytest.raises(ProviderError) as info:
        CachedEmbedder(ForgetfulEmbedder(), cache).embed(["a", "b", "c"])
    assert str(info.value) == "test model count-v1 returned no vector for 2 of 3 texts"
    assert len(cache) == 1  # only the vector that did arrive


def test_db_holds_no_text(tmp_path: Path) -> None:
    secret = "zebra-quokka-7f3a unmistakable passage"
    with EmbeddingCache(tmp_path / "c") as cache:
        CachedEmbedder(CountingEmbedder(), cache).embed([secret, "other"])
        raw = b"".join(p.read_bytes() for p in (tmp_path / "c").iterdir())
    assert len(raw) > 0
    for needle in (secret, "zebra-quokka", "count-v1"):
        assert needle.encode() not in raw
        assert needle.encode("utf-16-le") not in raw


def test_default_cache_dir_comes_from_autouse_fixture() -> None:
    # tests/conftest.py points SCIDX_CACHE_DIR at a temp dir, so tests never touch ~/.cache.
    assert default_cache_dir() == Path(os.environ["SCIDX_CACHE_DIR"])


# --------------------------------------------------------------------------------------------
# Processes

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import numpy as np
    from scidx.pack.cache import EmbeddingCache

    folder, start, stop, batch, pause = sys.argv[1], *map(int, sys.argv[2:5]), float(sys.argv[5])
    with EmbeddingCache(Path(folder)) as cache:
        print("ready", flush=True)
        for lo in range(start, stop, batch):
            items = []
            for i in range(lo, min(lo + batch, stop)):
                v = np.full(64, float(i % 97) + 1.0, dtype=np.float32)
                items.append((i.to_bytes(16, "little"), v / np.linalg.norm(v)))
            cache.put_many(items)
            if pause:
                time.sleep(pause)
    """
)


def _writer(folder: Path, start: int, stop: int, batch: int, pause: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), str(start), str(stop), str(batch), str(pause)],
        stdout=subprocess.PIPE,
        text=True,
    )


def _check_rows(folder: Path) -> set[int]:
    with sqlite3.connect(folder / CACHE_FILENAME) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT key, dim, vec FROM embeddings").fetchall()
    ids = set()
    for key, dim, blob in rows:
        i = int.from_bytes(key, "little")
        assert dim == 64 and len(blob) == 256
        v = np.frombuffer(blob, dtype="<f4")
        w = np.full(64, float(i % 97) + 1.0, dtype=np.float32)
        assert np.allclose(v, w / np.linalg.norm(w))
        ids.add(i)
    return ids


def test_processes_write_concurrently(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    # Four writers start together on a fresh folder (racing to create the file) and write
    # overlapping ranges.
    procs = [
        _writer(folder, 0, 2000, 50, 0.0),
        _writer(folder, 1000, 3000, 70, 0.0),
        _writer(folder, 500, 2500, 33, 0.0),
        _writer(folder, 2900, 3000, 1, 0.0),
    ]
    for proc in procs:
        proc.communicate(timeout=120)
        assert proc.returncode == 0
    assert _check_rows(folder) == set(range(3000))


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_writer_killed_mid_run(tmp_path: Path) -> None:
    folder = tmp_path / "killed"
    proc = _writer(folder, 0, 1_000_000, 200, 0.001)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    deadline = time.monotonic() + 30
    # Wait until some batches are committed, then kill without warning.
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(folder / CACHE_FILENAME, timeout=5) as conn:
                if conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] >= 1000:
                    break
        except sqlite3.OperationalError:
            pass
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL

    ids = _check_rows(folder)
    assert len(ids) >= 1000
    # Whole batches only: every committed batch of 200 is complete.
    assert len(ids) % 200 == 0
    with EmbeddingCache(folder) as cache:
        assert cache.enabled
        got = cache.get_many(i.to_bytes(16, "little") for i in sorted(ids)[:10])
        assert len(got) == 10
