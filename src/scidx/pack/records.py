"""Chunk records: the :class:`Record` type packers consume and their validation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scidx.errors import ChunkError
from scidx.index.highlight import CODE_END, CODE_START
from scidx.pack.chunk import Chunk

__all__ = ["Record", "validate_records"]


@dataclass(frozen=True)
class Record:
    """One chunk to index, for producers other than the chunker (BEIR corpus, custom splitter).

    Only ``id`` and ``text`` are required. A record without ``source`` is its own source
    (``source = id``), so its title is kept per record. ``plain`` is the clean text that BM25,
    the embedder and snippets read (:func:`scidx.pack.cleantext.plain_text` of Markdown); ``None``
    means ``text`` is already plain.
    """

    id: str
    text: str
    title: str = ""
    source: str = ""
    anchor: str = ""
    heading_path: tuple[str, ...] = ()
    ordinal: int = 0
    span: tuple[int, int, int, int] = (0, 0, 0, 0)
    metadata: Mapping[str, str] = field(default_factory=dict)
    plain: str | None = None
    language: str = ""  # the page's language tag ("": the index's default), issue 42

    @property
    def index_text(self) -> str:
        """The body BM25 and the embedder read: the clean text without code markers."""
        if self.plain is None:
            return self.text
        return self.plain.replace(CODE_START, "").replace(CODE_END, "")

    @classmethod
    def from_chunk(cls, chunk: Chunk) -> Record:
        """Convert a chunker :class:`~scidx.pack.chunk.Chunk` to a record."""
        return cls(
            id=chunk.id,
            text=chunk.text,
            title=chunk.title,
            source=chunk.source,
            anchor=chunk.anchor,
            heading_path=tuple(chunk.heading_path),
            ordinal=chunk.ordinal,
            span=(chunk.char_start, chunk.char_end, chunk.line_start, chunk.line_end),
            metadata=dict(chunk.metadata),
            plain=chunk.plain,
        )


def _coerce_record(item: Record | Mapping[str, Any], position: int) -> Record:
    if isinstance(item, Record):
        rec = item
    elif isinstance(item, Mapping):
        unknown = set(item) - {
            "id", "text", "title", "source", "anchor", "headingPath", "heading_path",
            "ordinal", "metadata",
        }  # fmt: skip
        if unknown:
            raise ChunkError(
                f"record #{position}: unknown field(s) {sorted(unknown)}; known fields are id, "
                "text, title, source, anchor, headingPath, ordinal, metadata"
            )
        heading = item.get("headingPath", item.get("heading_path", ()))
        if not isinstance(heading, (list, tuple)) or not all(isinstance(h, str) for h in heading):
            raise ChunkError(f"record #{position}: headingPath must be a list of strings")
        metadata = item.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise ChunkError(f"record #{position}: metadata must be an object of strings")
        rec = Record(
            id=item.get("id"),  # type: ignore[arg-type]  # validated below
            text=item.get("text"),  # type: ignore[arg-type]
            title=item.get("title") or "",
            source=item.get("source") or "",
            anchor=item.get("anchor") or "",
            heading_path=tuple(heading),
            ordinal=item.get("ordinal") or 0,
            metadata={str(k): str(v) for k, v in metadata.items()},
        )
    else:
        raise ChunkError(
            f"record #{position}: expected a scidx.Record or a mapping, got {type(item).__name__}"
        )
    if not isinstance(rec.id, str) or not rec.id.strip():
        raise ChunkError(
            f"record #{position}: id is missing or blank; give every record a non-blank string 'id'"
        )
    if not isinstance(rec.text, str):
        raise ChunkError(
            f"record #{position} (id {rec.id!r}): text is missing or not a string; "
            "every record needs a 'text' string"
        )
    for name in ("title", "source", "anchor"):
        if not isinstance(getattr(rec, name), str):
            raise ChunkError(f"record #{position} (id {rec.id!r}): {name} must be a string")
    if rec.plain is not None and not isinstance(rec.plain, str):
        raise ChunkError(f"record #{position} (id {rec.id!r}): plain must be a string or None")
    for name, value in (
        ("id", rec.id),
        ("text", rec.text),
        ("title", rec.title),
        ("source", rec.source),
        ("anchor", rec.anchor),
        *((("plain", rec.plain),) if rec.plain is not None else ()),
        *((f"headingPath[{i}]", h) for i, h in enumerate(rec.heading_path)),
        *((f"metadata[{k!r}]", v) for k, v in rec.metadata.items()),
    ):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ChunkError(
                f"record #{position} (id {rec.id!r}): {name} holds a lone surrogate at "
                f"character {exc.start}, which UTF-8 cannot store; clean the text first"
            ) from None
    if not isinstance(rec.ordinal, int) or isinstance(rec.ordinal, bool) or rec.ordinal < 0:
        raise ChunkError(f"record #{position} (id {rec.id!r}): ordinal must be an integer >= 0")
    return rec


def validate_records(records: Iterable[Record | Mapping[str, Any]]) -> list[Record]:
    """Validate chunk records and return them in canonical (deterministic) order.

    Raises:
        ChunkError: Naming the first bad record (position and id): blank id, duplicate id,
            missing text, wrong field types.
    """
    seen: dict[str, int] = {}
    out: list[Record] = []
    for position, item in enumerate(records):
        rec = _coerce_record(item, position)
        if rec.id in seen:
            raise ChunkError(
                f"record #{position}: duplicate id {rec.id!r} (first used by record "
                f"#{seen[rec.id]}); chunk ids must be unique"
            )
        seen[rec.id] = position
        if not rec.source:
            rec = Record(**{**rec.__dict__, "source": rec.id})
        out.append(rec)
    # Canonical row order is the chunk id (code point order), never input order: search breaks
    # score ties by row, which is then by chunk id.
    out.sort(key=lambda r: r.id)
    return out
