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
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from scidx.tokenize import run_terms

__all__ = [
    "CODE_END",
    "CODE_START",
    "Snippet",
    "build_snippet",
    "flatten",
    "highlight_html",
    "snippet_from_offsets",
    "strip_code",
]

#: Code-block markers in clean text (``chunk.plain``, docs/FORMAT.md): the packer's cleaner
#: (:mod:`scidx.pack.cleantext`) encloses each code block in them and removes both characters
#: from everything else, so they mark code unambiguously.
CODE_START = "\x02"
CODE_END = "\x03"

_MARKERS = re.compile("[\x02\x03]")
# The stored length of a word of 255 or more characters (scidx.index.offsets.LONG_WORD): the
# run is measured in the text.
_LONG_WORD = 255
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
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        # Already flat (no control character, marker or whitespace other than single spaces;
        # every other whitespace character is unprintable): nothing to copy.
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


def _needles(terms: frozenset[str]) -> tuple[str, ...]:
    # A stem is (nearly) a prefix of the words it comes from; y→i stems ("happi") also look
    # for the y form. Prefixes only find candidates: the tokenizer decides.
    found = _NEEDLES.get(terms)
    if found is None:
        out: set[str] = set()
        for t in terms:
            out.add(t)
            if t.endswith("i") and len(t) > 2:
                out.add(t[:-1] + "y")
        found = tuple(sorted(out))
        if len(_NEEDLES) >= _CACHE_SIZE:
            _NEEDLES.clear()
        _NEEDLES[terms] = found
    return found


# Memo shared by every snippet: query terms -> needles. Bounded by count, cleared when full: a
# hostile text cannot grow it without limit (a word's terms are memoised by run_terms).
_CACHE_SIZE = 65536
_NEEDLES: dict[frozenset[str], tuple[str, ...]] = {}


def _matches(flat: str, terms: Sequence[str]) -> list[tuple[int, int, str]]:
    """``(start, end, term)`` of every word of ``flat`` whose tokenizer terms include a query term.

    Candidates are the ``\\w+`` runs holding a query stem at a word or ``_`` boundary (a
    substring scan, cheap); each is then tokenized as the index was, so only true matches stay
    ("art" does not mark "article").
    """
    wanted = frozenset(t for t in terms if t)
    if not wanted or not flat:
        return []
    lower = flat.lower()
    if len(lower) != len(flat):  # a rare character changes length when lowered
        lower = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in flat)
    starts: list[int] = []
    add = starts.append
    find = lower.find
    # One scan of the text per needle; the work per occurrence is kept to a few operations.
    for needle in _needles(wanted):
        pos = find(needle)
        while pos != -1:
            prev = lower[pos - 1] if pos else " "
            if not prev.isalnum():  # the needle starts a word, or follows an "_" inside one
                add(_word_start(lower, pos) if prev == "_" else pos)
            pos = find(needle, pos + 1)
    out: list[tuple[int, int, str]] = []
    word_at = _WORD.match
    verdicts: dict[str, str | None] = {}
    for start in sorted(set(starts)):
        run = word_at(flat, start)
        if run is None:
            continue
        word = run.group()
        if word in verdicts:
            term = verdicts[word]
        else:
            term = verdicts[word] = next((t for t in run_terms(word) if t in wanted), None)
        if term is not None:
            out.append((start, run.end(), term))
    return out


def _word_start(lower: str, pos: int) -> int:
    """The start of the ``\\w+`` run holding ``pos``."""
    while pos > 0 and (lower[pos - 1].isalnum() or lower[pos - 1] == "_"):
        pos -= 1
    return pos


def _word_cut(flat: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` to whole words (never to nothing when a word is longer)."""
    if start > 0 and not flat[start - 1].isspace() and not flat[start].isspace():
        nxt = flat.find(" ", start, end)
        if nxt != -1:
            start = nxt + 1
    if end < len(flat) and not flat[end].isspace() and not flat[end - 1].isspace():
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


def build_snippet(text: str, terms: Sequence[str], limit: int = 240) -> Snippet:
    """The passage of ``text`` that best covers the query terms, with its highlights.

    The window of at most ``limit`` characters holding the most distinct query terms (then the
    most occurrences, then the earliest) is chosen, started a little before its first match and
    cut on word boundaries; "…" marks a cut and counts towards ``limit``. Without a match the
    text's start is returned.

    Args:
        text: A chunk's clean text (code between ``CODE_START``/``CODE_END``) or any text.
        terms: Query terms from :func:`scidx.tokenize.tokenize`.
        limit: Maximum length in characters (>= 1).

    Returns:
        The :class:`Snippet`.

    Example:
        >>> s = build_snippet("Reading a file: use read_to_string.", ["read", "file"], 80)
        >>> [s.text[a:b] for a, b in s.highlights]
        ['Reading', 'file', 'read_to_string']
    """
    flat, code = flatten(text)
    return _assemble(flat, code, _matches(flat, terms), limit)


def snippet_from_offsets(
    text: str,
    is_flat: bool,
    matches: list[tuple[int, int, int]] | None,
    spans: Sequence[int],
    which: Sequence[int],
    terms: Sequence[str],
    limit: int = 240,
) -> Snippet | None:
    """:func:`build_snippet` from candidate words the index stored (:mod:`scidx.index.offsets`).

    Candidate ``k`` is the word at ``spans[k] >> 8`` (an offset into the flat text) of
    ``spans[k] & 255`` characters (255: "255 or more", the ``\\w+`` run is measured) that may
    make query term ``terms[which[k]]``; ascending by start, a run's terms in the run's order.
    ``matches`` is the same as ``(start, end, which)`` triples when every run has one
    candidate (``spans`` then lists the indexes into ``matches`` of the words of 255 or more
    characters, whose ends are measured); else it is None, and ``spans`` and ``which`` are
    read instead.
    The marks are exactly the words whose tokenizer terms include a query term (the first
    such term of a run counting), so with the same words found the result equals
    :func:`build_snippet`'s. ``is_flat`` says ``text`` is its own flat text.

    A 16-bit key can belong to two terms, so candidates are checked with the tokenizer
    (memoised per word). The ones the snippet shows are checked first: when they all hold,
    the window is the right one, because a false candidate elsewhere can only have raised the
    score of another window, which still lost. Otherwise every candidate is checked.

    Returns None when the stored data does not fit ``text`` (a corrupt index): the caller then
    scans.
    """
    code: list[tuple[int, int]] = []
    if is_flat:
        flat = text
    else:
        flat, code = flatten(text)
    if matches is None:
        # The careful path: every candidate checked, a run's first true query term counting.
        found = _checked(flat, spans, which, terms)
        if found is None:
            return None
        matches = found
    elif spans:  # words of 255+ characters: their ends are measured in the text
        matches = matches.copy()
        for k in spans:
            a, _, term = matches[k]
            run = _WORD.match(flat, a)
            matches[k] = (a, run.end() if run is not None else a + _LONG_WORD, term)
    # A stored end past the text needs no check here: slicing stops at the text's end, so
    # such a word fails the tokenizer check or is marked only up to the end of the text.
    frame = _frame(flat, matches, limit)
    snippet = _render_checked(flat, code, matches, frame, terms)
    if snippet is None:  # a shown candidate is another term's word: check them all
        found = [m for m in matches if _makes(flat, m, terms)]  # one candidate per run here
        snippet = _render(flat, code, found, _frame(flat, found, limit))
    if is_flat and (not snippet.text.isprintable() or "  " in snippet.text):
        return None  # the index said the text was flat, and it is not: let the scan flatten it
    return snippet


def _render_checked(
    flat: str,
    code: list[tuple[int, int]],
    matches: list[tuple[int, int, int]],
    frame: _Frame,
    terms: Sequence[str],
) -> Snippet | None:
    """:func:`_render`, checking the candidates shown or choosing the window (None: one fails).

    The window's own matches can lie partly outside the text shown (the frame is cut to whole
    words), so they are checked too: a false one there chose the window.
    """
    start, end, cut, lo, hi = frame
    first, last = (min(start, lo), max(end, hi)) if lo < hi else (start, end)
    lead = "…" if cut and start > 0 else ""
    move = len(lead) - start
    marks = []
    for a, b, k in matches:
        if b <= first:
            continue
        if a >= last:
            break  # ascending: the rest are after the frame and the window
        if terms[k] not in run_terms(flat[a:b]):
            return None
        if a < end and b > start:
            marks.append(
                (a + move if a > start else start + move, b + move if b < end else end + move)
            )
    tail = "…" if cut and end < len(flat) else ""
    return _snippet(
        lead + flat[start:end] + tail,
        tuple(marks),
        _clip(code, start, end, len(lead)) if code else (),
    )


def _makes(flat: str, match: tuple[int, int, int], terms: Sequence[str]) -> bool:
    """Whether the word of ``match`` makes its query term (the tokenizer decides)."""
    return terms[match[2]] in run_terms(flat[match[0] : match[1]])


def _checked(
    flat: str, spans: Sequence[int], which: Sequence[int], terms: Sequence[str]
) -> list[tuple[int, int, int]] | None:
    """Every candidate run checked with the tokenizer; a run's first query term counts.

    A stored candidate only says "this run may make a query term": the tokenizer decides which
    (the first of the run's terms that is a query term), so keys shared by two query terms
    or by a query term and another term never change a mark. None when the candidates are out
    of order or past the text (not what the packer writes).
    """
    wanted: dict[str, int] = {}
    for k, t in enumerate(terms):
        if t and t not in wanted:
            wanted[t] = k
    out: list[tuple[int, int, int]] = []
    size = len(flat)
    prev = -1
    for span in spans:
        start = span >> 8
        if start < prev:
            return None
        if start == prev:
            continue  # another candidate of the same run
        prev = start
        length = span & 255
        if length == _LONG_WORD:
            run = _WORD.match(flat, start)
            end = run.end() if run is not None else start + length
        else:
            end = start + length
        if end > size:
            return None
        made = next((wanted[t] for t in run_terms(flat[start:end]) if t in wanted), None)
        if made is not None:
            out.append((start, end, made))
    return out


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


def _frame(flat: str, matches: Sequence[_Match], limit: int) -> _Frame:
    """The part of ``flat`` the snippet shows, and the span of the matches that chose it."""
    if len(flat) <= limit:
        return 0, len(flat), False, 0, 0
    if limit < 8:  # too short for ellipses and whole words to make sense
        return 0, limit, False, 0, 0
    budget = limit - 2  # room for the two ellipses
    lo = hi = 0
    if matches:
        i, j = _window(matches, budget)
        lo, hi = matches[i][0], matches[j][1]
        slack = max(budget - (hi - lo), 0)
        start = max(0, lo - min(slack // 3, 60))  # a short lead-in; most room after the matches
    else:
        start = 0
    end = min(len(flat), start + budget)
    start = max(0, end - budget)
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
    move = len(lead) - start
    marks = []
    for a, b, _ in matches:
        if a < end and b > start:
            marks.append(
                (a + move if a > start else start + move, b + move if b < end else end + move)
            )
    return _snippet(
        lead + flat[start:end] + tail,
        tuple(marks),
        _clip(code, start, end, len(lead)) if code else (),
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
