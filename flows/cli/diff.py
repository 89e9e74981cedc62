"""`ablate diff A B`: what changed between two sweep output folders (A the older run):
the experiment file's settings, the run's options, each variant's config and model
files, the data's fingerprints and the questions and documents added, removed or
edited, library versions and plugin code, the first stage whose key differs, and which
key metrics and verdicts moved (components/report/run_diff.py). `--out` writes the same
as diff.json (atomically). A folder that is missing, not a sweep's output or damaged is
one line naming it, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer


def out_file(out: Path) -> Path:
    """`--out`: a .json file as named, else a folder that gets diff.json."""
    return out if out.suffix.lower() == ".json" else out / "diff.json"


def register(app: typer.Typer) -> None:
    @app.command("diff")
    def diff(
        old: Path = typer.Argument(..., help="The older sweep output folder (A)."),
        new: Path = typer.Argument(..., help="The newer sweep output folder (B)."),
        out: Optional[Path] = typer.Option(
            None, help="Also write the diff as JSON: a .json file, or a folder that gets diff.json."),
        key_metric: Optional[List[str]] = typer.Option(
            None, help="Key metric to show (repeat for several; default: B's metrics.key)."),
    ) -> None:
        """What changed between two runs, and which verdicts and key metrics moved."""
        from ablate.components.contract.errors import InputError
        from ablate.components.report.run_diff import diff_runs
        from ablate.components.report.run_diff_text import diff_text
        from ablate.components.report.sweep_data import load_sweep
        from ablate.components.runtime.atomic import atomic_write
        runs = [load_sweep(old), load_sweep(new)]  # bad input: one line, exit 2
        data = diff_runs(runs[0], runs[1], labels=(str(old), str(new)), key=key_metric or None)
        typer.echo(diff_text(data), nl=False)
        if out is not None:
            target = out_file(out)
            try:
                atomic_write(target, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
            except OSError as exc:
                raise InputError(f"cannot write diff.json ({exc.strerror or exc})", path=str(target),
                                 field="--out") from None
            typer.echo(f"wrote {target}")
