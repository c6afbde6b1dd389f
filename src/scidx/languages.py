"""The stemmed languages: each one's stemmer and stop words, English included.

``STEMMED_LANGUAGES`` lists ISO 639-1 codes; ``stemmer(lang)`` and ``stop_words(lang)`` give
English from :mod:`scidx.tokenize` (its hand-checked Porter2 and stop list) and the others
from :mod:`scidx.snowball`. This module imports the tokenizer, so the tokenizer itself must
import :mod:`scidx.snowball`, not this module (no import cycle, tests/test_structure.py).
"""

from __future__ import annotations

from collections.abc import Callable

from scidx import snowball
from scidx.tokenize import STOP_WORDS, stem

__all__ = ["STEMMED_LANGUAGES", "stemmer", "stop_words"]

STEMMED_LANGUAGES: tuple[str, ...] = ("en", *snowball.SNOWBALL_LANGUAGES)
"""The ISO 639-1 codes of the languages scidx stems: en, de, fr, es, pt, it, nl."""


def _unknown(lang: str) -> ValueError:
    return ValueError(
        f"no stemmer for language {lang!r}; scidx stems {', '.join(STEMMED_LANGUAGES)}"
    )


def stemmer(lang: str) -> Callable[[str], str]:
    """The stemmer of ``lang`` (``"en"``: :func:`scidx.tokenize.stem`), memoised per language.

    Raises:
        ValueError: ``lang`` is not one of :data:`STEMMED_LANGUAGES`.
    """
    if lang == "en":
        return stem
    if lang not in STEMMED_LANGUAGES:
        raise _unknown(lang)
    return snowball.stemmer(lang)


def stop_words(lang: str) -> frozenset[str]:
    """The stop words of ``lang`` (``"en"``: :data:`scidx.tokenize.STOP_WORDS`).

    Raises:
        ValueError: ``lang`` is not one of :data:`STEMMED_LANGUAGES`.
    """
    if lang == "en":
        return STOP_WORDS
    if lang not in STEMMED_LANGUAGES:
        raise _unknown(lang)
    return snowball.stop_words(lang)
