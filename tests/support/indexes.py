"""Test indexes without the packer: records, arrays, bytes, and rewriting an index's arrays.

:func:`build_index` writes an index with ``format.write_index`` from chunk records (independent of
the packer), so the runtime tests do not depend on it; :func:`rewrite` is the one way tests
damage or change an existing index (arrays or meta) and write it back.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scidx.embed.hashing import HashingEmbedder, embedding_text
from scidx.index import bm25, format, offsets
from scidx.index.postings import decode_runs
from scidx.index.texts import encode_texts
from scidx.pack.arrays import snippet_arrays, where_block
from scidx.pack.dictionary import Vocabulary, heading_forms

__all__ = [
    "BUILT",
    "DOCS",
    "FIXTURE_DOCS",
    "build_arrays",
    "build_index",
    "fixture_records",
    "postings_of",
    "record",
    "replace_arrays",
    "rewrite",
    "set_postings",
    "write_arrays",
]

BUILT = "2026-01-01T00:00:00Z"


def record(
    source: str,
    text: str,
    *,
    anchor: str = "",
    title: str = "",
    heading_path: Sequence[str] = (),
    ordinal: int = 0,
    metadata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A chunk record like the packer's."""
    return {
        "id": f"{source}:{anchor}:{ordinal}",
        "source": source,
        "text": text,
        "anchor": anchor,
        "title": title,
        "heading_path": list(heading_path),
        "ordinal": ordinal,
        "metadata": dict(metadata or {}),
    }


def build_arrays(
    records: Sequence[Mapping[str, Any]],
    *,
    dims: int = 64,
    vectors: np.ndarray | None = None,
    stamp: Mapping[str, Any] | None = None,
    url_template: str | None = None,
    k1: float = bm25.DEFAULT_K1,
    b: float = bm25.DEFAULT_B,
    heading_weight: float = bm25.DEFAULT_HEADING_WEIGHT,
    snippet_offsets: bool = True,
    dictionary: bool = True,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and meta of an index over ``records`` (already in row order)."""
    texts = [r["text"] for r in records]
    sources = sorted({r["source"] for r in records})
    row_of = {s: i for i, s in enumerate(sources)}
    first = {s: next(r for r in records if r["source"] == s) for s in sources}
    arrays: dict[str, np.ndarray] = {}

    def put(name: str, values: Sequence[str]) -> None:
        arrays[f"{name}.offsets"], arrays[f"{name}.data"] = format.encode_strings(values)

    put("chunk.id", [r["id"] for r in records])
    arrays.update(encode_texts([r["text"] for r in records], None))
    put("chunk.heading", ["\x1f".join(r["heading_path"]) for r in records])
    put("chunk.anchor", [r["anchor"] for r in records])
    # The packer's widths: <u2 while the values fit (a reader accepts <u4 too).
    ordinals = [r["ordinal"] for r in records]
    arrays["chunk.source"] = np.array(
        [row_of[r["source"]] for r in records], dtype=format.uint_dtype(len(sources), at_least=2)
    )
    arrays["chunk.ordinal"] = np.array(
        ordinals, dtype=format.uint_dtype(max(ordinals, default=0), at_least=2)
    )
    arrays["chunk.span"] = np.zeros((len(records), 4), dtype="<u8")
    put("source.path", sources)
    put("source.title", [first[s]["title"] for s in sources])
    put("source.meta", [json.dumps(first[s]["metadata"], sort_keys=True) for s in sources])
    embedder = HashingEmbedder(dims)
    if vectors is None:
        vectors = embedder.embed(
            [embedding_text(r["title"], r["heading_path"], r["text"]) for r in records]
        )
    arrays["vectors"] = np.ascontiguousarray(vectors, dtype="<f4").reshape(len(records), -1)
    headings = [
        "\n".join([r["title"], *[h for h in r["heading_path"] if h != r["title"]]]) for r in records
    ]
    bm_arrays, bm_meta = bm25.build_arrays(
        headings, [r["text"] for r in records], k1=k1, b=b, heading_weight=heading_weight
    )
    arrays.update(bm_arrays)
    meta = {
        "provider": dict(stamp) if stamp is not None else embedder.stamp(),
        "bm25": bm_meta,
        "urlTemplate": url_template,
        "counts": {"chunks": len(records), "sources": len(sources)},
    }
    if snippet_offsets:  # so the damage tests below reach these arrays too
        posted = bm25.BM25Arrays.of(arrays, bm_meta)
        arrays.update(snippet_arrays([where_block(texts)], posted, len(records)))
        meta["snippets"] = {"offsets": offsets.OFFSETS_VERSION}
    if dictionary:  # the packer's word dictionary (format 10)
        vocabulary = Vocabulary()
        vocabulary.add(heading_forms(headings, where_block(texts).forms))
        words, meta["dictionary"] = vocabulary.arrays()
        arrays.update(words)
    return arrays, meta


def write_arrays(arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> bytes:
    buf = io.BytesIO()
    format.write_index(buf, arrays, meta, built_utc=BUILT, generator="scidx-tests")
    return buf.getvalue()


def build_index(records: Sequence[Mapping[str, Any]], **kwargs: Any) -> bytes:
    """The bytes of a complete index over ``records`` (see :func:`build_arrays`)."""
    arrays, meta = build_arrays(records, **kwargs)
    return write_arrays(arrays, meta)


DOCS = [
    record(
        "guide/install.md",
        "Install kubectl with your package manager, then check the version.",
        anchor="install",
        title="Guide",
        heading_path=["Guide", "Install"],
        metadata={"section": "guide"},
    ),
    record(
        "guide/install.md",
        "Configure CORS with the allow_origins setting.",
        anchor="cors",
        title="Guide",
        heading_path=["Guide", "CORS"],
        metadata={"section": "guide"},
    ),
    record(
        "ref/options.md",
        "The max_chunk_chars option bounds the size of each chunk.",
        anchor="options",
        title="Options",
        heading_path=["Options"],
        metadata={"section": "reference"},
    ),
]


Mutation = Callable[[dict[str, Any], dict[str, Any]], object]


def rewrite(data: bytes, mutate: Mutation) -> bytes:
    """``data`` (an index) with ``mutate(arrays, meta)`` applied to copies of its arrays and meta.

    Written back with the same build time and generator, so only what ``mutate`` changed
    differs (checksums are recomputed: a test that wants a bad checksum edits the bytes).
    """
    header = format.read_header(data)
    arrays = {name: np.array(format.array_view(data, header, name)) for name in header.arrays}
    meta = json.loads(json.dumps(header.meta))
    mutate(arrays, meta)
    buf = io.BytesIO()
    format.write_index(buf, arrays, meta, built_utc=header.built_utc, generator=header.generator)
    return buf.getvalue()


def postings_of(arrays: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An index's postings as CSR ``(term_ptr, rows, codes)``, decoded without bounds checks.

    For tests that forge postings: change them, then :func:`set_postings`.
    """
    df = arrays["bm25.df_values"].astype(np.int64)[arrays["bm25.term_df"].astype(np.int64)]
    widths = arrays["bm25.term_width"].astype(np.int64)
    rows, codes = decode_runs(
        arrays["bm25.runs"],
        arrays["bm25.run_ptr"][:-1].astype(np.int64),
        df,
        widths[:, 0],
        widths[:, 1],
    )
    ptr = np.zeros(df.shape[0] + 1, dtype=np.int64)
    np.cumsum(df, out=ptr[1:])
    return ptr, rows, codes


def set_postings(
    arrays: dict[str, np.ndarray], ptr: np.ndarray, rows: np.ndarray, codes: np.ndarray
) -> None:
    """Replace an index's runs by the packer's encoding of these CSR postings (any values)."""
    arrays.update(bm25.encode_postings(ptr, rows, codes, arrays["bm25.df_values"]))


def replace_arrays(data: bytes, *, meta: dict[str, Any] | None = None, **arrays: Any) -> bytes:
    """The index with some arrays replaced (None drops one) or its meta changed."""

    def change(current: dict[str, Any], stored: dict[str, Any]) -> None:
        for name, value in arrays.items():
            name = name.replace("__", ".")
            if value is None:
                current.pop(name)
            else:
                current[name] = value
        if meta is not None:
            stored.clear()
            stored.update(meta)

    return rewrite(data, change)


# The example corpus (fixtures/docs), for tests that want a few hundred real chunks.
FIXTURE_DOCS = Path(__file__).resolve().parent.parent.parent / "fixtures" / "docs"


def fixture_records() -> list[dict[str, str]]:
    """One record per paragraph of the fixture docs: a few hundred real chunks."""
    out = []
    for path in sorted(FIXTURE_DOCS.glob("*.md")):
        for i, para in enumerate(path.read_text(encoding="utf-8").split("\n\n")):
            if para.strip():
                out.append({"id": f"{path.stem}:{i}", "text": para, "source": path.name})
    return out
