"""``toolup-rag distill``: turn a local ONNX sentence-embedding model into a static token table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scidx.cli.app import app
from scidx.cli.exits import fail
from scidx.errors import OutputError, ScidxError

__all__ = ["distill_command"]


@app.command("distill")
def distill_command(
    model_dir: Annotated[
        Path, typer.Argument(help="The model folder (model.onnx and tokenizer.json).")
    ],
    out: Annotated[Path, typer.Argument(help="The table file to write (.scidxtok).")],
    dimensions: Annotated[
        int, typer.Option("--dimensions", "-d", help="Dimensions after PCA.", min=1)
    ] = 128,
    threads: Annotated[
        int,
        typer.Option("--threads", help="ONNX Runtime threads (1 keeps the bytes the same).", min=1),
    ] = 1,
    name: Annotated[
        str | None, typer.Option("--name", help="The table's name (the indexes' model id).")
    ] = None,
) -> None:
    """Distil MODEL_DIR into a static token table for embeddingProvider "static".

    Every vocabulary token is embedded alone, reduced by PCA and stored as int8 rows with
    per-row scales; OUT.provenance.json records the method and the sha256 of the inputs and
    of the table. Needs onnxruntime (pip install 'toolup-rag[local]').
    """
    from scidx.embed.distill import distill

    try:
        result = distill(model_dir, out, dimensions=dimensions, threads=threads, name=name)
    except ScidxError as exc:
        fail(exc)
    except OSError as exc:
        fail(OutputError(f"cannot write {out}: {exc.strerror or exc}"))
    typer.echo(
        f"wrote {result['path']} ({result['bytes']} bytes, sha256 {result['sha256']}) and "
        f"{result['provenancePath']}",
        err=True,
    )
