"""The reranking options every retrieving command shares: ``--rerank``, ``--rerank-top``...

``--rerank NAME`` picks a reranker by name (``cross-encoder``, ``http`` or a plugin's, see
:mod:`scidx.rerank.registry`), ``--rerank-model`` its model, ``--rerank-option KEY=VALUE`` any
other setting (``threads=2``, ``api=cohere``, ``base_url=...``), ``--rerank-top N`` how many
candidates it rescores. Without ``--rerank`` nothing is imported or loaded.
"""

from __future__ import annotations

from typing import Any

import typer

from scidx.errors import ConfigError

__all__ = [
    "RERANK_MODEL_OPT",
    "RERANK_OPT",
    "RERANK_OPTION_OPT",
    "RERANK_TOP_OPT",
    "make_reranker",
]

RERANK_OPT = typer.Option(
    "--rerank", help="Rerank the best candidates with this reranker: cross-encoder, http, a plugin."
)
RERANK_MODEL_OPT = typer.Option(
    "--rerank-model", help="The reranker's model: a folder (cross-encoder) or a model id (http)."
)
RERANK_TOP_OPT = typer.Option(
    "--rerank-top", help="Candidates the reranker rescores (default 20; at least -k)."
)
RERANK_OPTION_OPT = typer.Option(
    "--rerank-option",
    help="A reranker setting KEY=VALUE (repeatable), e.g. threads=2, api=cohere, base_url=URL.",
)


def make_reranker(
    name: str | None, model: str | None, top: int | None, options: list[str] | None
) -> Any | None:
    """The reranker the options name, or ``None`` without ``--rerank``.

    Raises:
        ConfigError: ``--rerank-*`` without ``--rerank``, a malformed option, an unknown name.
        RerankError: A plugin failed to load.
    """
    if name is None:
        used = [flag for flag, v in (("--rerank-model", model), ("--rerank-top", top)) if v]
        if options:
            used.append("--rerank-option")
        if used:
            raise ConfigError(
                f"{', '.join(used)} needs --rerank NAME (e.g. --rerank cross-encoder)"
            )
        return None
    settings: dict[str, Any] = {}
    for item in options or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"--rerank-option {item!r}: write it as KEY=VALUE, e.g. --rerank-option threads=2"
            )
        settings[key.strip().replace("-", "_")] = value
    from scidx.rerank.registry import load_reranker

    return load_reranker(name, model, **settings)
