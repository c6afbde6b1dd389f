"""Config globs (``*``, ``**``, ``?``, ``[...]``) compiled to anchored regular expressions."""

from __future__ import annotations

import re

__all__ = ["compile_glob", "segment_regex"]


def compile_glob(glob: str) -> re.Pattern[str]:
    """Translate a ``/``-separated glob to an anchored regular expression."""
    parts = glob.split("/")
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            # "**" as the last segment matches everything below (at least one segment, so that
            # "docs/**" does not match the folder "docs" itself); elsewhere zero or more segments.
            out.append(".+" if last else "(?:[^/]+/)*")
            continue
        out.append(segment_regex(part) + ("" if last else "/"))
    return re.compile("".join(out), re.DOTALL)


def segment_regex(segment: str) -> str:
    """The regular expression for one path segment of a glob (no / inside)."""
    out: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        c = segment[i]
        if c == "*":
            while i < n and segment[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
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
            body = body.replace("\\", "\\\\").replace("^", "\\^")
            out.append(f"[^/{body}]" if negate else f"[{body}]")
            i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
