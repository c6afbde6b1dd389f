"""Records + vectors → the named arrays and header metadata of a ``.scidx`` (deterministic)."""

from __future__ import annotations

import dataclasses
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
    posting_blocks,
    term_hash,
)
from scidx.index.columns import encode_column, encode_path_column
from scidx.index.format import encode_strings, string_table_arrays, uint_dtype
from scidx.index.highlight import fold, needle, starts_unit
from scidx.index.ids import derived_id
from scidx.index.keys import VECTOR_KEY_ARRAY, vector_keys
from scidx.index.offsets import NEEDLE_CHARS, OFFSETS_VERSION, eighth
from scidx.index.texts import encode_texts
from scidx.index.vectors import DEFAULT_ENCODING, encode_vectors, vectors_meta_of
from scidx.pack.dictionary import Vocabulary, heading_forms, word_forms
from scidx.pack.records import Record
from scidx.tokenize import CJK_CLASS, analyzer_language, run_terms, run_terms_as

__all__ = [
    "BM25_B",
    "BM25_BLOCK",
    "BM25_HEADING_WEIGHT",
    "BM25_K1",
    "BM25Built",
    "TermsAndOffsets",
    "WhereBlock",
    "GENERATOR",
    "PACKER_VERSION",
    "bm25_blocks",
    "bm25_job",
    "build_where",
    "build_bm25",
    "build_index_arrays",
    "built_utc",
    "canonical_json",
    "encode_records",
    "language_arrays",
    "record_languages",
    "record_texts",
    "snippet_texts",
    "needle_table",
    "snippet_arrays",
    "where_block",
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
#: format 8, string tables up to 4 MiB stored deflated in ``<name>.zdata``; 19:
#: format 9, records hold the clean text first, ``snippet.where`` and ``snippet.needle``
#: instead of per-word snippet offsets; 20: format 10, ``source.version`` and
#: ``meta.versions``, includes expanded, ``meta.bm25.pageWeight`` (page evidence); 21: the word
#: dictionary ``dict.words``).
PACKER_VERSION = "scidx-pack-21"


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
class WhereBlock:
    """The snippet hints of a run of consecutive chunks (what a packer worker returns).

    Attributes:
        lens: Entries per chunk.
        hashes: Each entry's term hash (``bm25.term_hash``'s), a chunk's terms in text order.
        bits: Each entry's ``snippet.where`` byte: the eighths of the flat text where a run
            making the term starts.
        needles: The ``(term, needle)`` pairs the block's words need besides
            :func:`~scidx.index.highlight.needle`'s (FORMAT.md §2.8).
        forms: ``(word, count)``: how often each folded alphabetic word making one term was
            written (the word dictionary ``dict.words``, FORMAT.md §2.14).
    """

    lens: npt.NDArray[np.int64]
    hashes: npt.NDArray[np.uint64]
    bits: npt.NDArray[np.uint8]
    needles: frozenset[tuple[str, str]]
    forms: tuple[tuple[str, int], ...] = ()


# Words and what separates them, in one C call (no match object per word): the offsets come
# from the lengths. The same \w+ runs as scidx.tokenize.term_spans.
_WORDS = re.compile(r"(\w+)")
_CJK_FIRST = re.compile(f"[{CJK_CLASS}]").match


def _found_by_needle(word: str, term: str, low: str | None = None) -> bool:
    """Whether the snippet scan finds ``word`` for ``term`` with the term's derived needle.

    The scan (:func:`scidx.index.highlight.scan`) looks for the needle in the folded text
    where it starts a word or follows a non-alphanumeric character inside one (an ``_``).
    ``low``: ``fold(word)``, when the caller has it.
    """
    low = fold(word) if low is None else low
    if _CJK_FIRST(term) is not None:
        return term in low  # a CJK term's needle is itself, found at any CJK character
    probe = needle(term)
    pos = low.find(probe)
    while pos != -1:
        if starts_unit(low, pos):
            return True
        pos = low.find(probe, pos + 1)
    return False


def where_block(texts: Sequence[str], languages: Sequence[str] | None = None) -> WhereBlock:
    """The snippet hints of consecutive chunks, given each chunk's clean text (§2.8).

    The runs are the clean text's ``\\w+`` runs (flattening only changes what is between
    them), their places UTF-8 byte offsets into it.
    """
    memo: dict[str, tuple[str, ...]] = {}  # a word -> its distinct terms, in order
    hashes: dict[str, int] = {}
    needed: set[tuple[str, str]] = set()
    lens = np.zeros(len(texts), dtype=np.int64)
    out_hash: list[int] = []
    out_bits: list[int] = []
    written: dict[str, int] = {}  # a word -> how often it occurs (for dict.form)
    memos: dict[str, dict[str, tuple[str, ...]]] = {"en": memo}
    for i, text in enumerate(texts):
        lang = analyzer_language(languages[i]) if languages is not None else "en"
        memo = memos.setdefault(lang, {})
        parts = _WORDS.split(text)  # separator, word, separator, ..., separator
        # UTF-8 byte offsets: the reader inflates a text's bytes up to its window's end.
        sizes = map(len, parts) if text.isascii() else (len(p.encode()) for p in parts)
        ends = list(accumulate(sizes))  # parts[j] ends at ends[j]
        size = ends[-1] if ends else 0
        found: dict[str, int] = {}
        for j, word in enumerate(parts[1::2], 1):
            written[word] = written.get(word, 0) + 1
            terms = memo.get(word)
            if terms is None:
                made = run_terms(word) if lang == "en" else run_terms_as(word, lang)
                terms = memo[word] = tuple(dict.fromkeys(made))
                low = fold(word)
                for t in terms:
                    if not _found_by_needle(word, t, low):
                        needed.add((t, low[:NEEDLE_CHARS]))
            if terms:
                bit = 1 << eighth(ends[2 * j - 2], size)
                for t in terms:
                    found[t] = found.get(t, 0) | bit
        lens[i] = len(found)
        for t, bits in found.items():
            h = hashes.get(t)
            if h is None:
                h = hashes[t] = term_hash(t)
            out_hash.append(h)
            out_bits.append(bits)
    return WhereBlock(
        lens,
        np.array(out_hash, dtype=np.uint64),
        np.array(out_bits, dtype=np.uint8),
        frozenset(needed),
        word_forms(written, memo),
    )


def _where_entries(
    blocks: list[WhereBlock], th: npt.NDArray[np.uint64], width: int, *, pack: bool = True
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """The blocks' entries matched to terms: ``term * width + row`` ascending, and their bytes.

    Entries of one chunk have distinct terms, so every key is distinct. While
    ``key * 256 + byte`` fits an int64, each entry is that one number sorted in place, which
    is the order of a stable argsort by key without separate row, byte and order arrays (at 1M
    chunks, 90.8M entries: about 2 GB less at the packer's peak); ``pack=False`` (or keys too
    wide) takes the stable argsort. Empties ``blocks``.
    """
    packed = pack and th.shape[0] * width * 256 < 1 << 63
    keys: list[npt.NDArray[np.int64]] = []
    bits: list[npt.NDArray[np.uint8]] = []
    row = 0
    for b in blocks:
        pos = th.searchsorted(b.hashes).astype(np.int64)
        ok = pos < th.shape[0]
        ok[ok] = th[pos[ok]] == b.hashes[ok]
        chunk_rows = np.repeat(np.arange(row, row + b.lens.shape[0], dtype=np.int64), b.lens)
        key = pos[ok] * width + chunk_rows[ok]
        if packed:
            key *= 256
            key += b.bits[ok]
        else:
            bits.append(b.bits[ok])
        keys.append(key)
        row += b.lens.shape[0]
    blocks.clear()
    key = np.concatenate(keys)
    del keys
    if packed:
        key.sort()
        value = key.astype(np.uint8)  # the low byte: integer casts wrap modulo 256
        key >>= 8
        return key, value
    order = np.argsort(key, kind="stable")
    return key[order], np.concatenate(bits)[order]


def build_where(blocks: list[WhereBlock], bm25: BM25Arrays, n: int) -> npt.NDArray[Any]:
    """``snippet.where``: each BM25 posting's byte from ``blocks`` (0 where they have none).

    Postings are ordered by (term hash, chunk row) (FORMAT.md §2.4); the blocks' entries are
    sorted the same way and matched to the postings one block of decoded terms at a time. An
    entry without a posting (a word the BM25 tokenisation of the whole text splits otherwise)
    is dropped. Empties ``blocks``.
    """
    th = bm25.term_hash
    where = np.zeros(bm25.postings, dtype="<u1")
    if not blocks or not th.shape[0]:
        blocks.clear()
        return where
    width = max(n, 1)
    key, value = _where_entries(blocks, th, width)
    done = 0  # postings of the blocks before
    for first, df, docs, _codes in posting_blocks(bm25, n):
        last = first + df.shape[0]
        keys = np.repeat(np.arange(first, last, dtype=np.int64), df) * width + docs
        a, z = np.searchsorted(key, [first * width, last * width])
        at = np.searchsorted(keys, key[a:z])
        hit = at < keys.shape[0]
        hit[hit] = keys[at[hit]] == key[a:z][hit]
        where[done + at[hit]] = value[a:z][hit]
        done += keys.shape[0]
    return where


def snippet_arrays(
    blocks: list[WhereBlock], bm25: BM25Arrays, n: int, *, where: bool = True
) -> dict[str, np.ndarray]:
    """The ``snippet.*`` arrays of the chunks of ``blocks`` (in order); empties ``blocks``.

    ``where`` False leaves out ``snippet.where`` (snippets then scan the whole text); the
    needle table is always made: it is what keeps the marks exact.
    """
    out: dict[str, np.ndarray] = {}
    out["snippet.needle.offsets"], out["snippet.needle.data"] = encode_strings(needle_table(blocks))
    if where:
        out["snippet.where"] = build_where(blocks, bm25, n)
    blocks.clear()
    return out


def needle_table(blocks: Iterable[WhereBlock]) -> list[str]:
    """``snippet.needle``'s rows: ``term NUL needle``, sorted, none a longer copy of another."""
    pairs = sorted(set().union(*(b.needles for b in blocks)))
    rows: list[str] = []
    kept: dict[str, list[str]] = {}
    for term, found in pairs:
        mine = kept.setdefault(term, [])
        if any(found.startswith(k) for k in mine):
            continue  # a shorter needle of the term already finds it
        mine.append(found)
    for term in sorted(kept):
        rows.extend(f"{term}\x00{found}" for found in kept[term])
    return rows


TermsAndOffsets = tuple[TermBlock, WhereBlock]
"""One block of records' BM25 term occurrences and snippet hints (see :func:`bm25_job`)."""


def bm25_job(
    headings: Sequence[str],
    bodies: Sequence[str],
    texts: Sequence[str],
    languages: Sequence[str] | None = None,
) -> TermsAndOffsets:
    """Tokenise one block of records: BM25 fields into terms, snippet texts into hints.

    Run in a worker process (see :class:`scidx.pack.workers.Pool`) or in-process.
    ``languages``: each record's analyzer language (:func:`record_languages`).
    """
    found = where_block(texts, languages)
    # Heading-only words (titles, front matter) belong in the word dictionary too.
    forms = heading_forms(headings, found.forms)
    return hash_terms(headings, bodies, languages), dataclasses.replace(found, forms=forms)


def record_languages(records: Sequence[Record]) -> list[str] | None:
    """Each record's analyzer language, or None when every one is English (issue 42)."""
    langs = [analyzer_language(r.language) for r in records]
    return langs if any(lang != "en" for lang in langs) else None


def bm25_blocks(records: Sequence[Record]) -> Iterator[TermsAndOffsets]:
    """The records' BM25 term occurrences, tokenised here one block at a time as they are read."""
    headings, bodies = _bm25_fields(records)
    texts = snippet_texts(records)
    langs = record_languages(records)
    for i in range(0, len(records), BM25_BLOCK):
        j = i + BM25_BLOCK
        yield bm25_job(
            headings[i:j], bodies[i:j], texts[i:j], langs[i:j] if langs is not None else None
        )


BM25Built = tuple[dict[str, np.ndarray], dict[str, Any]]
"""The ``bm25.*`` and ``snippet.*`` arrays of an index and its ``bm25`` meta."""


def build_bm25(
    records: Sequence[Record],
    blocks: Iterable[TermsAndOffsets] | None = None,
    *,
    snippet_offsets: bool = True,
) -> BM25Built:
    """The records' BM25 arrays and meta, and their snippet hints, from streamed blocks.

    Args:
        records: Validated records in canonical order.
        blocks: Their BM25 term occurrences and snippet hints in order, one block of records
            at a time, as :func:`bm25_job` computes them (in worker processes: read them
            before the pool closes); tokenised here when None (:func:`bm25_blocks`).
        snippet_offsets: Add ``snippet.where`` (the ``snippet.needle`` table is always
            stored: it is what makes the marks exact).
    """
    offsets: list[WhereBlock] = []
    vocabulary = Vocabulary()

    def terms() -> Iterator[TermBlock]:
        source = bm25_blocks(records) if blocks is None else blocks
        for block, found in source:
            offsets.append(found)  # small next to the terms, dropped block by block
            vocabulary.add(found.forms)
            yield block

    arrays, meta = build_arrays_from_blocks(
        terms(),
        len(records),
        k1=BM25_K1,
        b=BM25_B,
        heading_weight=BM25_HEADING_WEIGHT,
    )
    posted = BM25Arrays.of(arrays, meta)
    words, meta["dictionary"] = vocabulary.arrays()  # moved to the header's top level
    arrays.update(words)
    vocabulary.counts.clear()
    arrays.update(snippet_arrays(offsets, posted, len(records), where=snippet_offsets))
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
    versions: Mapping[str, int] | None = None,
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
        versions: Each source's row into ``meta.versions.names`` (the optional
            ``source.version`` array; 0xFFFF: no version).

    Returns:
        ``(arrays, meta_part)`` where ``meta_part`` holds the ``bm25`` and ``counts`` meta keys.
    """
    bm25_arrays, bm25_meta = build_bm25(records) if bm25 is None else bm25
    bm25_meta = dict(bm25_meta)  # its "dictionary" entry moves to the header's top level
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
    if versions is not None:
        arrays["source.version"] = np.array([versions[s] for s in sources], dtype="<u2")
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
    if "snippet.needle.offsets" in arrays:
        meta["snippets"] = {"offsets": OFFSETS_VERSION}
    if "dictionary" in bm25_meta:  # from build_bm25
        meta["dictionary"] = bm25_meta.pop("dictionary")
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
    versions: Mapping[str, int] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any], str]:
    """Build the arrays and header meta of an index from records and their vectors.

    ``pages``: each source's published page path (``source.page``), or None for none;
    ``versions``: each source's version row (``source.version``), or None for none.
    """
    arrays, meta_part = build_index_arrays(records, vectors, bm25, pages, versions)
    language = meta.get("language") or "en"
    lang_arrays, lang_meta = language_arrays(records, str(language))
    arrays.update(lang_arrays)
    return arrays, {**meta, **meta_part, **lang_meta}, built_utc()


def language_arrays(
    records: Sequence[Record], default: str
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``source.lang`` and ``meta.language``/``meta.languages`` (FORMAT.md §2.15, issue 42).

    ``source.lang`` (a row of ``meta.languages`` per source) only when the pages have more
    than one language; a record without a language has the index's.
    """
    by_source: dict[str, str] = {}
    for r in records:
        by_source.setdefault(r.source, r.language or default)
    languages = sorted(set(by_source.values()) | {default})
    meta: dict[str, Any] = {"language": default, "languages": languages}
    if len(languages) == 1:
        return {}, meta
    row = {lang: i for i, lang in enumerate(languages)}
    column = np.array([row[by_source[s]] for s in sorted(by_source)], dtype=np.uint8)
    return {"source.lang": column}, meta
