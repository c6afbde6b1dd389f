"""``toolup-rag pack-docs``: pack the Markdown files a config selects into one .scidx index."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scidx.cli.app import app
from scidx.cli.exits import STALE_EXIT, fail
from scidx.cli.output import PlainProgress, RichProgress, distinct_texts, echo, human_bytes
from scidx.errors import ConfigError, ScidxError

if TYPE_CHECKING:
    from scidx.pack.incremental import ChangeReport
    from scidx.pack.packer import PackResult

__all__ = ["pack_docs_command"]

_LIST_LIMIT = 20


@app.command("pack-docs")
def pack_docs_command(
    config: Annotated[
        Path, typer.Option("--config", "-c", help="Path of the staticcorpus.json config.")
    ] = Path("staticcorpus.json"),
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if up to date.")] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Bypass the embedding disk cache.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress, no summary.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as one JSON object.")
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Write nothing; exit 0 if the index is up to date, 6 if stale."
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Show what would be embedded (and its cost); send nothing."),
    ] = False,
    reuse: Annotated[
        Path | None,
        typer.Option("--reuse", help="Reuse vectors from this index (same provider stamp)."),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="List every chunk the provider had to truncate, and up to 20 dropped includes.",
        ),
    ] = False,
) -> None:
    """Pack the Markdown files selected by a config into one .scidx index.

    Exit codes: 0 written or up to date, 1 config/input invalid, 2 embedding provider
    failed, 3 output could not be written, 6 stale (with --check).
    """
    from scidx.pack.packer import pack_docs

    if check and dry_run:
        fail(ConfigError("use either --check or --dry-run, not both"))
    reporter: PlainProgress | RichProgress | None = None
    if not quiet and not as_json:
        reporter = RichProgress() if sys.stderr.isatty() else PlainProgress()
    try:
        result = pack_docs(
            config,
            force=force,
            use_cache=not no_cache,
            progress=reporter,
            check=check,
            dry_run=dry_run,
            reuse=reuse,
        )
    except ScidxError as exc:
        if reporter is not None:
            reporter.close()
        fail(exc)
    if reporter is not None:
        reporter.close()
    _print_result(result, config, as_json=as_json, check=check, quiet=quiet, verbose=verbose)
    if check and result.stale:
        raise typer.Exit(STALE_EXIT)


def _print_result(
    result: PackResult, config: Path, *, as_json: bool, check: bool, quiet: bool, verbose: bool
) -> None:
    """The summary of one pack-docs run: JSON, the dry-run plan, --check's verdict or the line."""
    if as_json:
        echo(json.dumps(result.to_dict(), sort_keys=True))
    elif result.dry_run is not None:
        plan = result.dry_run
        cost = plan.cost_usd
        echo(
            f"dry run: {result.chunks} chunks, {plan.cached} already embedded "
            f"(cache or previous index), {plan.chunks} would be sent"
            + (f" in {plan.requests} requests" if plan.requests else "")
            + (f", ~{plan.tokens} tokens" if plan.tokens is not None else "")
            + (f", est. ${cost:.4f}" if isinstance(cost, (int, float)) else "")
            + (
                f"; {plan.window_chunks} longer than the model's input limit, read as "
                f"{plan.windows} more windows ({plan.windows_cached} already embedded, "
                f"{plan.windows_sent} would be sent)"
                if plan.windows
                else ""
            )
            + "; nothing sent, nothing written"
        )
    elif check:
        if result.stale:
            echo(f"{result.output} is stale: run `toolup-rag pack-docs --config {config}`")
            _print_changes(result.changes, always=True)
        else:
            echo(f"{result.output} is up to date")
    elif not quiet:
        if result.up_to_date:
            echo(
                f"{result.output} is up to date ({result.files} files, {result.chunks} chunks); "
                "use --force to rebuild"
            )
        else:
            echo(
                f"packed {result.files} files into {result.chunks} chunks → {result.output} "
                f"({human_bytes(result.output_bytes)}; "
                f"{distinct_texts(result.distinct, result.chunks)}; "
                f"cache hits {result.cache_hits}/{result.distinct}; "
                f"embedded {result.embedded}; {result.seconds:.2f} s"
                + (
                    f"; {result.chunks_per_second:.1f} chunks/s"
                    if result.chunks_per_second is not None
                    else ""
                )
                + ")"
            )
            if result.generator:
                echo(f"flavour: {result.generator}")
            if result.urls:
                echo(f"URLs: {result.urls}")
            if result.versions:
                echo(f"versions: {result.versions}")
            _print_includes(result, verbose=verbose)
            for warning in result.warnings:  # issue 42: a model that misses the pages' language
                echo(f"warning: {warning}", err=True)
            _print_truncated(result, verbose=verbose)
            _print_changes(result.changes)


def _print_changes(changes: ChangeReport | None, *, always: bool = False) -> None:
    if changes is None or (not changes.previous and not always):
        return
    added, changed, removed = changes.chunks_added, changes.chunks_changed, changes.chunks_removed
    before, after = changes.bytes_before, changes.bytes_after
    if after is None:  # --check decided without building the new index
        size = f"now {human_bytes(before)}" if before is not None else "no index yet"
    elif before is None:
        size = f"new, {human_bytes(after)}"
    else:
        size = f"{human_bytes(before)} → {human_bytes(after)}"
    echo(
        f"changes: {len(added)} chunks added, {len(changed)} changed, {len(removed)} removed; "
        f"sources +{len(changes.sources_added)} -{len(changes.sources_removed)}; {size}"
    )
    for mark, ids in (("+", added), ("~", changed), ("-", removed)):
        for chunk_id in ids[:_LIST_LIMIT]:
            echo(f"  {mark} {chunk_id}")
        if len(ids) > _LIST_LIMIT:
            echo(f"  {mark} … and {len(ids) - _LIST_LIMIT} more (see --json)")


def _print_includes(result: PackResult, *, verbose: bool) -> None:
    found = result.includes
    if not found.resolved and not found.unresolved:
        return
    line = f"includes: {found.resolved} expanded"
    if found.unresolved:
        line += f", {found.unresolved} unresolvable (dropped from the text)"
    echo(line)
    shown = found.examples if verbose else found.examples[:3]
    for example in shown:
        echo(f"  dropped: {example}")
    if found.unresolved > len(shown):
        echo(f"  … and {found.unresolved - len(shown)} more (see --json, or -v for more)")


def _print_truncated(result: PackResult, *, verbose: bool) -> None:
    truncated = result.truncated
    if result.windows:
        echo(
            f"{result.window_chunks} chunks were longer than the model's input limit and are "
            f"read whole: {result.windows} more windows (embedded {result.windows_embedded}, "
            f"cached {result.windows_cached})" + ("" if verbose else "; --verbose lists the chunks")
        )
    elif truncated:
        echo(
            f"{len(truncated)} chunks were longer than the model's input limit and were embedded "
            "from their beginning (the index keeps the whole text)"
            + ("" if verbose else "; --verbose lists them")
        )
    if verbose:
        for chunk_id in truncated:
            echo(f"  {'windowed' if result.windows else 'truncated'}: {chunk_id}")
