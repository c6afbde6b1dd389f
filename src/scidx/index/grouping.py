"""Result grouping (``group=``) and maximal marginal relevance (``mmr=``) over a ranked list.

* ``group="section"``: the parts of one section (same source and anchor, ordinals 0..n) collapse
  into the best-scoring one, so one long section cannot fill the page.
* ``group="page"``: one result per source page, its best section; the page's other matching
  sections (best first, one per section, at most :data:`SUB_RESULTS`) become ``sections``
  sub-results, as Pagefind and MkDocs Material show them.
* ``group=None``: raw chunks (what evaluation measures).

Grouping keeps the ranking's order (score descending, then row): a group ranks by its best row.
The searcher widens its candidate cut until ``k`` groups are found or the candidates run out, so
``k`` grouped results come back whenever that many exist.

Runtime module: numpy and the stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["GROUPS", "SUB_RESULTS", "Group", "group_rows", "mmr_order"]

GROUPS = ("section", "page")

#: Sub-results (other sections) kept per page with ``group="page"``.
SUB_RESULTS = 3


@dataclass
class Group:
    """One grouped result: its best row and score, and (pages) its best sections' rows/scores."""

    row: int
    score: float
    sections: list[tuple[int, float]] = field(default_factory=list)


def group_rows(
    rows: Sequence[int],
    scores: Sequence[float],
    k: int,
    group: str,
    section_of: Callable[[int], Hashable],
    page_of: Callable[[int], Hashable],
    sub_results: int = SUB_RESULTS,
) -> list[Group]:
    """Group ranked rows; see the module docstring.

    Args:
        rows: Chunk rows, best first.
        scores: Their scores.
        k: The most groups to return.
        group: ``"section"`` or ``"page"``.
        section_of: A row's section key (source row and anchor).
        page_of: A row's page key (source row).
        sub_results: Sections kept per page (``"page"`` only).

    Returns:
        At most ``k`` groups, best first.
    """
    out: list[Group] = []
    if group == "section":
        seen: set[Hashable] = set()
        for row, score in zip(rows, scores, strict=True):
            key = section_of(row)
            if key in seen:
                continue
            seen.add(key)
            out.append(Group(int(row), float(score)))
            if len(out) == k:
                break
        return out
    pages: dict[Hashable, tuple[Group, set[Hashable]]] = {}
    for row, score in zip(rows, scores, strict=True):
        key = page_of(row)
        entry = pages.get(key)
        if entry is None:
            if len(pages) == k:
                continue  # a page beyond the k-th: only known pages still collect sections
            first = Group(int(row), float(score))
            entry = pages[key] = (first, set())
            out.append(first)
        item, sections = entry
        section = section_of(row)
        if section not in sections:
            sections.add(section)
            if row != item.row and len(item.sections) < sub_results:
                item.sections.append((int(row), float(score)))
    return out


def mmr_order(
    rows: Sequence[int],
    scores: Sequence[float],
    vectors: Any,
    lam: float,
    k: int,
) -> list[int]:
    """Positions of ``rows`` in maximal-marginal-relevance order (the first ``k``).

    Each step takes the candidate maximising ``lam * rel - (1 - lam) * max_sim``, where ``rel``
    is the score scaled to [0, 1] by the best score and ``max_sim`` the highest cosine to an
    already chosen row (vectors are L2-normalised). ``lam = 1`` keeps the ranking; ties go to
    the better-ranked candidate.

    Args:
        rows: Candidate chunk rows, best first.
        scores: Their scores.
        vectors: The index's vectors: the float32 matrix or a compact ``VectorStore``
            (``vectors[rows]`` gives decoded float32 rows either way).
        lam: Relevance weight in [0, 1].
        k: How many to choose.

    Returns:
        Positions into ``rows``, in the new order.
    """
    n = len(rows)
    if n == 0:
        return []
    rel = np.asarray(scores, dtype=np.float64)
    top = float(rel.max())
    rel = rel / top if top > 0 else np.zeros_like(rel)
    vecs = np.asarray(vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float64)
    sims = vecs @ vecs.T
    chosen: list[int] = []
    max_sim = np.full(n, -np.inf)
    free = np.ones(n, dtype=bool)
    for _ in range(min(k, n)):
        penalty = np.where(np.isfinite(max_sim), max_sim, 0.0)
        value = lam * rel - (1.0 - lam) * penalty
        value[~free] = -np.inf
        pick = int(np.argmax(value))  # first maximum: the better-ranked candidate
        chosen.append(pick)
        free[pick] = False
        max_sim = np.maximum(max_sim, sims[pick])
    return chosen
