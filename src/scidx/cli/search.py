"""``toolup-rag search`` and ``toolup-rag inspect``: query an index, describe an index."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scidx.cli.app import app
from scidx.cli.exits import fail, unreadable
from scidx.cli.output import echo, human_bytes, link
from scidx.cli.rerank import (
    RERANK_MODEL_OPT,
    RERANK_OPT,
    RERANK_OPTION_OPT,
    RERANK_TOP_OPT,
    make_reranker,
)
from scidx.errors import ConfigError, ScidxError
from scidx.index.safety import json_dumps_safe

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Group

    from scidx.index.expand import Correction

__all__ = ["inspect_command", "results_table", "search_command"]


# The options of search_command, declared here so that its signature stays one line each.
_SearchMode = Annotated[str, typer.Option("--mode", "-m", help="keyword, vector or hybrid.")]
_SearchSource = Annotated[
    str | None,
    typer.Option("--source", help="Only sources matching this glob or path prefix."),
]
_SearchHeading = Annotated[
    str | None, typer.Option("--heading", help="Only chunks whose headings contain this.")
]
_SearchMeta = Annotated[
    list[str] | None,
    typer.Option("--meta", help="Only pages whose front matter has KEY=VALUE (repeatable)."),
]
_SearchDocVersion = Annotated[
    str | None,
    typer.Option(
        "--doc-version",
        help="Versioned docs: search this version ('*': all); default: the one the site "
        "publishes at its root.",
    ),
]
_SearchMinScore = Annotated[
    float | None, typer.Option("--min-score", help="Drop hits scoring below this.")
]
_SearchBaseUrl = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="OpenAI-compatible server for query embeddings (else $OPENAI_BASE_URL).",
    ),
]
_SearchModelDir = Annotated[
    Path | None,
    typer.Option(
        "--model-dir",
        help="Folder of the local embedding model (or its parent); else $SCIDX_MODEL_DIR.",
    ),
]
_SearchGroup = Annotated[
    str,
    typer.Option(
        "--group",
        help="section (parts of a section shown once), page (one hit per page, its best "
        "sections under it) or none (raw chunks).",
    ),
]
_SearchAlpha = Annotated[
    float | None,
    typer.Option(
        "--alpha",
        help="Hybrid: weight of the vector leg, 0 (keyword only) to 1 (vector only); "
        "default: the index's own.",
    ),
]


@app.command("search")
def search_command(
    index: Annotated[Path, typer.Argument(help="The .scidx index file.")],
    query: Annotated[str, typer.Argument(help="The search query.")],
    k: Annotated[int, typer.Option("-k", "--k", help="Number of hits.")] = 5,
    mode: _SearchMode = "hybrid",
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as a JSON array.")] = False,
    source: _SearchSource = None,
    heading: _SearchHeading = None,
    meta: _SearchMeta = None,
    min_score: _SearchMinScore = None,
    base_url: _SearchBaseUrl = None,
    model_dir: _SearchModelDir = None,
    group: _SearchGroup = "section",
    rerank: Annotated[str | None, RERANK_OPT] = None,
    rerank_model: Annotated[str | None, RERANK_MODEL_OPT] = None,
    rerank_top: Annotated[int | None, RERANK_TOP_OPT] = None,
    rerank_option: Annotated[list[str] | None, RERANK_OPTION_OPT] = None,
    alpha: _SearchAlpha = None,
    doc_version: _SearchDocVersion = None,
    fuzzy: Annotated[
        bool,
        typer.Option(
            "--fuzzy/--no-fuzzy",
            help="Typo tolerance: a word the index does not know (5+ letters) also matches "
            "its known spellings within one edit (two from 9 letters).",
        ),
    ] = True,
    prefix: Annotated[
        bool,
        typer.Option(
            "--prefix",
            help="Search as you type: the last word, unless followed by a space, also "
            "matches the words it starts.",
        ),
    ] = False,
    language: Annotated[
        str | None,
        typer.Option(
            "--language",
            help="Only pages in this language (e.g. de, zh); the query is tokenised in it.",
        ),
    ] = None,
) -> None:
    """Search an index and print the best hits, the query's words marked in each snippet."""
    from scidx.index.index import load
    from scidx.index.params import SearchParams

    metadata: dict[str, str] = {}
    for item in meta or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            fail(ConfigError(f"--meta {item!r}: write it as KEY=VALUE, e.g. --meta section=guide"))
        metadata[key] = value
    if group not in ("section", "page", "none"):
        fail(ConfigError(f"--group {group!r}: use section, page or none"))
    try:
        options = {"base_url": base_url} if base_url else None
        reranker = make_reranker(rerank, rerank_model, rerank_top, rerank_option)
        with load(index, embedder_options=options, model_dir=model_dir) as idx:
            params = SearchParams(
                k=k,
                mode=mode,
                source=source,
                heading=heading,
                metadata=metadata or None,
                min_score=min_score,
                group=None if group == "none" else group,
                rerank=reranker,
                rerank_top=rerank_top,
                alpha=alpha,
                version=doc_version,
                fuzzy=fuzzy,
                prefix=prefix,
                language=language,
            )
            hits = idx.search_with(query, params)
            rows = [hit.to_dict() for hit in hits]
            fixed = [c for c in hits[0].corrections if c.kind == "typo"] if hits else []
    except ScidxError as exc:
        fail(exc)
    except OSError as exc:
        fail(unreadable(index, exc))
    if fixed:
        # On stderr, as "no results": stdout stays the hits alone (a JSON array with --json).
        echo(f"showing results for {_printable(corrected(query, fixed))!r}", err=True)
    if as_json:
        echo(json_dumps_safe(rows, indent=1))
        return
    if not rows:
        echo("no results", err=True)
        return
    if sys.stdout.isatty():
        from rich.console import Console

        Console().print(results_table(rows), crop=False)
    else:
        for row in rows:
            echo(f"{row['score']:.4f}  {link(row)}  {_heading(row)}\n    {row['snippet']}")
            for sub in row["sections"]:
                echo(f"    ↳ {_heading(sub)}  {link(sub)}")


# Controls, C1 and bidi overrides: replaced one for one, so highlight offsets stay valid.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _printable(text: str) -> str:
    # Text from an index is data: no escape sequence or control character reaches the terminal.
    return _CONTROLS.sub(" ", text)


def corrected(query: str, fixed: Sequence[Correction]) -> str:
    """``query`` with each corrected word replaced by the word searched instead."""
    for c in fixed:
        query = re.sub(rf"(?<!\w){re.escape(c.word)}(?!\w)", c.shown, query, flags=re.IGNORECASE)
    return query


def _heading(row: dict[str, Any]) -> str:
    return " > ".join(row["headingPath"]) or row["title"]


def results_table(rows: list[dict[str, Any]]) -> Group:
    """The terminal view of ``search`` hits (``Hit.to_dict`` rows), matches highlighted.

    Each hit is three parts: its score and heading path; its link, whole, on a line of its own
    (never cut to the terminal's width: it is what a user copies or clicks) and an OSC 8
    hyperlink, which terminals that know OSC 8 make clickable and others show as the text; the
    snippet, wrapped. Print it with ``crop=False`` so a link wider than the terminal is
    soft-wrapped by the terminal, not cut.

    Every string from the index goes in as :class:`rich.text.Text` with control characters
    replaced, never as markup: ``[bold]`` in the docs is content, and no escape sequence from
    a document reaches the terminal (the link target included). The snippet's ``highlights``
    are shown bold and underlined, its ``snippetCode`` ranges in cyan; ``sections`` of a page
    hit are listed under its heading.
    """
    from rich.console import Group
    from rich.style import Style
    from rich.text import Text

    parts: list[Text] = []
    for i, row in enumerate(rows):
        head = Text("\n" if i else "")
        head.append(f"{row['score']:.3f}  ", style="dim")
        head.append(_printable(_heading(row)), style="bold")
        parts.append(head)
        for sub in row["sections"]:
            parts.append(Text("  ↳ " + _printable(_heading(sub)), style="dim"))
        target = _printable(link(row))
        clickable = bool(row.get("url")) and " " not in target
        parts.append(
            Text(
                target,
                style=Style(color="blue", link=target) if clickable else "blue",
                no_wrap=True,
                overflow="ignore",
            )
        )
        # _printable keeps every offset: the ranges still point at the same characters.
        snippet = Text(_printable(row["snippet"]))
        for start, end in row["snippetCode"]:
            snippet.stylize("cyan", start, end)
        for start, end in row["highlights"]:
            snippet.stylize("bold underline", start, end)
        parts.append(snippet)
    return Group(*parts)


@app.command("inspect")
def inspect_command(
    index: Annotated[Path, typer.Argument(help="The .scidx index file.")],
    verify: Annotated[
        bool, typer.Option("--verify", help="Also check every checksum and table.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as one JSON object.")] = False,
) -> None:
    """Describe an index: format, packer, provider, counts, sections. Reads only the header."""
    from scidx.index.format import read_header_file

    try:
        header = read_header_file(index)
        if verify:
            from scidx.index.index import load

            with load(index, verify=True):
                pass
    except ScidxError as exc:
        fail(exc)
    except OSError as exc:
        fail(unreadable(index, exc))
    meta = header.meta
    info = {
        "file": str(index),
        "format": f"{header.version[0]}.{header.version[1]}",
        "generator": header.generator,
        "builtUtc": header.built_utc,
        "packer": meta.get("packer"),
        "provider": meta.get("provider"),
        "chunking": meta.get("chunking"),
        "counts": meta.get("counts"),
        "urlTemplate": meta.get("urlTemplate"),
        "sections": {name: a.nbytes for name, a in sorted(header.arrays.items())},
        "verified": verify,
    }
    versions = meta.get("versions")
    if versions is not None:
        info["versions"] = versions  # only for a versioned index (format 10)
    if as_json:
        echo(json.dumps(info, sort_keys=True, indent=1))
        return
    provider = info["provider"] or {}
    echo(f"{index}: scidx format {info['format']}, {info['generator']}, built {info['builtUtc']}")
    if isinstance(provider, dict):
        echo(
            f"provider: {provider.get('provider')} / {provider.get('model')} / "
            f"{provider.get('dimensions')} dims"
        )
    counts = info["counts"] or {}
    if isinstance(counts, dict):
        echo("counts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if isinstance(versions, dict) and isinstance(versions.get("names"), list):
        default = versions.get("default")
        names = [str(n) + (" (default)" if n == default else "") for n in versions["names"]]
        echo(_printable("versions: " + ", ".join(names)))
    sections: dict[str, int] = info["sections"]  # type: ignore[assignment]
    for name, nbytes in sections.items():
        echo(f"  {name:<24} {human_bytes(nbytes):>12}")
    if verify:
        echo("all checksums OK")
