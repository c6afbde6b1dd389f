"""What every named reranker gets from :func:`~scidx.rerank.registry.load_reranker`: a cache.

:class:`CachedReranker` wraps any reranker (built-in or plugin) with the contract embedders
have: scores are cached under the reranker's ``stamp()`` (so another model or setting never
reuses them), and a plugin that raises anything but a scidx error has it reported as a
:class:`~scidx.errors.RerankError` naming the plugin, never as a traceback.

The cache is in memory and bounded (least recently used out): a search box repeats queries,
and a benchmark re-runs the same candidates for each reranker setting.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import xxhash

from scidx.errors import RerankError, ScidxError
from scidx.index.hits import Hit
from scidx.index.rerank import Reranker, checked_scores, passage

__all__ = ["DEFAULT_CACHE_SIZE", "CachedReranker"]

#: Query-passage scores kept per reranker.
DEFAULT_CACHE_SIZE = 65536


class CachedReranker:
    """A reranker plus a bounded score cache keyed by stamp, query and passage.

    Args:
        inner: The reranker.
        cache_size: Scores kept (0 turns the cache off).
    """

    def __init__(self, inner: Reranker, *, cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        self.inner = inner
        self.name: str = getattr(inner, "name", type(inner).__name__)
        self.cache_size = cache_size
        self._cache: OrderedDict[bytes, float] = OrderedDict()
        self._lock = threading.Lock()
        self._domain = json.dumps(dict(self.stamp()), sort_keys=True, default=str).encode()
        self.calls = 0  # candidates sent to the inner reranker (cache misses)

    def __repr__(self) -> str:
        return f"CachedReranker({self.name!r})"

    def stamp(self) -> Mapping[str, object]:
        """The wrapped reranker's stamp."""
        try:
            return self.inner.stamp()
        except ScidxError:
            raise
        except Exception as exc:
            raise self._plugin_error(exc) from exc

    def _key(self, query: str, text: str) -> bytes:
        digest = xxhash.xxh3_128(self._domain)
        for part in (query, text):
            data = part.encode("utf-8", "surrogatepass")
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        return digest.digest()

    def _plugin_error(self, exc: Exception) -> RerankError:
        return RerankError(
            f"the reranker {self.name!r} failed: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}"
        )

    def rerank(self, query: str, candidates: Sequence[Hit]) -> list[float]:
        """Scores for ``candidates``; only uncached pairs reach the wrapped reranker."""
        keys = [self._key(query, passage(hit)) for hit in candidates]
        found: list[float | None] = []
        with self._lock:
            for key in keys:
                value = self._cache.get(key)
                if value is not None:
                    self._cache.move_to_end(key)
                found.append(value)
        missing = [i for i, v in enumerate(found) if v is None]
        if missing:
            try:
                raw = self.inner.rerank(query, [candidates[i] for i in missing])
            except ScidxError:
                raise
            except Exception as exc:  # a plugin's own failure: reported, not a traceback
                raise self._plugin_error(exc) from exc
            fresh = checked_scores(self.inner, raw, len(missing))
            self.calls += len(missing)
            with self._lock:
                for i, score in zip(missing, fresh, strict=True):
                    found[i] = score
                    if self.cache_size > 0:
                        self._cache[keys[i]] = score
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return [float(v) for v in found if v is not None]
