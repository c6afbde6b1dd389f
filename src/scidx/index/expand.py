"""Query expansion: typo tolerance and search as you type, over the term dictionary.

:func:`expand_query` takes a query and the index's :class:`~scidx.index.dictionary.TermDictionary`
and returns its terms as :class:`QueryTerms`: the tokenizer's terms (what every search used
before), plus, per term, weighted alternatives and the corrections to show. Scoring takes
each term's *group* (the term and its alternatives) and gives a chunk the best weighted
impact of the group's terms (:func:`weighted_postings`), so an alternative never adds to an
exact match and always scores below it.

Rules (docs/search.md):

* **Typos** (``fuzzy``). A query word of at least :data:`FUZZY_MIN_CHARS` letters (letters
  only: no digits, no ``_``), making one term that is not a stop word, whose term the index
  does not know or knows in at most :data:`FUZZY_RARE_DF` chunks, is matched to the known
  words within one edit of it (insert, delete, substitute, swap of neighbours; two from
  :data:`FUZZY_TWO_CHARS` letters). Evidence: a neighbour counts only with a document
  frequency of at least :data:`FUZZY_MIN_DF` and at least :data:`FUZZY_RATIO` times the typed
  term's. The closest neighbours (fewest edits), the :data:`FUZZY_TERMS` most frequent of
  them, join with weight :data:`FUZZY_WEIGHT`. Neighbours are the corpus's *words*
  (:mod:`scidx.index.dictionary`), searched as their terms: ``prduction`` is one edit from
  ``production`` (term ``product``), though its own stem is not near ``product``.
* **Completions** (``prefix``). When the query does not end in a space or punctuation, its
  last word (:data:`PREFIX_MIN_CHARS` characters or more, no ``_``) also matches the terms of
  the most frequent words it starts (``configura`` → ``configuration`` → ``configur``), at
  most :data:`PREFIX_TERMS` of them, with weight :data:`PREFIX_WEIGHT`; its own term keeps
  weight 1.
* Work is bounded: at most :data:`MAX_EXPANDED` words of a query are looked at, words longer
  than :data:`~scidx.index.dictionary.MAX_WORD_CHARS` never, and each look-up reads at most
  :data:`~scidx.index.dictionary.MAX_KEY_RANGE` terms per key.

The vector leg embeds :attr:`QueryTerms.text`: the query with each corrected word replaced
by the shown form of its best neighbour (and an unknown last word by its best completion).

Runtime module: numpy and the stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scidx.index.bm25 import TOP_IMPACTS, PostingLookup, Postings, query_terms
from scidx.index.dictionary import MAX_WORD_CHARS, TermDictionary
from scidx.tokenize import normalize, run_terms

__all__ = [
    "FUZZY_MIN_CHARS",
    "FUZZY_MIN_DF",
    "FUZZY_RARE_DF",
    "FUZZY_RATIO",
    "FUZZY_TERMS",
    "FUZZY_TWO_CHARS",
    "FUZZY_WEIGHT",
    "MAX_EXPANDED",
    "PREFIX_MIN_CHARS",
    "PREFIX_TERMS",
    "PREFIX_WEIGHT",
    "Correction",
    "QueryTerms",
    "expand_query",
    "weighted_postings",
]

FUZZY_MIN_CHARS = 5
"""Shorter words are never corrected (``from`` never becomes ``form``)."""
FUZZY_TWO_CHARS = 9
"""Words this long may be two edits away from their correction."""
FUZZY_RARE_DF = 2
"""A word whose term is in more chunks than this is taken as spelled right."""
FUZZY_MIN_DF = 2
"""A correction must be in at least this many chunks (a word seen once may be a typo too)."""
FUZZY_RATIO = 10
"""... and in at least this many times the chunks of the typed word's term."""
FUZZY_TERMS = 2
"""At most this many corrections per word (the most frequent at the fewest edits)."""
FUZZY_WEIGHT = 0.8
"""What a correction's impact counts, against 1 for the word as typed."""
PREFIX_MIN_CHARS = 2
"""A last word shorter than this is not completed."""
PREFIX_TERMS = 2
"""At most this many completions of the last word (the most frequent)."""
PREFIX_WEIGHT = 0.5
"""What a completion's impact counts, against 1 for the word as typed."""
PREFIX_ALWAYS = True
"""Complete the last word even when its term is known (else only an unknown last word)."""
PREFIX_DEMOTE = True
"""A last word whose own term is far rarer than its best completion counts no more than it."""
MAX_EXPANDED = 32
"""At most this many words of one query are corrected or completed (the first ones)."""

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Correction:
    """A word of the query matched to other terms.

    Attributes:
        word: The word as typed (case-folded).
        shown: The word searched instead (or as well): the best alternative's written form.
        kind: ``"typo"`` (a near spelling) or ``"prefix"`` (a completion of the last word).
        terms: The alternative terms, best first.
    """

    word: str
    shown: str
    kind: str
    terms: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """The JSON form: ``{"word", "shown", "kind", "terms"}``."""
        return {
            "word": self.word,
            "shown": self.shown,
            "kind": self.kind,
            "terms": list(self.terms),
        }


class QueryTerms(list[str]):
    """A query's terms (every term a chunk may match, for snippets), with their groups.

    Attributes:
        groups: Per distinct query term, ``((term, weight), ...)``: the term itself (weight
            1) first, then its alternatives. None: no expansion (each term alone).
        corrections: What was corrected or completed, in query order.
        text: The text the vector leg embeds (the query itself without corrections).
    """

    groups: tuple[tuple[tuple[str, float], ...], ...] | None
    corrections: tuple[Correction, ...]
    text: str

    def __init__(
        self,
        terms: Sequence[str],
        groups: tuple[tuple[tuple[str, float], ...], ...] | None = None,
        corrections: tuple[Correction, ...] = (),
        text: str = "",
    ) -> None:
        super().__init__(terms)
        self.groups = groups
        self.corrections = corrections
        self.text = text

    @property
    def typos(self) -> tuple[Correction, ...]:
        """The corrections of misspelled words (not the completions)."""
        return tuple(c for c in self.corrections if c.kind == "typo")


def expand_query(
    query: str,
    dictionary: TermDictionary | None,
    *,
    fuzzy: bool,
    prefix: bool,
    languages: Sequence[str] = (),
) -> QueryTerms:
    """The terms of ``query`` (stripped), with typo corrections and completions when asked.

    Without a dictionary, or with neither option, it is :func:`~scidx.index.bm25.query_terms`
    with no groups. ``languages``: those the query is tokenised in (issue 42; empty: English).
    Corrections and completions follow the English analyzer's words, so a query tokenised in
    any other language is not expanded (its words are matched as typed).
    """
    text = query.strip()
    terms = query_terms(text, languages) if text else []
    english = all(lang == "en" for lang in languages)
    if (
        dictionary is None
        or not (fuzzy or prefix)
        or not text
        or not len(dictionary)
        or not english
    ):
        return QueryTerms(terms, None, (), text)
    runs = _WORD.findall(normalize(text))
    # Search as you type: the query's last character is part of a word being typed.
    typing = prefix and bool(_WORD.match(query[-1:])) and bool(runs)
    plan = _Plan(dictionary)
    for i, run in enumerate(runs):
        last = typing and i == len(runs) - 1
        if (plan.looked >= MAX_EXPANDED and not last) or len(run) > MAX_WORD_CHARS or "_" in run:
            continue
        made = run_terms(run)
        term = made[0] if len(made) == 1 else None
        # A word being typed is completed first; only one with no completion is corrected
        # ("middlew" is the start of "middleware", not a typo of "middle").
        completed = False
        if last and len(run) >= PREFIX_MIN_CHARS and (term is not None or not made):
            completed = plan.complete(i, run, term)
        if fuzzy and term is not None and len(run) >= FUZZY_MIN_CHARS and run.isalpha():
            if not completed:
                plan.typo(i, run, term)
    if not plan.extra:
        return QueryTerms(terms, None, (), text)
    groups: list[tuple[tuple[str, float], ...]] = []
    listed = list(terms)
    for term in terms:
        groups.append(_group(term, plan.extra.pop(term, []), term in plan.demoted))
    for alts in plan.extra.values():  # a completed stop word: no term of its own
        groups.append(_group(None, alts))
    for group in groups:
        listed.extend(t for t, _ in group if t not in listed)
    embed = text
    if plan.replaced:
        embed = " ".join(plan.replaced.get(i, run) for i, run in enumerate(runs))
    return QueryTerms(listed, tuple(groups), tuple(plan.corrections), embed)


class _Plan:
    """What :func:`expand_query` adds, word by word."""

    def __init__(self, dictionary: TermDictionary) -> None:
        self.dictionary = dictionary
        self.extra: dict[str, list[tuple[str, float]]] = {}
        self.corrections: list[Correction] = []
        self.replaced: dict[int, str] = {}  # word number -> the word the vector leg embeds
        self.demoted: set[str] = set()  # a half-typed word's own term, far rarer than a completion
        self.looked = 0

    def typo(self, i: int, run: str, term: str) -> None:
        self.looked += 1
        found = _typo(self.dictionary, run, term)
        if found:
            self.extra.setdefault(term, []).extend((t, FUZZY_WEIGHT) for t, _ in found)
            shown = found[0][1]
            self.corrections.append(Correction(run, shown, "typo", tuple(t for t, _ in found)))
            self.replaced[i] = shown

    def complete(self, i: int, run: str, term: str | None) -> bool:
        """Add the completions of the last word; whether it had any."""
        known = term is not None and self.dictionary.term_df(term) > 0
        if not (PREFIX_ALWAYS or not known):
            return False
        self.looked += 1
        done = _completions(self.dictionary, run, term)
        if not done:
            return False
        key = term if term is not None else run
        self.extra.setdefault(key, []).extend((t, PREFIX_WEIGHT) for t, _ in done)
        if term is not None and _rare(self.dictionary, term, done[0][0]):
            self.demoted.add(term)
        shown = done[0][1]
        self.corrections.append(Correction(run, shown, "prefix", tuple(t for t, _ in done)))
        if not known and i not in self.replaced:
            self.replaced[i] = shown
        return True


def _rare(dictionary: TermDictionary, term: str, other: str) -> bool:
    """Whether ``term`` is far rarer than ``other`` (the evidence a correction needs)."""
    if not PREFIX_DEMOTE:
        return False
    df = dictionary.term_df(term)
    return df <= FUZZY_RARE_DF and dictionary.term_df(other) >= max(FUZZY_MIN_DF, FUZZY_RATIO * df)


def _group(
    term: str | None, alts: list[tuple[str, float]], demoted: bool = False
) -> tuple[tuple[str, float], ...]:
    out: dict[str, float] = {} if term is None else {term: PREFIX_WEIGHT if demoted else 1.0}
    for t, w in alts:
        if out.get(t, 0.0) < w:
            out[t] = w
    return tuple(out.items())


def _typo(dictionary: TermDictionary, run: str, term: str) -> list[tuple[str, str]]:
    """:func:`_find_typo`, remembered per word (the dictionary's bounded memo)."""
    return dictionary.remember(("typo", run), lambda: _find_typo(dictionary, run, term))


def _find_typo(dictionary: TermDictionary, run: str, term: str) -> list[tuple[str, str]]:
    """The corrections of a typed word: ``(term, word)``, best first; empty if it needs none.

    The closest accepted neighbours: those one edit away, else (from
    :data:`FUZZY_TWO_CHARS` letters) two; one edit is looked up first, since two is only
    read when one finds nothing (the same answer as reading both at once, for less work).
    """
    df = dictionary.term_df(term)
    if df > FUZZY_RARE_DF:
        return []
    need = max(FUZZY_MIN_DF, FUZZY_RATIO * df)
    for limit in (1, 2) if len(run) >= FUZZY_TWO_CHARS else (1,):
        found = []
        for word, d in dictionary.neighbours(run, limit):
            made = run_terms(word)
            if d != limit or len(made) != 1 or made[0] == term:
                continue
            f = dictionary.term_df(made[0])
            if f >= need:
                found.append((-f, word, made[0]))
        if found:
            out: list[tuple[str, str]] = []
            for _, word, other in sorted(found):
                if all(other != t for t, _ in out):
                    out.append((other, word))
            return out[:FUZZY_TERMS]
    return []


def _completions(dictionary: TermDictionary, run: str, term: str | None) -> list[tuple[str, str]]:
    """:func:`_find_completions`, remembered per word (the dictionary's bounded memo)."""
    return dictionary.remember(("prefix", run), lambda: _find_completions(dictionary, run, term))


def _find_completions(
    dictionary: TermDictionary, run: str, term: str | None
) -> list[tuple[str, str]]:
    """The terms a half-typed last word may be: ``(term, word)``, most frequent word first."""
    out: list[tuple[str, str]] = []
    for word in dictionary.completions(run):
        made = run_terms(word)
        if len(made) != 1 or made[0] == term or any(made[0] == t for t, _ in out):
            continue
        if dictionary.term_df(made[0]):
            out.append((made[0], word))
            if len(out) >= PREFIX_TERMS:
                break
    return out


def weighted_postings(lookup: PostingLookup, terms: Sequence[str]) -> list[Postings]:
    """The postings a query's terms score: each group's best weighted impact per chunk.

    Terms without groups (no expansion) are looked up as they are, so an unexpanded query
    scores exactly as before. A group of one term at weight 1 is that term's own postings.
    """
    groups = getattr(terms, "groups", None)
    if groups is None:
        return lookup.postings(terms)
    out: list[Postings] = []
    for group in groups:
        if len(group) == 1 and group[0][1] == 1.0:
            out.extend(lookup.postings([group[0][0]]))
            continue
        parts = []
        for term, weight in group:
            for docs, impacts, _ in lookup.postings([term]):
                scaled = impacts if weight == 1.0 else impacts * np.float32(weight)
                parts.append((docs.astype(np.int64), scaled.astype(np.float32)))
        if not parts:
            continue
        if len(parts) == 1:
            docs64, best = parts[0]
        else:
            docs_all = np.concatenate([p[0] for p in parts])
            w_all = np.concatenate([p[1] for p in parts])
            order = np.lexsort((-w_all, docs_all))
            docs_all, w_all = docs_all[order], w_all[order]
            first = np.ones(docs_all.shape[0], dtype=bool)
            first[1:] = docs_all[1:] != docs_all[:-1]
            docs64, best = docs_all[first], w_all[first]
        m = min(TOP_IMPACTS, best.shape[0])
        top = np.sort(np.partition(best, best.shape[0] - m)[best.shape[0] - m :])
        bars = np.nextafter(top[::-1], np.float32(-np.inf)).astype(np.float64)
        out.append((docs64.astype(np.uint32), best, bars.tolist()))
    return out
