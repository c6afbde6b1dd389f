"""Keep secrets out of what scidx repeats: error messages, logs and reprs.

One helper for every place that echoes text from a provider or a URL a user gave
(:mod:`scidx.embed.openai`, :mod:`scidx.rag.chat`), so they cannot disagree about what a
secret looks like.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable

__all__ = ["display_url", "redact"]

# Anything shaped like an OpenAI-style secret: `sk-...`, `sk-proj-...`, `sk-svcacct-...`,
# including partially masked echoes such as `sk-proj-****abcd` that servers send back.
_KEY_PATTERN = re.compile(r"sk-[A-Za-z0-9_\-*.]{6,}")
# An HTTP Authorization value: `Bearer <token>` (any token, not only sk- keys).
_BEARER_PATTERN = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9_\-.~+/=*]{4,}")
# Credentials inside a URL (`scheme://user:password@host`) and key-like query parameters.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@]*@")
_URL_KEY_PARAM = re.compile(
    r"(?i)([?&](?:api[_-]?key|key|token|access[_-]?token|password|secret)=)[^&#\s]+"
)

REDACTED = "***"


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Return ``text`` with every secret removed.

    Removes the exact ``secrets`` given (e.g. the key in use, even if it is not ``sk-``
    shaped), anything shaped like an ``sk-`` key, ``Bearer`` tokens, and credentials or
    key-like query parameters inside URLs.

    Args:
        text: The text about to be shown or logged.
        secrets: Literal secret values to remove wherever they appear (``None``/"" ignored).

    Returns:
        The text with each secret replaced by ``***`` (``sk-***`` for key-shaped ones).

    Example:
        >>> redact("401: bad key sk-proj-abcdefgh1234, see https://u:p@host/x?api_key=zz")
        '401: bad key sk-***, see https://***@host/x?api_key=***'
    """
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    text = _KEY_PATTERN.sub("sk-" + REDACTED, text)
    text = _BEARER_PATTERN.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    return _URL_KEY_PARAM.sub(lambda m: m.group(1) + REDACTED, text)


def display_url(url: str) -> str:
    """``url`` without any ``user:password@`` part or key-like query value, fit for a message.

    Example:
        >>> display_url("https://user:pw@llm.example:8443/v1")
        'https://llm.example:8443/v1'
    """
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:  # an unparsable port or netloc: fall back to the pattern-based scrub
        return redact(url)
    if parts.username is not None or parts.password is not None:
        host = parts.hostname or ""
        netloc = f"{host}:{port}" if port else host
        url = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    return _URL_KEY_PARAM.sub(lambda m: m.group(1) + REDACTED, url)
