"""A static search bundle written from an index: search a docs site in the browser, no server.

``toolup-rag export-web INDEX OUT/`` writes, from the index alone::

    OUT/index.html                 the search page (serve's page, running on the bundle)
    OUT/scidx-bundle.json          the manifest: counts, settings, shard table, file names
    OUT/assets/<name>.<hash>.js    the reader (ES module), the page script, its style
    OUT/terms/<hash>.bin           keyword shards: a range of terms each, with their postings
    OUT/pages/<hash>-<n>.bin       page fragments: a page's chunks' ids, headings, URLs, text,
                                   8 chunks a file (<hash>: of all the page's files)
    OUT/pages.<hash>.bin           which chunk rows each page fragment holds
    OUT/vectors/<hash>.bin         (semantic indexes) int8 vector shards, by row range

Every file but ``index.html`` and the manifest is named by the xxh3-64 hash of its bytes, so a
CDN can cache it forever; the manifest is the one file to revalidate. The ``.bin`` files are
gzip members (the reader inflates them with the browser's ``DecompressionStream``), so they
travel compressed from any static server.

Keyword parity: the index stores term hashes, not terms. The exporter recovers each term by
tokenising the chunks' BM25 fields (title + headings, clean body) exactly as the packer did,
reads its postings through :func:`~scidx.index.bm25.term_postings` (the searcher's own
decoding) and checks that every term and posting of the index was recovered. A shard stores
the float32 impacts bit for bit, so the reader's sums equal :func:`keyword_top_k`'s.

Shard layout (after gunzip), all integers unsigned LEB128 varints unless said otherwise::

    u32 LE  text_len | text_len bytes: the shard's terms, UTF-8, joined by "\\n" (sorted by
    UTF-16 code units, as JavaScript compares strings) | varint df per term | per term, its
    chunk rows as deltas (the first from 0) | the float32 LE impacts of every posting in
    order, byte-planed (all first bytes, then all second bytes, ...: compresses better)

Deterministic: the same index gives the same bytes (gzip with mtime 0, no names, sorted
keys, no timestamps or paths). Written atomically: into a temp folder beside ``OUT``, which
then replaces ``OUT`` (a folder that is not a bundle is never replaced).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import xxhash

from scidx._version import __version__
from scidx.errors import ConfigError, CorruptIndexError, OutputError
from scidx.index.bm25 import term_postings
from scidx.index.highlight import flatten, strip_code
from scidx.index.locales import localize_page, page_locale
from scidx.pack.fileio import fsync_dir
from scidx.tokenize import TOKENIZER_VERSION, analyzer_language, tokenize, tokenize_as

if TYPE_CHECKING:
    from scidx.index.index import Index

__all__ = [
    "BUNDLE_FORMAT",
    "MANIFEST_NAME",
    "BundleReport",
    "build_web_bundle",
    "write_web_bundle",
]

#: ``format`` in the manifest; the reader refuses a bundle of another major version.
BUNDLE_FORMAT = "scidx-web/2"
MANIFEST_NAME = "scidx-bundle.json"

# About 48 KB of shard before gzip (~30 KB on the wire for typical docs, Pagefind's median):
# a one-word query fetches one shard, so smaller shards mean less transfer per query but
# more files and a longer manifest. A term with more postings than that gets a shard alone.
SHARD_RAW_BYTES = 32 * 1024
# Rows per vector shard: 2,048 x 384 int8 is 0.8 MB, fetched once per session on the first
# semantic query and cached.
VECTOR_ROWS = 2048
# Chunks per page fragment file: a hit fetches the piece of its page that holds it, not the
# whole page (a long reference page is 40+ chunks, 10 KB gzipped). Fixed, so the page table
# needs no more entries: piece = (row - page start) // PAGE_PIECE_CHUNKS.
PAGE_PIECE_CHUNKS = 8
_PAGE_HASH_HEX = 12  # 48 bits: the fragment table is part of every cold query's transfer


@dataclass(frozen=True)
class BundleReport:
    """What an export wrote.

    Attributes:
        out: The bundle folder.
        files: How many files.
        bytes: Their total size.
        terms: Distinct keyword terms.
        term_shards: Keyword shard files.
        pages: Page fragments.
        vector_shards: Vector shard files (0: keyword-only bundle).
    """

    out: Path
    files: int
    bytes: int
    terms: int
    term_shards: int
    pages: int
    vector_shards: int


# ---------------------------------------------------------------------------------------------
# Encoding helpers
# ---------------------------------------------------------------------------------------------


def _gzip(data: bytes) -> bytes:
    # mtime 0 and no file name: the member depends on the data alone.
    return gzip.compress(data, compresslevel=9, mtime=0)


def _hex(data: bytes, chars: int = 16) -> str:
    return xxhash.xxh3_64_hexdigest(data)[:chars]


def _varints(values: npt.NDArray[np.int64]) -> bytes:
    """Unsigned LEB128 of each value, vectorised (values < 2**35)."""
    v = np.asarray(values, dtype=np.uint64)
    if v.shape[0] == 0:
        return b""
    nbytes = np.ones(v.shape[0], dtype=np.int64)
    for shift in (7, 14, 21, 28):
        nbytes += v >= (np.uint64(1) << np.uint64(shift))
    out = np.zeros(int(nbytes.sum()), dtype=np.uint8)
    starts = np.concatenate([[0], np.cumsum(nbytes)[:-1]])
    rest = v.copy()
    for i in range(5):
        live = nbytes > i
        if not live.any():
            break
        byte = (rest[live] & np.uint64(0x7F)).astype(np.uint8)
        more = nbytes[live] > i + 1
        byte[more] |= 0x80
        out[starts[live] + i] = byte
        rest[live] >>= np.uint64(7)
    return out.tobytes()


def _utf16_key(term: str) -> bytes:
    # JavaScript compares strings by UTF-16 code units; big-endian UTF-16 bytes sort the same.
    return term.encode("utf-16-be", "surrogatepass")


def _utf16_offsets(text: str) -> Callable[[int], int] | None:
    """Map code-point offsets of ``text`` to UTF-16 offsets (None: they are equal)."""
    if text.isascii() or max(map(ord, text)) < 0x10000:
        return None
    table = np.cumsum([0] + [2 if ord(ch) >= 0x10000 else 1 for ch in text])
    return lambda i: int(table[i])


# ---------------------------------------------------------------------------------------------
# Reading the index
# ---------------------------------------------------------------------------------------------


@dataclass
class _Chunk:
    id: str
    source: str
    title: str
    anchor: str
    heading_path: list[str]
    url: str | None
    body: str  # what BM25 read
    flat: str  # the snippet text
    code: list[tuple[int, int]]
    version: str | None = None
    language: str = "en"  # the page's (issue 42): the analyzer its terms were made with


def _chunks(index: Index) -> list[_Chunk]:
    out = []
    languages = _source_languages(index)
    for i in range(len(index)):
        hit = index.chunk(i, snippet_chars=1)
        clean = hit.plain if hit.plain is not None else hit.text
        body = strip_code(hit.plain) if hit.plain is not None else hit.text
        flat, code = flatten(clean)
        to16 = _utf16_offsets(flat)
        if to16 is not None:
            code = [(to16(a), to16(b)) for a, b in code]
        out.append(
            _Chunk(
                hit.id,
                hit.source,
                hit.title,
                hit.anchor,
                list(hit.heading_path),
                hit.url,
                body,
                flat,
                code,
                hit.version,
                languages.get(hit.source, "en"),
            )
        )
    return out


def _heading_field(title: str, path: Sequence[str]) -> str:
    # The packer's BM25 heading field (scidx.pack.arrays): the title, then the other headings.
    parts = [title] if title else []
    parts += [h for h in path if h != title]
    return "\n".join(parts)


def _vocabulary(chunks: Sequence[_Chunk]) -> list[str]:
    vocab: set[str] = set()
    for c in chunks:
        lang = c.language
        if analyzer_language(lang) == "en":
            vocab.update(tokenize(_heading_field(c.title, c.heading_path)))
            vocab.update(tokenize(c.body))
        else:  # issue 42: a page in a stemmed language was tokenised with its stemmer
            vocab.update(tokenize_as(_heading_field(c.title, c.heading_path), lang))
            vocab.update(tokenize_as(c.body, lang))
    return sorted(vocab, key=_utf16_key)


def _stem_module(index: Index, put: Callable[[str, bytes, str, int], str]) -> str | None:
    """The stemmers' JS module, bundled when a page's language is stemmed (issue 42).

    The reader imports it to tokenise queries in the index's language; None when every page
    is tokenised as English (or the module is not installed).
    """
    langs = index._live().corpus.languages.languages  # noqa: SLF001
    if all(analyzer_language(lang) == "en" for lang in langs):
        return None
    try:
        data = _asset("scidx-stem.js")
    except OSError:
        return None
    return put("assets/scidx-stem.", data, ".js", 12)


def _source_languages(index: Index) -> dict[str, str]:
    """Each source's page language (issue 42)."""
    corpus = index._live().corpus  # noqa: SLF001 - the languages the packer recorded
    langs = corpus.languages
    return {corpus.source_path[i]: langs.of_source(i) for i in range(len(corpus.source_path))}


_Posting = tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]


def _postings(index: Index, terms: Sequence[str]) -> list[tuple[str, _Posting]]:
    """Each recovered term with its postings, decoded by the searcher's own function."""
    corpus = index._live().corpus  # noqa: SLF001 - read through bm25.term_postings only
    out: list[tuple[str, _Posting]] = []
    for term in terms:
        found = term_postings(corpus.bm25, term, corpus.n, index.source)
        if found is not None:
            docs, weights = found
            out.append(
                (term, (np.asarray(docs, dtype=np.int64), np.asarray(weights, dtype=np.float32)))
            )
    _check_complete(index, out)
    return out


def _check_complete(index: Index, found: Sequence[tuple[str, _Posting]]) -> None:
    """Every term of the index must have been recovered, or parity is impossible.

    A recovered term's postings are the lookup's own, so they are complete by construction;
    only a term that no chunk text makes (another tokenizer, a corrupt file) can be missing.
    """
    bm = index._live().corpus.bm25  # noqa: SLF001 - the term count only
    want = int(np.asarray(bm.term_hash).shape[0])
    # A 64-bit collision merges two terms in the index; count the hashes, not the strings.
    got = len({xxhash.xxh3_64_intdigest(t.encode("utf-8")) for t, _ in found})
    if got != want:
        raise CorruptIndexError(
            f"{index.source}: the keyword index lists {want} terms but its chunk text makes "
            f"{got} of them; the file was packed by a different tokenizer or is corrupt. "
            "Rebuild it with `toolup-rag pack-docs` and export again."
        )


# ---------------------------------------------------------------------------------------------
# Writing the parts
# ---------------------------------------------------------------------------------------------


def _shard_bytes(entries: Sequence[tuple[str, _Posting]]) -> bytes:
    text = "\n".join(t for t, _ in entries).encode("utf-8")
    dfs = np.array([p[0].shape[0] for _, p in entries], dtype=np.int64)
    deltas = np.concatenate([np.diff(p[0], prepend=0) for _, p in entries])
    weights = np.concatenate([p[1] for _, p in entries]).astype("<f4")
    planes = weights.view(np.uint8).reshape(-1, 4).T.copy()
    return b"".join(
        [struct.pack("<I", len(text)), text, _varints(dfs), _varints(deltas), planes.tobytes()]
    )


def _term_shards(entries: Sequence[tuple[str, _Posting]]) -> list[tuple[str, bytes]]:
    """Consecutive runs of terms of about :data:`SHARD_RAW_BYTES`: ``(first term, gzip)``."""
    shards: list[tuple[str, bytes]] = []
    run: list[tuple[str, _Posting]] = []
    size = 0
    for entry in entries:
        cost = len(entry[0]) + 8 + 6 * int(entry[1][0].shape[0])
        if run and size + cost > SHARD_RAW_BYTES:
            shards.append((run[0][0], _gzip(_shard_bytes(run))))
            run, size = [], 0
        run.append(entry)
        size += cost
    if run:
        shards.append((run[0][0], _gzip(_shard_bytes(run))))
    return shards


def _page_runs(chunks: Sequence[_Chunk]) -> list[tuple[int, int]]:
    """``[start, stop)`` row runs of consecutive chunks of one page."""
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(chunks) + 1):
        if i == len(chunks) or chunks[i].source != chunks[start].source:
            runs.append((start, i))
            start = i
    return runs


def _section_table(chunks: Sequence[_Chunk]) -> dict[str, Any]:
    """Which section each row is in (``group="section"`` collapses a section's parts).

    ``sectionRows``: the deltas of the rows where a run of one section starts; ``sectionIds``:
    each run's section number, or None when every run is a new section (chunks sorted by id
    keep a section's parts together, so that is the usual case).
    """
    starts: list[int] = []
    ids: list[int] = []
    number: dict[tuple[str, str], int] = {}
    for row, c in enumerate(chunks):
        sid = number.setdefault((c.source, c.anchor), len(number))
        if not ids or ids[-1] != sid:
            starts.append(row)
            ids.append(sid)
    sequential = ids == list(range(len(ids)))
    return {
        "sectionRows": np.diff(starts, prepend=0).tolist(),
        "sectionIds": None if sequential else ids,
    }


def _page_ids(chunks: Sequence[_Chunk], runs: Sequence[tuple[int, int]]) -> list[int] | None:
    """Each page run's page number (``group="page"`` keys by page), or None: one run a page.

    Rows are in chunk-id order (``source:anchor:n``), so a page's chunks are one run unless
    another page's path sorts inside it (``a.md:b.md:intro:0`` between ``a.md:a:0`` and
    ``a.md:c:0``: only a path with a colon does that).
    """
    number: dict[str, int] = {}
    ids = [number.setdefault(chunks[start].source, len(number)) for start, _ in runs]
    return None if ids == list(range(len(ids))) else ids


def _versions(
    index: Index, chunks: Sequence[_Chunk], runs: Sequence[tuple[int, int]]
) -> dict[str, Any] | None:
    """Docs versions (issue 40): the names, the default and each page run's version row.

    ``pageVersions``: per page run, a row into ``names`` or -1 (a page with no version); the
    reader searches the default version unless asked for another (``"*"``: all).
    """
    table = index._live().corpus.versions  # noqa: SLF001 - the index's own versions
    if table is None:
        return None
    row = {name: k for k, name in enumerate(table.names)}
    page_versions = [
        -1 if chunks[a].version is None else row[chunks[a].version or ""] for a, _ in runs
    ]
    return {"names": list(table.names), "default": table.default, "pageVersions": page_versions}


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


def _pieces(chunks: Sequence[_Chunk]) -> list[bytes]:
    """A page's fragment files: its chunks, :data:`PAGE_PIECE_CHUNKS` at a time."""
    first = chunks[0]
    out = []
    for at in range(0, len(chunks), PAGE_PIECE_CHUNKS):
        rows = [
            [c.id, c.anchor, c.heading_path, c.url, c.flat, [list(r) for r in c.code]]
            for c in chunks[at : at + PAGE_PIECE_CHUNKS]
        ]
        out.append(_gzip(_json({"source": first.source, "title": first.title, "chunks": rows})))
    return out


def _vector_shards(index: Index) -> tuple[list[bytes], dict[str, Any] | None]:
    """int8 shards of the index's vectors (row ranges), or none for a lexical-hash index."""
    stamp = index.stamp
    if not stamp or stamp.get("provider") in (None, "hashing", "none", "static"):
        # hashing vectors only reorder keyword hits; the static leg (issue 41) is not in the
        # reader yet: both bundles are keyword-only.
        return [], None
    # The full scan a verified load does (finite values, in-range int8 scales): an unverified
    # load checks them lazily, and the bundle reads every row (issue 39).
    index.vector_store.verify()
    vectors = np.asarray(index.vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] == 0:
        return [], None
    # In float64: finite float32 components cannot overflow its squares.
    wide = vectors.astype(np.float64)
    norms = np.linalg.norm(wide, axis=1, keepdims=True)
    unit = np.divide(wide, norms, out=np.zeros_like(wide), where=norms > 0).astype(np.float32)
    # Per-row symmetric int8 (the row's largest component maps to 127): cosine ranks survive
    # to about 1e-3 (the browser leg is a ranking, not a parity check).
    scale = np.abs(unit).max(axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    q = np.rint(unit / scale * 127.0).astype(np.int8)
    shards = []
    for start in range(0, q.shape[0], VECTOR_ROWS):
        part = q[start : start + VECTOR_ROWS]
        scales = (scale[start : start + VECTOR_ROWS, 0] / 127.0).astype("<f4")
        shards.append(_gzip(scales.tobytes() + part.tobytes()))
    info = {
        "dimensions": int(q.shape[1]),
        "rowsPerShard": VECTOR_ROWS,
        "encoding": "int8-row-scaled",
    }
    return shards, info


# --- word dictionary (issue 38) ---
# Words per dictionary shard: about 20 KB of words before gzip (8 KB on the wire). A typed
# word's completions and near spellings read the one or two shards of its prefix and suffix.
DICT_SHARD_WORDS = 2048


def _dictionary_shards(index: Index, put: Callable[..., str]) -> dict[str, Any] | None:
    """The index's word dictionary (FORMAT.md §2.14) as shards, or None without one.

    ``words``: ``[first word, file, word count]`` per shard of the words in code point
    order, each file the shard's frequency bytes then its words joined by ``\n`` (the
    index's own layout);
    ``reversed``: the same for the reversed words in code point order, without frequencies.
    The reader finds a prefix's or suffix's range from the first words, as Python does from
    the whole list, so both read exactly the same words.
    """
    found = index._live().corpus.dictionary  # noqa: SLF001 - the index's own dictionary
    if found is None:
        return None
    words, freq = found.entries()
    backwards = sorted(w[::-1] for w in words)

    def shards(keys: Sequence[str], freqs: Sequence[int] | None) -> list[list[object]]:
        out: list[list[object]] = []
        for at in range(0, len(keys), DICT_SHARD_WORDS):
            part = keys[at : at + DICT_SHARD_WORDS]
            head = bytes(freqs[at : at + DICT_SHARD_WORDS]) if freqs is not None else b""
            data = _gzip(head + "\n".join(part).encode("utf-8"))
            out.append([part[0], put("words/", data, ".bin"), len(part)])
        return out

    return {"words": shards(words, freq), "reversed": shards(backwards, None)}


# --- end word dictionary ---


def _asset(name: str) -> bytes:
    # Read through the scidx package, not scidx.web: importing that one imports Starlette (the
    # serve extra), and a static bundle needs only the cli extra.
    return resources.files("scidx").joinpath("web").joinpath("static").joinpath(name).read_bytes()


def _page_html(title: str, names: dict[str, str], locale: str = "en") -> bytes:
    import html

    page = _asset("index.html").decode("utf-8")
    page = page.replace("{{TITLE}}", html.escape(title)).replace("{{BASE}}", "./")
    page = page.replace("{{INDEXES}}", "[]")
    page = page.replace("static/search.css", names["search.css"])
    page = page.replace(
        '<script src="static/search.js" defer></script>',
        f'<script src="{names["search.js"]}" defer></script>',
    )
    page = page.replace(
        '<main id="app"',
        f'<main id="app" data-bundle="{MANIFEST_NAME}" data-reader="{names["scidx-bundle.js"]}"',
    )
    page = page.replace(' The JSON API answers at <a href="search?q=">search?q=…</a>.', "")
    return localize_page(page, locale).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# The bundle
# ---------------------------------------------------------------------------------------------


def build_web_bundle(
    index: Index,
    *,
    title: str | None = None,
    embeddings_url: str | None = None,
    link_base: str | None = None,
    locale: str | None = None,
) -> dict[str, bytes]:
    """The bundle's files (relative path → bytes) for a loaded index.

    Args:
        index: A loaded index (``scidx.load``).
        title: The search page's title (default: "Search").
        embeddings_url: An OpenAI-compatible API base (``https://host/v1``) whose
            ``/embeddings`` serves the index's model: the page's vector leg (semantic
            indexes only; a page can also set it, see docs/web-bundle.md).
        link_base: Where relative hit URLs (an index packed without a site URL) are relative
            to, from the bundle folder: ``"../"`` for a bundle in ``site/search/`` whose
            URLs are relative to ``site/``. ``None``: the bundle folder itself.
        locale: The page's UI language; default ``meta.locale``, else the index's language
            (:mod:`scidx.index.locales`).

    Returns:
        Every file of the bundle; the same index gives the same mapping.

    Raises:
        CorruptIndexError: The index's keyword arrays do not match its text.
        ConfigError: ``embeddings_url`` is not an http(s) URL.
    """
    _check_embeddings_url(embeddings_url)
    chunks = _chunks(index)
    entries = _postings(index, _vocabulary(chunks))
    files: dict[str, bytes] = {}

    def put(folder: str, data: bytes, suffix: str, chars: int = 16) -> str:
        name = f"{folder}{_hex(data, chars)}{suffix}"
        files[name] = data
        return name

    shards = [[first, put("terms/", data, ".bin")] for first, data in _term_shards(entries)]
    runs = _page_runs(chunks)
    page_names = _page_files(chunks, runs, files)
    table = {
        "files": page_names,
        "pageChunks": PAGE_PIECE_CHUNKS,
        **_section_table(chunks),
        "pageRows": np.diff([a for a, _ in runs], prepend=0).tolist(),
        "pageIds": _page_ids(chunks, runs),
    }
    versions = _versions(index, chunks, runs)
    if versions is not None:
        table["pageVersions"] = versions.pop("pageVersions")
    page_table = put("pages.", _gzip(_json(table)), ".bin")
    dictionary = _dictionary_shards(index, put)
    vector_files, vector_info = _vector_shards(index)
    vectors = None
    if vector_info is not None:
        vector_info["shards"] = [put("vectors/", data, ".bin") for data in vector_files]
        vectors = vector_info
    names = {}
    for asset in ("scidx-bundle.js", "search.js", "search.css"):
        stem, ext = asset.rsplit(".", 1)
        data = _asset(asset)
        names[asset] = put(f"assets/{stem}.", data, f".{ext}", 12)
    stem_module = _stem_module(index, put)
    stamp = index.stamp
    # The index's fusion settings as opened (defaults filled in, ``vectorFloor`` null when it
    # has none): the reader's vector and hybrid modes apply the same evidence rule.
    fusion = dict(index._live().corpus.fusion)  # noqa: SLF001 - the index's own settings
    manifest = {
        "format": BUNDLE_FORMAT,
        "generator": f"scidx {__version__}",
        "tokenizer": TOKENIZER_VERSION,
        "chunks": len(chunks),
        "terms": len(entries),
        "shards": shards,
        "pages": page_table,
        "reader": names["scidx-bundle.js"],
        "provider": {
            k: stamp[k] for k in ("provider", "model", "dimensions", "normalize") if k in stamp
        },
        "fusion": fusion,
        "vectors": vectors,
        "embeddings": {"url": embeddings_url} if embeddings_url and vectors else None,
        "linkBase": link_base,
        # Only for a versioned index, so other manifests stay as they were.
        **({"versions": versions} if versions is not None else {}),
        "dictionary": dictionary,
        # Issue 42: the language queries are tokenised in (the reader stems English only
        # until the stemmed languages' JS module is bundled) and the page languages.
        "language": index.meta.get("language", "en"),
        # Typo and completion expansion follow English words: a bundle with pages in any other
        # language does not expand its queries, as Python does not (scidx.index.expand).
        "expands": all(lang == "en" for lang in index.meta.get("languages", ["en"])),
        "stem": stem_module,
    }
    files[MANIFEST_NAME] = _json(manifest) + b"\n"
    files["index.html"] = _page_html(title or "Search", names, page_locale(index.meta, locale))
    return files


def _check_embeddings_url(url: str | None) -> None:
    if url is not None and not url.startswith(("https://", "http://")):
        raise ConfigError(
            f"--embeddings-url must be an http(s) URL such as https://host/v1, got {url[:80]!r}"
        )


def _page_files(
    chunks: Sequence[_Chunk], runs: Sequence[tuple[int, int]], files: dict[str, bytes]
) -> list[str]:
    """Each page's fragments into ``files`` (``pages/<name>-<n>.bin``), and the page names."""
    pieces = [_pieces(chunks[a:b]) for a, b in runs]
    page_names = [_hex(b"".join(page), _PAGE_HASH_HEX) for page in pieces]
    if len(set(page_names)) != len(page_names):  # 48-bit names collided (or two equal pages)
        page_names = [_hex(b"".join(page), 32) for page in pieces]
    for name, page in zip(page_names, pieces, strict=True):
        for n, data in enumerate(page):
            files[f"pages/{name}-{n}.bin"] = data
    return page_names


def write_web_bundle(
    index_path: Path,
    out: Path,
    *,
    title: str | None = None,
    embeddings_url: str | None = None,
    link_base: str | None = None,
    locale: str | None = None,
) -> BundleReport:
    """Load ``index_path`` and write its bundle to ``out`` (atomically replacing a previous one).

    ``title``, ``embeddings_url`` and ``link_base`` are :func:`build_web_bundle`'s.

    Raises:
        OutputError: ``out`` exists and is not a bundle (never replaced), or cannot be written.
        ScidxError: The index cannot be loaded, or is corrupt.
    """
    from scidx.index.index import load

    _check_target(out)
    with load(index_path) as index:
        files = build_web_bundle(
            index, title=title, embeddings_url=embeddings_url, link_base=link_base, locale=locale
        )
        report = BundleReport(
            out=out,
            files=len(files),
            bytes=sum(map(len, files.values())),
            terms=int(json.loads(files[MANIFEST_NAME])["terms"]),
            term_shards=sum(1 for n in files if n.startswith("terms/")),
            pages=len({n.rsplit("-", 1)[0] for n in files if n.startswith("pages/")}),
            vector_shards=sum(1 for n in files if n.startswith("vectors/")),
        )
    _write_tree(out, files.items())
    return report


def _check_target(out: Path) -> None:
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise OutputError(f"{out} exists and is not a folder; choose a folder for the bundle")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST_NAME).is_file():
        raise OutputError(
            f"{out} is a folder that holds other files (no {MANIFEST_NAME}); the bundle "
            "replaces its folder as a whole, so choose an empty or new folder"
        )


def _write_tree(out: Path, files: Iterable[tuple[str, bytes]]) -> None:
    """Write every file into a temp folder beside ``out``, then swap it in with renames."""
    parent = out.absolute().parent
    tmp = parent / f".{out.name}.tmp.{os.getpid()}"
    old = parent / f".{out.name}.old.{os.getpid()}"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for name, data in files:
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        # One sync for the whole tree before it becomes visible: an fsync per file costs a
        # journal commit each (32 s for SciFact's 5,256 files on this machine; one sync, 1 s).
        os.sync()
        if out.exists():
            os.replace(out, old)  # two renames: a reader sees the old bundle or the new one
        os.replace(tmp, out)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not out.exists():
            os.replace(old, out)
        raise OutputError(
            f"cannot write the bundle {out}: {exc.strerror or exc}; the previous bundle (if "
            "any) is unchanged. Check that the folder is writable and the disk has space."
        ) from None
    fsync_dir(parent)
    shutil.rmtree(old, ignore_errors=True)
