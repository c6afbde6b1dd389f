"""Long chunks read whole: window rows (``window.*``, FORMAT.md §2.11) with the real MiniLM.

The model runs with ``max_tokens=32`` so every text here is a few windows long and the module
stays fast on 2 cores.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scidx.embed.local import LocalEmbedder
from scidx.errors import ConfigError, CorruptIndexError, UnsupportedFormatVersionError
from scidx.index.index import load, load_bytes
from scidx.pack.config import load_config
from scidx.pack.packer import pack_records
from support.cli import run
from support.indexes import rewrite
from support.models import make_project

pytestmark = pytest.mark.usefixtures("_no_model_env")

FILLER = " ".join(f"The committee reviewed budget line {i} of the annual plan." for i in range(12))
TAIL = "Emperor penguins huddle together on the Antarctic ice to survive winter storms."
RECORDS = [
    {"id": "a-long", "text": FILLER + " " + TAIL},
    {"id": "b-short", "text": "Migratory birds fly south in autumn to warmer places."},
    {"id": "c-budget", "text": "The annual budget plan lists every line the committee reviewed."},
]
QUERY = "penguins huddling on the ice in winter"


@pytest.fixture(scope="module")
def small(minilm: Path) -> LocalEmbedder:
    return LocalEmbedder(minilm, max_tokens=32, window_overlap=8, threads=1)


def _pack(emb: LocalEmbedder, out: Path, cache: Path, **kwargs: Any) -> Any:
    return pack_records(RECORDS, out, embedder=emb, cache_dir=cache, **kwargs)


def test_windows_cover_the_text_deterministically(small: LocalEmbedder) -> None:
    text = RECORDS[0]["text"]
    first = small.windows([text, "short"])
    assert first == small.windows([text, "short"])
    parts, none = first
    assert none == [] and len(parts) >= 3
    assert parts[-1].endswith(TAIL)  # the last window reaches the end of the text
    content = 32 - 2  # [CLS] and [SEP]
    ids = small.tokenize(parts)  # each window fits the model whole
    assert all(len(row) <= content + 2 for row in ids)
    for before, after in zip(parts, parts[1:], strict=False):
        # Consecutive windows overlap and move forward in the text.
        assert text.index(after) > text.index(before)
        assert text.index(after) < text.index(before) + len(before)


def test_a_passage_only_in_a_later_window_ranks_by_that_window(
    small: LocalEmbedder, tmp_path: Path
) -> None:
    out = tmp_path / "w.scidx"
    result = _pack(small, out, tmp_path / "cache", vectors="float32")
    assert result.windows >= 3 and result.window_chunks == 1
    with load(out, model_dir=small.location, verify=True) as idx:
        assert idx.meta["windows"] == {"tokens": 32, "overlap": 8, "score": "max", "margin": 0.01}
        hits = idx.search(QUERY, mode="vector", k=3)
        assert hits[0].id == "a-long"
        best = hits[0].score
    # The same file without its window rows ranks the long chunk by its head only.
    plain = tmp_path / "plain.scidx"

    def drop(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        for name in [n for n in arrays if n.startswith("window.")]:
            del arrays[name]
        del meta["windows"]

    plain.write_bytes(rewrite(out.read_bytes(), drop))
    with load(plain, model_dir=small.location) as idx:
        scores = {h.id: h.score for h in idx.search(QUERY, mode="vector", k=3, min_score=-1.0)}
    assert scores.get("a-long", 0.0) < best - 0.1
    # A later window counts meta.windows.margin less than its cosine: without the margin the
    # same window scores exactly that much more.
    no_margin = tmp_path / "no-margin.scidx"

    def zero(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        meta["windows"] = {**meta["windows"], "margin": 0.0}

    no_margin.write_bytes(rewrite(out.read_bytes(), zero))
    with load(no_margin, model_dir=small.location) as idx:
        hit = idx.search(QUERY, mode="vector", k=1)[0]
    assert hit.id == "a-long"
    assert hit.score == pytest.approx(best + 0.01, abs=1e-6)


def test_same_bytes_twice_and_cache_hits_per_window(small: LocalEmbedder, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _pack(small, tmp_path / "1.scidx", cache)
    assert first.windows_embedded == first.windows > 0 and first.windows_cached == 0
    again = _pack(small, tmp_path / "2.scidx", cache)
    assert (again.windows_embedded, again.windows_cached) == (0, first.windows)
    assert again.to_dict()["windows"] == {
        "rows": first.windows,
        "chunks": 1,
        "embedded": 0,
        "cacheHits": first.windows,
    }
    assert (tmp_path / "1.scidx").read_bytes() == (tmp_path / "2.scidx").read_bytes()
    # A changed tail re-embeds only the windows whose text changed.
    changed = [dict(r) for r in RECORDS]
    changed[0]["text"] = FILLER + " Penguins also dive deep for krill and fish in the sea."
    third = pack_records(changed, tmp_path / "3.scidx", embedder=small, cache_dir=cache)
    assert 0 < third.windows_embedded < third.windows


def test_int8_and_binary_windows(small: LocalEmbedder, tmp_path: Path) -> None:
    for encoding in ("int8", "binary"):
        out = tmp_path / f"{encoding}.scidx"
        _pack(small, out, tmp_path / "cache", vectors=encoding)
        with load(out, model_dir=small.location, verify=True) as idx:
            assert idx.search(QUERY, mode="vector", k=1)[0].id == "a-long"
            assert idx.search(QUERY, k=1)[0].id == "a-long"


def test_hashing_has_no_windows() -> None:
    result = pack_records(RECORDS, None, use_cache=False)
    assert result.data is not None and result.windows == 0
    assert "windows" not in result.to_dict()
    with load_bytes(result.data) as idx:
        assert "windows" not in idx.meta
    assert b"window." not in result.data[:4096]


def test_cli_summary_counts_the_windows(
    minilm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = make_project(tmp_path, minilm, maxTokens=32, windowOverlap=4)
    docs = tmp_path / "docs"
    (docs / "long.md").write_text(f"# Long\n\n{FILLER} {TAIL}\n", encoding="utf-8")
    code, out, err = run(["pack-docs", "--config", str(cfg), "--verbose"], capsys)
    assert code == 0, err
    assert re.search(r"\d+ chunks were longer .* read whole: \d+ more windows \(embedded", out)
    assert "windowed: 'docs/long.md:long:0'" in out, out
    with load(tmp_path / "docs.scidx", model_dir=minilm) as idx:
        assert idx.meta["windows"] == {
            "tokens": 32,
            "overlap": 4,
            "score": "max",
            "margin": 0.01,
        }
        assert idx.search(QUERY, mode="vector", k=1)[0].id == "docs/long.md:long:0"


def test_dry_run_counts_the_windows(
    minilm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--dry-run says how many windows a real pack would store, and which it would embed."""
    cfg = make_project(tmp_path, minilm, maxTokens=32, windowOverlap=4, cacheDir="cache")
    (tmp_path / "docs" / "long.md").write_text(f"# Long\n\n{FILLER} {TAIL}\n", encoding="utf-8")
    code, out, err = run(["pack-docs", "--config", str(cfg), "--dry-run", "--json"], capsys)
    assert code == 0, err
    plan = json.loads(out)["dryRun"]
    assert not (tmp_path / "docs.scidx").exists()
    code, out, err = run(["pack-docs", "--config", str(cfg), "--json"], capsys)
    assert code == 0, err
    packed = json.loads(out)["windows"]
    assert packed["rows"] > 0
    # The plan counts what the real pack then stored and embedded.
    assert plan["windows"] == {
        "rows": packed["rows"],
        "chunks": packed["chunks"],
        "cached": 0,
        "sent": packed["embedded"],
    }
    code, out, err = run(["pack-docs", "--config", str(cfg), "--dry-run"], capsys)
    assert code == 0, err
    rows, chunks = packed["rows"], packed["chunks"]
    assert (
        f"; {chunks} longer than the model's input limit, read as {rows} more windows "
        f"({packed['embedded']} already embedded, 0 would be sent); nothing sent"
    ) in out, out


@pytest.mark.parametrize("vectors", ["int8", "float32"])
def test_a_repack_reuses_the_committed_windows(minilm: Path, tmp_path: Path, vectors: str) -> None:
    """Without the disk cache, an incremental re-pack takes windows from the index it replaces."""
    from scidx.pack.packer import pack_docs

    cfg = make_project(
        tmp_path, minilm, maxTokens=32, windowOverlap=4, cacheDir="cache", vectors=vectors
    )
    (tmp_path / "docs" / "long.md").write_text(f"# Long\n\n{FILLER} {TAIL}\n", encoding="utf-8")
    first = pack_docs(cfg)
    assert first.windows > 0 and first.windows_embedded == first.windows
    shutil.rmtree(tmp_path / "cache")  # a fresh checkout: only the committed index is left
    (tmp_path / "docs" / "new.md").write_text("# New\n\nA short new page.\n", encoding="utf-8")
    again = pack_docs(cfg)
    assert not again.up_to_date and again.embedded == 1  # only the new page's chunk
    assert (again.windows, again.windows_cached, again.windows_embedded) == (
        first.windows,
        first.windows,
        0,
    )
    reused = (tmp_path / "docs.scidx").read_bytes()
    # The same bytes as a pack that embeds every window afresh.
    shutil.rmtree(tmp_path / "cache")
    (tmp_path / "docs.scidx").unlink()
    fresh = pack_docs(cfg)
    assert fresh.windows_embedded == first.windows
    assert (tmp_path / "docs.scidx").read_bytes() == reused


def test_windows_of_another_cut_are_not_reused(minilm: Path, tmp_path: Path) -> None:
    """An index cut with another overlap offers no windows: they are embedded afresh."""
    from scidx.pack.packer import pack_docs

    cfg = make_project(tmp_path, minilm, maxTokens=32, windowOverlap=4, cacheDir="cache")
    (tmp_path / "docs" / "long.md").write_text(f"# Long\n\n{FILLER} {TAIL}\n", encoding="utf-8")
    pack_docs(cfg)
    shutil.rmtree(tmp_path / "cache")
    settings = json.loads(cfg.read_text(encoding="utf-8"))
    cfg.write_text(json.dumps({**settings, "windowOverlap": 8}), encoding="utf-8")
    again = pack_docs(cfg)
    assert again.windows > 0 and (again.windows_cached, again.windows_embedded) == (
        0,
        again.windows,
    )


def test_window_overlap_is_a_local_setting(tmp_path: Path) -> None:
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text('{"include": ["*.md"], "windowOverlap": 8}', encoding="utf-8")
    with pytest.raises(ConfigError, match="windowOverlap"):
        load_config(cfg)


def test_bad_overlap_is_a_config_error(minilm: Path) -> None:
    for bad in (-1, 17, True, "8"):
        with pytest.raises(ConfigError, match="windowOverlap"):
            LocalEmbedder(minilm, max_tokens=32, window_overlap=bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Hostile window arrays


@pytest.fixture(scope="module")
def packed(small: LocalEmbedder, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    folder = tmp_path_factory.mktemp("hostile")
    _pack(small, folder / "i.scidx", folder / "cache", vectors="int8")
    return (folder / "i.scidx").read_bytes()


def _open(data: bytes, small: LocalEmbedder, *, query: bool = True, verify: bool = False) -> None:
    with load_bytes(
        data, verify=verify, embedder_options={"model_dir": str(small.location)}
    ) as idx:
        if query:
            idx.search(QUERY, mode="vector", k=2)


def _set(name: str, value: Any) -> Any:
    def change(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        if value is None:
            del arrays[name]
        else:
            arrays[name] = value

    return change


@pytest.mark.parametrize(
    ("mutation", "needle"),
    [
        (lambda w: _set("window.chunk", np.r_[1, w[1:]].astype("<u4")), "decreases"),
        (lambda w: _set("window.chunk", np.full(len(w), 9, dtype="<u4")), "chunk row 9"),
        (lambda w: _set("window.chunk", np.zeros(len(w) + 1, dtype="<u4")), "shape"),
        (lambda w: _set("window.chunk", np.zeros((len(w), 1), dtype="<u4")), "window.chunk"),
        (lambda w: _set("window.vectors.i8", None), "window.vectors.i8"),
        (lambda w: _set("window.chunk", None), "window.chunk"),
        (lambda w: _set("window.vectors.scale", np.zeros(len(w), dtype="<i4")), "dtype"),
    ],
)
def test_hostile_window_arrays_are_corrupt(
    packed: bytes, small: LocalEmbedder, mutation: Any, needle: str
) -> None:
    rows = _window_rows(packed)
    bad = rewrite(packed, mutation(rows))
    with pytest.raises(CorruptIndexError, match=needle):
        _open(bad, small)


def _window_rows(data: bytes) -> np.ndarray:
    from scidx.index import format

    header = format.read_header(data)
    return np.array(format.array_view(data, header, "window.chunk"))


def test_hostile_window_meta(packed: bytes, small: LocalEmbedder) -> None:
    def meta_to(value: Any) -> Any:
        def change(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
            if value is None:
                del meta["windows"]
            else:
                meta["windows"] = value

        return change

    for value, needle in (
        (None, "no meta `windows`"),
        ([1], "not a map"),
        ({"tokens": 1, "overlap": 0, "score": "max"}, "windows.tokens"),
        ({"tokens": 32, "overlap": -1, "score": "max"}, "windows.overlap"),
        ({"tokens": 32, "overlap": 8, "score": "max", "margin": 1.5}, "windows.margin"),
        ({"tokens": 32, "overlap": 8, "score": "max", "margin": -0.1}, "windows.margin"),
        ({"tokens": 32, "overlap": 8, "score": "max", "margin": "0.1"}, "windows.margin"),
        ({"tokens": 32, "overlap": 8, "score": "max", "margin": True}, "windows.margin"),
    ):
        with pytest.raises(CorruptIndexError, match=needle):
            _open(rewrite(packed, meta_to(value)), small, query=False)
    with pytest.raises(UnsupportedFormatVersionError, match="windows.score"):
        _open(rewrite(packed, meta_to({"tokens": 32, "overlap": 8, "score": "mean"})), small)


def test_verify_checks_window_values(packed: bytes, small: LocalEmbedder) -> None:
    rows = len(_window_rows(packed))
    codes = np.full((rows, 384), 0x80, dtype="<u1")  # the code -128 no writer produces
    bad = rewrite(packed, _set("window.vectors.i8", codes))
    with pytest.raises(CorruptIndexError, match="window.vectors.i8"):
        _open(bad, small, query=False, verify=True)
    # A decreasing map is found by verify without any query.
    order = rewrite(packed, _set("window.chunk", np.arange(rows, dtype="<u4")[::-1].copy()))
    with pytest.raises(CorruptIndexError, match="window.chunk"):
        _open(order, small, query=False, verify=True)
