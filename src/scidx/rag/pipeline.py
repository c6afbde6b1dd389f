"""The retrieval pipeline on top of one or more indexes: retrievers, tracing and cited prompts.

Contract (see ``docs/pipeline.md`` for the user-facing description):

* A :class:`Retriever` is anything with ``retrieve(request) -> list[Match]``.
  :class:`IndexRetriever` adapts a loaded :class:`~scidx.load.Index`; :class:`MultiIndexRetriever`
  combines several retrievers; a custom one (an external search service, a reranker wrapping
  another retriever) only has to implement the same method.
* :class:`RetrievalRequest` carries the question (``query``), an optional lexical override
  (``text_query``: the keyword leg searches this text instead, and ``""`` skips the keyword
  leg), ``k``, ``min_score``, filters and an optional progress callback.
* Progress: the callback receives one :class:`StageEvent` per finished stage, with its
  duration. Stages are :data:`STAGE_EMBEDDING` (absent in keyword mode: no query embedding is
  made), :data:`STAGE_RETRIEVAL`, :data:`STAGE_FUSION` (hybrid and multi-index only) and
  :data:`STAGE_CONTEXT` (prompt building).
* Tracing: :class:`Pipeline` sends one :class:`TraceRecord` per retrieval to its tracer. The
  record holds the query's SHA-256, never its text. A retrieval with fewer than ``min_matches``
  matches left after ``min_score`` is marked ``miss``.
* Multi-index fusion ``interleaved`` is reciprocal-rank fusion by default: scores of different
  indexes (BM25 of different corpora, different embedding models) are not comparable, so only
  ranks are used. ``fusion="score"`` sorts by raw score, for callers that know their scores
  are comparable.
* Prompts: numbered context blocks ``[1]``, ``[2]``... with heading path and ``source#anchor``
  (or URL), bodies cut on a block, sentence or word boundary (never inside a word) to
  ``snippet_chars``, the whole context within ``context_chars``, and a grounding instruction
  (``strict``, ``preferred``, ``permissive``) in the system message.

Runtime module: numpy, msgpack, xxhash, the stdlib and scidx runtime modules only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Protocol

from scidx.errors import ConfigError, OutputError
from scidx.index.retrieval import (
    STAGE_CONTEXT,
    STAGE_EMBEDDING,
    STAGE_FUSION,
    STAGE_RETRIEVAL,
    IndexRetriever,
    Match,
    RetrievalRequest,
    Retriever,
    StageEvent,
)

__all__ = [
    "DEFAULT_BLOCK_CHARS",
    "DEFAULT_CONTEXT_CHARS",
    "DEFAULT_TEMPLATE",
    "GROUNDING",
    "GROUNDING_MODES",
    "RRF_K",
    "STAGE_CONTEXT",
    "STAGE_EMBEDDING",
    "STAGE_FUSION",
    "STAGE_RETRIEVAL",
    "ContextBlock",
    "IndexRetriever",
    "JsonlTracer",
    "Match",
    "MultiIndexRetriever",
    "NullTracer",
    "Pipeline",
    "Prepared",
    "Prompt",
    "PromptOptions",
    "RetrievalRequest",
    "Retriever",
    "StageEvent",
    "TraceRecord",
    "Tracer",
    "build_context",
    "build_prompt",
    "cut_text",
    "query_hash",
]


#: The reciprocal-rank-fusion constant (Cormack et al. 2009); 60 is the usual choice.
RRF_K = 60

#: The most characters of one context block's body (``PromptOptions.snippet_chars``). Not
#: the hit snippet (``scidx.index.hits.DEFAULT_SNIPPET_CHARS``, 240): a block is cut from the
#: whole chunk body.
DEFAULT_BLOCK_CHARS = 1200
DEFAULT_CONTEXT_CHARS = 6000

GROUNDING_MODES = ("strict", "preferred", "permissive")

#: The system instruction of each grounding mode.
GROUNDING: Mapping[str, str] = {
    "strict": (
        "You answer questions about a product's documentation. Answer only from the numbered "
        "context blocks in the user's message, and cite the blocks you used as [1], [2]. If "
        "the context does not contain the answer, say that the documentation provided does "
        "not cover it; do not guess and do not use outside knowledge."
    ),
    "preferred": (
        "You answer questions about a product's documentation. Base your answer on the "
        "numbered context blocks in the user's message and cite the blocks you used as [1], "
        "[2]. If the context is not enough, you may add general knowledge, but say clearly "
        "which part of the answer does not come from the documentation."
    ),
    "permissive": (
        "You answer questions about a product's documentation. Use the numbered context "
        "blocks in the user's message where they help and cite them as [1], [2]; you may "
        "also answer from general knowledge."
    ),
}

#: The default user-message template; ``{context}`` and ``{question}`` are replaced.
DEFAULT_TEMPLATE = """Context from the documentation:

{context}

Question: {question}"""

#: What the context says when nothing was retrieved (so a strict model can say so).
NO_CONTEXT = "(no matching documentation was found)"

_PLACEHOLDER = re.compile(r"\{(context|question)\}")


# ---------------------------------------------------------------------------------------------
# Requests, matches, progress
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# The Index adapter
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Several indexes
# ---------------------------------------------------------------------------------------------


def _retriever_name(retriever: Retriever, position: int) -> str:
    name = getattr(retriever, "name", None)
    return name if isinstance(name, str) and name else f"retriever{position + 1}"


class MultiIndexRetriever:
    """Queries several retrievers (e.g. docs + blog, or two versions) and merges the results.

    Args:
        retrievers: The retrievers, as a sequence or a ``{name: retriever}`` mapping. Names
            label the matches (``Match.retriever``); by default a retriever's ``name``.
        strategy: ``"interleaved"``: one ranked list of at most ``k`` matches;
            ``"separate"``: each retriever's top ``k`` in turn, in the order given (so up to
            ``k`` × retrievers matches), each block keeping its own scores.
        fusion: For ``interleaved``: ``"rrf"`` (default) scores each match
            ``1 / (rrf_k + rank)`` from its rank in its own list, so raw scores of different
            indexes never get compared; ``"score"`` sorts by raw score, only meaningful when
            all retrievers score on the same scale (same provider, keyword or vector mode).
        rrf_k: The RRF constant.
        name: Name of this retriever in traces.

    Ties are broken by retriever order, then by rank, so results are deterministic.
    """

    STRATEGIES = ("interleaved", "separate")
    FUSIONS = ("rrf", "score")

    def __init__(
        self,
        retrievers: Sequence[Retriever] | Mapping[str, Retriever],
        *,
        strategy: str = "interleaved",
        fusion: str = "rrf",
        rrf_k: int = RRF_K,
        name: str = "multi",
    ) -> None:
        if strategy not in self.STRATEGIES:
            raise ConfigError(
                f"unknown merge strategy {strategy!r}; use one of {', '.join(self.STRATEGIES)}"
            )
        if fusion not in self.FUSIONS:
            raise ConfigError(f"unknown fusion {fusion!r}; use one of {', '.join(self.FUSIONS)}")
        if isinstance(rrf_k, bool) or not isinstance(rrf_k, int) or rrf_k < 0:
            raise ConfigError(f"rrf_k must be an integer >= 0, got {rrf_k!r}")
        if isinstance(retrievers, Mapping):
            named = [(str(n), r) for n, r in retrievers.items()]
        else:
            named = [(_retriever_name(r, i), r) for i, r in enumerate(retrievers)]
        if not named:
            raise ConfigError("MultiIndexRetriever needs at least one retriever")
        names = [n for n, _ in named]
        if len(set(names)) != len(names):
            raise ConfigError(
                f"retriever names must be unique, got {names}; pass a {{name: retriever}} mapping"
            )
        self.retrievers = named
        self.strategy = strategy
        self.fusion = fusion
        self.rrf_k = rrf_k
        self.name = name

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        """Retrieve from every retriever and merge by the configured strategy.

        ``min_score`` is passed to each retriever (it applies to its own scores), never to
        fused scores.
        """
        request.validate()
        lists: list[list[Match]] = []
        for name, retriever in self.retrievers:
            found = retriever.retrieve(request)
            lists.append([replace(m, retriever=m.retriever or name) for m in found[: request.k]])
        if self.strategy == "separate":
            return [m for block in lists for m in block]
        started = time.perf_counter()
        scored: list[tuple[float, int, int, Match]] = []
        for position, block in enumerate(lists):
            for rank, match in enumerate(block, start=1):
                if self.fusion == "rrf":
                    fused = 1.0 / (self.rrf_k + rank)
                    scored.append((fused, position, rank, replace(match, raw_score=match.score)))
                else:
                    scored.append((match.score, position, rank, match))
        scored.sort(key=lambda t: (-t[0], t[1], t[2]))
        merged = [replace(m, score=s) if self.fusion == "rrf" else m for s, _, _, m in scored]
        merged = merged[: request.k]
        request.report(
            StageEvent(STAGE_FUSION, time.perf_counter() - started, len(merged), self.name)
        )
        return merged


# ---------------------------------------------------------------------------------------------
# Tracing
# ---------------------------------------------------------------------------------------------


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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data with camelCase keys."""
        return {
            "time": self.time_utc,
            "retriever": self.retriever,
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


# ---------------------------------------------------------------------------------------------
# Prompt building
# ---------------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"[.!?…][)\"'\]]*(?=\s)")
_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})", re.MULTILINE)


def _open_fence(text: str) -> str | None:
    """The fence string of a code block left open at the end of ``text``, if any."""
    opened: str | None = None
    for m in _FENCE.finditer(text):
        mark = m.group(1)
        if opened is None:
            opened = mark
        elif mark[0] == opened[0] and len(mark) >= len(opened):
            opened = None
    return opened


def cut_text(text: str, limit: int) -> str:
    """Shorten ``text`` to at most ``limit`` characters on a natural boundary.

    The cut prefers, in order: the end of a block (a blank line) in the second half of the
    allowance, the end of a sentence in its second half, then the last whitespace. It never
    cuts inside a word: a text whose first word alone is longer than ``limit`` yields "". A
    code fence left open by the cut is closed, and "…" marks the cut; both count towards
    ``limit``.

    Args:
        text: The chunk body.
        limit: The most characters to return (>= 1).

    Returns:
        ``text`` stripped, unchanged when it fits.
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    for reserve in (2, 6, 10):  # room for "…", then for a closing fence too
        room = limit - reserve
        if room <= 0:
            return ""
        window = text[: room + 1]  # one more char: is the cut point itself a space?
        cut = -1
        block = window.rfind("\n\n")
        if block >= room // 2:
            cut = block
        else:
            ends = [m.end() for m in _SENTENCE_END.finditer(window) if m.end() <= room]
            if ends and ends[-1] >= room // 2:
                cut = ends[-1]
            else:
                spaces = [m.start() for m in re.finditer(r"\s", window)]
                cut = spaces[-1] if spaces else -1
        if cut <= 0:
            return ""
        piece = text[:cut].rstrip()
        fence = _open_fence(piece)
        out = piece + ("\n" + fence[0] * len(fence) if fence else "") + "\n…"
        if len(out) <= limit:
            return out
    return ""


@dataclass(frozen=True)
class PromptOptions:
    """How the prompt is assembled.

    Attributes:
        template: The user message, with ``{context}`` and ``{question}`` placeholders (each
            replaced once, in one pass, so braces in the question or the docs are kept as
            they are).
        grounding: ``"strict"`` (default), ``"preferred"`` or ``"permissive"``.
        snippet_chars: The most characters of one block's body.
        context_chars: The most characters of the whole context (all blocks with their
            headers); blocks that do not fit are left out, the last one may be cut shorter.
        min_block_chars: A block is only cut to fit the budget if this much body remains.
    """

    template: str = DEFAULT_TEMPLATE
    grounding: str = "strict"
    snippet_chars: int = DEFAULT_BLOCK_CHARS
    context_chars: int = DEFAULT_CONTEXT_CHARS
    min_block_chars: int = 200

    def validate(self) -> None:
        """Check the options.

        Raises:
            ConfigError: A placeholder is missing, an unknown grounding mode, or a
                non-positive limit.
        """
        missing = [p for p in ("{context}", "{question}") if p not in self.template]
        if missing:
            raise ConfigError(
                f"the prompt template has no {' and no '.join(missing)} placeholder; a "
                "template must contain both {context} and {question}"
            )
        if self.grounding not in GROUNDING_MODES:
            raise ConfigError(
                f"unknown grounding mode {self.grounding!r}; use one of "
                f"{', '.join(GROUNDING_MODES)}"
            )
        for name in ("snippet_chars", "context_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class ContextBlock:
    """One numbered block of the context.

    Attributes:
        number: The citation number, from 1.
        match: The match it shows.
        body: The (possibly cut) chunk body.
        text: The whole block as it appears in the prompt.
    """

    number: int
    match: Match
    body: str
    text: str


@dataclass(frozen=True)
class Prompt:
    """An assembled prompt, ready for a chat model.

    Attributes:
        system: The grounding instruction (the system message).
        user: The template filled with context and question (the user message).
        blocks: The context blocks, in citation order.
        grounding: The grounding mode.
    """

    system: str
    user: str
    blocks: tuple[ContextBlock, ...]
    grounding: str

    def messages(self) -> list[dict[str, str]]:
        """The chat-completions ``messages`` list."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]

    def sources(self) -> list[str]:
        """``[n] link`` lines for the blocks, in citation order."""
        return [f"[{b.number}] {b.match.link}" for b in self.blocks]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "grounding": self.grounding,
            "system": self.system,
            "user": self.user,
            "sources": [
                {"number": b.number, "id": b.match.id, "link": b.match.link} for b in self.blocks
            ],
        }


def _block_header(number: int, match: Match) -> str:
    heading = match.heading
    return f"[{number}] {heading} ({match.link})" if heading else f"[{number}] {match.link}"


def build_context(
    matches: Iterable[Match],
    *,
    snippet_chars: int = DEFAULT_BLOCK_CHARS,
    context_chars: int = DEFAULT_CONTEXT_CHARS,
    min_block_chars: int = 200,
) -> list[ContextBlock]:
    """Number the matches as context blocks within a character budget.

    Each block is ``[n] Heading > Path (source#anchor)`` followed by the chunk body cut by
    :func:`cut_text` to ``snippet_chars``. Parts of one section (same retriever, source and
    anchor) make one block, at the place of the best-ranked part: their bodies in document
    order, under one heading, with ``[…]`` where a part between them was not retrieved, and
    ``snippet_chars`` per part. Blocks are added in order while they fit in ``context_chars``
    (counting the blank line between blocks). A block that does not fit is cut shorter when
    at least ``min_block_chars`` of its body still fit, else left out, and later (shorter)
    blocks may still fill the rest of the budget; the order of the matches is kept. The same
    chunk is never shown twice (multi-index results may repeat one).

    Returns:
        The blocks, numbered from 1.
    """
    blocks: list[ContextBlock] = []
    used = 0
    seen: set[tuple[str, str]] = set()
    ordered = list(matches)
    sections: dict[tuple[str, str, str], list[Match]] = {}
    for match in ordered:
        if _ordinal(match) is not None:
            sections.setdefault((match.retriever, match.source, match.anchor), []).append(match)
    for match in ordered:
        key = (match.retriever, match.id)
        if key in seen:
            continue
        parts = sections.get((match.retriever, match.source, match.anchor), [match])
        parts = sorted(
            {p.id: p for p in parts if (p.retriever, p.id) not in seen}.values(),
            key=lambda p: _ordinal(p) or 0,
        )
        if match not in parts:
            parts = [match]
        number = len(blocks) + 1
        header = _block_header(number, match)
        sep = 2 if blocks else 0
        room = context_chars - used - sep - len(header) - 1
        if room <= 0:
            continue  # a later block with a shorter header may still fit
        full = _joined_parts(parts)
        body = cut_text(full, min(snippet_chars * len(parts), room))
        if len(body) < min(min_block_chars, len(full)) and room < snippet_chars:
            continue  # only a sliver of this block would fit; a shorter one may
        seen.update((p.retriever, p.id) for p in parts)
        text = f"{header}\n{body}" if body else header
        blocks.append(ContextBlock(number, match, body, text))
        used += sep + len(text)
    return blocks


def _ordinal(match: Match) -> int | None:
    """The part number of a Markdown chunk (id ``source:anchor:ordinal``), else ``None``."""
    prefix = f"{match.source}:{match.anchor}:"
    tail = match.id[len(prefix) :] if match.id.startswith(prefix) else ""
    return int(tail) if tail.isdigit() else None


def _joined_parts(parts: Sequence[Match]) -> str:
    """The bodies of one section's parts in order; ``[…]`` marks a part that is missing."""
    out: list[str] = []
    previous: int | None = None
    for part in parts:
        ordinal = _ordinal(part)
        body = (part.text or part.snippet).strip()
        if out:
            gap = previous is None or ordinal is None or ordinal != previous + 1
            out.append("\n\n[…]\n\n" if gap else "\n\n")
        out.append(body)
        previous = ordinal
    return "".join(out)


def _fill(template: str, context: str, question: str) -> str:
    values = {"context": context, "question": question}
    done: set[str] = set()

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in done:  # a second occurrence stays as it is
            return m.group(0)
        done.add(name)
        return values[name]

    return _PLACEHOLDER.sub(sub, template)


def build_prompt(
    question: str,
    matches: Sequence[Match],
    options: PromptOptions | None = None,
) -> Prompt:
    """Assemble the prompt for ``question`` from retrieved ``matches``.

    Args:
        question: The user's question, inserted verbatim.
        matches: The retrieved chunks, best first.
        options: Template, grounding and budgets (defaults: :class:`PromptOptions`).

    Returns:
        The :class:`Prompt` (system + user message and the blocks for citing sources).

    Raises:
        ConfigError: Invalid options (see :meth:`PromptOptions.validate`).

    Example:
        >>> p = build_prompt("How?", [Match("a.md:x:0", 1.0, "a.md", "x", ("A",), "", "Do it.")])
        >>> print(p.user)
        Context from the documentation:
        <BLANKLINE>
        [1] A (a.md#x)
        Do it.
        <BLANKLINE>
        Question: How?
    """
    opts = options or PromptOptions()
    opts.validate()
    blocks = build_context(
        matches,
        snippet_chars=opts.snippet_chars,
        context_chars=opts.context_chars,
        min_block_chars=opts.min_block_chars,
    )
    context = "\n\n".join(b.text for b in blocks) if blocks else NO_CONTEXT
    return Prompt(
        system=GROUNDING[opts.grounding],
        user=_fill(opts.template, context, question),
        blocks=tuple(blocks),
        grounding=opts.grounding,
    )


# ---------------------------------------------------------------------------------------------
# The pipeline: retrieval + trace + prompt
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """The result of :meth:`Pipeline.prepare`: everything but the model's answer.

    Attributes:
        question: The question.
        matches: The retrieved matches.
        prompt: The assembled prompt.
        trace: The trace record that was sent to the tracer.
    """

    question: str
    matches: list[Match]
    prompt: Prompt
    trace: TraceRecord

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: matches, prompt and trace (the trace has no question text)."""
        return {
            "question": self.question,
            "matches": [m.to_dict() for m in self.matches],
            "prompt": self.prompt.to_dict(),
            "trace": self.trace.to_dict(),
        }


class Pipeline:
    """Retrieval with tracing and prompt building on top of any :class:`Retriever`.

    A ``Pipeline`` is itself a :class:`Retriever` (its :meth:`retrieve` traces), so it can be
    nested. :meth:`prepare` is the "direct inspection" call: matches plus the fully assembled
    prompt, without calling any model.

    Args:
        retriever: The retriever (an :class:`IndexRetriever`, a :class:`MultiIndexRetriever`
            or a custom one).
        tracer: Receives one :class:`TraceRecord` per retrieval (default: discard).
        min_matches: A retrieval with fewer matches than this (after ``min_score``) is marked
            a ``miss`` in its trace.
        prompt_options: Defaults for :meth:`prepare`.

    Example:
        >>> pipe = Pipeline(IndexRetriever(scidx.load("docs.scidx")))  # doctest: +SKIP
        >>> prepared = pipe.prepare("How do I configure the cache?")  # doctest: +SKIP
        >>> print(prepared.prompt.user)  # doctest: +SKIP
    """

    def __init__(
        self,
        retriever: Retriever,
        *,
        tracer: Tracer | None = None,
        min_matches: int = 1,
        prompt_options: PromptOptions | None = None,
    ) -> None:
        if isinstance(min_matches, bool) or not isinstance(min_matches, int) or min_matches < 0:
            raise ConfigError(f"min_matches must be an integer >= 0, got {min_matches!r}")
        self.retriever = retriever
        self.tracer: Tracer = tracer or NullTracer()
        self.min_matches = min_matches
        self.prompt_options = prompt_options or PromptOptions()
        self.name = _retriever_name(retriever, 0)

    def _run(
        self, request: RetrievalRequest
    ) -> tuple[list[Match], dict[str, float], int | None, float]:
        durations: dict[str, float] = {}
        counts: dict[str, int] = {}
        outer = request.on_progress

        def collect(event: StageEvent) -> None:
            durations[event.stage] = durations.get(event.stage, 0.0) + event.seconds
            if event.count is not None and event.stage == STAGE_RETRIEVAL:
                counts[STAGE_RETRIEVAL] = counts.get(STAGE_RETRIEVAL, 0) + event.count
            if outer is not None:
                outer(event)

        started = time.perf_counter()
        matches = self.retriever.retrieve(replace(request, on_progress=collect))
        elapsed = time.perf_counter() - started
        return matches, durations, counts.get(STAGE_RETRIEVAL), elapsed

    def _trace(
        self,
        request: RetrievalRequest,
        matches: Sequence[Match],
        durations: Mapping[str, float],
        candidates: int | None,
        seconds: float,
    ) -> TraceRecord:
        trace = TraceRecord(
            query_sha256=query_hash(request.query),
            query_chars=len(request.query),
            mode=request.mode,
            k=request.k,
            candidates=max(candidates if candidates is not None else 0, len(matches)),
            results=len(matches),
            top_score=max((m.score for m in matches), default=None),
            miss=len(matches) < self.min_matches,
            min_matches=self.min_matches,
            min_score=request.min_score,
            latency_ms={s: round(v * 1000.0, 3) for s, v in durations.items()},
            total_ms=round(seconds * 1000.0, 3),
            retriever=self.name,
            time_utc=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        self.tracer.record(trace)
        return trace

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        """Retrieve through the wrapped retriever and trace the retrieval."""
        matches, durations, candidates, seconds = self._run(request)
        self._trace(request, matches, durations, candidates, seconds)
        return matches

    def prepare(
        self,
        question: str | RetrievalRequest,
        *,
        k: int = 5,
        mode: str = "hybrid",
        options: PromptOptions | None = None,
    ) -> Prepared:
        """Retrieve for ``question`` and assemble the prompt; no model is called.

        Args:
            question: The question, or a full :class:`RetrievalRequest` (then ``k`` and
                ``mode`` are ignored).
            k: Matches to retrieve.
            mode: Search mode.
            options: Prompt options (default: the pipeline's).

        Returns:
            Matches, prompt and the trace record (which includes the ``context`` stage).
        """
        request = (
            question
            if isinstance(question, RetrievalRequest)
            else RetrievalRequest(question, k=k, mode=mode)
        )
        matches, durations, candidates, seconds = self._run(request)
        started = time.perf_counter()
        prompt = build_prompt(request.query, matches, options or self.prompt_options)
        spent = time.perf_counter() - started
        durations[STAGE_CONTEXT] = spent
        request.report(StageEvent(STAGE_CONTEXT, spent, len(prompt.blocks), self.name))
        trace = self._trace(request, matches, durations, candidates, seconds + spent)
        return Prepared(request.query, matches, prompt, trace)
