"""Command-line interface: ``toolup-rag`` (also ``scidx`` and ``python -m scidx``).

Each command parses its arguments, calls one library function and renders the result. Library
errors (:class:`~scidx.errors.ScidxError`) are caught only here, printed as one line on stderr and
mapped to the documented exit codes:

====  =====================================================
0     success (for ``pack-docs``: written, or already up to date)
1     invalid config, arguments or input file
2     embedding provider failed
3     the index or its sidecar could not be written
4     an index file is corrupt, truncated or not a .scidx
5     invalid query
====  =====================================================
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from scidx import __version__
from scidx.cli_pipeline import register as _register_pipeline
from scidx.errors import ConfigError, ScidxError

# Locals may hold an API key: never print them in tracebacks.
app = typer.Typer(
    name="toolup-rag",
    help="Pack Markdown docs into one .scidx index, then search it offline.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)


_USAGE_EXIT = 2  # what typer uses for a bad option; it means "provider failed" for us


class _State:
    failed_on_purpose = False


def fail(exc: ScidxError) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit with the error's documented code."""
    typer.echo(f"error: {exc}", err=True)
    _State.failed_on_purpose = True
    raise typer.Exit(exc.exit_code)


def _unreadable(path: Path, exc: OSError) -> ConfigError:
    return ConfigError(f"cannot read {path}: {exc.strerror or exc}; check the index path")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"scidx {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_callback, is_eager=True, help="Show version."),
    ] = False,
) -> None:
    """Pack Markdown docs into one .scidx index, then search it offline."""


class _PlainProgress:
    """One line per finished stage, for logs (stderr is not a terminal)."""

    def __init__(self) -> None:
        self._last: str | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "cached":
            typer.echo(f"cache hits: {done}/{total}", err=True)
        elif done == total and total > 0 and stage != self._last:
            self._last = stage
            typer.echo(f"{stage}: {done}/{total}", err=True)

    def close(self) -> None:
        return None


class _RichProgress:
    """Live progress bars on a terminal."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._progress = Progress(
            TextColumn("{task.description:<8}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._tasks: dict[str, Any] = {}
        self._last_update = 0.0
        self._progress.start()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self._tasks:
            self._tasks[stage] = self._progress.add_task(stage, total=max(total, 1))
        # Updating per file costs more than the work on a big corpus: at most ~20 per second.
        now = time.monotonic()
        if done < total and now - self._last_update < 0.05:
            return
        self._last_update = now
        self._progress.update(self._tasks[stage], completed=done, total=max(total, 1))

    def close(self) -> None:
        self._progress.stop()


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


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
) -> None:
    """Pack the Markdown files selected by a config into one .scidx index.

    Exit codes: 0 written or up to date, 1 config/input invalid, 2 embedding provider
    failed, 3 output could not be written, 6 stale (with --check).
    """
    from scidx.pack import pack_docs

    if check and dry_run:
        fail(ConfigError("use either --check or --dry-run, not both"))
    reporter: _PlainProgress | _RichProgress | None = None
    if not quiet and not as_json:
        reporter = _RichProgress() if sys.stderr.isatty() else _PlainProgress()
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
    if as_json:
        typer.echo(json.dumps(result.to_dict(), sort_keys=True))
    elif result.dry_run is not None:
        plan = result.dry_run
        cost = plan.get("cost_usd")
        typer.echo(
            f"dry run: {result.chunks} chunks, {plan['cached']} already embedded "
            f"(cache or previous index), {plan['chunks']} would be sent"
            + (f" in {plan['requests']} requests" if plan.get("requests") else "")
            + (f", ~{plan['tokens']} tokens" if plan.get("tokens") is not None else "")
            + (f", est. ${cost:.4f}" if isinstance(cost, (int, float)) else "")
            + "; nothing sent, nothing written"
        )
    elif check:
        if result.stale:
            typer.echo(f"{result.output} is stale: run `toolup-rag pack-docs --config {config}`")
            _print_changes(result.changes, always=True)
        else:
            typer.echo(f"{result.output} is up to date")
    elif not quiet:
        if result.up_to_date:
            typer.echo(
                f"{result.output} is up to date ({result.files} files, {result.chunks} chunks); "
                "use --force to rebuild"
            )
        else:
            typer.echo(
                f"packed {result.files} files into {result.chunks} chunks → {result.output} "
                f"({_human_bytes(result.output_bytes)}; {result.embedded} embedded, "
                f"{result.cache_hits} cache hits; {result.seconds:.2f} s)"
            )
            _print_changes(result.changes)
    if check and result.stale:
        raise typer.Exit(STALE_EXIT)


STALE_EXIT = 6
_LIST_LIMIT = 20


def _print_changes(changes: dict[str, Any] | None, *, always: bool = False) -> None:
    if not changes or (not changes.get("previous") and not always):
        return
    added, changed, removed = (
        changes["chunksAdded"],
        changes["chunksChanged"],
        changes["chunksRemoved"],
    )
    before = changes.get("bytesBefore")
    after = changes.get("bytesAfter")
    if after is None:  # --check decided without building the new index
        size = f"now {_human_bytes(before)}" if before is not None else "no index yet"
    elif before is None:
        size = f"new, {_human_bytes(after)}"
    else:
        size = f"{_human_bytes(before)} → {_human_bytes(after)}"
    typer.echo(
        f"changes: {len(added)} chunks added, {len(changed)} changed, {len(removed)} removed; "
        f"sources +{len(changes['sourcesAdded'])} -{len(changes['sourcesRemoved'])}; {size}"
    )
    for mark, ids in (("+", added), ("~", changed), ("-", removed)):
        for chunk_id in ids[:_LIST_LIMIT]:
            typer.echo(f"  {mark} {chunk_id}")
        if len(ids) > _LIST_LIMIT:
            typer.echo(f"  {mark} … and {len(ids) - _LIST_LIMIT} more (see --json)")


@app.command("search")
def search_command(
    index: Annotated[Path, typer.Argument(help="The .scidx index file.")],
    query: Annotated[str, typer.Argument(help="The search query.")],
    k: Annotated[int, typer.Option("-k", "--k", help="Number of hits.")] = 5,
    mode: Annotated[
        str, typer.Option("--mode", "-m", help="keyword, vector or hybrid.")
    ] = "hybrid",
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as a JSON array.")] = False,
    source: Annotated[
        str | None,
        typer.Option("--source", help="Only sources matching this glob or path prefix."),
    ] = None,
    heading: Annotated[
        str | None, typer.Option("--heading", help="Only chunks whose headings contain this.")
    ] = None,
    meta: Annotated[
        list[str] | None,
        typer.Option("--meta", help="Only pages whose front matter has KEY=VALUE (repeatable)."),
    ] = None,
    min_score: Annotated[
        float | None, typer.Option("--min-score", help="Drop hits scoring below this.")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="OpenAI-compatible server for query embeddings (else $OPENAI_BASE_URL).",
        ),
    ] = None,
) -> None:
    """Search an index and print the best hits."""
    from scidx.load import load

    metadata: dict[str, str] = {}
    for item in meta or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            fail(ConfigError(f"--meta {item!r}: write it as KEY=VALUE, e.g. --meta section=guide"))
        metadata[key] = value
    try:
        options = {"base_url": base_url} if base_url else None
        with load(index, embedder_options=options) as idx:
            hits = idx.search(
                query,
                k=k,
                mode=mode,
                source=source,
                heading=heading,
                metadata=metadata or None,
                min_score=min_score,
            )
            rows = [hit.to_dict() for hit in hits]
    except ScidxError as exc:
        fail(exc)
    except OSError as exc:
        fail(_unreadable(index, exc))
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=1))
        return
    if not rows:
        typer.echo("no results", err=True)
        return
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        table = Table(show_lines=True)
        table.add_column("score", justify="right")
        table.add_column("section")
        table.add_column("link")
        table.add_column("snippet")
        for row in rows:
            # Text, not str: "[...]" in the docs is content, never Rich markup.
            table.add_row(
                f"{row['score']:.3f}",
                Text(" > ".join(row["headingPath"]) or row["title"]),
                Text(_link(row)),
                Text(row["snippet"]),
            )
        Console().print(table)
    else:
        for row in rows:
            heading = " > ".join(row["headingPath"]) or row["title"]
            typer.echo(f"{row['score']:.4f}  {_link(row)}  {heading}\n    {row['snippet']}")


def _link(row: dict[str, Any]) -> str:
    """The hit's URL, else ``source#anchor`` (just ``source`` for text before any heading)."""
    if row.get("url"):
        return str(row["url"])
    return f"{row['source']}#{row['anchor']}" if row["anchor"] else str(row["source"])


@app.command("inspect")
def inspect_command(
    index: Annotated[Path, typer.Argument(help="The .scidx index file.")],
    verify: Annotated[
        bool, typer.Option("--verify", help="Also check every checksum and table.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as one JSON object.")] = False,
) -> None:
    """Describe an index: format, packer, provider, counts, sections. Reads only the header."""
    from scidx.format import read_header_file

    try:
        header = read_header_file(index)
        if verify:
            from scidx.load import load

            with load(index, verify=True):
                pass
    except ScidxError as exc:
        fail(exc)
    except OSError as exc:
        fail(_unreadable(index, exc))
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
    if as_json:
        typer.echo(json.dumps(info, sort_keys=True, indent=1))
        return
    provider = info["provider"] or {}
    typer.echo(
        f"{index}: scidx format {info['format']}, {info['generator']}, built {info['builtUtc']}"
    )
    if isinstance(provider, dict):
        typer.echo(
            f"provider: {provider.get('provider')} / {provider.get('model')} / "
            f"{provider.get('dimensions')} dims"
        )
    counts = info["counts"] or {}
    if isinstance(counts, dict):
        typer.echo("counts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    sections: dict[str, int] = info["sections"]  # type: ignore[assignment]
    for name, nbytes in sections.items():
        typer.echo(f"  {name:<24} {_human_bytes(nbytes):>12}")
    if verify:
        typer.echo("all checksums OK")


# The retrieval-pipeline commands (query, ask, eval, bench) live in their own module.
_register_pipeline(app)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; usage errors exit 1 (typer's 2 means "provider failed" in scidx)."""
    _State.failed_on_purpose = False
    try:
        app(args=argv, prog_name="toolup-rag")
    except SystemExit as exc:
        code = exc.code
        if code == _USAGE_EXIT and not _State.failed_on_purpose:
            code = 1
        sys.exit(code)
