"""Limits on what an index file may declare, and text made safe for terminals and JSON.

An index file is untrusted data. The container checks (:mod:`scidx.index.format`) bound what the
header can make a reader allocate; this module holds the remaining limits on values the runtime
*derives* from file data (query vectors of ``dimensions`` floats, URLs expanded from
``urlTemplate``, front-matter JSON) and the helpers every human-facing output uses so that index
strings can never drive the terminal (escape sequences, OSC 8 links, C1 controls).

``docs/RELIABILITY.md`` lists each limit with the test that holds it.

Runtime module: stdlib only.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = [
    "MAX_DIMENSIONS",
    "MAX_URL_PLACEHOLDERS",
    "MAX_URL_TEMPLATE_CHARS",
    "json_dumps_safe",
    "parse_meta_json",
    "terminal_safe",
]

MAX_DIMENSIONS = 65_536
"""Largest embedding dimension a reader accepts. Real models use at most a few thousand; without a
bound an *empty* index declaring 2**28 dimensions makes every vector query allocate gigabytes."""

MAX_URL_TEMPLATE_CHARS = 2048
"""Longest ``urlTemplate`` accepted (pack and load). A URL template is one short pattern."""

MAX_URL_PLACEHOLDERS = 8
"""Most placeholders a ``urlTemplate`` may hold. With the length cap this bounds a hit's URL to
the template plus 8 copies of its own source path and anchor: a 1 MB index can no longer expand
into gigabyte URLs (120,000 ``{source}`` placeholders did)."""

# C0 controls except TAB and LF, DEL, C1 controls, and the bidirectional overrides/isolates
# ("Trojan source"): each can change what a terminal shows or does (ESC starts a control
# sequence, CSI is U+009B on its own, CR overwrites the line, OSC 8 makes hidden links).
_PATTERNS = {
    "unsafe": "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]",
    "unsafe one line": "[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]",
    # In JSON text these can only sit inside strings; json.dumps leaves them raw with
    # ensure_ascii=False (it escapes only C0), so they are escaped afterwards.
    "json raw": "[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]",
}


@functools.cache
def _pattern(name: str) -> re.Pattern[str]:
    # Compiled on first use: a keyword query prints nothing (the three cost 1.5 ms at start-up).
    return re.compile(_PATTERNS[name])


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, *, one_line: bool = False) -> str:
    r"""Return ``text`` with every terminal control character shown as a visible escape.

    ``"\x1b[2J"`` becomes ``"\\x1b[2J"``: the content stays readable and nothing reaches the
    terminal as a control. TAB and LF are kept unless ``one_line`` is set.

    Args:
        text: Any string from an index, a config or a provider.
        one_line: Also escape TAB and LF (for single-line fields: links, headings, names).

    Returns:
        The text, unchanged when it holds no control character.

    Example:
        >>> terminal_safe("a\x1b]8;;http://x\x1b\\b")
        'a\\x1b]8;;http://x\\x1b\\b'
    """
    return _pattern("unsafe one line" if one_line else "unsafe").sub(_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_dumps_safe(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)`` with DEL, C1 and bidi controls escaped.

    The result decodes to the same value; it just never carries a raw U+009B (CSI) or similar
    to a terminal that displays it.

    Args:
        value: JSON-ready data.
        **kwargs: Passed to :func:`json.dumps` (``indent``, ``sort_keys``...).

    Returns:
        The JSON text.
    """
    import json  # imported on use: a keyword search never needs it (start-up time)

    raw = json.dumps(value, ensure_ascii=False, **kwargs)
    return _pattern("json raw").sub(_json_escape, raw)


def parse_meta_json(raw: str) -> Any:
    """Decode one ``source.meta`` row; deep nesting is a ``ValueError``, not a ``RecursionError``.

    Args:
        raw: The row's text.

    Returns:
        The decoded value.

    Raises:
        ValueError: Not JSON, or nested deeper than the interpreter's recursion limit (a
            forged row of 200,000 ``[``).
    """
    import json  # imported on use: only metadata filters and verify need it

    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("nested too deeply") from None
