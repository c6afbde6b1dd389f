"""Snowball stemmers and stop words for German, French, Spanish, Portuguese, Italian, Dutch.

The stemmers are the Python modules the Snowball 3.1.1 compiler generates, vendored unedited
from ``snowballstemmer`` 3.1.1 (BSD, ``_generated/COPYING``); the stop words are the Snowball
site's lists. ``scidx-stem.js`` is the same, generated from the same sources, for the browser.
This module sits below :mod:`scidx.tokenize` (which imports it); :mod:`scidx.languages` adds
English, the tokenizer's own Porter2. Runtime: stdlib only.

Words are expected as the tokenizer yields them: NFKC, case-folded (so German ``ß`` is
already ``ss``; the German Snowball stemmer maps ``ß`` to ``ss`` itself, so the stem is the
same either way). Any string is accepted. Two kinds of word are returned as they are, in
Python and in ``scidx-stem.js`` alike:

* one longer than :data:`MAX_WORD_LENGTH` characters: the generated code's work grows faster
  than the word (a 160,000-character word takes 8 s in Python, 50 s in node), and no word of
  the Snowball vocabularies has more than 44;
* one with a character beyond U+FFFF: the generated JavaScript counts UTF-16 code units where
  Python counts code points, so the two would stem it differently (Dutch ``a𐐨ingen``:
  ``aa𐐨`` in Python and PyStemmer, ``a𐐨`` in JavaScript).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable

from scidx.snowball._stopwords import STOP_WORDS

__all__ = ["MAX_WORD_LENGTH", "SNOWBALL_LANGUAGES", "stemmer", "stop_words"]

_ASTRAL = re.compile("[\U00010000-\U0010ffff]").search

MAX_WORD_LENGTH = 64
"""Longer words are not stemmed (German's longest real compounds have about 63 letters)."""

# ISO 639-1 code -> the generated module and class (snowballstemmer's names).
_ALGORITHMS = {
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "pt": "portuguese",
    "it": "italian",
    "nl": "dutch",
}

SNOWBALL_LANGUAGES: tuple[str, ...] = tuple(_ALGORITHMS)
"""The ISO 639-1 codes of the languages stemmed here (English is ``scidx.tokenize.stem``)."""


def _unknown(lang: str) -> ValueError:
    return ValueError(
        f"no Snowball stemmer for language {lang!r} here; these are "
        f"{', '.join(SNOWBALL_LANGUAGES)} (English is scidx.tokenize.stem)"
    )


@functools.cache
def stemmer(lang: str) -> Callable[[str], str]:
    """The Snowball stemmer of ``lang`` (an ISO 639-1 code), a ``word -> stem`` function.

    The same function for every call with the same code; the module is imported on first use.

    Raises:
        ValueError: ``lang`` is not one of :data:`SNOWBALL_LANGUAGES`.
    """
    name = _ALGORITHMS.get(lang)
    if name is None:
        raise _unknown(lang)
    module = importlib.import_module(f"scidx.snowball._generated.{name}_stemmer")
    cls = getattr(module, f"{name.capitalize()}Stemmer")

    def stem(word: str) -> str:
        if len(word) > MAX_WORD_LENGTH or (not word.isascii() and _ASTRAL(word) is not None):
            return word  # see the module docstring: bounded work, the same as JavaScript
        # A generated stemmer keeps the word being stemmed on the instance, so one shared
        # instance would mix up two threads' words; a new one costs a microsecond.
        result: str = cls().stemWord(word)
        return result

    stem.__doc__ = f"The Snowball {name} stem of ``word``."
    return stem


def stop_words(lang: str) -> frozenset[str]:
    """The Snowball stop words of ``lang``, NFKC and case-folded as the tokenizer sees words.

    Raises:
        ValueError: ``lang`` is not one of :data:`SNOWBALL_LANGUAGES`.
    """
    found = STOP_WORDS.get(lang)
    if found is None:
        raise _unknown(lang)
    return found
