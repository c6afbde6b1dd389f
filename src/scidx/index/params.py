"""The search parameters: one validated object shared by ``Index``, the searcher and retrievers.

:class:`SearchParams` is checked once, when it is made; everything below it (the searcher's
ranking, the filters, hit rendering) trusts it. ``Index.search``/``Index.rank`` build one from
their keyword arguments, :class:`~scidx.index.retrieval.RetrievalRequest` *is* one (plus the
question and a progress callback), and ``Index.search_batch`` validates one for a whole batch.

The keyword form of the same settings is declared once too, as :class:`SearchOptions` (a
``TypedDict``), so that ``Index.search(query, **options)`` shows every option to IDEs and mypy
(``Unpack``); the methods that take fewer take a narrower ``TypedDict`` made of the same parts.

Runtime module: numpy and the stdlib only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypedDict

import numpy as np

from scidx.errors import QueryError
from scidx.fusion import DEFAULT_FUSION
from scidx.index.filters import Filters
from scidx.index.grouping import GROUPS
from scidx.index.hits import DEFAULT_SNIPPET_CHARS
from scidx.index.rerank import Reranker

__all__ = [
    "DEFAULT_ALPHA",
    "MODES",
    "BatchSearchOptions",
    "FilterOptions",
    "RankBatchOptions",
    "RankOptions",
    "SearchOptions",
    "SearchParams",
    "check_options",
]

MODES = ("hybrid", "keyword", "vector")
#: The hybrid weight of indexes whose header records no fusion settings (the hashing
#: provider's, tuned on SciFact train). Each index records its provider's own (``meta.fusion``).
DEFAULT_ALPHA = float(DEFAULT_FUSION["alpha"])


def _real(value: object) -> float | None:
    """``value`` as a float if it is a real number (not a bool), else None.

    An int too large for a float (``10**400``) is None, not an ``OverflowError``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class FilterOptions(TypedDict, total=False):
    """Which chunks may come back, grouped how, and the snippet length (every search takes these).

    Each option means what the :class:`SearchParams` field of the same name means.
    """

    min_score: float | None
    source: str | None
    heading: str | None
    metadata: Mapping[str, Any] | None
    group: str | None
    version: str | None
    language: str | None


class RankBatchOptions(FilterOptions, total=False):
    """The options of a ranking by query text: ``Index.rank_batch``."""

    k: int
    mode: str
    alpha: float | None
    mmr: float | None
    rerank: Any | None
    rerank_top: int | None
    fuzzy: bool
    prefix: bool


class RankOptions(RankBatchOptions, total=False):
    """``Index.rank``'s options: a ranking that may bring its own query vector."""

    query_vector: Any | None


class BatchSearchOptions(RankBatchOptions, total=False):
    """``Index.search_batch``'s options: a ranking rendered as hits with snippets."""

    snippet_chars: int


class SearchOptions(BatchSearchOptions, RankOptions, total=False):
    """Every search option, as ``Index.search`` takes them (``Unpack[SearchOptions]``)."""


@dataclass(frozen=True, kw_only=True)
class SearchParams:
    """How to search: result count, mode, fusion weight, cut-off, filters, snippet length.

    Every field is validated when the object is made, so a bad value raises
    :class:`~scidx.errors.QueryError` before any work is done, at whichever entry point.

    Attributes:
        k: Maximum number of hits (> 0).
        mode: ``"hybrid"`` (default), ``"keyword"`` or ``"vector"``.
        alpha: Hybrid weight of the vector leg in [0, 1]; ``None`` (default): the index's own,
            tuned per provider and recorded in its header (see :mod:`scidx.index.search`).
        min_score: Drop hits scoring below this (the mode's score scale); ``None``: no cut.
        source: Keep chunks whose source path matches this glob or, without glob characters,
            starts with this prefix.
        heading: Keep chunks whose title or heading path contains this text (case-folded).
        metadata: Keep chunks whose front matter has all these ``field: value`` pairs.
        version: On a versioned index, keep the pages of this docs version (and the pages
            that have none); ``"*"``: every version; ``None`` (default): the version the site
            publishes at its root (``meta.versions.default``). See :mod:`scidx.index.versions`.
        snippet_chars: Maximum snippet length of each hit (> 0).
        query_vector: A precomputed query embedding (checked against the index's dimensions
            when it is used), or ``None`` to embed the query text.
        group: ``"section"`` (the parts of one section collapse into the best one),
            ``"page"`` (one hit per page, its best sections as ``Hit.sections``) or ``None``
            (raw chunks; what evaluation measures). See :mod:`scidx.index.grouping`.
        mmr: Maximal-marginal-relevance weight in [0, 1]: re-rank the best candidates so
            that each next hit is relevant but unlike those before it (1 keeps the ranking);
            ``None``: off.
        rerank: A :class:`~scidx.index.rerank.Reranker` that rescores the best ``rerank_top``
            candidates before ``mmr`` and ``group`` (see :mod:`scidx.index.rerank`); ``None``:
            off, at no cost.
        rerank_top: Candidates the reranker sees (> 0; at least ``k`` are always taken);
            ``None``: :data:`~scidx.index.rerank.DEFAULT_RERANK_TOP`.
        fuzzy: Typo tolerance: a word the index does not know (five letters or more) also
            matches its known near spellings, scored below an exact match (default on; see
            :mod:`scidx.index.expand`).
        prefix: Search as you type: when the query does not end in a space or punctuation,
            its last word also matches the most frequent terms it starts (default off:
            what a search box sends key by key, not a finished question).
    """

    k: int = 10
    mode: str = "hybrid"
    alpha: float | None = None
    min_score: float | None = None
    source: str | None = None
    heading: str | None = None
    metadata: Mapping[str, Any] | None = None
    version: str | None = None
    snippet_chars: int = DEFAULT_SNIPPET_CHARS
    query_vector: Any | None = field(default=None, repr=False, compare=False)
    group: str | None = None
    mmr: float | None = None
    rerank: Reranker | None = field(default=None, repr=False, compare=False)
    rerank_top: int | None = None
    fuzzy: bool = True
    prefix: bool = False
    #: Keep pages in this language only and tokenise the query in it (issue 42).
    language: str | None = None

    def __post_init__(self) -> None:
        """Validate every field once.

        Raises:
            QueryError: An unknown mode, a bad ``k``/``alpha``/``min_score``/``snippet_chars``,
                or a malformed filter.
        """
        self._check()

    def _check(self) -> None:
        mode, k, alpha, min_score = self.mode, self.k, self.alpha, self.min_score
        if mode not in MODES:
            raise QueryError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
            raise QueryError(f"k must be a positive integer, got {k!r}")
        if alpha is not None:  # None: the provider's default fusion weight
            weight = _real(alpha)
            if weight is None or not 0.0 <= weight <= 1.0:
                raise QueryError(f"alpha must be a number in [0, 1], got {_show(alpha)}")
        if min_score is not None:
            cut = _real(min_score)
            if cut is None or math.isnan(cut):
                raise QueryError(f"min_score must be a number, got {_show(min_score)}")
        chars = self.snippet_chars
        if isinstance(chars, bool) or not isinstance(chars, int) or chars <= 0:
            raise QueryError(f"snippet_chars must be a positive integer, got {chars!r}")
        if self.group is not None and self.group not in GROUPS:
            raise QueryError(
                f"unknown group {self.group!r}; use {', '.join(map(repr, GROUPS))} or None"
            )
        mmr = self.mmr
        if mmr is not None and (
            isinstance(mmr, bool)
            or not isinstance(mmr, (int, float))
            or not 0.0 <= float(mmr) <= 1.0
        ):
            raise QueryError(f"mmr must be a number in [0, 1] or None, got {mmr!r}")
        top = self.rerank_top
        if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top <= 0):
            raise QueryError(f"rerank_top must be a positive integer or None, got {top!r}")
        if self.rerank is not None and not callable(getattr(self.rerank, "rerank", None)):
            raise QueryError(
                f"rerank must be a Reranker (an object with a rerank(query, candidates) "
                f"method), got {type(self.rerank).__name__}"
            )
        for name in ("fuzzy", "prefix"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise QueryError(f"{name} must be True or False, got {_show(getattr(self, name))}")
        # Normalised once here: the searcher reads these on every query.
        filters = Filters.make(self.source, self.heading, self.metadata, self.version)
        object.__setattr__(self, "_filters", filters.with_language(self.language))

    def widened(self, k: int) -> SearchParams:
        """These parameters with ``k`` rows and no grouping or MMR (the candidate list).

        Made without validating again (everything else was checked, ``k`` is the caller's):
        section grouping asks for this once per query, where ``dataclasses.replace`` would
        re-run every check.
        """
        wide: SearchParams = object.__new__(SearchParams)
        wide.__dict__.update(self.__dict__)
        wide.__dict__.update(k=k, group=None, mmr=None)
        return wide

    @classmethod
    def of(cls, options: Mapping[str, Any], *, group: str | None = None) -> SearchParams:
        """``SearchParams(**options)``, reusing an equal object validated before when there is one.

        A search box repeats the same settings on every query; this skips re-validating them.
        Parameters with a metadata filter or a query vector are always made afresh.

        Args:
            options: Any of the :class:`SearchOptions`; the others take their defaults.
            group: The caller's default grouping (``Index.search`` groups by section,
                ``Index.rank`` ranks raw chunks); ``options["group"]`` overrides it.

        Raises:
            QueryError: A bad value (see :meth:`__post_init__`).
        """
        values = {**_DEFAULTS, "group": group, **options}
        # Types are part of the key: k=True equals k=1 but must still be refused.
        key = (
            *(type(values["k"]), values["k"], values["mode"]),
            *(type(values["alpha"]), values["alpha"]),
            *(type(values["min_score"]), values["min_score"], values["source"]),
            *(values["heading"], type(values["snippet_chars"]), values["snippet_chars"]),
            *(values["group"], type(values["mmr"]), values["mmr"]),
            *(type(values["version"]), values["version"]),
            *(type(values["fuzzy"]), values["fuzzy"], type(values["prefix"]), values["prefix"]),
            *(type(values["language"]), values["language"]),
        )
        # A metadata filter or a query vector is neither hashable in general nor repeated.
        memo = (
            values["metadata"] is None
            and values["query_vector"] is None
            and values["rerank"] is None  # a reranker is an object, compared by identity
            and values["rerank_top"] is None
        )
        found = None
        if memo:
            try:
                found = _MEMO.get(key)
            except TypeError:  # an unhashable (so invalid) value: let validation explain it
                memo = False
        if found is None:
            found = cls(**values)
            if memo:
                if len(_MEMO) >= _MEMO_MAX:
                    _MEMO.clear()
                _MEMO[key] = found
        return found

    @property
    def filters(self) -> Filters:
        """The validated filters (source, heading, metadata, version) as one value."""
        filters: Filters = self.__dict__["_filters"]
        return filters


# Validated parameters by value (see SearchParams.of); bounded, shared by every index.
_MEMO: dict[tuple[object, ...], SearchParams] = {}
_MEMO_MAX = 256

#: Each option's default: the dataclass fields, read once.
_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(SearchParams) if f.init}


def check_options(caller: str, options: Mapping[str, object], names: frozenset[str]) -> None:
    """Refuse an option ``caller`` does not take, as Python refuses an unknown keyword.

    ``Index`` methods take ``**options: Unpack[...]``: mypy checks the names statically, and
    this keeps a misspelt or unsupported option from being silently ignored at run time.

    Raises:
        TypeError: An option outside ``names``.
    """
    for name in options:
        if name not in names:
            raise TypeError(f"{caller}() got an unexpected keyword argument {name!r}")
