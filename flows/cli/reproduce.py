"""`ablate reproduce FILE [--data DIR] [--run FILE]`: run a regression file
(experiments/regressions/*.yaml: a TREC collection, a lexical pipeline, published figures)
and print observed beside expected; exit 0 when every figure is within tolerance, 1 when
not, 2 on bad input or missing data (the line says where to put the files). `--run` is
checked before any indexing (a folder, a missing folder, an unwritable one, an input file:
one line, exit 2); the table is printed before the run file is written, and a failed write
(a full device) is one line, exit 2, after it."""

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
        from ablate.components.contract.errors import InputError
        from ablate.components.export import regression
        from ablate.components.export.export_trec import write_trec_run
        from ablate.components.export.output_file import check_output_file
        reg = regression.load(file)
        if run is not None:  # before any indexing: a bad path costs nothing
            check_output_file(run, regression.input_paths(reg, data), "--run")
        out = regression.run(reg, data, say=lambda msg: typer.echo(msg, err=True))
        typer.echo(regression.table(reg, out))  # the result, whatever happens to the file
        if run is not None:
            try:
                write_trec_run(run, regression.as_run(out.rankings), tag=f"ablate-{reg.name}")
            except OSError as exc:
                raise InputError(f"cannot be written ({exc.strerror or exc}); the figures are "
                                 "above", path=str(run), field="--run") from None
            typer.echo(f"run written to {run}", err=True)
        if not out.passed:
            raise typer.Exit(1)
