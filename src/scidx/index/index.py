"""The :class:`Index` facade, and :func:`load`, :func:`load_bytes`, :func:`load_resource`.

Opening costs constant time: the header and layout are validated by
:func:`scidx.index.format.read_header`, then :func:`scidx.index.opening.build_corpus` checks
every array the runtime needs against the others using the header alone plus a handful of
single-element reads. ``verify=True`` additionally runs :func:`scidx.index.verify.verify_all`
(every checksum, string table and posting; reads the whole file). Searching is
:class:`scidx.index.search.Searcher`'s; ``Index`` validates the arguments and keeps the file.

Files are memory-mapped read-only (works on read-only file systems). A reader keeps its own
mapping, so an index replaced on disk by a new pack (written to a temp file, then renamed) does
not affect an open :class:`Index`; re-``load`` to see the new one.

Runtime module: numpy, msgpack, xxhash and the stdlib only.
"""

from __future__ import annotations

import functools
import mmap
import os
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np

from scidx.errors import QueryError
from scidx.index.corpus import Corpus
from scidx.index.format import Header, read_header
from scidx.index.hits import DEFAULT_SNIPPET_CHARS, Hit
from scidx.index.opening import MappedFile, build_corpus, close_quietly, corrupt, open_file
from scidx.index.params import (
    BatchSearchOptions,
    FilterOptions,
    RankBatchOptions,
    RankOptions,
    SearchOptions,
    SearchParams,
    check_options,
)
from scidx.index.safety import parse_meta_json
from scidx.index.search import Searcher
from scidx.index.vectors import VectorStore
from scidx.index.verify import verify_all

if TYPE_CHECKING:
    import sys

    from scidx.index.retrieval import Match, RetrievalRequest

    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:  # annotations only: typing_extensions is never needed at run time
        from typing_extensions import Unpack


__all__ = ["Hit", "Index", "load", "load_bytes", "load_resource"]

# The options each method takes (checked at run time too: an unknown keyword is a TypeError).
_FILTERS = FilterOptions.__optional_keys__
_SEARCH = SearchOptions.__optional_keys__
_SEARCH_BATCH = BatchSearchOptions.__optional_keys__
_RANK = RankOptions.__optional_keys__
_RANK_BATCH = RankBatchOptions.__optional_keys__


class Index:
    """A loaded, read-only ``.scidx`` index. Create it with :func:`load` (or its siblings).

    Safe to share between threads: searches keep no shared mutable state beyond small caches
    that are guarded by a lock. Use it as a context manager, or call :meth:`close`.

    Example:
        >>> with scidx.load("docs.scidx") as idx:  # doctest: +SKIP
        ...     for hit in idx.search("configure CORS", k=3):
        ...         print(hit.score, hit.source, hit.anchor, hit.snippet)
    """

    def __init__(
        self,
        buf: Any,
        header: Header,
        *,
        verify: bool = False,
        mm: mmap.mmap | None = None,
        query_embedder: Any | None = None,
        embedder_options: Mapping[str, Any] | None = None,
        rescore: int | None = None,
    ) -> None:
        self._mm = mm
        self._buf: Any = buf
        self._header = header
        self._lock = allocate_lock()
        self._ids: dict[str, int] | None = None
        self._file: MappedFile | None = None
        corpus = build_corpus(buf, header, rescore=rescore)
        if verify:
            verify_all(buf, header, corpus)
        self._corpus: Corpus | None = corpus
        self._searcher: Searcher | None = Searcher(
            corpus, query_embedder=query_embedder, embedder_options=embedder_options
        )
        self._n = corpus.n

    # -- metadata -----------------------------------------------------------------------------

    @property
    def header(self) -> Header:
        """The validated file header (format version, generator, build time, arrays)."""
        return self._header

    @property
    def meta(self) -> dict[str, Any]:
        """The header's ``meta`` map (provider stamp, bm25 settings, counts...)."""
        return self._header.meta

    @property
    def stamp(self) -> dict[str, Any]:
        """The embedding provider stamp: ``provider``, ``model``, ``dimensions``, ..."""
        return dict(self._header.meta.get("provider") or {})

    @property
    def source(self) -> str:
        """The file path the index was loaded from, or a description of the buffer."""
        return self._header.source

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._searcher is None

    def __len__(self) -> int:
        """The number of chunks."""
        return self._n

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self._n} chunks"
        return f"<scidx.Index {self._header.source!r} {state}>"

    def _live(self) -> Searcher:
        searcher = self._searcher
        if searcher is None:
            raise QueryError(f"{self._header.source}: the index is closed; load it again")
        file = self._file
        if file is not None:
            file.check(self._header.source)
        return searcher

    def _watch_file(self, file: MappedFile) -> None:
        """Keep ``file`` (the mapped file) to notice in-place overwrites before reading pages.

        Searches check it, and so do the lazy field reads of their hits (which may outlive the
        index: the descriptor is closed with the last holder of ``file``).
        """
        self._file = file
        if self._searcher is not None:
            self._searcher.renderer.check = functools.partial(file.check, self._header.source)

    @property
    def vectors(self) -> np.ndarray:
        """The ``N × D`` float32 vector matrix.

        A read-only view over the file for a ``float32`` index; for an ``int8`` or ``binary``
        index, a decoded copy (``N * D * 4`` bytes; searches never make one). The stored form is
        :attr:`vector_store`.
        """
        return self.vector_store.decode_all()

    @property
    def vector_store(self) -> VectorStore:
        """The stored vectors in their encoding (``float32``, ``int8`` or ``binary``)."""
        store = self._live().corpus.store
        assert store is not None  # always set by load
        return store

    # -- search --------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        on_stage: Callable[[str], None] | None = None,
        **options: Unpack[SearchOptions],
    ) -> list[Hit]:
        """Search the index.

        Args:
            query: The question or keywords. An empty (or all-whitespace) query returns ``[]``;
                so does a query of only stop-words in ``keyword`` mode.
            k: Maximum number of hits (> 0); fewer come back when fewer chunks match.
            mode: ``"hybrid"`` (default: BM25 and vectors fused), ``"keyword"`` (BM25 only; no
                query embedding is made) or ``"vector"`` (cosine similarity only).
            alpha: Hybrid weight of the vector leg in [0, 1]; default the index's own (tuned
                per provider, ``meta.fusion``; see :mod:`scidx.index.search`).
            min_score: Drop hits scoring below this (the mode's score scale).
            source: Keep chunks whose source path matches this glob (``*``, ``?``, ``[``;
                ``fnmatch`` rules, ``*`` crosses ``/``) or, without glob characters, starts
                with this prefix.
            heading: Keep chunks whose title or heading path contains this text (case-folded).
            metadata: Keep chunks whose front matter has all these ``field: value`` pairs.
            version: A versioned index's docs version to search (``"*"``: all); default the
                one the site publishes at its root (``meta.versions.default``). Pages with no
                version are kept. See :mod:`scidx.index.versions`.
            snippet_chars: Maximum snippet length (default 240).
            query_vector: A precomputed query embedding (same model as the index); used
                instead of embedding ``query`` for the vector leg.
            on_stage: Called with ``"embedding"``, ``"retrieval"``, ``"fusion"``, ``"hits"`` as
                each stage starts (for timing).
            group: ``"section"`` (default: the parts of one section collapse into the best
                one, so a section appears once), ``"page"`` (one hit per page, its best
                sections in ``Hit.sections``) or ``None`` (raw chunks).
            mmr: Maximal-marginal-relevance weight in [0, 1] (``None``: off); see
                :func:`scidx.index.grouping.mmr_order`.
            rerank: A :class:`~scidx.index.rerank.Reranker` rescoring the best
                ``rerank_top`` candidates (default 20) before ``mmr`` and ``group``.
            rerank_top: Candidates the reranker sees.
            fuzzy: Typo tolerance (default ``True``): a word of five letters or more that the
                index does not know also matches its known spellings within one edit (two
                from nine letters), scored below an exact match; both legs search the
                corrected words. Stop words and short words are never corrected. What was
                corrected is ``Hit.corrections``. See :mod:`scidx.index.expand`.
            prefix: Search as you type (default ``False``): when ``query`` does not end in a
                space or punctuation, its last word also matches the two most frequent
                terms it starts, at half weight (the word as typed first). For a search
                box sending each keystroke; a finished question does not need it.

        Returns:
            Hits ordered by score descending, then by chunk id (with ``mmr``, in MMR order).

        Raises:
            QueryError: Bad ``k``, ``mode``, ``alpha``, filter or vector (NaN, wrong length),
                a version the index does not have, or the index is closed.
            QueryEmbeddingError: Vector or hybrid search needs a query embedding this process
                cannot make (the message suggests ``mode="keyword"``).
            IndexFormatError: Corruption met while reading the lazily checked arrays.

        Example:
            >>> idx = scidx.load("docs.scidx")  # doctest: +SKIP
            >>> hits = idx.search("how do I configure CORS", k=5, mode="keyword")  # doctest: +SKIP
            >>> hits[0].to_dict()["headingPath"]  # doctest: +SKIP
            ['Tutorial', 'CORS']
        """
        check_options("search", options, _SEARCH)
        params = SearchParams.of(options, group="section")
        return self._live().search(query, params, on_stage)

    def search_batch(
        self, queries: Sequence[str], **options: Unpack[BatchSearchOptions]
    ) -> list[list[Hit]]:
        """Search for many queries with the same settings: one hit list per query, in order.

        The same results as calling :meth:`search` for each query; the settings are validated
        once for the whole batch. The options are :meth:`search`'s except ``query_vector``
        (``group`` is ``"section"`` by default, like it; ``None`` for raw chunks, as a ranking
        library returns them).

        Args:
            queries: The queries (each as for :meth:`search`).
            **options: As for :meth:`search`.

        Returns:
            For each query, its hits ordered by score descending, then by chunk id.

        Raises:
            QueryError: As for :meth:`search`, or ``queries`` is a single string.
            QueryEmbeddingError: As for :meth:`search`.

        Example:
            >>> [len(h) for h in idx.search_batch(["cors", "cache"], k=3)]  # doctest: +SKIP
            [3, 3]
        """
        if isinstance(queries, str):
            raise QueryError("search_batch takes a list of queries, not one string; use search")
        check_options("search_batch", options, _SEARCH_BATCH)
        params = SearchParams.of(options, group="section")
        return self._live().search_batch(queries, params)

    def search_with(
        self,
        query: str,
        params: SearchParams,
        *,
        on_stage: Callable[[str], None] | None = None,
    ) -> list[Hit]:
        """:meth:`search` with a prepared :class:`~scidx.index.params.SearchParams`.

        The parameters were validated when the object was made, so a caller repeating the
        same settings (a retriever, a server) builds them once.

        Raises:
            QueryError: A bad query or query vector, or the index is closed.
            QueryEmbeddingError: As for :meth:`search`.
        """
        return self._live().search(query, params, on_stage)

    def rank(self, query: str, **options: Unpack[RankOptions]) -> list[tuple[str, float]]:
        """The same ranking as :meth:`search`, as ``(chunk id, score)`` pairs only.

        For callers that need no text (evaluation, re-ranking, large ``k``): it skips building
        :class:`Hit` objects. Options (all but ``snippet_chars``), errors and order are those
        of :meth:`search`, except that ``group`` defaults to ``None`` (raw chunks, what
        evaluation measures).

        Example:
            >>> idx.rank("configure CORS", k=3, mode="keyword")  # doctest: +SKIP
            [('tutorial/cors.md:cors:0', 7.31), ...]
        """
        check_options("rank", options, _RANK)
        return self._live().rank(query, SearchParams.of(options))

    def rank_batch(
        self, queries: Sequence[str], **options: Unpack[RankBatchOptions]
    ) -> list[list[tuple[str, float]]]:
        """:meth:`rank` for many queries with the same settings: one list of pairs per query.

        What a ranking library's batch call returns (chunk ids and scores, no :class:`Hit`);
        the settings (:meth:`rank`'s, but no ``query_vector``) are validated once for the
        whole batch.

        Raises:
            QueryError: As for :meth:`rank`, or ``queries`` is a single string.
            QueryEmbeddingError: As for :meth:`rank`.

        Example:
            >>> idx.rank_batch(["cors", "cache"], k=1, mode="keyword")  # doctest: +SKIP
            [[('tutorial/cors.md:cors:0', 7.31)], [('guide/cache.md:cache:0', 5.02)]]
        """
        if isinstance(queries, str):
            raise QueryError("rank_batch takes a list of queries, not one string; use rank")
        check_options("rank_batch", options, _RANK_BATCH)
        return self._live().rank_batch(queries, SearchParams.of(options))

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        """Answer a :class:`~scidx.index.retrieval.RetrievalRequest`: ``Index`` is a ``Retriever``.

        The same as ``scidx.index.retrieval.IndexRetriever(self).retrieve(request)``; use that
        adapter to set a retriever name, hybrid weight or snippet length.
        """
        # Imported here: scidx.index.retrieval adapts an Index (it imports this module).
        from scidx.index.retrieval import IndexRetriever

        return IndexRetriever(self).retrieve(request)

    def search_vector(
        self,
        vector: Any,
        k: int = 10,
        *,
        query: str | None = None,
        snippet_chars: int = DEFAULT_SNIPPET_CHARS,
        **options: Unpack[FilterOptions],
    ) -> list[Hit]:
        """Rank chunks by cosine similarity to a caller-embedded query ``vector``.

        Args:
            vector: ``D`` finite numbers (normalised here), from the index's embedding model.
            k: Maximum number of hits (> 0).
            query: Optional query text, used only to pick snippets.
            snippet_chars: As for :meth:`search`.
            **options: ``min_score`` (drop hits with a cosine below this), ``source``,
                ``heading``, ``metadata`` and ``group`` as for :meth:`search`, but raw chunks
                (``group=None``) by default.

        Returns:
            Hits ordered by cosine descending, then by chunk id.

        Raises:
            QueryError: Bad ``k``, or a vector with NaN/inf, zero norm or the wrong length.
        """
        if vector is None:
            raise QueryError("search_vector needs a vector")
        check_options("search_vector", options, _FILTERS)
        settings: dict[str, Any] = {
            **options,
            "k": k,
            "mode": "vector",
            "snippet_chars": snippet_chars,
            "query_vector": vector,
        }
        return self._live().search(query, SearchParams.of(settings))

    def embed_query(self, query: str) -> np.ndarray:
        """Embed ``query`` with the index's provider (as vector search would).

        Raises:
            QueryEmbeddingError: As for :meth:`search`.
        """
        return self._live().encoder.embed(query)

    # -- chunk access ---------------------------------------------------------------------------

    def chunk(self, i: int, *, snippet_chars: int = DEFAULT_SNIPPET_CHARS) -> Hit:
        """Return chunk row ``i`` as a :class:`Hit` with score 0.0 and a leading snippet.

        Raises:
            IndexError: ``i`` is out of range (negative indices count from the end).
        """
        searcher = self._live()
        i = int(i)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(f"chunk index {i} is out of range for {self._n} chunks")
        return searcher.renderer.hit(i, 0.0, [], snippet_chars)

    def get(self, chunk_id: str) -> Hit | None:
        """Return the chunk with id ``chunk_id``, or ``None``.

        The first call builds an id → row map (one pass over ``chunk.id``); later calls are
        dictionary lookups.
        """
        searcher = self._live()
        with self._lock:
            if self._ids is None:
                table = searcher.corpus.chunk_id
                self._ids = {table[i]: i for i in range(len(table))}
            row = self._ids.get(chunk_id)
        return None if row is None else self.chunk(row)

    def source_metadata(self) -> dict[str, dict[str, Any]]:
        """Each page's front matter by source path (what the ``metadata=`` filter compares).

        Reads the whole ``source.meta`` table, one small JSON map per page; callers that ask
        often should keep the result.

        Raises:
            CorruptIndexError: A row is not a JSON map.
        """
        corpus = self._live().corpus
        out: dict[str, dict[str, Any]] = {}
        for i in range(len(corpus.source_path)):
            raw = corpus.source_meta[i]
            try:
                value = parse_meta_json(raw) if raw else {}
            except ValueError:
                raise corrupt(corpus.source, f"`source.meta` row {i} is not JSON") from None
            out[corpus.source_path[i]] = value if isinstance(value, dict) else {}
        return out

    # -- lifetime -------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the memory map. Searching a closed index raises :class:`QueryError`.

        Idempotent. A search still running in another thread finishes safely: the mapping is
        only unmapped once no array view over it remains.
        """
        with self._lock:
            self._searcher = None
            self._corpus = None
            self._ids = None
            self._buf = None
            mm, self._mm = self._mm, None
            # Not unwatched here: hits that outlive the index still check the file before
            # reading it; the descriptor closes when the last of them is gone.
            self._file = None
        if mm is not None:
            # Views may still be exported (a running search, or a caller holding `vectors`);
            # the mapping is then released when the last of them is garbage-collected.
            close_quietly(mm)

    def __enter__(self) -> Index:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def load(
    path: str | os.PathLike[str],
    *,
    verify: bool = False,
    in_memory: bool = False,
    query_embedder: Any | None = None,
    embedder_options: Mapping[str, Any] | None = None,
    rescore: int | None = None,
    model_dir: str | os.PathLike[str] | None = None,
) -> Index:
    """Memory-map (or read) and validate the index at ``path``.

    A memory-mapped index reads the file's pages on demand, so the file must not be overwritten
    *in place* while it is open (``cp new.scidx docs.scidx`` truncates the mapped inode; the
    next access to a lost page kills the process with SIGBUS). ``pack-docs`` never does that:
    it writes a temporary file and renames it over the old one, which leaves the open mapping
    intact. An open index notices an in-place change where it can (the file's size or
    modification time differ from when it was loaded, checked with ``fstat`` before each
    search) and raises :class:`~scidx.errors.CorruptIndexError` instead of reading it. Hosts
    whose deploy tools overwrite files in place should pass ``in_memory=True``.

    Args:
        path: The ``.scidx`` file.
        verify: Also check every checksum, string table, posting and vector norm (reads the
            whole file).
        in_memory: Read the whole file into memory instead of mapping it: the index then never
            depends on the file again (no SIGBUS whatever happens to it), at the cost of
            holding the file in RAM.
        query_embedder: An embedder for vector/hybrid queries; must match the index's stamp.
            Default: the index's own provider (``hashing`` in process, others imported lazily).
        embedder_options: Keyword arguments for a lazily created provider's query embedder.
        rescore: ``binary`` indexes only: rows rescored with the int8 codes per vector query
            (at least ``k``; default :data:`scidx.index.vectors.DEFAULT_RESCORE`). Larger is
            closer to exact and slower.
        model_dir: Where a ``local``-provider index's model is (its folder, or a folder holding
            it by name); default ``$SCIDX_MODEL_DIR``, then the Hugging Face cache. Nothing is
            loaded until the first vector or hybrid query.

    Returns:
        The open :class:`Index`.

    Raises:
        OSError: The file cannot be opened.
        IndexFormatError: ``path`` is not a regular file (a FIFO, a device, a folder).
        BadMagicError: Not a ``.scidx`` file.
        UnsupportedFormatVersionError: Written by an incompatible format or tokenizer version.
        CorruptIndexError: Truncated or inconsistent (``ChecksumMismatchError`` with ``verify``).
        QueryEmbeddingError: ``query_embedder`` does not match the index's stamp.

    Example:
        >>> import scidx
        >>> idx = scidx.load("docs.scidx")  # doctest: +SKIP
        >>> [h.id for h in idx.search("install", k=2, mode="keyword")]  # doctest: +SKIP
        ['install.md:install:0', 'install.md:linux:0']
    """
    source = str(os.fspath(path))
    if model_dir is not None:
        embedder_options = {**(embedder_options or {}), "model_dir": os.fspath(model_dir)}
    opened = open_file(source, in_memory=in_memory)
    if isinstance(opened, bytes):
        return load_bytes(
            opened,
            verify=verify,
            source=source,
            query_embedder=query_embedder,
            embedder_options=embedder_options,
            rescore=rescore,
        )
    try:
        header = read_header(opened.mm, source=source, file_size=opened.size)
        index = Index(
            opened.mm,
            header,
            verify=verify,
            mm=opened.mm,
            query_embedder=query_embedder,
            embedder_options=embedder_options,
            rescore=rescore,
        )
    except BaseException:
        opened.release()
        raise
    index._watch_file(opened)
    return index


def load_bytes(
    data: bytes | bytearray | memoryview,
    *,
    verify: bool = False,
    source: str = "<buffer>",
    query_embedder: Any | None = None,
    embedder_options: Mapping[str, Any] | None = None,
    rescore: int | None = None,
) -> Index:
    """Open an index held in memory (no copy; do not modify a mutable buffer afterwards).

    Args:
        data: The whole ``.scidx`` file contents.
        verify: As for :func:`load`.
        source: A name for error messages.
        query_embedder: As for :func:`load`.
        embedder_options: As for :func:`load`.
        rescore: As for :func:`load`.

    Returns:
        The open :class:`Index`.

    Raises:
        IndexFormatError: As for :func:`load`.
    """
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    view = view.toreadonly()
    header = read_header(view, source=source)
    return Index(
        view,
        header,
        verify=verify,
        query_embedder=query_embedder,
        embedder_options=embedder_options,
        rescore=rescore,
    )


def load_resource(
    package: str,
    resource: str,
    *,
    verify: bool = False,
    query_embedder: Any | None = None,
    embedder_options: Mapping[str, Any] | None = None,
    rescore: int | None = None,
) -> Index:
    """Open an index shipped as package data (``importlib.resources``).

    A resource that is a real file is memory-mapped; one inside a zip import or another loader is
    read into memory.

    Args:
        package: The importable package holding the resource, e.g. ``"mydocs"``.
        resource: The resource path inside it, e.g. ``"data/docs.scidx"``.
        verify: As for :func:`load`.
        query_embedder: As for :func:`load`.
        embedder_options: As for :func:`load`.
        rescore: As for :func:`load`.

    Returns:
        The open :class:`Index`.

    Raises:
        ModuleNotFoundError: ``package`` cannot be imported.
        FileNotFoundError: The resource does not exist.
        IndexFormatError: As for :func:`load`.
    """
    # Imported here: a process that loads from a path never pays for importlib.resources.
    from importlib import resources
    from pathlib import Path

    ref = resources.files(package)
    for part in resource.replace("\\", "/").split("/"):
        if part:
            ref = ref.joinpath(part)
    if isinstance(ref, Path) and ref.is_file():
        return load(
            ref,
            verify=verify,
            query_embedder=query_embedder,
            embedder_options=embedder_options,
            rescore=rescore,
        )
    if not ref.is_file():
        raise FileNotFoundError(f"package {package!r} has no resource {resource!r}")
    return load_bytes(
        ref.read_bytes(),
        verify=verify,
        source=f"{package}:{resource}",
        query_embedder=query_embedder,
        embedder_options=embedder_options,
        rescore=rescore,
    )
