"""`ablate reproduce FILE [--data DIR] [--run FILE]`: run a regression file
(experiments/regressions/*.yaml: a TREC collection, a lexical pipeline, published figures)
and print observed beside expected; exit 0 when every figure is within tolerance, 1 when
not, 2 on bad input or missing data (the line says where to put the files)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("reproduce")
    def reproduce(
        file: Path = typer.Argument(..., help="A regression file (experiments/regressions/*.yaml)."),
        data: Path = typer.Option(Path("."), help="Folder the file's collection, topics and "
                                                  "qrels paths are relative to."),
        run: Optional[Path] = typer.Option(None, "--run", help="Also write the ranking as a "
                                                               "TREC run file (for trec_eval)."),
    ) -> None:
        """Reproduce a published retrieval run and compare its figures."""
        from ablate.components.export import regression
        from ablate.components.export.export_trec import write_trec_run
        reg = regression.load(file)
        out = regression.run(reg, data, say=lambda msg: typer.echo(msg, err=True))
        if run is not None:
            write_trec_run(run, regression.as_run(out.rankings), tag=f"ablate-{reg.name}")
            typer.echo(f"run written to {run}", err=True)
        typer.echo(regression.table(reg, out))
        if not out.passed:
            raise typer.Exit(1)
