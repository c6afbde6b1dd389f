"""Cited prompts: numbered context blocks from matches, a grounding instruction, a template.

Context blocks are ``[1]``, ``[2]``... with heading path and ``source#anchor`` (or URL), bodies
cut on a block, sentence or word boundary (never inside a word) to ``snippet_chars``, the whole
context within ``context_chars``; the grounding instruction (``strict``, ``preferred``,
``permissive``) is the system message.

Runtime module: numpy, msgpack, xxhash, the stdlib and scidx runtime modules only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scidx.errors import ConfigError
from scidx.index.retrieval import Match

__all__ = [
    "DEFAULT_BLOCK_CHARS",
    "DEFAULT_CONTEXT_CHARS",
    "DEFAULT_TEMPLATE",
    "GROUNDING",
    "GROUNDING_MODES",
    "NO_CONTEXT",
    "ContextBlock",
    "Prompt",
    "PromptOptions",
    "build_context",
    "build_prompt",
    "cut_text",
]

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
