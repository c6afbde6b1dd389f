"""Several retrievers as one: :class:`MultiIndexRetriever` and its rank or score fusion.

Multi-index fusion ``interleaved`` is reciprocal-rank fusion by default: scores of different
indexes (BM25 of different corpora, different embedding models) are not comparable, so only
ranks are used. ``fusion="score"`` sorts by raw score, for callers that know their scores are
comparable. ``separate`` keeps each retriever's block of results in turn.

Runtime module: numpy, msgpack, xxhash, the stdlib and scidx runtime modules only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

from scidx.errors import ConfigError
from scidx.fusion import RRF_K, rrf_fuse
from scidx.index.retrieval import STAGE_FUSION, Match, RetrievalRequest, Retriever, StageEvent

__all__ = ["RRF_K", "MultiIndexRetriever"]


def _retriever_name(retriever: Retriever, position: int) -> str:
    name = getattr(retriever, "name", None)
    return name if isinstance(name, str) and name else f"retriever{position + 1}"


class MultiIndexRetriever:
    """Queries several retrievers (e.g. docs + blog, or two versions) and merges the results.

    Args:
        retrievers: The retrievers, as a sequence or a ``{name: retriever}`` mapping. Names
            label the matches (``Match.retriever``); by default a retriever's ``name``.
        strategy: ``"interleaved"``: one ranked list of at most ``k`` matches;
            ``"separate"``: each retriever's top ``k`` in turn, in the order given (so up to
            ``k`` × retrievers matches), each block keeping its own scores.
        fusion: For ``interleaved``: ``"rrf"`` (default) scores each match
            ``1 / (rrf_k + rank)`` from its rank in its own list, so raw scores of different
            indexes never get compared; ``"score"`` sorts by raw score, only meaningful when
            all retrievers score on the same scale (same provider, keyword or vector mode).
        rrf_k: The RRF constant.
        name: Name of this retriever in traces.

    Ties are broken by retriever order, then by rank, so results are deterministic.
    """

    STRATEGIES = ("interleaved", "separate")
    FUSIONS = ("rrf", "score")

    def __init__(
        self,
        retrievers: Sequence[Retriever] | Mapping[str, Retriever],
        *,
        strategy: str = "interleaved",
        fusion: str = "rrf",
        rrf_k: int = RRF_K,
        name: str = "multi",
    ) -> None:
        if strategy not in self.STRATEGIES:
            raise ConfigError(
                f"unknown merge strategy {strategy!r}; use one of {', '.join(self.STRATEGIES)}"
            )
        if fusion not in self.FUSIONS:
            raise ConfigError(f"unknown fusion {fusion!r}; use one of {', '.join(self.FUSIONS)}")
        if isinstance(rrf_k, bool) or not isinstance(rrf_k, int) or rrf_k < 0:
            raise ConfigError(f"rrf_k must be an integer >= 0, got {rrf_k!r}")
        if isinstance(retrievers, Mapping):
            named = [(str(n), r) for n, r in retrievers.items()]
        else:
            named = [(_retriever_name(r, i), r) for i, r in enumerate(retrievers)]
        if not named:
            raise ConfigError("MultiIndexRetriever needs at least one retriever")
        names = [n for n, _ in named]
        if len(set(names)) != len(names):
            raise ConfigError(
                f"retriever names must be unique, got {names}; pass a {{name: retriever}} mapping"
            )
        self.retrievers = named
        self.strategy = strategy
        self.fusion = fusion
        self.rrf_k = rrf_k
        self.name = name

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        """Retrieve from every retriever and merge by the configured strategy.

        ``min_score`` is passed to each retriever (it applies to its own scores), never to
        fused scores.
        """
        request.validate()
        lists: list[list[Match]] = []
        for name, retriever in self.retrievers:
            found = retriever.retrieve(request)
            lists.append([replace(m, retriever=m.retriever or name) for m in found[: request.k]])
        if self.strategy == "separate":
            return [m for block in lists for m in block]
        started = time.perf_counter()
        if self.fusion == "rrf":
            fused = rrf_fuse(lists, self.rrf_k)
            merged = [replace(m, score=s, raw_score=m.score) for s, m in fused]
        else:
            scored = [
                (match.score, position, rank, match)
                for position, block in enumerate(lists)
                for rank, match in enumerate(block, start=1)
            ]
            scored.sort(key=lambda t: (-t[0], t[1], t[2]))
            merged = [m for *_, m in scored]
        merged = merged[: request.k]
        request.report(
            StageEvent(STAGE_FUSION, time.perf_counter() - started, len(merged), self.name)
        )
        return merged
