"""Result filters: source glob/prefix, heading substring, front-matter metadata, docs version.

:class:`Filters` is the validated value (part of :class:`~scidx.index.params.SearchParams`);
:class:`FilterMasks` applies it to one corpus. Filters restrict the candidates *before* the
top-k cut, so ``k`` filtered hits come back when that many exist: source and metadata filters
become a per-chunk mask (one pass over the sources, cached per filter), the heading filter is
checked lazily on the best candidates only. The version filter (:mod:`scidx.index.versions`)
is part of the source mask; on a versioned index it is on even when no filter is given (the
default version), which :meth:`FilterMasks.active` tells the searcher.

Runtime module: numpy and the stdlib only.
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock itself, without importing threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError, QueryError
from scidx.index.bm25 import top_k
from scidx.index.safety import parse_meta_json

if TYPE_CHECKING:
    from scidx.index.corpus import Corpus

__all__ = ["Filters", "FilterMasks"]

_Rows = npt.NDArray[np.int64]
_Scores = npt.NDArray[np.float32]
_REBUILD = "The file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."
_MAX_MASKS = 64  # bounded: filters are usually a handful


def _meta_str(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class Filters:
    """Validated filters; build with :meth:`make`.

    Attributes:
        source: Source glob (``*``, ``?``, ``[``; ``*`` crosses ``/``) or path prefix.
        heading: Substring of the title or heading path (compared case-folded).
        metadata: Front-matter ``field: value`` pairs, values as strings.
        version: The docs version to search (``"*"``: all); None: the index's default.
        key: A hashable identity of the source, metadata, version and language parts (the
            mask cache key).
        language: Pages in this language only (None: every language).
    """

    source: str | None = None
    heading: str | None = None
    metadata: Mapping[str, str] | None = None
    key: tuple[object, ...] = (None, (), None)
    version: str | None = None
    #: Pages in this language only (a primary subtag matches its regions, issue 42).
    language: str | None = None

    @classmethod
    def make(
        cls,
        source: str | None,
        heading: str | None,
        metadata: Mapping[str, Any] | None,
        version: str | None = None,
    ) -> Filters:
        """Validate and normalise the filters.

        Raises:
            QueryError: An empty or non-string source/heading/version, or metadata that is
                not a mapping of field names.
        """
        if version is not None and (not isinstance(version, str) or not version):
            raise QueryError(
                f"the version must be a non-empty version name or '*', got {version!r}"
            )
        if source is not None and (not isinstance(source, str) or not source):
            raise QueryError(
                f"the source filter must be a non-empty glob or path prefix: {source!r}"
            )
        if heading is not None and (not isinstance(heading, str) or not heading):
            raise QueryError(f"the heading filter must be a non-empty string, got {heading!r}")
        items: tuple[tuple[str, str], ...] = ()
        if metadata is not None:
            if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
                raise QueryError(
                    f"the metadata filter must map front-matter field names to values: {metadata!r}"
                )
            items = tuple(sorted((k, _meta_str(v)) for k, v in metadata.items()))
        if source is None and heading is None and not items and version is None:
            return _NONE
        key = (source, items, version)
        return cls(source, heading, dict(items) if items else None, key, version)

    def with_language(self, language: str | None) -> Filters:
        """These filters keeping only pages in ``language`` (None: unchanged; issue 42).

        Raises:
            QueryError: ``language`` is not a language tag.
        """
        if language is None:
            return self
        from scidx.index.languages import LANGUAGE_TAG

        tag = language.strip().replace("_", "-").lower() if isinstance(language, str) else ""
        if len(tag) > 35 or not LANGUAGE_TAG.fullmatch(tag):
            raise QueryError(
                f"the language filter must be a language tag such as 'en' or 'zh', got {language!r}"
            )
        key = (*self.key, ("language", tag))
        return Filters(self.source, self.heading, self.metadata, key, self.version, tag)

    @property
    def active(self) -> bool:
        """Whether any filter is set."""
        return (
            self.source is not None
            or self.heading is not None
            or bool(self.metadata)
            or self.language is not None
        )


_NONE = Filters()


def _same_language(page: str, asked: str) -> bool:
    """Whether a page in ``page`` is in ``asked``: equal, or ``asked`` is its primary subtag."""
    return page == asked or page.startswith(asked + "-")


class FilterMasks:
    """Applies :class:`Filters` to one corpus; safe to share between threads."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._lock = allocate_lock()
        self._masks: dict[tuple[object, ...], npt.NDArray[np.bool_]] = {}
        self._sources_checked = False

    def active(self, filters: Filters) -> bool:
        """Whether ``filters`` restrict this corpus (a versioned index's default version does).

        Raises:
            QueryError: The version is none of the index's.
        """
        return filters.active or self._versions(filters) is not None

    def _versions(self, filters: Filters) -> npt.NDArray[np.bool_] | None:
        table = self.corpus.versions
        return None if table is None else table.keep(filters.version)

    def source_mask(self, filters: Filters) -> npt.NDArray[np.bool_] | None:
        """A boolean per chunk for the source, metadata, language and version filters, or None."""
        versions = self._versions(filters)
        if (
            filters.source is None
            and not filters.metadata
            and filters.language is None
            and versions is None
        ):
            return None
        with self._lock:
            cached = self._masks.get(filters.key)
        if cached is not None:
            return cached
        c = self.corpus
        if filters.source is None and not filters.metadata and filters.language is None:
            mask = np.ones(len(c.source_path), dtype=bool)
        else:
            mask = np.fromiter(
                (self._source_ok(i, filters) for i in range(len(c.source_path))),
                dtype=bool,
                count=len(c.source_path),
            )
        if versions is not None:
            mask &= versions
        chunk_mask = mask[self._chunk_sources()]
        with self._lock:
            if len(self._masks) >= _MAX_MASKS:
                self._masks.clear()
            self._masks[filters.key] = chunk_mask
        return chunk_mask

    def _source_ok(self, i: int, filters: Filters) -> bool:
        pattern = filters.source
        if pattern is not None:
            path = self.corpus.source_path[i]
            if any(ch in pattern for ch in "*?["):
                import fnmatch  # only glob filters need it; not imported at start-up

                if not fnmatch.fnmatchcase(path, pattern):
                    return False
            elif not path.startswith(pattern):
                return False
        if filters.language is not None and not _same_language(
            self.corpus.languages.of_source(i), filters.language
        ):
            return False
        if filters.metadata:
            meta = self._source_meta(i)
            for name, want in filters.metadata.items():
                have = meta.get(name)
                if have is None or _meta_str(have) != _meta_str(want):
                    return False
        return True

    def _chunk_sources(self) -> npt.NDArray[np.uint32]:
        if not self._sources_checked:
            # One vectorised pass the first time a filter needs it, not at load.
            self.corpus.check_sources()
            self._sources_checked = True
        return self.corpus.chunk_source

    def _source_meta(self, i: int) -> dict[str, Any]:
        raw = self.corpus.source_meta[i]
        try:
            value = parse_meta_json(raw) if raw else {}
        except ValueError:  # includes nesting too deep for the decoder (no RecursionError)
            raise CorruptIndexError(
                f"{self.corpus.source}: `source.meta` row {i} is not JSON. {_REBUILD}"
            ) from None
        return value if isinstance(value, dict) else {}

    def heading_ok(self, row: int, needle: str) -> bool:
        """Whether chunk ``row``'s title or heading path contains ``needle`` (case-folded)."""
        c = self.corpus
        heading = c.chunk_heading[row].replace("\x1f", "\n")
        return needle in f"{c.title(row)}\n{heading}".casefold()

    def apply(
        self,
        rows: _Rows,
        scores: _Scores,
        k: int,
        min_score: float | None,
        filters: Filters,
    ) -> tuple[_Rows, _Scores]:
        """The best ``k`` of ``(rows, scores)`` that pass ``min_score`` and ``filters``."""
        if min_score is not None:
            keep = scores >= np.float32(min_score)
            rows, scores = rows[keep], scores[keep]
        mask = self.source_mask(filters)
        if mask is not None:
            keep = mask[rows]
            rows, scores = rows[keep], scores[keep]
        if filters.heading is None:
            return top_k(rows, scores, k)
        needle = filters.heading.casefold()
        # Heading text is per chunk, so it is checked lazily on the best candidates, widening
        # the cut until k pass (no per-chunk work for the rest of the index).
        want = max(k * 4, 32)
        while True:
            r, s = top_k(rows, scores, want)
            ok = np.fromiter(
                (self.heading_ok(int(x), needle) for x in r), dtype=bool, count=r.shape[0]
            )
            if int(ok.sum()) >= k or r.shape[0] >= rows.shape[0]:
                return r[ok][:k], s[ok][:k]
            want *= 4
