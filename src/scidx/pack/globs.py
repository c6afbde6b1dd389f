"""Config globs (``*``, ``**``, ``?``, ``[...]``) matched without backtracking regexes.

Semantics (unchanged from the regex translation this replaces, which
``tests/test_reliability.py`` checks against on random globs and paths):

* ``/`` separates segments; ``*`` matches any run of characters within a segment (several ``*``
  in a row are one), ``?`` one character, ``[abc]``/``[a-z]`` one character of the class and
  ``[!...]``/``[^...]`` one character outside it (never ``/``);
* a ``**`` segment matches zero or more whole segments; as the *last* segment it matches one or
  more characters of anything (so ``docs/**`` matches everything below ``docs`` but not
  ``docs`` itself).

Why not ``re``: a glob such as ``docs/*a*a*a*a*a*a*a*ab.md`` compiles to nested ``[^/]*`` that
Python's backtracking engine explores in polynomial time of high degree (a 200-character name
took over 250 s). Here each segment is matched by the greedy two-pointer wildcard algorithm,
O(len(segment) × len(pattern)) at worst, and ``**`` by a memoised walk over segment positions,
so matching is polynomial of low degree whatever the input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import cast

__all__ = ["Glob", "compile_glob"]

# One pattern element: ("lit", c), ("any1", ""), ("star", ""), ("class", (negate, ranges)).
_Elem = tuple[str, object]


@dataclass(frozen=True)
class Glob:
    """A compiled glob; :meth:`fullmatch` tells whether a ``/``-separated path matches it."""

    pattern: str
    _segments: tuple[tuple[_Elem, ...] | None, ...]  # None is a "**" segment

    def fullmatch(self, path: str) -> bool:
        """Whether the whole of ``path`` matches (the name mirrors ``re.Pattern.fullmatch``)."""
        parts = path.split("/")
        segs = self._segments
        last = len(segs) - 1

        @cache
        def match(gi: int, pi: int) -> bool:
            if gi == len(segs):
                return pi == len(parts)
            seg = segs[gi]
            if seg is None:
                if gi == last:
                    # ".+": the rest of the path, as a string, must be non-empty.
                    return pi < len(parts) and (len(parts) - pi > 1 or parts[pi] != "")
                # "(?:[^/]+/)*": zero or more non-empty segments.
                j = pi
                while True:
                    if match(gi + 1, j):
                        return True
                    if j >= len(parts) - 1 or parts[j] == "":
                        return False
                    j += 1
            if pi >= len(parts):
                return False
            return _match_segment(seg, parts[pi]) and match(gi + 1, pi + 1)

        try:
            return match(0, 0)
        finally:
            match.cache_clear()


def compile_glob(glob: str) -> Glob:
    """Compile a ``/``-separated glob.

    Raises:
        re.error: A ``[`` without its ``]`` (the config layer reports it).
    """
    segments: list[tuple[_Elem, ...] | None] = []
    for part in glob.split("/"):
        segments.append(None if part == "**" else _compile_segment(part))
    return Glob(glob, tuple(segments))


def _compile_segment(segment: str) -> tuple[_Elem, ...]:
    out: list[_Elem] = []
    i, n = 0, len(segment)
    while i < n:
        c = segment[i]
        if c == "*":
            while i < n and segment[i] == "*":
                i += 1
            out.append(("star", ""))
            continue
        if c == "?":
            out.append(("any1", ""))
        elif c == "[":
            j = i + 1
            if j < n and segment[j] in "!^":
                j += 1
            if j < n and segment[j] == "]":
                j += 1
            while j < n and segment[j] != "]":
                j += 1
            if j >= n:
                raise re.error("unbalanced [")
            body = segment[i + 1 : j]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            out.append(("class", (negate, _class_ranges(body))))
            i = j
        else:
            out.append(("lit", c))
        i += 1
    return tuple(out)


def _class_ranges(body: str) -> tuple[tuple[str, str], ...]:
    ranges: list[tuple[str, str]] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            ranges.append((body[k], body[k + 2]))
            k += 3
        else:
            ranges.append((body[k], body[k]))
            k += 1
    return tuple(ranges)


def _one(elem: _Elem, ch: str) -> bool:
    kind, arg = elem
    if kind == "lit":
        return ch == arg
    if kind == "any1":
        return ch != "/"
    negate, ranges = cast("tuple[bool, tuple[tuple[str, str], ...]]", arg)
    inside = any(lo <= ch <= hi for lo, hi in ranges)
    return (not inside and ch != "/") if negate else inside


def _match_segment(pattern: tuple[_Elem, ...], text: str) -> bool:
    """Greedy wildcard matching with one remembered star: no exponential backtracking."""
    p = t = 0
    star_p, star_t = -1, 0
    np_, nt = len(pattern), len(text)
    while t < nt:
        if p < np_ and pattern[p][0] == "star":
            star_p, star_t = p, t
            p += 1
        elif p < np_ and _one(pattern[p], text[t]):
            p += 1
            t += 1
        elif star_p >= 0:
            p = star_p + 1
            star_t += 1
            t = star_t
        else:
            return False
    while p < np_ and pattern[p][0] == "star":
        p += 1
    return p == np_
