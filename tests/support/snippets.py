"""The snippet definition by brute force, which the fast snippet paths are checked against."""

from __future__ import annotations

from collections.abc import Sequence

from scidx.index import highlight
from scidx.index.highlight import Snippet, flatten
from scidx.tokenize import term_spans

__all__ = ["exact_snippet"]


def exact_snippet(text: str, terms: Sequence[str], limit: int) -> Snippet:
    """The definition, by brute force: tokenize every word of the flat text."""
    flat, code = flatten(text)
    wanted = {t for t in terms if t}
    matches = []
    for start, end, made in term_spans(flat):
        term = next((t for t in made if t in wanted), None)
        if term is not None:
            matches.append((start, end, term))
    return highlight._assemble(flat, code, matches, limit)
