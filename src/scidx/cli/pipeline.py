"""CLI commands of the retrieval pipeline: ``query``, ``ask``, ``eval`` and ``bench``.

Importing this module adds them to the ``toolup-rag`` Typer app. Like the rest of the CLI, each
command parses its arguments, calls the library (:mod:`scidx.rag.pipeline`, :mod:`scidx.rag.chat`,
:mod:`scidx.evaluation.metrics`, :mod:`scidx.evaluation.beir`) and renders the result; a
:class:`~scidx.errors.ScidxError` becomes one ``error: ...`` line on stderr and its exit code:

====  =====================================================
1     invalid arguments, fixture, template or input file
2     the chat model (``ask``) or embedding provider failed
3     an output file (``--out``, ``--trace``) could not be written
4     an index file is corrupt, truncated or not a .scidx
5     invalid query
7     ``eval --baseline``: quality fell below the baseline
====  =====================================================
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scidx.cli.app import app
from scidx.cli.exits import fail
from scidx.cli.output import echo
from scidx.cli.postgres import POSTGRES_OPT, TABLE_OPT, export_and_rank, open_retriever
from scidx.cli.rerank import (
    RERANK_MODEL_OPT,
    RERANK_OPT,
    RERANK_OPTION_OPT,
    RERANK_TOP_OPT,
    make_reranker,
)
from scidx.errors import ConfigError, InputError, ScidxError
from scidx.index.safety import json_dumps_safe

if TYPE_CHECKING:
    from scidx.index.retrieval import RetrievalRequest
    from scidx.rag.pipeline import Pipeline, PromptOptions

__all__ = ["ask_command", "bench_command", "eval_command", "query_command"]


def _read_template(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the prompt template {path}: {exc.strerror or exc}") from None


@contextmanager
def _pipeline(
    index: Path | None,
    also: list[Path] | None,
    merge: str,
    trace: Path | None,
    min_matches: int,
    options: PromptOptions,
    postgres: str | None = None,
    table: str = "scidx_chunks",
    rewriter: Any | None = None,
) -> Iterator[Pipeline]:
    from scidx.index.index import load
    from scidx.index.retrieval import IndexRetriever, Retriever
    from scidx.rag.pipeline import JsonlTracer, MultiIndexRetriever, Pipeline

    with ExitStack() as stack:
        paths = [*([index] if index is not None else []), *(also or [])]
        retrievers: list[Retriever] = []
        if postgres is not None:
            pg = open_retriever(postgres, table)
            stack.callback(pg.close)
            retrievers.append(pg)
        for path in paths:
            try:
                idx = stack.enter_context(load(path))
            except FileNotFoundError:
                raise InputError(
                    f"index {path} does not exist; pack it with `toolup-rag pack-docs`"
                ) from None
            except IsADirectoryError:
                raise InputError(f"index {path} is a folder; pass the .scidx file") from None
            name = str(path) if len({p.name for p in paths}) < len(paths) else path.name
            retrievers.append(IndexRetriever(idx, name=name))
        retriever: Retriever = (
            retrievers[0]
            if len(retrievers) == 1
            else MultiIndexRetriever(retrievers, strategy=merge)
        )
        tracer = stack.enter_context(JsonlTracer(trace)) if trace is not None else None
        yield Pipeline(
            retriever,
            tracer=tracer,
            min_matches=min_matches,
            prompt_options=options,
            rewriter=rewriter,
        )


def _target(
    index: str | None, question: str | None, postgres: str | None
) -> tuple[Path | None, str]:
    """The index path and the question: with --postgres the only argument is the question."""
    if postgres is not None:
        if question is None and index is not None:
            return None, index
        if question is not None:
            raise ConfigError(
                "give the question alone with --postgres (the table replaces the INDEX argument)"
            )
    if index is None or question is None:
        raise ConfigError("missing arguments: give INDEX and QUESTION, or --postgres DSN QUESTION")
    return Path(index), question


def _print_matches(rows: list[dict[str, Any]]) -> None:
    if not rows:
        echo("no matches", err=True)
        return
    several = len({row.get("retriever") for row in rows}) > 1
    for n, row in enumerate(rows, start=1):
        heading = " > ".join(row["headingPath"]) or row["title"]
        origin = f"  [{row['retriever']}]" if several else ""
        echo(f"{n:>2}. {row['score']:.4f}  {row['link']}  {heading}{origin}")
        echo(f"    {row['snippet']}")


_K_OPT = typer.Option("-k", "--k", help="Number of matches to retrieve.")
_MODE_OPT = typer.Option("--mode", "-m", help="hybrid, keyword or vector.")
_TEXT_QUERY_OPT = typer.Option(
    "--text-query",
    help='Search this text in the keyword leg instead of the question ("" skips it).',
)
_MIN_SCORE_OPT = typer.Option("--min-score", help="Drop matches scoring below this.")
_SOURCE_OPT = typer.Option("--source", help="Only chunks whose source matches this glob/prefix.")
_HEADING_OPT = typer.Option("--heading", help="Only chunks whose heading path contains this.")
_ALSO_OPT = typer.Option("--also", help="Another .scidx index to search as well (repeatable).")
_MERGE_OPT = typer.Option(
    "--merge", help="With --also: interleaved (one list, rank fusion) or separate."
)
_GROUNDING_OPT = typer.Option("--grounding", help="strict, preferred or permissive.")
_TEMPLATE_OPT = typer.Option(
    "--template", help="A prompt template file with {context} and {question}."
)
_SNIPPET_OPT = typer.Option("--snippet-chars", help="Most characters of one context block.")
_CONTEXT_OPT = typer.Option("--context-chars", help="Most characters of the whole context.")
_TRACE_OPT = typer.Option("--trace", help="Append a JSON-lines trace record to this file.")
_GROUP_OPT = typer.Option(
    "--group", help="section (one match per section), page (one per page) or none (raw chunks)."
)
_MMR_OPT = typer.Option(
    "--mmr", help="Maximal marginal relevance: trade relevance for variety (λ in [0, 1])."
)
_MIN_MATCHES_OPT = typer.Option(
    "--min-matches", help="Fewer matches than this after --min-score is a traced miss."
)
_JSON_OPT = typer.Option("--json", help="Print one JSON object.")
_REWRITE_OPT = typer.Option(
    "--rewrite", help="Rewrite the question before retrieval: llm (a chat model) or a plugin."
)
_REWRITE_MODEL_OPT = typer.Option(
    "--rewrite-model", help="The rewriter's model (llm: a chat model, default gpt-4o-mini)."
)
_REWRITE_OPTION_OPT = typer.Option(
    "--rewrite-option",
    help="A rewriter setting KEY=VALUE (repeatable), e.g. base_url=URL, timeout=10.",
)


def _key_values(items: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{item!r}: write the setting as KEY=VALUE, e.g. timeout=10")
        out[key.strip().replace("-", "_")] = value
    return out


def _group(value: str) -> str | None:
    if value not in ("section", "page", "none"):
        raise ConfigError(f"--group {value!r}: use section, page or none")
    return None if value == "none" else value


def _prompt_options(
    grounding: str, template: Path | None, snippet_chars: int, context_chars: int
) -> PromptOptions:
    from scidx.rag.pipeline import DEFAULT_TEMPLATE, PromptOptions

    opts = PromptOptions(
        template=_read_template(template) or DEFAULT_TEMPLATE,
        grounding=grounding,
        snippet_chars=snippet_chars,
        context_chars=context_chars,
    )
    opts.validate()
    return opts


def _shared_options(
    index: Annotated[
        str | None, typer.Argument(help="The .scidx index file (omitted with --postgres).")
    ] = None,
    question: Annotated[str | None, typer.Argument(help="The question.")] = None,
    postgres: Annotated[str | None, POSTGRES_OPT] = None,
    table: Annotated[str, TABLE_OPT] = "scidx_chunks",
    k: Annotated[int, _K_OPT] = 5,
    mode: Annotated[str, _MODE_OPT] = "hybrid",
    text_query: Annotated[str | None, _TEXT_QUERY_OPT] = None,
    min_score: Annotated[float | None, _MIN_SCORE_OPT] = None,
    source: Annotated[str | None, _SOURCE_OPT] = None,
    heading: Annotated[str | None, _HEADING_OPT] = None,
    also: Annotated[list[Path] | None, _ALSO_OPT] = None,
    merge: Annotated[str, _MERGE_OPT] = "interleaved",
    grounding: Annotated[str, _GROUNDING_OPT] = "strict",
    template: Annotated[Path | None, _TEMPLATE_OPT] = None,
    snippet_chars: Annotated[int, _SNIPPET_OPT] = 1200,
    context_chars: Annotated[int, _CONTEXT_OPT] = 6000,
    trace: Annotated[Path | None, _TRACE_OPT] = None,
    min_matches: Annotated[int, _MIN_MATCHES_OPT] = 1,
    as_json: Annotated[bool, _JSON_OPT] = False,
    group: Annotated[str, _GROUP_OPT] = "section",
    mmr: Annotated[float | None, _MMR_OPT] = None,
    rerank: Annotated[str | None, RERANK_OPT] = None,
    rerank_model: Annotated[str | None, RERANK_MODEL_OPT] = None,
    rerank_top: Annotated[int | None, RERANK_TOP_OPT] = None,
    rerank_option: Annotated[list[str] | None, RERANK_OPTION_OPT] = None,
    rewrite: Annotated[str | None, _REWRITE_OPT] = None,
    rewrite_model: Annotated[str | None, _REWRITE_MODEL_OPT] = None,
    rewrite_option: Annotated[list[str] | None, _REWRITE_OPTION_OPT] = None,
) -> None:
    """Never called: its signature declares the arguments ``query`` and ``ask`` share."""


@dataclass(frozen=True)
class _Retrieval:
    """The shared arguments of ``query`` and ``ask``, as parsed (see :func:`_shared_options`)."""

    index: str | None
    question: str | None
    postgres: str | None
    table: str
    k: int
    mode: str
    text_query: str | None
    min_score: float | None
    source: str | None
    heading: str | None
    also: list[Path] | None
    merge: str
    grounding: str
    template: Path | None
    snippet_chars: int
    context_chars: int
    trace: Path | None
    min_matches: int
    as_json: bool
    group: str
    mmr: float | None
    rerank: str | None
    rerank_model: str | None
    rerank_top: int | None
    rerank_option: list[str] | None
    rewrite: str | None
    rewrite_model: str | None
    rewrite_option: list[str] | None

    def rewriter(self) -> Any | None:
        """The query rewriter ``--rewrite`` names, or ``None``."""
        if self.rewrite is None:
            if self.rewrite_model or self.rewrite_option:
                raise ConfigError("--rewrite-model/--rewrite-option need --rewrite NAME (e.g. llm)")
            return None
        from scidx.rag.rewriters import load_rewriter

        return load_rewriter(self.rewrite, self.rewrite_model, **_key_values(self.rewrite_option))

    @contextmanager
    def pipeline(self) -> Iterator[tuple[Pipeline, RetrievalRequest]]:
        """Check the arguments, open the pipeline and build the request.

        Raises:
            ScidxError: Bad arguments, an unreadable template or index, an unreachable database.
        """
        from scidx.index.retrieval import RetrievalRequest

        path, question = _target(self.index, self.question, self.postgres)
        if self.postgres is not None and self.rerank is not None:
            # PostgresRetriever ranks in SQL and has no candidate hits to rescore.
            raise ConfigError(
                "--rerank reranks an index's candidates; it does not apply to --postgres"
            )
        opts = _prompt_options(
            self.grounding, self.template, self.snippet_chars, self.context_chars
        )
        request = RetrievalRequest(
            question,
            k=self.k,
            mode=self.mode,
            text_query=self.text_query,
            min_score=self.min_score,
            source=self.source,
            heading=self.heading,
            group=_group(self.group),
            mmr=self.mmr,
            rerank=make_reranker(
                self.rerank, self.rerank_model, self.rerank_top, self.rerank_option
            ),
            rerank_top=self.rerank_top,
        )
        with _pipeline(
            path,
            self.also,
            self.merge,
            self.trace,
            self.min_matches,
            opts,
            self.postgres,
            self.table,
            self.rewriter(),
        ) as pipe:
            yield pipe, request


_SHARED = tuple(inspect.signature(_shared_options, eval_str=True).parameters.values())


def _with_shared_options(after: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the shared arguments, passed to it as one :class:`_Retrieval` ``shared``.

    The command declares only its own options; Typer sees them listed after the shared option
    ``after`` (which keeps each command's ``--help`` in the order it has always had).
    """
    cut = next(i for i, p in enumerate(_SHARED) if p.name == after) + 1

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        own = inspect.signature(command, eval_str=True).parameters.values()
        params = [*_SHARED[:cut], *(p for p in own if p.name != "shared"), *_SHARED[cut:]]

        @functools.wraps(command)
        def run(**kwargs: Any) -> None:
            shared = _Retrieval(**{p.name: kwargs.pop(p.name) for p in _SHARED})
            command(shared, **kwargs)

        # Typer reads the parameters from the signature (and their types from __annotations__).
        run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return decorate


@app.command("query")
@_with_shared_options(after="merge")
def query_command(
    shared: _Retrieval,
    show_prompt: Annotated[
        bool, typer.Option("--show-prompt", help="Also print the assembled prompt.")
    ] = False,
) -> None:
    """Retrieve matches for a question; --show-prompt adds the prompt (no model call)."""
    try:
        with shared.pipeline() as (pipe, request):
            prepared = pipe.prepare(request)
    except ScidxError as exc:
        fail(exc)
    doc = prepared.to_dict()
    if not show_prompt:
        doc.pop("prompt")
    if shared.as_json:
        echo(json_dumps_safe(doc, indent=1))
        return
    _print_matches(doc["matches"])
    if show_prompt:
        if prepared.rewrite is not None:
            spent = prepared.trace.latency_ms.get("query_rewrite", 0.0)
            echo(f"\n--- query rewrite ({spent:.0f} ms) ---")
            echo(f"semantic: {prepared.rewrite.query}")
            lexical = prepared.rewrite.text_query
            echo(f"lexical:  {lexical if lexical is not None else '(the semantic query)'}")
        echo("\n--- system ---")
        echo(prepared.prompt.system)
        echo("--- user ---")
        echo(prepared.prompt.user)


@app.command("ask")
@_with_shared_options(after="min_matches")
def ask_command(
    shared: _Retrieval,
    model: Annotated[str, typer.Option("--model", help="The chat model.")] = "gpt-4o-mini",
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="API base URL (default: OPENAI_BASE_URL, OpenAI)."),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds each attempt may take, up to the last byte.")
    ] = 60.0,
    max_retries: Annotated[
        int, typer.Option("--max-retries", help="Retries on 429/5xx/connection errors.")
    ] = 2,
) -> None:
    """Answer a question from the index with an OpenAI chat model, citing sources.

    The API key is read from OPENAI_API_KEY only. Exit code 2: the chat provider failed
    (no key, 429, 5xx, unreachable).
    """
    from scidx.rag.chat import ask

    try:
        with shared.pipeline() as (pipe, request):
            answer = ask(
                pipe,
                request,
                model=model,
                base_url=base_url,
                timeout=timeout,
                max_retries=max_retries,
            )
    except ScidxError as exc:
        fail(exc)
    if shared.as_json:
        echo(json_dumps_safe(answer.to_dict(), indent=1))
        return
    echo(answer.text)
    sources = answer.sources()
    if sources:
        echo("\nSources:")
        for line in sources:
            echo(f"  {line}")


def _run_eval(
    fixture: Path, index: Path | None, postgres: str | None, table: str, modes: list[str] | None
) -> dict[str, Any]:
    from scidx.evaluation.metrics import run_eval

    if postgres is None:
        return run_eval(fixture, index=index, modes=modes or None)
    if index is not None:
        raise ConfigError("give --index or --postgres, not both")
    with open_retriever(postgres, table) as pg:
        return run_eval(fixture, modes=modes or None, retriever=pg)


@app.command("eval")
def eval_command(
    fixture: Annotated[Path, typer.Argument(help="The eval fixture (JSON).")],
    index: Annotated[
        Path | None, typer.Option("--index", help="Evaluate this index instead.")
    ] = None,
    postgres: Annotated[str | None, POSTGRES_OPT] = None,
    table: Annotated[str, TABLE_OPT] = "scidx_chunks",
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Fail when worse than this report.")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the report (JSON) here.")] = None,
    tolerance: Annotated[
        float, typer.Option("--tolerance", help="Allowed relative drop (0.05 = 5%).")
    ] = 0.05,
    modes: Annotated[
        list[str] | None, typer.Option("--mode", "-m", help="Mode to run (repeatable).")
    ] = None,
    as_json: Annotated[bool, _JSON_OPT] = False,
) -> None:
    """Measure Recall@1/5/10, MRR@10 and nDCG@10 on a fixture; gate on a baseline.

    Exit code 7 when --baseline is given and Recall@5 or nDCG@10 of a mode fell more than
    --tolerance (relative) below it.
    """
    from scidx.evaluation.metrics import (
        EVAL_METRICS,
        QualityRegressionError,
        compare_to_baseline,
    )

    try:
        base_doc: Any = None
        if baseline is not None:
            try:
                base_doc = json.loads(baseline.read_text(encoding="utf-8"))
            except OSError as exc:
                raise InputError(
                    f"cannot read baseline {baseline}: {exc.strerror or exc}"
                ) from None
            except ValueError as exc:
                raise InputError(f"baseline {baseline} is not valid JSON: {exc}") from None
        report = _run_eval(fixture, index, postgres, table, modes)
        gate = (
            compare_to_baseline(report, base_doc, tolerance=tolerance)
            if base_doc is not None
            else None
        )
        if out is not None:
            from scidx.pack.fileio import atomic_write

            data = (json.dumps(report, indent=1, sort_keys=True) + "\n").encode()
            atomic_write(out, lambda fh: fh.write(data))
    except ScidxError as exc:
        fail(exc)
    if as_json:
        echo(json.dumps(report, indent=1, sort_keys=True))
    else:
        header = "mode     " + "".join(f"{m:>11}" for m in EVAL_METRICS) + "  queries"
        echo(header)
        for mode, result in report["modes"].items():
            s = result["summary"]
            cells = "".join(f"{s[m]:>11.4f}" for m in EVAL_METRICS)
            echo(f"{mode:<9}{cells}  {s['queries']:>7}")
        for mode, result in report["modes"].items():
            if result["misses"]:
                echo(
                    f"{mode} misses (nothing relevant in the top 10): "
                    + ", ".join(result["misses"])
                )
    if gate is None:
        return
    if gate.queries:
        echo("regressed queries:", err=True)
        for r in gate.queries:
            echo(f"  {r.describe()}", err=True)
    if not gate.ok:
        worst = "; ".join(r.describe() for r in gate.failed)
        fail(
            QualityRegressionError(
                f"retrieval quality fell more than {tolerance:.0%} below {baseline}: {worst}. "
                "Fix the regression, or if it is intended, refresh the baseline with "
                f"--out {baseline}"
            )
        )
    if not as_json:
        echo(f"baseline {baseline}: OK ({', '.join(gate.compared) or 'no modes compared'})")


# The options of bench_command, declared here so that its signature stays one line each.
_BenchSplit = Annotated[str, typer.Option("--split", help="qrels split: train, dev, test.")]
_BenchProvider = Annotated[
    str, typer.Option("--provider", help="hashing (offline), local (ONNX model) or openai.")
]
_BenchModel = Annotated[
    str | None,
    typer.Option("--model", help="Embedding model (provider default); local: its folder."),
]
_BenchDimensions = Annotated[
    int | None,
    typer.Option("--dimensions", help="Vector dimensions (default 512; local: the model's)."),
]
_BenchModes = Annotated[
    list[str] | None,
    typer.Option("--mode", "-m", help="hybrid, keyword, vector or all (repeatable)."),
]
_BenchLimit = Annotated[
    int | None, typer.Option("--limit", help="Only the first N judged queries.")
]
_BenchBm25s = Annotated[
    bool, typer.Option("--bm25s", help="Also measure bm25s (stemmed) as a reference.")
]
_BenchOut = Annotated[
    Path | None, typer.Option("--out", help="Append the row(s) to this CSV file.")
]
_BenchPostgres = Annotated[
    str | None,
    typer.Option(
        "--postgres", help="Export the packed corpus to this PostgreSQL DSN and query there."
    ),
]
_BenchMmr = Annotated[
    list[float] | None,
    typer.Option("--mmr", help="Also rank with maximal marginal relevance at this λ (repeatable)."),
]
_BenchVectors = Annotated[
    str | None,
    typer.Option("--vectors", help="Vector encoding to pack: float32, int8 or binary."),
]
_BenchReplicate = Annotated[
    int,
    typer.Option(
        "--replicate",
        help="Pack the corpus N times (distinct ids) to measure speed at scale; no "
        "quality metrics then.",
    ),
]


@app.command("bench")
def bench_command(
    beir: Annotated[Path, typer.Option("--beir", help="A BEIR dataset folder.")],
    split: _BenchSplit = "test",
    provider: _BenchProvider = "hashing",
    model: _BenchModel = None,
    dimensions: _BenchDimensions = None,
    modes: _BenchModes = None,
    k: Annotated[int, typer.Option("-k", "--k", help="Results per query.")] = 100,
    limit: _BenchLimit = None,
    bm25s: _BenchBm25s = False,
    out: _BenchOut = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the row(s) as JSON.")] = False,
    postgres: _BenchPostgres = None,
    table: Annotated[str, TABLE_OPT] = "scidx_bench",
    mmr: _BenchMmr = None,
    rerank: Annotated[str | None, RERANK_OPT] = None,
    rerank_model: Annotated[str | None, RERANK_MODEL_OPT] = None,
    rerank_top: Annotated[int | None, RERANK_TOP_OPT] = None,
    rerank_option: Annotated[list[str] | None, RERANK_OPTION_OPT] = None,
    vectors: _BenchVectors = None,
    replicate: _BenchReplicate = 1,
) -> None:
    """Benchmark retrieval on a BEIR dataset: nDCG@10, Recall@100, MRR@10 and timings.

    Each mode gives one row, plus one row per --mmr λ (the mmr column; empty for plain
    ranking). The reranker, vectors (float32, int8, binary or postgres) and replicate columns
    say what was measured; rerank_p50_ms is the median time inside the reranker per query.
    """
    from scidx.evaluation.beir import BENCH_COLUMNS, append_csv, read_beir, run_bench, run_bm25s
    from scidx.index.search import MODES

    chosen: list[str] = []
    for m in modes or ["hybrid"]:
        for part in m.split(","):
            chosen.extend(MODES if part == "all" else [part])
    try:
        if not chosen or any(m not in MODES for m in chosen):
            raise ConfigError(f"--mode must be {', '.join(MODES)} or all, got {', '.join(chosen)}")
        if vectors == "postgres":
            if postgres is None:
                raise ConfigError("--vectors postgres needs --postgres DSN (pgvector stores them)")
            vectors = None
        data = read_beir(beir, split)
        rows = run_bench(
            data,
            provider=provider,
            model=model,
            dimensions=dimensions,
            modes=list(dict.fromkeys(chosen)),
            k=k,
            limit=limit,
            backend=export_and_rank(postgres, table) if postgres is not None else None,
            mmr=[None, *(mmr or [])],
            reranker=make_reranker(rerank, rerank_model, rerank_top, rerank_option),
            rerank_top=rerank_top,
            vectors=vectors,
            replicate=replicate,
        )
        if bm25s:
            rows.append(run_bm25s(data, k=k, limit=limit))
        if out is not None:
            append_csv(out, rows)
    except ScidxError as exc:
        fail(exc)
    docs = [r.to_dict() for r in rows]
    if as_json:
        echo(json.dumps(docs[0] if len(docs) == 1 else docs, indent=1))
        return
    echo(",".join(BENCH_COLUMNS))
    for d in docs:
        echo(",".join(str(d[c]) for c in BENCH_COLUMNS))
