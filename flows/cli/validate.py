"""`ablate validate PATH`: check a data set before any compute; one line either way.

An experiment file (.yaml) is not a data set: that is said in one line, pointing at
`ablate check`."""

from __future__ import annotations

from pathlib import Path

import typer

from ablate.components.data import load_dataset
from ablate.components.data.validate import answerable_without_evidence
from ablate.components.errors import InputError


def validate(
    path: Path = typer.Argument(..., help="Data set: native folder, SQuAD .json or BEIR folder."),
    format: str = typer.Option("auto", "--format", help="auto | jsonl | squad | beir"),
    beir_split: str = typer.Option("test", "--beir-split", help="BEIR qrels split."),
) -> None:
    """Validate a data set: prints an OK summary, or one error line and exits 2."""
    if path.suffix.lower() in (".yaml", ".yml"):
        raise InputError("this is an experiment file, not a data set; `ablate validate` checks "
                         f"data sets: check an experiment with `ablate check {path}`",
                         path=str(path))
    ds = load_dataset(path, format=format, beir_split=beir_split)
    n_ans = sum(q.answerable for q in ds.questions)
    no_ev = answerable_without_evidence(ds.questions)
    note = (f"; {len(no_ev)} answerable without evidence (retrieval metrics undefined, "
            f"bucket no_evidence; first: {', '.join(no_ev[:3])})" if no_ev
            else "; 0 answerable without evidence")
    typer.echo(f"OK {ds.source}: {len(ds.documents)} documents, {len(ds.questions)} questions "
               f"({n_ans} answerable, {len(ds.questions) - n_ans} unanswerable), "
               f"fingerprint {ds.fingerprint}{note}")


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
