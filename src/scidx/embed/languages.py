"""Which languages an embedding model covers, and what to say when a corpus is not among them.

Issue 42: an English model maps all Chinese text close together, so its cosines on a Chinese
corpus look confident and mean nothing. A model's languages come from its model card (the
``language:`` list of a Hugging Face ``README.md`` front matter; ``multilingual`` means many),
else from its name (:data:`KNOWN_MODELS`); ``None`` means unknown (no warning, no change).
``("*",)`` means any language (the hashing provider hashes tokens; OpenAI's models are
multilingual). The packer records them in ``meta.modelLanguages``; the searcher then gives the
vector leg no evidence of its own for a query in a language the model does not cover.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "ANY",
    "KNOWN_MODELS",
    "MULTILINGUAL_ADVICE",
    "card_languages",
    "covers",
    "model_languages",
    "uncovered_warning",
]

ANY: tuple[str, ...] = ("*",)

#: Name fragments (lower case) of well-known sentence-embedding models and their languages,
#: most specific first. Used when a model folder has no model card.
KNOWN_MODELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("multilingual", ANY),  # paraphrase-multilingual-*, multilingual-e5-*, ...
    ("labse", ANY),
    ("bge-m3", ANY),
    ("bge-small-zh", ("zh",)),
    ("bge-base-zh", ("zh",)),
    ("bge-large-zh", ("zh",)),
    ("text2vec", ("zh",)),
    ("all-minilm", ("en",)),
    ("all-mpnet", ("en",)),
    ("all-distilroberta", ("en",)),
    ("multi-qa-", ("en",)),
    ("msmarco", ("en",)),
    ("bge-small-en", ("en",)),
    ("bge-base-en", ("en",)),
    ("bge-large-en", ("en",)),
    ("e5-small", ("en",)),
    ("e5-base", ("en",)),
    ("gte-small", ("en",)),
    ("gte-base", ("en",)),
)

MULTILINGUAL_ADVICE = (
    "point `model` at a multilingual model, e.g. an ONNX export of "
    "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2 or intfloat/multilingual-e5-small "
    '(docs/providers.md), or use "embeddingProvider": "hashing"'
)

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)


def card_languages(folder: Path) -> tuple[str, ...] | None:
    """The ``language:`` of the model card (``README.md`` front matter) in ``folder``, if any."""
    try:
        with (folder / "README.md").open("rb") as f:
            head = f.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return None
    found = _FRONT.match(head)
    if found is None:
        return None
    lines = found.group(1).splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        m = re.match(r"language:\s*(.*)$", line)
        if m is None:
            continue
        value = m.group(1).strip()
        if value:
            out += [v.strip(" '\"") for v in value.strip("[]").split(",") if v.strip(" '\"")]
        else:
            for item in lines[i + 1 :]:
                mm = re.match(r"\s*-\s*(.+)$", item)
                if mm is None:
                    break
                out.append(mm.group(1).strip(" '\""))
        break
    tags = [
        t.lower() for t in out if re.fullmatch(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]+)*|multilingual", t)
    ]
    if not tags:
        return None
    if "multilingual" in tags or len(tags) > 10:
        return ANY
    return tuple(dict.fromkeys(tags))


def model_languages(name: str, folder: Path | None = None) -> tuple[str, ...] | None:
    """A model's languages: its card's, else :data:`KNOWN_MODELS`' by name, else None."""
    if folder is not None:
        found = card_languages(folder)
        if found is not None:
            return found
    low = name.lower()
    for fragment, languages in KNOWN_MODELS:
        if fragment in low:
            return languages
    return None


def covers(languages: Sequence[str] | None, language: str) -> bool:
    """Whether a model of ``languages`` covers ``language`` (unknown languages: assume so)."""
    if not languages or "*" in languages:
        return True
    primary = language.split("-", 1)[0]
    return any(lang.split("-", 1)[0] == primary for lang in languages)


def uncovered_warning(model: str, languages: Sequence[str] | None, corpus: Sequence[str]) -> str:
    """The pack warning when the model covers none of some corpus languages (else "")."""
    missing = [lang for lang in corpus if not covers(languages, lang)]
    if not missing:
        return ""
    covered = ", ".join(languages or ())
    return (
        f"the embedding model {model} covers {covered}, not {', '.join(missing)} (the pages' "
        f"language); its similarities there are noise, so the vector leg adds no hit of its "
        f"own for such queries. For semantic search in {', '.join(missing)}, " + MULTILINGUAL_ADVICE
    )
