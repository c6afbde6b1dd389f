"""A pure-Python BERT WordPiece tokenizer read from a model's ``tokenizer.json``.

The ``static`` provider embeds queries with numpy alone, so it cannot use the ``tokenizers``
library at query time. This module reproduces what ``tokenizers`` does for the common BERT
pipeline (``BertNormalizer`` → ``BertPreTokenizer`` → ``WordPiece``), token id for token id
(tests/test_static.py checks every shared corpus's text against ``tokenizers``):

* normalise: drop NUL, U+FFFD and control characters (Unicode ``C*`` except tab, newline and
  carriage return), map whitespace to a space, put spaces around CJK ideographs, strip accents
  (NFD, then drop non-spacing marks) and lowercase;
* pre-tokenise: split on whitespace, and make every punctuation character (ASCII punctuation
  or Unicode ``P*``) a word of its own;
* WordPiece: greedy longest match from the left, later pieces carrying the ``##`` prefix; a
  word with a piece not in the vocabulary, or longer than ``max_input_chars_per_word``, is
  one ``[UNK]``.

Special tokens (``[CLS]``, ``[SEP]``) are not added: the static embedder averages real tokens.
Any other pipeline in ``tokenizer.json`` is refused with :class:`~scidx.errors.ConfigError`
rather than tokenised differently.

Runtime module: the stdlib only.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from scidx.errors import ConfigError

__all__ = ["WordPiece"]

# Rust's char::is_whitespace (the Unicode White_Space property), as `tokenizers` uses it.
_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


# The ASCII fast path: control characters vanish (no split), whitespace splits, punctuation
# is a word of its own. Pieces between ASCII whitespace that hold other characters take the
# general path (:meth:`WordPiece._slow_words`).
_ASCII_CONTROL = dict.fromkeys([*range(0, 9), 11, 12, *range(14, 32), 127])
_ASCII_WORDS = re.compile(r"[!-/:-@\[-`{-~]|[^\s!-/:-@\[-`{-~]+")
_ASCII_SPACE = re.compile(r"[ \t\n\r]+")


def _is_cjk(code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in _CJK)


@lru_cache(maxsize=1 << 14)
def _char_class(ch: str) -> int:
    """0: keep, 1: drop (control), 2: whitespace, 3: CJK (spaced), 4: punctuation."""
    code = ord(ch)
    if code == 0 or code == 0xFFFD:
        return 1
    if ch in "\t\n\r":
        return 2
    cat = unicodedata.category(ch)
    if cat[0] == "C":
        return 1
    if ch in _WHITESPACE or cat == "Zs":
        return 2
    if _is_cjk(code):
        return 3
    if ch in _ASCII_PUNCT or cat[0] == "P":
        return 4
    return 0


class WordPiece:
    """BERT WordPiece tokenisation, identical to ``tokenizers`` for ``BertNormalizer`` models.

    Args:
        vocab: Token → id.
        unk_token: The unknown token (must be in ``vocab``).
        prefix: The continuing-subword prefix (``##``).
        max_chars: Longest word tokenised; longer ones are ``unk_token``.
        lowercase: Lowercase (and, as ``tokenizers`` does when ``strip_accents`` is null,
            strip accents).
        strip_accents: Strip accents (NFD, drop non-spacing marks).

    Raises:
        ConfigError: ``unk_token`` is not in the vocabulary.
    """

    def __init__(
        self,
        vocab: Mapping[str, int],
        *,
        unk_token: str = "[UNK]",
        prefix: str = "##",
        max_chars: int = 100,
        lowercase: bool = True,
        strip_accents: bool | None = None,
    ) -> None:
        if unk_token not in vocab:
            raise ConfigError(f"the WordPiece vocabulary has no unknown token {unk_token!r}")
        self.vocab = dict(vocab)
        self.unk_id = int(self.vocab[unk_token])
        self.prefix = prefix
        self.max_chars = int(max_chars)
        self.lowercase = lowercase
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self._words: dict[str, tuple[int, ...]] = {}

    @classmethod
    def from_file(cls, path: str | Path) -> WordPiece:
        """Read a ``tokenizer.json`` of the BERT WordPiece kind.

        Raises:
            ConfigError: The file is unreadable, not JSON, or another kind of tokenizer.
        """
        p = Path(path)
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ConfigError(f"{p}: cannot read the tokenizer ({exc})") from None
        return cls.from_json(doc, str(p))

    @classmethod
    def from_json(cls, doc: Any, label: str = "tokenizer.json") -> WordPiece:
        """Build from a parsed ``tokenizer.json``; see :meth:`from_file`."""
        if not isinstance(doc, dict):
            raise ConfigError(f"{label}: not a tokenizer.json object")
        model = doc.get("model")
        norm = doc.get("normalizer")
        pre = doc.get("pre_tokenizer")
        if not isinstance(model, dict) or model.get("type") != "WordPiece":
            raise ConfigError(f"{label}: the tokenizer model is not WordPiece")
        if not isinstance(norm, dict) or norm.get("type") != "BertNormalizer":
            raise ConfigError(f"{label}: the normalizer is not BertNormalizer")
        if not isinstance(pre, dict) or pre.get("type") != "BertPreTokenizer":
            raise ConfigError(f"{label}: the pre-tokenizer is not BertPreTokenizer")
        if norm.get("clean_text") is not True or norm.get("handle_chinese_chars") is not True:
            raise ConfigError(f"{label}: only clean_text and handle_chinese_chars are supported")
        vocab = model.get("vocab")
        if not isinstance(vocab, dict) or not all(
            isinstance(k, str) and type(v) is int and v >= 0 for k, v in vocab.items()
        ):
            raise ConfigError(f"{label}: the WordPiece vocabulary is not a map of token → id")
        strip = norm.get("strip_accents")
        max_chars = model.get("max_input_chars_per_word", 100)
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise ConfigError(f"{label}: max_input_chars_per_word is {max_chars!r}, not a count")
        for key in ("unk_token", "continuing_subword_prefix"):
            if not isinstance(model.get(key, ""), str):
                raise ConfigError(f"{label}: the WordPiece {key} is not a string")
        return cls(
            vocab,
            unk_token=str(model.get("unk_token", "[UNK]")),
            prefix=str(model.get("continuing_subword_prefix", "##")),
            max_chars=max_chars,
            lowercase=bool(norm.get("lowercase", True)),
            strip_accents=None if strip is None else bool(strip),
        )

    def words(self, text: str) -> list[str]:
        """The normalised, pre-tokenised words of ``text``."""
        if text.isascii():
            return self._ascii_words(text)
        out: list[str] = []
        for piece in _ASCII_SPACE.split(text):
            if piece.isascii():
                out.extend(self._ascii_words(piece))
            else:
                out.extend(self._slow_words(piece))
        return out

    def _ascii_words(self, text: str) -> list[str]:
        clean = text.translate(_ASCII_CONTROL)
        if self.lowercase:
            clean = clean.lower()
        return _ASCII_WORDS.findall(clean)

    def _slow_words(self, text: str) -> list[str]:
        out: list[str] = []
        buf: list[str] = []
        for ch in text:
            cls = _char_class(ch)
            if cls == 0:
                buf.append(ch)
            elif cls == 1:
                continue
            else:
                if buf:
                    out.append("".join(buf))
                    buf = []
                if cls >= 3:
                    out.append(ch)
        if buf:
            out.append("".join(buf))
        if not (self.lowercase or self.strip_accents):
            return out
        final: list[str] = []
        for word in out:
            final.extend(self._normalise_word(word))
        return final

    def _normalise_word(self, word: str) -> list[str]:
        if self.strip_accents:
            word = "".join(
                c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn"
            )
        if self.lowercase:
            # Character by character, as Rust's char::to_lowercase: no final-sigma rule.
            word = word.lower() if word.isascii() else "".join(c.lower() for c in word)
        if word.isascii():
            return [word] if word else []
        # Decomposition or case mapping can produce punctuation or spaces (rare): split again.
        return self._resplit(word)

    @staticmethod
    def _resplit(word: str) -> list[str]:
        out: list[str] = []
        buf: list[str] = []
        for ch in word:
            cls = _char_class(ch)
            if cls == 0:
                buf.append(ch)
                continue
            if buf:
                out.append("".join(buf))
                buf = []
            if cls == 4:
                out.append(ch)
            elif cls == 3:
                out.append(ch)
        if buf:
            out.append("".join(buf))
        return out

    def word_ids(self, word: str) -> tuple[int, ...]:
        """The token ids of one normalised word (memoised)."""
        known = self._words.get(word)
        if known is not None:
            return known
        ids = self._wordpiece(word)
        if len(self._words) < 1 << 17:
            self._words[word] = ids
        return ids

    def _wordpiece(self, word: str) -> tuple[int, ...]:
        if len(word) > self.max_chars:
            return (self.unk_id,)
        vocab = self.vocab
        ids: list[int] = []
        start = 0
        n = len(word)
        while start < n:
            end = n
            found = -1
            while start < end:
                piece = word[start:end]
                if start > 0:
                    piece = self.prefix + piece
                tid = vocab.get(piece)
                if tid is not None:
                    found = tid
                    break
                end -= 1
            if found < 0:
                return (self.unk_id,)
            ids.append(found)
            start = end
        return tuple(ids)

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text``, without special tokens."""
        out: list[int] = []
        for word in self.words(text):
            out.extend(self.word_ids(word))
        return out
