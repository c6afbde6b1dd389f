"""Snippets with highlights: the best passage of a chunk's clean text, as plain text plus ranges.

A :class:`Snippet` is what a results page needs and nothing it must parse: ``text`` (plain text,
whitespace collapsed, "…" where cut), ``highlights`` (``[start, end)`` character offsets into
``text`` of every word whose tokenizer term is a query term: the same tokenizer as BM25, so
"reading" is marked for the query "read") and ``code`` (ranges of ``text`` that come from code
blocks). :func:`highlight_html` renders it with ``<mark>``/``<code>`` and everything else
escaped; :meth:`Snippet.html` is the same.

Runtime module: the stdlib and :mod:`scidx.tokenize` only. Never parses Markdown: code blocks
are known from the ``CODE_START``/``CODE_END`` markers the packer put in the clean text.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from scidx.tokenize import CJK_CLASS, cjk_unit_end, normalize, run_terms, run_terms_as

__all__ = [
    "CODE_END",
    "CODE_START",
    "Snippet",
    "build_snippet",
    "flatten",
    "fold",
    "highlight_html",
    "needle",
    "starts_unit",
    "Part",
    "part_of",
    "parts_of",
    "scan",
    "snippet_of_part",
    "snippets_of_parts",
    "whole_part",
    "strip_code",
]

#: Code-block markers in clean text (``chunk.plain``, docs/FORMAT.md): the packer's cleaner
#: (:mod:`scidx.pack.cleantext`) encloses each code block in them and removes both characters
#: from everything else, so they mark code unambiguously.
CODE_START = "\x02"
CODE_END = "\x03"

_MARKERS = re.compile("[\x02\x03]")
_WORD = re.compile(r"\w+")
# Control characters never belong in a snippet (a raw-text index may still hold them).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Snippet:
    """A passage of a chunk with the query's words marked.

    Attributes:
        text: Plain text (no Markup), at most the requested length, "…" where cut.
        highlights: ``(start, end)`` offsets into ``text`` of matched words, ascending.
        code: ``(start, end)`` offsets into ``text`` of code-block text, ascending.
    """

    text: str
    highlights: tuple[tuple[int, int], ...] = ()
    code: tuple[tuple[int, int], ...] = ()

    def html(self) -> str:
        """The snippet as HTML: ``<mark>`` around matches, ``<code>`` around code, rest escaped."""
        return highlight_html(self.text, self.highlights, self.code)


def strip_code(text: str) -> str:
    """``text`` without the code-block markers (what BM25 and the embedder read)."""
    return _MARKERS.sub("", text)


def flatten(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Collapse whitespace and drop the markers; return the flat text and its code ranges.

    The text a snippet is cut from (its offsets are into this text).
    """
    if text.isprintable() and "  " not in text:
        # Already flat but for a space at either end (no control character, marker or
        # whitespace other than single spaces; every other whitespace character is
        # unprintable): a part of a text starts at the space before its first word.
        if text[:1] == " " or text[-1:] == " ":
            return text.strip(" "), []
        return text, []
    if CODE_START not in text and CODE_END not in text:
        # The common case (prose only) in C: one split and one join.
        if _CONTROLS.search(text) is not None:
            text = _CONTROLS.sub(" ", text)
        return " ".join(text.split()), []
    out: list[str] = []
    size = 0
    code: list[tuple[int, int]] = []
    in_code = False
    for segment in re.split("([\x02\x03])", text):
        if segment == CODE_START:
            in_code = True
            continue
        if segment == CODE_END:
            in_code = False
            continue
        piece = " ".join(_CONTROLS.sub(" ", segment).split())
        if not piece:
            continue
        if out:
            out.append(" ")
            size += 1
        start = size
        out.append(piece)
        size += len(piece)
        if in_code:
            code.append((start, size))
    return "".join(out), code


def fold(text: str) -> str:
    """``text`` lowered code point by code point, the same length, final sigma as sigma.

    What needles are looked for in. ``str.lower`` maps a few characters to two ("İ"); such a
    text is lowered one character at a time, keeping those characters, so offsets into the
    folded text are offsets into ``text``. The final sigma ("ς") depends on the characters
    around it, so it is made "σ" whatever they are.
    """
    low = text.lower()
    if len(low) != len(text):
        low = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
    return low.replace("ς", "σ") if "ς" in low else low


def needle(term: str) -> str:
    """The needle every term has: the term minus its last letter (whole when 2 or shorter).

    A Snowball stem minus its last letter is a prefix of nearly every word it comes from
    ("dos" finds "dosing" for "dose", "happ" "happy" for "happi"); the packer stores the
    others (``snippet.needle``). An identifier term (``max_chunk_chars``) is looked for by its
    first part's needle.
    """
    if "_" in term:
        term = next((p for p in term.split("_") if p), term)
    return term[:-1] if len(term) > 2 else term


def scan(
    flat: str,
    needles: Iterable[str],
    wanted: frozenset[str],
    seen: dict[str, str | None] | None = None,
    folded: str | None = None,
    languages: Sequence[str] = (),
) -> list[tuple[int, int, str]]:
    """``(start, end, term)`` of every run of ``flat`` that makes a query term, ascending.

    Candidates are the places where a needle starts a word (or follows an ``_`` inside one) in
    the folded text (``folded``, else :func:`fold` of ``flat``: the same length); each
    candidate run is then tokenized as the index was, so only true matches stay ("art" does
    not mark "article"), each with the first of its terms that is a query term. With every
    needle of every wanted term (:meth:`scidx.index.offsets.SnippetHints.needles`) that is
    every such run. ``seen`` remembers each word's verdict for these ``wanted`` terms (the
    parts of a page share one). ``languages``: the analyzers the index's pages were tokenised
    with when any is not English (issue 42); a run counts when one of them makes a query term.
    """
    if not flat or not wanted:
        return []
    piece = fold(flat) if folded is None else folded
    starts = _candidates(piece, needles)
    if not starts:
        return []
    out: list[tuple[int, int, str]] = []
    word_at = _UNIT.match
    if seen is None:
        seen = {}  # a word's verdict: a page repeats its query's words
    for start in sorted(set(starts)) if len(starts) > 1 else starts:
        run = word_at(flat, start)
        if run is None:
            continue
        word = run.group()
        if _IS_CJK(word) is not None:
            found = _cjk_unit_term(flat, start, wanted)
            if found is not None:
                out.append((start, *found))
            continue
        term = seen.get(word, _UNSEEN)
        if term is _UNSEEN:
            term = None
            for made in run_terms(word) if not languages else _terms_in(word, languages):
                if made in wanted:
                    term = made  # the run's first query term counts
                    break
            seen[word] = term
        if term is not None:
            out.append((start, run.end(), term))
    return out


def _candidates(piece: str, needles: Iterable[str]) -> list[int]:
    """Where in the folded text a needle starts a unit (see :func:`scan`)."""
    starts: list[int] = []
    add = starts.append
    find = piece.find
    # One scan of the piece per needle; the work per occurrence is kept to a few operations.
    for needle in needles:
        pos = find(needle) if needle else -1
        while pos != -1:
            if not pos:
                add(0)
            else:
                prev = piece[pos - 1]
                if not prev.isalnum():  # the needle starts a word, or follows an "_" in one
                    add(_word_start(piece, pos) if prev == "_" else pos)
                elif _IS_CJK(prev) is not None or _IS_CJK(piece[pos]) is not None:
                    add(pos)  # a CJK bigram starts anywhere; a Latin word after CJK text
            pos = find(needle, pos + 1)
    return starts


_UNSEEN: Any = object()

# --- languages (issue 42): CJK text is matched a bigram at a time -------------------------------
_IS_CJK = re.compile(f"[{CJK_CLASS}]").match
# A scan candidate: a \w+ run without CJK (as before), or one CJK bigram or lone character.
_UNIT = re.compile(f"[^\\W{CJK_CLASS}]+|[{CJK_CLASS}]")


def _terms_in(word: str, languages: Sequence[str]) -> list[str]:
    """The terms each of ``languages``' analyzers makes of ``word``, in turn."""
    return [t for lang in languages for t in run_terms_as(word, lang)]


def starts_unit(low: str, pos: int) -> bool:
    """Whether a needle found at ``pos`` of folded text can start a tokenizer unit there.

    At a word start, after a non-alphanumeric character (``_`` inside an identifier), at any
    CJK character (bigrams overlap) and where a Latin word follows CJK text.
    """
    if not pos:
        return True
    prev = low[pos - 1]
    return not prev.isalnum() or _IS_CJK(prev) is not None or _IS_CJK(low[pos]) is not None


def _cjk_unit_term(flat: str, start: int, wanted: frozenset[str]) -> tuple[int, str] | None:
    """The end and query term of the CJK term starting at ``start``, if it is a query term."""
    end = cjk_unit_end(flat, start)
    if end == start:
        return None
    term = normalize(flat[start:end])
    return (end, term) if term in wanted else None


def _cjk_edge(flat: str, at: int) -> bool:
    """Whether a cut at ``at`` is between two characters of which one is CJK (no spaces)."""
    return 0 < at < len(flat) and (
        _IS_CJK(flat[at - 1]) is not None or _IS_CJK(flat[at]) is not None
    )


# --- end of languages block ---------------------------------------------------------------------


def _word_start(lower: str, pos: int) -> int:
    """The start of the ``\\w+`` run holding ``pos``."""
    while pos > 0 and (lower[pos - 1].isalnum() or lower[pos - 1] == "_"):
        pos -= 1
    return pos


def _word_cut(flat: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` to whole words (never to nothing when a word is longer)."""
    if (
        start > 0
        and not flat[start - 1].isspace()
        and not flat[start].isspace()
        and not _cjk_edge(flat, start)
    ):
        nxt = flat.find(" ", start, end)
        if nxt != -1:
            start = nxt + 1
    if (
        end < len(flat)
        and not flat[end].isspace()
        and not flat[end - 1].isspace()
        and not _cjk_edge(flat, end)
    ):
        prev = flat.rfind(" ", start, end)
        if prev > start:
            end = prev
    while start < end and flat[start] == " ":
        start += 1
    while end > start and flat[end - 1] == " ":
        end -= 1
    return start, end


def _window(matches: Sequence[_Match], budget: int) -> tuple[int, int]:
    """Indices ``(i, j)`` of the matches spanned by the best window of ``budget`` characters.

    Most distinct terms first, then most matches, then the earliest. The window starting at
    match ``i`` ends at the last match that fits; when that is the same match as for an
    earlier window, it is a part of that window and cannot beat it, so only the others are
    counted (two pointers: linear in the matches), and none after the one reaching the last.
    """
    n = len(matches)
    if matches[-1][1] - matches[0][0] <= budget:
        return 0, n - 1  # they all fit: the first window holds every term and match
    starts, ends, keys = zip(*matches, strict=True)
    best_terms = best_count = -1
    best_ij = (0, 0)
    j = -1  # the last match of the previous window
    last = n - 1
    for i in range(n):
        limit = starts[i] + budget
        if j < i:
            j = i  # a match longer than the budget is still a window of its own
        elif ends[j + 1] > limit:
            continue  # no further match fits: inside the previous window
        while j < last and ends[j + 1] <= limit:
            j += 1
        count = j - i + 1
        if count > best_count or count > best_terms:  # else it cannot beat the best
            distinct = len(set(keys[i : j + 1]))
            if distinct > best_terms or (distinct == best_terms and count > best_count):
                best_terms, best_count, best_ij = distinct, count, (i, j)
        if j == last:
            break  # every later window is a part of this one
    return best_ij


def _clip(
    ranges: Iterable[tuple[int, int]], start: int, end: int, shift: int
) -> tuple[tuple[int, int], ...]:
    """``ranges`` cut to ``[start, end)`` and moved by ``shift - start``; empty ones dropped."""
    move = shift - start
    return tuple(
        (max(a, start) + move, min(b, end) + move)
        for a, b in ranges
        if a < b and a < end and b > start
    )


def build_snippet(
    text: str, terms: Sequence[str], limit: int = 240, languages: Sequence[str] = ()
) -> Snippet:
    """The passage of ``text`` that best covers the query terms, with its highlights.

    The window of at most ``limit`` characters holding the most distinct query terms (then the
    most occurrences, then the earliest) is chosen, started a little before its first match and
    cut on word boundaries; "…" marks a cut and counts towards ``limit``. Without a match the
    text's start is returned.

    Args:
        text: A chunk's clean text (code between ``CODE_START``/``CODE_END``) or any text.
        terms: Query terms from :func:`scidx.tokenize.tokenize`.
        limit: Maximum length in characters (>= 1).
        languages: The analyzers the text's terms were made with, when not English only
            (issue 42; see :func:`scan`).

    Returns:
        The :class:`Snippet`.

    Example:
        >>> s = build_snippet("Reading a file: use read_to_string.", ["read", "file"], 80)
        >>> [s.text[a:b] for a, b in s.highlights]
        ['Reading', 'file', 'read_to_string']
    """
    wanted = frozenset(t for t in terms if t)
    needles = sorted({needle(t) for t in wanted})
    return snippets_of_parts([whole_part(text)], needles, wanted, limit, languages)[0]


class Part(NamedTuple):
    """A flat text a snippet is cut from: a whole text, or a part of one (:func:`part_of`)."""

    flat: str
    code: list[tuple[int, int]]
    lead: bool  # text was left out before it ("…")
    tail: bool  # and after it
    whole: bool


def whole_part(text: str) -> Part:
    """The :class:`Part` of a whole text (flattened)."""
    flat, code = flatten(text)
    return Part(flat, code, False, False, True)


def part_of(data: bytes, lo: int, hi: int, total: int, limit: int) -> Part | None:
    """The part of a clean text a snippet of ``limit`` characters is cut from, bytes ``[lo, hi)``.

    ``data`` is the text's first bytes (``total`` in all); ``[lo, hi)`` is where the index says
    the query terms are (:func:`scidx.index.offsets.region`). The part runs from the first token
    boundary (ASCII whitespace or a code marker) at or after ``lo`` to the first at or after
    ``hi``, flattened (in code when the last code marker before it opens a block).

    Returns None when ``data`` ends before the part does, or when the part (not the whole
    text) flattens to fewer characters than the snippet shows: the caller then reads more, or
    uses the whole text.
    """
    return parts_of([data], [(lo, hi)], [total], limit)[0]


def parts_of(
    datas: Sequence[bytes], spans: Sequence[tuple[int, int]], totals: Sequence[int], limit: int
) -> list[Part | None]:
    """:func:`part_of` of each text of a page (``datas[i]``, ``spans[i]``, ``totals[i]``)."""
    out: list[Part | None] = []
    search = _BOUNDARY.search
    for data, (lo, hi), total in zip(datas, spans, totals, strict=True):
        size = len(data)
        start = lo if 0 <= lo <= size else 0 if lo < 0 else size
        if start:  # never from inside a word: from the first boundary at or after start - 1
            found = search(data, start - 1)
            if found is None:
                start = size
            elif found.start() >= start:
                start = found.start()
        stop = hi if start <= hi <= size else start if hi < start else size
        if stop < total:
            found = search(data, stop)
            if found is None:
                out.append(None)  # the part's last word goes on past what was read
                continue
            stop = found.start()
        raw = data[start:stop]
        if b"\x02" in data and data.rfind(b"\x02", 0, start) > data.rfind(b"\x03", 0, start):
            raw = b"\x02" + raw  # the part starts inside a code block
        code: list[tuple[int, int]] = []
        if not raw.translate(None, _PRINTABLE_ASCII) and b"  " not in raw:
            # Already flat (flatten's first case, checked on the bytes: cheaper than on a str).
            flat = raw.strip(b" ").decode("ascii")
        else:
            flat, code = flatten(raw.decode("utf-8", "ignore"))  # a forged cut loses a character
        whole = not start and stop >= total
        if not whole and len(flat) < limit - 2:
            out.append(None)  # much whitespace (indented code) or a forged byte: the whole text
            continue
        out.append(_new_part(Part, (flat, code, start > 0, stop < total, whole)))
    return out


# Part's generated __new__ is a Python frame; a page makes ten.
_new_part = tuple.__new__


def snippets_of_parts(
    parts: Sequence[Part],
    needles: Iterable[str],
    wanted: frozenset[str],
    limit: int = 240,
    languages: Sequence[str] = (),
) -> list[Snippet]:
    """The snippet of each part: its best window (as :func:`build_snippet`), its marks.

    The parts of a page of hits share one memo of word verdicts. ``needles`` must include
    every needle of the ``wanted`` terms (:meth:`scidx.index.offsets.SnippetHints.needles`):
    the marks are then exactly the words whose tokenizer terms include a query term.
    """
    needles = tuple(needles)
    seen: dict[str, str | None] = {}
    if len(parts) == 1:
        part = parts[0]
        found = scan(part.flat, needles, wanted, seen, None, languages)
        return [snippet_of_part(part, found, limit)]
    # The parts are scanned as one text (one pass per needle for them all). Folding is done
    # part by part when one is not ASCII: str.lower takes its slow path for a whole text
    # with a single wide character, and the ASCII parts need only the fast one.
    flats = [part.flat for part in parts]
    joined = "\n".join(flats)  # "\n" ends every run
    folded = None if joined.isascii() else "\n".join([fold(flat) for flat in flats])
    matches = scan(joined, needles, wanted, seen, folded, languages)
    # Each part's matches are a slice of them, in the joined text's offsets (``base``).
    starts = [m[0] for m in matches]
    out: list[Snippet] = []
    k = base = 0
    for part in parts:
        end = base + len(part.flat)
        j = bisect_left(starts, end, k)
        out.append(snippet_of_part(part, matches[k:j], limit, base))
        k, base = j, end + 1
    return out


def snippet_of_part(part: Part, matches: Sequence[_Match], limit: int, base: int = 0) -> Snippet:
    """The snippet of ``part`` given its matches (ascending): its best window, marked.

    ``matches`` may be offsets into a longer text holding ``part.flat`` at ``base``.
    """
    flat = part.flat
    first, last, cut, _, _ = _frame(flat, matches, limit, whole=part.whole, base=base)
    lead = "…" if part.lead or (cut and first > 0) else ""
    tail = "…" if part.tail or (cut and last < len(flat)) else ""
    return _render_part(flat, part.code, matches, first, last, lead, tail, base)


# A byte of whitespace (ASCII: what flatten collapses) or a code marker: tokens end there.
_BOUNDARY = re.compile(rb"[\s\x02\x03]")
# Printable ASCII: a part of nothing else (and no double space) needs no flattening.
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))


# (start, end, term): the term is a string from the scan, an index from the stored offsets.
_Match = tuple[int, int, Hashable]


def _assemble(
    flat: str, code: list[tuple[int, int]], matches: Sequence[_Match], limit: int
) -> Snippet:
    """The snippet of ``flat`` (code ranges ``code``) around ``matches`` (ascending)."""
    return _render(flat, code, matches, _frame(flat, matches, limit))


# (start, end, cut, lo, hi): the snippet shows flat[start:end] ("…" where ``cut``); the
# matches within [lo, hi) chose it (lo == hi: no window was chosen).
_Frame = tuple[int, int, bool, int, int]


def _frame(
    flat: str, matches: Sequence[_Match], limit: int, *, whole: bool = True, base: int = 0
) -> _Frame:
    """The part of ``flat`` the snippet shows, and the span of the matches that chose it.

    ``whole`` False: ``flat`` is a part of a longer text, shown with "…" on both sides, so
    only ``limit - 2`` characters fit however short it is. ``matches`` are offsets into a
    text holding ``flat`` at ``base``.
    """
    if len(flat) <= (limit if whole else limit - 2):
        return 0, len(flat), False, 0, 0
    if limit < 8:  # too short for ellipses and whole words to make sense
        return 0, limit, False, 0, 0
    budget = limit - 2  # room for the two ellipses
    lo = hi = start = 0
    if matches:
        i, j = _window(matches, budget)
        lo, hi = matches[i][0] - base, matches[j][1] - base
        # Conditional expressions, not min/max: this runs for every hit of every page.
        slack = budget - (hi - lo)
        # A short lead-in (a third of the slack, at most 60); most room after the matches.
        start = lo - (slack // 3 if slack < 180 else 60) if slack > 0 else lo
        start = start if start > 0 else 0
    size = len(flat)
    end = start + budget if start + budget < size else size
    start = end - budget if end > budget else 0
    start, end = _word_cut(flat, start, end)
    return start, end, True, lo, hi


def _render(
    flat: str,
    code: list[tuple[int, int]],
    matches: Sequence[_Match],
    frame: _Frame,
) -> Snippet:
    """The :class:`Snippet` showing ``flat[start:end]`` of ``frame``, with its marks."""
    start, end, cut = frame[:3]
    lead = "…" if cut and start > 0 else ""
    tail = "…" if cut and end < len(flat) else ""
    return _render_part(flat, code, matches, start, end, lead, tail)


def _render_part(
    flat: str,
    code: list[tuple[int, int]],
    matches: Sequence[_Match],
    start: int,
    end: int,
    lead: str,
    tail: str,
    base: int = 0,
) -> Snippet:
    """The :class:`Snippet` ``lead + flat[start:end] + tail``, with its marks and code.

    ``matches`` are offsets into a text holding ``flat`` at ``base``.
    """
    move = len(lead) - start - base
    lo, hi = start + base, end + base  # the shown text in the matches' offsets
    marks = tuple(
        [
            (a + move if a > lo else lo + move, b + move if b < hi else hi + move)
            for a, b, _ in matches
            if a < hi and b > lo
        ]
    )
    return _snippet(
        lead + flat[start:end] + tail, marks, _clip(code, start, end, len(lead)) if code else ()
    )


def _snippet(
    text: str, highlights: tuple[tuple[int, int], ...], code: tuple[tuple[int, int], ...]
) -> Snippet:
    """A :class:`Snippet` of checked parts, made without the dataclass's per-field setattr."""
    made = object.__new__(Snippet)
    object.__setattr__(made, "__dict__", {"text": text, "highlights": highlights, "code": code})
    return made


def highlight_html(
    text: str,
    highlights: Iterable[Sequence[int]] = (),
    code: Iterable[Sequence[int]] = (),
) -> str:
    """Render ``text`` as HTML: ``<mark>`` for highlights, ``<code>`` for code, the rest escaped.

    Ranges are ``(start, end)`` character offsets into ``text``; out-of-range or overlapping
    ranges are clipped, so a forged range cannot break the markup.

    Example:
        >>> highlight_html("a <b> & c", [(6, 7)], [(2, 5)])
        'a <code>&lt;b&gt;</code> <mark>&amp;</mark> c'
    """
    import html  # only a page that renders HTML pays for it (html.entities is large)

    n = len(text)

    def ranges(items: Iterable[Sequence[int]]) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        last = 0
        for item in sorted((int(r[0]), int(r[1])) for r in items if len(r) >= 2):
            a, b = max(item[0], last, 0), min(item[1], n)
            if a < b:
                out.append((a, b))
                last = b
        return out

    marks = ranges(highlights)
    codes = ranges(code)
    # Boundaries: close before open at the same offset; a mark that crosses a code edge is
    # split there so the tags always nest.
    cuts = sorted({0, n, *(x for r in marks for x in r), *(x for r in codes for x in r)})
    out: list[str] = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        piece = html.escape(text[a:b], quote=False)
        in_mark = any(x <= a and b <= y for x, y in marks)
        in_code = any(x <= a and b <= y for x, y in codes)
        if in_mark:
            piece = f"<mark>{piece}</mark>"
        if in_code:
            piece = f"<code>{piece}</code>"
        out.append(piece)
    # Adjacent pieces of one element were opened and closed separately; merge them back.
    return "".join(out).replace("</code><code>", "").replace("</mark><mark>", "")
