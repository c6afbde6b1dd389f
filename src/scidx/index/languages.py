"""The languages of an index's pages: ``meta.language``, ``meta.languages``, ``source.lang``.

Runtime module (issue 42; FORMAT.md §2.15): numpy and the stdlib only. Every tag is checked on
open, so a hostile tag in a file (markup, a megabyte of text) is a
:class:`~scidx.errors.CorruptIndexError`, never something a page renders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError

__all__ = [
    "LANGUAGE_TAG",
    "MAX_LANGUAGES",
    "PageLanguages",
    "page_languages",
    "primary",
    "query_language",
]

#: A language tag as the packer writes it: lower case, "-"-separated, at most 35 characters.
LANGUAGE_TAG = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8}){0,3}")
MAX_LANGUAGES = 256  # source.lang is one byte a source
_REBUILD = "rebuild it with `toolup-rag pack-docs`"


def primary(tag: str) -> str:
    """The primary language subtag: ``"zh-hans"`` → ``"zh"``."""
    return tag.split("-", 1)[0]


@dataclass(frozen=True)
class PageLanguages:
    """An index's default language, its page languages and (several) each source's."""

    default: str
    languages: tuple[str, ...]
    source_lang: npt.NDArray[np.uint8] | None = None
    #: ``meta.modelLanguages``: what the embedding model covers (``("*",)`` any; None unknown).
    model_languages: tuple[str, ...] | None = None

    def model_covers(self, language: str) -> bool:
        """Whether the model's cosines mean something for text in ``language``."""
        covered = self.model_languages
        if covered is None or "*" in covered:
            return True
        return primary(language) in {primary(c) for c in covered}

    def of_source(self, i: int) -> str:
        """The language of source row ``i``."""
        if self.source_lang is None:
            return self.default
        return self.languages[int(self.source_lang[i])]

    def query_languages(self, asked: str | None) -> tuple[str, ...]:
        """The languages a query is tokenised in: the one asked, else every page language."""
        if asked is not None:
            return (asked,)
        return (self.default, *(lang for lang in self.languages if lang != self.default))


ENGLISH = PageLanguages("en", ("en",))

_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003347f]")


def query_language(text: str) -> str | None:
    """A query's language when its script says it (kana: ja, Hangul: ko, Han: zh), else None."""
    head = text[:1000]
    if _KANA.search(head):
        return "ja"
    if _HANGUL.search(head):
        return "ko"
    if _HAN.search(head):
        return "zh"
    return None


def _tag(value: object, src: str, where: str) -> str:
    if not isinstance(value, str) or len(value) > 35 or not LANGUAGE_TAG.fullmatch(value):
        shown = repr(value)[:40]
        raise CorruptIndexError(
            f'{src}: {where} is not a language tag (such as "en" or "zh-hans"): {shown}; '
            f"the file is corrupt, {_REBUILD}"
        )
    return value


def page_languages(
    meta: Mapping[str, Any], source_lang: npt.NDArray[Any] | None, n_sources: int, src: str
) -> PageLanguages:
    """Check and read the language keys and array (a file without them is English).

    Raises:
        CorruptIndexError: A bad tag, too many languages, a default not among them, or a
            ``source.lang`` of the wrong shape or with a row past ``meta.languages``.
    """
    model = _model_languages(meta.get("modelLanguages"), src)
    if "language" not in meta and "languages" not in meta and source_lang is None:
        return ENGLISH if model is None else PageLanguages("en", ("en",), None, model)
    default = _tag(meta.get("language"), src, "meta.language")
    raw = meta.get("languages", [default])
    if not isinstance(raw, Sequence) or isinstance(raw, str) or len(raw) > MAX_LANGUAGES:
        raise CorruptIndexError(
            f"{src}: meta.languages must be a list of at most {MAX_LANGUAGES} language tags; "
            f"the file is corrupt, {_REBUILD}"
        )
    languages = tuple(_tag(v, src, f"meta.languages[{i}]") for i, v in enumerate(raw))
    if default not in languages:
        raise CorruptIndexError(
            f"{src}: meta.language {default!r} is not in meta.languages; the file is corrupt, "
            f"{_REBUILD}"
        )
    if source_lang is not None:
        if source_lang.shape != (n_sources,):
            raise CorruptIndexError(
                f"{src}: `source.lang` has shape {source_lang.shape}, not ({n_sources},); the "
                f"file is corrupt, {_REBUILD}"
            )
        if n_sources and int(source_lang.max()) >= len(languages):
            raise CorruptIndexError(
                f"{src}: `source.lang` names language {int(source_lang.max())} of "
                f"{len(languages)}; the file is corrupt, {_REBUILD}"
            )
    return PageLanguages(default, languages, source_lang, model)


def _model_languages(value: object, src: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) > MAX_LANGUAGES:
        raise CorruptIndexError(
            f"{src}: meta.modelLanguages must be a list of language tags; the file is corrupt, "
            f"{_REBUILD}"
        )
    return tuple(
        "*" if v == "*" else _tag(v, src, f"meta.modelLanguages[{i}]") for i, v in enumerate(value)
    )
