"""`ablate validate PATH`: check a data set before any compute.

One OK line, or one line per error (file, line, field; the first ERROR_LIMIT of them,
then "... and N more") and exit 2. Each bad record is reported once, with its first
problem, and checking goes on with the next; a problem that stops the reading (a missing
file, a SQuAD file whose top level is not an object) ends the list.

An experiment file (.yaml) is not a data set: that is said in one line, pointing at
`ablate check`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ablate.components.contract.errors import InputError
from ablate.components.data import load_dataset
from ablate.components.data.validate import answerable_without_evidence, collecting


def validate(
    path: Path = typer.Argument(..., help="Data set: native folder, SQuAD .json, BEIR or TREC folder."),
    format: str = typer.Option("auto", "--format", help="auto | jsonl | squad | beir | trec"),
    beir_split: str = typer.Option("test", "--beir-split", help="BEIR qrels split."),
    encoding: str = typer.Option("utf-8", "--encoding",
                                 help="TREC only: the files' encoding (latin-1 for old collections)."),
) -> None:
    """Validate a data set: prints an OK summary, or one line per error and exits 2."""
    if path.suffix.lower() in (".yaml", ".yml"):
        raise InputError("this is an experiment file, not a data set; `ablate validate` checks "
                         f"data sets: check an experiment with `ablate check {path}`",
                         path=str(path))
    with collecting() as found:
        try:
            ds = load_dataset(path, format=format, beir_split=beir_split, encoding=encoding)
        except InputError as exc:  # a problem that stops the reading
            found.add(exc)
    if found.total:
        for line in found.lines():
            print(f"ablate: error: {line}", file=sys.stderr)
        raise typer.Exit(code=2)
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
