"""How long an HTTP API asked a client to wait before retrying: ``Retry-After`` and kin.

Shared by the API clients (the OpenAI embedding provider, :mod:`scidx.embed.openai`, and the
HTTP rerankers, :mod:`scidx.rerank.http`), so they honour a server's request the same way.
"""

from __future__ import annotations

import email.utils
import math
import time
from typing import Any

__all__ = ["retry_after"]


def retry_after(headers: Any, cap: float) -> float | None:
    """Seconds the server asked to wait, within ``[0, cap]``; ``None`` if it did not say.

    ``retry-after-ms`` (OpenAI's, milliseconds) wins over ``Retry-After``, which is seconds or
    an HTTP date. A value that is not a finite number or a date is ignored (``None``).

    Args:
        headers: The response headers (any mapping with a case-insensitive ``get``).
        cap: The longest wait honoured, in seconds.
    """
    value: float | None = None
    raw_ms, raw = headers.get("retry-after-ms"), headers.get("retry-after")
    try:
        if raw_ms is not None:
            value = float(raw_ms) / 1000.0
        elif raw is not None:
            value = float(raw)
    except ValueError:
        value = None
    if value is None and raw is not None:
        try:
            value = email.utils.parsedate_to_datetime(raw).timestamp() - time.time()
        except (TypeError, ValueError, IndexError):
            value = None
    if value is None or not math.isfinite(value):
        return None
    return min(max(value, 0.0), cap)
