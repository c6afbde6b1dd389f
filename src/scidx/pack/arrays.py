"""Records + vectors → the named arrays and header metadata of a ``.scidx`` (deterministic)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import accumulate
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from scidx._version import __version__
from scidx.embed.hashing import embedding_text
from scidx.errors import ConfigError
from scidx.index.bm25 import (
    DEFAULT_B,
    DEFAULT_HEADING_WEIGHT,
    DEFAULT_K1,
    BM25Arrays,
    TermBlock,
    build_arrays_from_blocks,
    hash_terms,
)
from scidx.index.columns import encode_column, encode_path_column
from scidx.index.format import string_table_arrays, uint_dtype
from scidx.index.highlight import flatten
from scidx.index.ids import derived_id
from scidx.index.keys import VECTOR_KEY_ARRAY, vector_keys
from scidx.index.offsets import IS_FLAT, LONG_WORD, MAX_GAP, OFFSETS_VERSION, word_key
from scidx.index.texts import encode_texts
from scidx.index.vectors import DEFAULT_ENCODING, encode_vectors, vectors_meta_of
from scidx.pack.records import Record
from scidx.tokenize import run_terms

__all__ = [
    "BM25_B",
    "BM25_BLOCK",
    "BM25_HEADING_WEIGHT",
    "BM25_K1",
    "BM25Built",
    "OffsetBlock",
    "TermsAndOffsets",
    "GENERATOR",
    "PACKER_VERSION",
    "bm25_blocks",
    "bm25_job",
    "build_offset_arrays",
    "build_bm25",
    "build_index_arrays",
    "built_utc",
    "canonical_json",
    "encode_records",
    "record_texts",
    "snippet_texts",
    "offsets_block",
    "release_freed_memory",
]

#: Bumped whenever the same inputs would produce different bytes (2: rows in chunk-id order;
#: 3: meta.vectors names the vector encoding; 4: the ``vectors.key`` array, and paragraphs over
#: the budget split inside; 5: clean text in ``chunk.plain``, read by BM25 and the embedder
#: instead of the Markdown; 6: the ``snippet.*`` offsets; 7: format 2, chunk texts compressed
#: in ``text.*``; 8: generator flavours, no empty chunks, titles never empty: chunker 5;
#: 9: ``source.page``, URL templates derived from the generator's config, VitePress anchors;
#: 10: format 3, ``<u2`` postings rows and 6-byte snippet occurrences; 11: the ``window.*``
#: rows of chunks longer than the provider's input limit; 12: format 4, one-byte term
#: frequency codes and idf tables instead of float32 impacts; 13: format 4.1, 4-byte snippet
#: occurrences in ``snippet.word``/``gap``/``len``; 14: ``meta.windows.margin``; 15: format 5,
#: Markdown chunk ids derived, not stored, indexed heading and anchor columns, ``<u4`` spans;
#: 16: format 6, bit-packed posting runs, ``<u2`` per-chunk columns where they fit; 17:
#: format 7, heading paths as a tree of their prefixes, ``<u4`` string-table offsets; 18:
#: format 8, string tables up to 4 MiB stored deflated in ``<name>.zdata``).
PACKER_VERSION = "scidx-pack-18"


GENERATOR = f"scidx {__version__}"


# BM25 parameters: the measured defaults of scidx.index.bm25 (see its module docstring).
BM25_K1 = DEFAULT_K1


BM25_B = DEFAULT_B


BM25_HEADING_WEIGHT = DEFAULT_HEADING_WEIGHT


def canonical_json(value: Any) -> str:
    """Canonical JSON (sorted keys, no spaces, UTF-8 kept) for hashing and the header."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


BM25_BLOCK = 2048
"""Records tokenised per :func:`scidx.index.bm25.hash_terms` call (a worker job, or in-process)."""


def release_freed_memory() -> None:
    """Give memory freed by a pack stage back to the system (glibc ``malloc_trim``).

    A pack frees hundreds of megabytes of medium-sized arrays between stages; glibc keeps
    such blocks in its heap (its mmap threshold rises after the first large free), so without
    a trim the process's resident size, and so the pack's peak, never comes down. A no-op
    where the C library has no ``malloc_trim``.
    """
    global _TRIM
    if _TRIM is None:
        try:
            import ctypes
            import ctypes.util

            name = ctypes.util.find_library("c")
            _TRIM = getattr(ctypes.CDLL(name), "malloc_trim", False) if name else False
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM: Any = None


@dataclass(frozen=True)
class OffsetBlock:
    """The snippet offsets of a run of consecutive chunks (what a packer worker returns)."""

    lens: npt.NDArray[np.int64]
    word: npt.NDArray[np.uint16]
    gap: npt.NDArray[np.uint8]
    size: npt.NDArray[np.uint8]
    flat: npt.NDArray[np.uint8]


# Words and what separates them, in one C call (no match object per word): the offsets come
# from the lengths. The same \w+ runs as scidx.tokenize.term_spans.
_WORDS = re.compile(r"(\w+)")


def _word_keys(word: str, memo: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """The ``snippet.word`` keys of the terms ``word`` makes, each term once, in order."""
    keys = memo[word] = tuple(word_key(t) for t in dict.fromkeys(run_terms(word)))
    return keys


def offsets_block(texts: Sequence[str]) -> OffsetBlock:
    """The snippet offsets of consecutive chunks, given each chunk's snippet text.

    The occurrences of FORMAT.md §2.8 (read by :class:`scidx.index.offsets.SnippetOffsets`).
    """
    memo: dict[str, tuple[int, ...]] = {}  # a word -> its values in `snippet.word`
    lens = np.zeros(len(texts), dtype=np.int64)
    flags = np.zeros(len(texts), dtype=np.uint8)
    words: list[int] = []
    gaps: list[int] = []
    sizes: list[int] = []
    for i, text in enumerate(texts):
        flat, _code = flatten(text)
        flags[i] = IS_FLAT if flat == text else 0
        count = len(words)
        parts = _WORDS.split(flat)  # separator, word, separator, ..., separator
        ends = list(accumulate(map(len, parts)))  # parts[j] ends at ends[j]
        last = 0
        for j, keys in enumerate(map(memo.get, parts[1::2]), 1):
            if keys is None:
                keys = _word_keys(parts[2 * j - 1], memo)
            if keys:
                start = ends[2 * j - 2]
                gap = start - last
                while gap > MAX_GAP:  # fillers (word 0) carry the start past long gaps
                    words.append(0)
                    gaps.append(MAX_GAP)
                    sizes.append(0)
                    gap -= MAX_GAP
                words.extend(keys)
                gaps.append(gap)
                gaps.extend([0] * (len(keys) - 1))
                size = ends[2 * j - 1] - start
                sizes.extend([size if size < LONG_WORD else LONG_WORD] * len(keys))
                last = start
        lens[i] = len(words) - count
    return OffsetBlock(
        lens,
        np.array(words, dtype=np.uint16),
        np.array(gaps, dtype=np.uint8),
        np.array(sizes, dtype=np.uint8),
        flags,
    )


def build_offset_arrays(blocks: list[OffsetBlock]) -> dict[str, np.ndarray]:
    """The ``snippet.*`` arrays of the chunks of ``blocks``, in order; empties ``blocks``.

    Each block is copied into the preallocated output and let go, so the peak is the output
    plus one block, not twice the occurrences.
    """
    n = sum(b.lens.shape[0] for b in blocks)
    m = sum(b.word.shape[0] for b in blocks)
    row_ptr = np.zeros(n + 1, dtype="<u8")
    word = np.empty(m, dtype="<u2")
    gap = np.empty(m, dtype="<u1")
    size = np.empty(m, dtype="<u1")
    flat = np.empty(n, dtype="<u1")
    row = at = 0
    blocks.reverse()  # pop() from the end takes them in order
    while blocks:
        b = blocks.pop()
        k, count = b.lens.shape[0], b.word.shape[0]
        np.cumsum(b.lens, out=row_ptr[row + 1 : row + k + 1])
        row_ptr[row + 1 : row + k + 1] += np.uint64(at)
        word[at : at + count] = b.word
        gap[at : at + count] = b.gap
        size[at : at + count] = b.size
        flat[row : row + k] = b.flat
        row, at = row + k, at + count
        del b
    return {
        "snippet.flat": flat,
        "snippet.gap": gap,
        "snippet.len": size,
        "snippet.row": row_ptr,
        "snippet.word": word,
    }


TermsAndOffsets = tuple[TermBlock, OffsetBlock | None]
"""One block of records' BM25 term occurrences and snippet offsets (see :func:`bm25_job`)."""


def bm25_job(
    headings: Sequence[str], bodies: Sequence[str], texts: Sequence[str] | None
) -> TermsAndOffsets:
    """Tokenise one block of records: BM25 fields into terms, snippet texts into offsets.

    Run in a worker process (see :class:`scidx.pack.workers.Pool`) or in-process. ``texts``
    None: no snippet offsets (the second item is None).
    """
    block = hash_terms(headings, bodies)
    return block, offsets_block(texts) if texts is not None else None


def bm25_blocks(
    records: Sequence[Record], *, snippet_offsets: bool = True
) -> Iterator[TermsAndOffsets]:
    """The records' BM25 term occurrences, tokenised here one block at a time as they are read."""
    headings, bodies = _bm25_fields(records)
    texts = snippet_texts(records) if snippet_offsets else None
    for i in range(0, len(records), BM25_BLOCK):
        j = i + BM25_BLOCK
        yield bm25_job(headings[i:j], bodies[i:j], texts[i:j] if texts is not None else None)


BM25Built = tuple[dict[str, np.ndarray], dict[str, Any]]
"""The ``bm25.*`` and ``snippet.*`` arrays of an index and its ``bm25`` meta."""


def build_bm25(
    records: Sequence[Record],
    blocks: Iterable[TermsAndOffsets] | None = None,
    *,
    snippet_offsets: bool = True,
) -> BM25Built:
    """The records' BM25 arrays and meta, and their snippet offsets, from streamed blocks.

    Args:
        records: Validated records in canonical order.
        blocks: Their BM25 term occurrences and snippet offsets in order, one block of records
            at a time, as :func:`bm25_job` computes them (in worker processes: read them
            before the pool closes); tokenised here when None (:func:`bm25_blocks`).
        snippet_offsets: Add the ``snippet.*`` arrays (the blocks then carry offsets).
    """
    offsets: list[OffsetBlock] = []

    def terms() -> Iterator[TermBlock]:
        source = bm25_blocks(records, snippet_offsets=snippet_offsets) if blocks is None else blocks
        for block, found in source:
            if snippet_offsets:
                if found is None:
                    raise ValueError("a term block without the snippet offsets asked for")
                offsets.append(found)  # small next to the terms, dropped block by block
            yield block

    arrays, meta = build_arrays_from_blocks(
        terms(),
        len(records),
        k1=BM25_K1,
        b=BM25_B,
        heading_weight=BM25_HEADING_WEIGHT,
    )
    if snippet_offsets:
        arrays.update(build_offset_arrays(offsets))
    release_freed_memory()  # the term occurrences and postings parts, before the strings
    return arrays, meta


def snippet_texts(records: Sequence[Record]) -> list[str]:
    """The text each record's snippets are cut from (what the index stores as its clean text)."""
    return [r.text if r.plain is None else r.plain for r in records]


def build_index_arrays(
    records: Sequence[Record],
    vectors: np.ndarray | Mapping[str, np.ndarray],
    bm25: BM25Built | None = None,
    pages: Mapping[str, str] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Build every named array of an index from validated, ordered records and their vectors.

    The BM25 arrays come first (or were built by the caller), so the term occurrences are
    reduced and gone before the string tables are made: the peak is the larger of the two,
    not their sum.

    Args:
        records: Validated records in canonical order.
        vectors: Their embeddings, row for row: a float matrix (stored as float32) or the
            arrays of one encoding (from :func:`scidx.index.vectors.encode_vectors`).
        bm25: Their BM25 arrays and meta from :func:`build_bm25`; built here when None.
        pages: Each source's published page path (the optional ``source.page`` table).

    Returns:
        ``(arrays, meta_part)`` where ``meta_part`` holds the ``bm25`` and ``counts`` meta keys.
    """
    bm25_arrays, bm25_meta = build_bm25(records) if bm25 is None else bm25
    del bm25
    n = len(records)
    sources = sorted({r.source for r in records})
    source_row = {s: i for i, s in enumerate(sources)}
    source_title, source_meta = _source_fields(records)

    arrays: dict[str, np.ndarray] = {}

    def put_strings(name: str, values: Sequence[str]) -> None:
        # Deflated when small enough (format 7): inflated once per process on first use.
        arrays.update(string_table_arrays(name, values))

    # Markdown chunks' ids are "{source}:{anchor}:{ordinal}": derived by the reader, not
    # stored (format 5), unless some record has an id of its own.
    if any(r.id != derived_id(r.source, r.anchor, r.ordinal) for r in records):
        put_strings("chunk.id", [r.id for r in records])
    # Markdown and clean text, one compressed record per chunk. The clean text is left out
    # when every text is already plain (records such as BEIR corpora): the reader then uses
    # the Markdown, and nothing is stored twice.
    plain = any(r.plain is not None and r.plain != r.text for r in records)
    arrays.update(
        encode_texts(
            [r.text for r in records],
            [r.text if r.plain is None else r.plain for r in records] if plain else None,
        )
    )
    # One copy of each distinct heading path and anchor (a section's chunks share them).
    # Heading paths as a tree of their distinct prefixes (a page's sections share ancestors).
    headings = ["\x1f".join(r.heading_path) for r in records]
    arrays.update(encode_path_column("chunk.heading", headings))
    arrays.update(encode_column("chunk.anchor", [r.anchor for r in records]))
    # <u2 while the values fit (FORMAT.md §2.3: a reader accepts either width).
    source_rows = np.array([source_row[r.source] for r in records], dtype=np.int64)
    ordinals = np.array([r.ordinal for r in records], dtype=np.int64)
    arrays["chunk.source"] = source_rows.astype(uint_dtype(len(sources), at_least=2))
    arrays["chunk.ordinal"] = ordinals.astype(uint_dtype(int(ordinals.max(initial=0)), at_least=2))
    spans = np.array([r.span for r in records] if n else np.zeros((0, 4)), dtype="<u8")
    # Four bytes each while they fit (a source under 4 Gi characters): 16 bytes a chunk.
    narrow = not n or int(spans.max()) < 1 << 32
    arrays["chunk.span"] = spans.astype("<u4" if narrow else "<u8").reshape(n, 4)
    put_strings("source.path", sources)
    put_strings("source.title", [source_title[s] for s in sources])
    put_strings("source.meta", [source_meta[s] for s in sources])
    if pages is not None:
        put_strings("source.page", [pages[s] for s in sources])
    if isinstance(vectors, Mapping):
        arrays.update(vectors)
    else:
        arrays.update(encode_vectors(vectors, DEFAULT_ENCODING))
    # Binds each stored vector row to its chunk, so a reuse never takes a swapped row.
    arrays[VECTOR_KEY_ARRAY] = vector_keys(
        [source_title[r.source] for r in records],
        ["\x1f".join(r.heading_path) for r in records],
        [r.text for r in records],
        arrays,
    )

    arrays.update(bm25_arrays)
    counts = {
        "chunks": n,
        "sources": len(sources),
        "terms": int(bm25_arrays["bm25.term_hash"].shape[0]),
        "postings": BM25Arrays.of(bm25_arrays, bm25_meta).postings,
    }
    meta = {"bm25": bm25_meta, "counts": counts, "vectors": vectors_meta_of(arrays)}
    if "snippet.row" in arrays:
        meta["snippets"] = {"offsets": OFFSETS_VERSION}
    return arrays, meta


def _source_fields(records: Sequence[Record]) -> tuple[dict[str, str], dict[str, str]]:
    """Per source: its title and its front matter as canonical JSON (stored once per source)."""
    titles: dict[str, str] = {}
    metas: dict[str, str] = {}
    for r in records:
        # The first chunk of a source carries the document's title and front matter.
        if r.source not in titles:
            titles[r.source] = r.title
            metas[r.source] = canonical_json(dict(r.metadata))
    return titles, metas


def _bm25_fields(records: Sequence[Record]) -> tuple[list[str], list[str]]:
    """The two BM25 fields of each record: its heading text and its body."""
    return ["\n".join(_heading_field(r)) for r in records], [r.index_text for r in records]


def _heading_field(r: Record) -> list[str]:
    parts = [r.title] if r.title else []
    parts += [h for h in r.heading_path if h != r.title]
    return parts


def record_texts(records: Sequence[Record]) -> Sequence[str]:
    """The text each record is embedded as: title, headings, a blank line, the clean body.

    A lazy sequence: each text is made when read, so a pack never holds a second copy of the
    corpus (the embedding cache needs every text once, the provider only its misses).
    """
    return _RecordTexts(records)


class _RecordTexts(Sequence[str]):
    def __init__(self, records: Sequence[Record]) -> None:
        self.records = records

    def __len__(self) -> int:
        return len(self.records)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return _RecordTexts(self.records[i])
        r = self.records[i]
        return embedding_text(r.title, r.heading_path, r.index_text)


def built_utc() -> str:
    """``builtUtc`` from ``SOURCE_DATE_EPOCH`` (default 0), as ISO 8601 UTC."""
    raw = os.environ.get("SOURCE_DATE_EPOCH", "0").strip() or "0"
    try:
        seconds = int(raw)
        if seconds < 0:
            raise ValueError(raw)
        stamp = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise ConfigError(
            f"SOURCE_DATE_EPOCH={raw!r} is not a valid Unix timestamp; "
            "set it to whole seconds since 1970 or unset it"
        ) from None
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def encode_records(
    records: Sequence[Record],
    vectors: np.ndarray | Mapping[str, np.ndarray],
    meta: dict[str, Any],
    bm25: BM25Built | None = None,
    pages: Mapping[str, str] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any], str]:
    """Build the arrays and header meta of an index from records and their vectors.

    ``pages``: each source's published page path (``source.page``), or None for none.
    """
    arrays, meta_part = build_index_arrays(records, vectors, bm25, pages)
    return arrays, {**meta, **meta_part}, built_utc()
