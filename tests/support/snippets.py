"""The snippet definition by brute force, which the fast snippet paths are checked against."""

from __future__ import annotations

from collections.abc import Sequence

from scidx.index import highlight, offsets
from scidx.index.highlight import Snippet, flatten
from scidx.tokenize import term_spans

__all__ = ["exact_snippet", "expected_snippet", "where_bits"]


def _marks(flat: str, terms: Sequence[str]) -> list[tuple[int, int, str]]:
    """Every run of ``flat`` that makes a query term, tokenizing every word."""
    wanted = {t for t in terms if t}
    matches = []
    for start, end, made in term_spans(flat):
        term = next((t for t in made if t in wanted), None)
        if term is not None:
            matches.append((start, end, term))
    return matches


def exact_snippet(text: str, terms: Sequence[str], limit: int) -> Snippet:
    """The definition for a whole text, by brute force: tokenize every word of the flat text."""
    flat, code = flatten(text)
    return highlight._assemble(flat, code, _marks(flat, terms), limit)


def where_bits(text: str) -> dict[str, int]:
    """FORMAT.md §2.8's ``snippet.where`` byte of each term of ``text``, by brute force."""
    data = text.encode("utf-8")
    bits: dict[str, int] = {}
    for start, _, made in term_spans(text):
        at = len(text[:start].encode("utf-8"))
        for term in made:
            bits[term] = bits.get(term, 0) | 1 << (at * 8 // len(data))
    return bits


def expected_snippet(
    text: str, terms: Sequence[str], limit: int, bits: dict[str, int] | None = None
) -> Snippet:
    """The snippet an index with ``snippet.where`` must show (FORMAT.md §2.8), marks by brute
    force: the part the bytes point at (``bits``: the true ones by default), its best window,
    every word of the shown text tokenized."""
    bits = where_bits(text) if bits is None else bits
    distinct = [t for t in dict.fromkeys(terms) if t]
    data = text.encode("utf-8")
    part = None
    if limit >= 8 and data:
        found = offsets.region([bits.get(t, 0) for t in distinct], len(data), limit - 2)
        if found is not None:
            part = highlight.part_of(data, *found, len(data), limit)
    if part is None:
        return exact_snippet(text, terms, limit)
    return highlight.snippet_of_part(part, _marks(part.flat, terms), limit)
