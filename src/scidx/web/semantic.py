"""Query embeddings under ``serve``: their own threads and a bounded wait, apart from searching.

A hybrid or vector request first embeds its query (for an index embedded with OpenAI, a network
call), then searches with that vector in the search slots. Embedding never happens in a search
slot, so a slow or stuck embedding endpoint cannot hold the slots keyword searches need
(issue 39, H1):

* At most ``embed_threads`` query embeddings run at once. A request waits at most
  ``embed_wait`` seconds for a free thread and its vector; then it gets ``503``
  ``query_embedding_timeout`` (the page then searches by keyword and says the semantic part is
  unavailable). An embedding given up on keeps its thread until the provider's own deadline
  ends it (:mod:`scidx.http`), so threads stay bounded however many requests arrive.
* A provider that fails answers ``503`` ``query_embedding_error`` as before
  (:func:`~scidx.web.common.from_scidx_error`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

import anyio
import anyio.to_thread
import numpy as np

from scidx.errors import ScidxError
from scidx.web.common import ApiError, from_scidx_error
from scidx.web.store import ServedIndex

__all__ = ["EmbedSlots", "query_vectors"]

T = TypeVar("T")

_POLL = 0.02  # seconds between looks for a free embedding thread


class _Abandoned(Exception):
    """Internal: the request stopped waiting before its embedding thread started."""


class EmbedSlots:
    """Runs query embeddings on at most ``threads`` threads, each request waiting ``wait`` s.

    Args:
        threads: Query embeddings running at once (abandoned ones count until they end).
        wait: Seconds a request waits for a thread and its vector before a ``503``.
    """

    def __init__(self, threads: int, wait: float) -> None:
        self.threads = threads
        self.wait = wait
        self._busy = 0
        self._lock = threading.Lock()
        self._limiter: anyio.CapacityLimiter | None = None

    @property
    def busy(self) -> int:
        """Embeddings running now, including those whose request gave up waiting."""
        with self._lock:
            return self._busy

    def _take(self) -> bool:
        with self._lock:
            if self._busy >= self.threads:
                return False
            self._busy += 1
            return True

    async def run(self, func: Callable[[], T]) -> T:
        """``func()`` on an embedding thread, or ``ApiError(503)`` after ``wait`` seconds."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.threads)
        limiter = self._limiter
        # Whoever sets it first releases the slot: the thread when the provider call ends (not
        # when the request stops waiting), or this coroutine if the thread never started.
        owner: list[str] = []

        def work() -> T:
            with self._lock:
                if owner:
                    raise _Abandoned
                owner.append("thread")
            try:
                return func()
            finally:
                with self._lock:
                    self._busy -= 1

        taken = False
        try:
            with anyio.move_on_after(self.wait):
                while not self._take():
                    await anyio.sleep(_POLL)
                taken = True
                return await anyio.to_thread.run_sync(work, limiter=limiter, abandon_on_cancel=True)
        finally:
            with self._lock:
                if taken and not owner:
                    owner.append("request")
                    self._busy -= 1
        raise ApiError(
            503,
            "the semantic part of this search is unavailable: the query embedding did not "
            f'arrive within {self.wait:g} s; search with mode="keyword"',
            code="query_embedding_timeout",
            type="server_error",
        )


def _vector(entry: ServedIndex, query: str) -> np.ndarray | None:
    with entry.lease() as idx:
        try:
            vec = np.asarray(idx.embed_query(query), dtype=np.float32).reshape(-1)
        except ScidxError as exc:
            raise from_scidx_error(exc, "query") from None
    # A vector search cannot use (and would refuse) an all-zero or NaN vector: let the search
    # decide what it means (the hashing embedder's stop-word queries), as it does unaided.
    if not vec.size or not np.all(np.isfinite(vec)) or not np.any(vec):
        return None
    return vec


async def query_vectors(
    slots: EmbedSlots, entries: Sequence[ServedIndex], query: str, mode: str
) -> dict[str, np.ndarray | None]:
    """Each entry's query vector for ``mode`` (none for ``keyword`` or an empty query).

    Raises:
        ApiError: ``503`` when the vectors do not arrive in time or the provider fails.
    """
    if mode == "keyword" or not query.strip():
        return {}

    def embed_all() -> dict[str, np.ndarray | None]:
        return {entry.name: _vector(entry, query) for entry in entries}

    return await slots.run(embed_all)
