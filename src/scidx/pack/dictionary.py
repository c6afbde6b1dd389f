"""The word dictionary's array (``dict.words``, FORMAT.md §2.14) from the packer's snippet pass.

The snippet pass (:func:`scidx.pack.arrays.where_block`) reads every word of every clean text
and knows its terms; each block also returns how often each word that may be stored was
written (:attr:`scidx.pack.arrays.WhereBlock.forms`). This sums them over the blocks and
writes the sorted words with their frequency bytes. Deterministic: nothing depends on how the
records were split into blocks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from scidx.index.dictionary import DICTIONARY_VERSION, MAX_WORD_CHARS, encode_dictionary
from scidx.tokenize import normalize, run_terms

__all__ = ["Vocabulary", "heading_forms", "word_forms"]

_WORDS = re.compile(r"\w+")


def word_forms(
    written: Mapping[str, int], terms_of: Mapping[str, tuple[str, ...]]
) -> tuple[tuple[str, int], ...]:
    """``(folded word, count)`` of the alphabetic words that make exactly one term.

    Words of more than :data:`~scidx.index.dictionary.MAX_WORD_CHARS` characters are left
    out (they are never corrected or completed).
    """
    out: dict[str, int] = {}
    for word, count in written.items():
        if len(terms_of.get(word, ())) == 1 and word.isalpha():
            folded = normalize(word)
            if len(folded) <= MAX_WORD_CHARS and folded.isalpha():
                out[folded] = out.get(folded, 0) + count
    return tuple(out.items())


def heading_forms(
    headings: Iterable[str], forms: Iterable[tuple[str, int]]
) -> tuple[tuple[str, int], ...]:
    """``forms`` with the words of ``headings`` added (as :func:`word_forms` counts them)."""
    written: dict[str, int] = {}
    for text in headings:
        for word in _WORDS.findall(text):
            written[word] = written.get(word, 0) + 1
    merged = dict(forms)
    for word, count in word_forms(written, {w: run_terms(w) for w in written}):
        merged[word] = merged.get(word, 0) + count
    return tuple(merged.items())


class Vocabulary:
    """The written words of the blocks seen so far, with their counts."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, forms: Iterable[tuple[str, int]]) -> None:
        """Take one block's words."""
        table = self.counts
        for word, count in forms:
            table[word] = table.get(word, 0) + count

    def arrays(self) -> tuple[dict[str, np.ndarray[Any, Any]], dict[str, Any]]:
        """``dict.words`` and ``meta.dictionary``."""
        data, words, size = encode_dictionary(self.counts)
        arrays = {"dict.words": np.frombuffer(data, dtype=np.uint8).copy()}
        return arrays, {"version": DICTIONARY_VERSION, "words": words, "bytes": size}
