"""Retrieval traces: one :class:`TraceRecord` per retrieval, sent to a :class:`Tracer`.

A record holds the query's SHA-256 and length, never its text, plus counts, the miss flag and
the latency of each stage. :class:`JsonlTracer` appends records to a JSON Lines file.

Runtime module: numpy, msgpack, xxhash, the stdlib and scidx runtime modules only.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from scidx.errors import OutputError

__all__ = ["JsonlTracer", "NullTracer", "TraceRecord", "Tracer", "query_hash"]


def query_hash(query: str) -> str:
    """The SHA-256 hex digest of ``query``'s UTF-8 bytes (traces never hold the text)."""
    return hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class TraceRecord:
    """What a tracer learns about one retrieval; no query text, only its hash.

    Attributes:
        query_sha256: SHA-256 of the query text.
        query_chars: Length of the query in characters.
        mode: The search mode.
        k: The requested number of matches.
        candidates: Matches the retrieval produced before the ``min_score`` cut.
        results: Matches returned after it.
        top_score: The best returned score (``None`` when nothing came back).
        miss: Fewer than ``min_matches`` matches survived ``min_score``.
        min_matches: The miss threshold in force.
        min_score: The score cut in force.
        latency_ms: Milliseconds per stage (summed over retrievers for multi-index).
        total_ms: Milliseconds of the whole retrieval (plus context building, if any).
        retriever: The retriever's name.
        reranker: The reranker's name ("" when none ran).
        time_utc: When the retrieval finished (ISO 8601, seconds).
    """

    query_sha256: str
    query_chars: int
    mode: str
    k: int
    candidates: int
    results: int
    top_score: float | None
    miss: bool
    min_matches: int
    min_score: float | None
    latency_ms: Mapping[str, float]
    total_ms: float
    retriever: str = ""
    time_utc: str = ""
    reranker: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data with camelCase keys."""
        return {
            "time": self.time_utc,
            "retriever": self.retriever,
            "reranker": self.reranker,
            "querySha256": self.query_sha256,
            "queryChars": self.query_chars,
            "mode": self.mode,
            "k": self.k,
            "candidates": self.candidates,
            "results": self.results,
            "topScore": self.top_score,
            "miss": self.miss,
            "minMatches": self.min_matches,
            "minScore": self.min_score,
            "latencyMs": dict(self.latency_ms),
            "totalMs": self.total_ms,
        }


class Tracer(Protocol):
    """Receives one :class:`TraceRecord` per retrieval."""

    def record(self, trace: TraceRecord) -> None:
        """Store or forward ``trace``; must not raise for ordinary I/O hiccups of its own."""
        ...


class NullTracer:
    """The default tracer: discards every record."""

    def record(self, trace: TraceRecord) -> None:
        """Do nothing."""
        return None


class JsonlTracer:
    """Appends each record as one JSON line to a file; safe to share between threads.

    The file is opened for appending on first use and each line is flushed at once, so a
    crash loses at most the line being written. Use it as a context manager or call
    :meth:`close`.

    Args:
        path: The ``.jsonl`` file (created, with its folder, if needed).

    Raises:
        OutputError: On the first record, when the file cannot be opened or written.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._fh: IO[str] | None = None

    def record(self, trace: TraceRecord) -> None:
        """Append ``trace`` as one line."""
        line = json.dumps(trace.to_dict(), sort_keys=True, ensure_ascii=False)
        with self._lock:
            try:
                if self._fh is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._fh = open(self.path, "a", encoding="utf-8")
                self._fh.write(line + "\n")
                self._fh.flush()
            except OSError as exc:
                raise OutputError(
                    f"cannot write the trace file {self.path}: {exc.strerror or exc}; choose a "
                    "writable path or turn tracing off"
                ) from None

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            fh, self._fh = self._fh, None
        if fh is not None:
            fh.close()

    def __enter__(self) -> JsonlTracer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
