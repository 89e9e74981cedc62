"""`ablate diff A B`: what changed between two runs (A the older), each a sweep output
folder or an MLflow run id (a sweep's parent run, or a variant's run: its sweep; read back
by flows/track/run_folder.py): the experiment file's settings, the run's options, each
variant's config and model files, the data's fingerprints and the questions and
documents added, removed or edited, library versions and plugin code, the first stage
whose key differs, and which key metrics and verdicts moved
(components/report/run_diff.py). `--out` writes the same as diff.json (atomically). A
folder that is missing, not a sweep's output or damaged, or an unknown run id, is one
line naming it, exit 2."""

from __future__ import annotations

import difflib
import json
import tempfile
from pathlib import Path
from typing import Any, List, Optional

import typer


def out_file(out: Path) -> Path:
    """`--out`: a .json file as named, else a folder that gets diff.json."""
    return out if out.suffix.lower() == ".json" else out / "diff.json"


def _load(ref: str, tracking_uri: str | None, tmp: Path) -> tuple[Any, str]:
    """(the run's SweepResults, its label): a folder, else an MLflow run id."""
    from ablate.components.report.sweep_data import load_sweep
    if not Path(ref).exists():
        from ablate.flows.track.run_folder import is_run_id
        if is_run_id(ref):
            from ablate.flows import env
            from ablate.flows.track.run_folder import sweep_from_run
            folder = sweep_from_run(ref, env.tracking_uri(tracking_uri, Path.cwd()), tmp / ref)
            return load_sweep(folder), f"MLflow run {ref}"
    return load_sweep(Path(ref)), ref  # bad input: one line, exit 2


def register(app: typer.Typer) -> None:
    @app.command("diff")
    def diff(
        old: str = typer.Argument(..., help="The older run: a sweep output folder or an MLflow run id (A)."),
        new: str = typer.Argument(..., help="The newer run: a sweep output folder or an MLflow run id (B)."),
        out: Optional[Path] = typer.Option(
            None, help="Also write the diff as JSON: a .json file, or a folder that gets diff.json."),
        key_metric: Optional[List[str]] = typer.Option(
            None, help="Key metric to show (repeat for several; default: B's metrics.key)."),
        tracking_uri: Optional[str] = typer.Option(None, help="MLflow store of a run id."),
    ) -> None:
        """What changed between two runs, and which verdicts and key metrics moved."""
        from ablate.components.contract.errors import InputError
        from ablate.components.report.run_diff import diff_runs
        from ablate.components.report.run_diff_text import diff_text
        from ablate.components.runtime.atomic import atomic_write
        with tempfile.TemporaryDirectory(prefix="ablate-diff-") as tmp:
            (a, label_a), (b, label_b) = (_load(ref, tracking_uri, Path(tmp)) for ref in (old, new))
        known = sorted(set(a.metrics) | set(b.metrics))
        for m in key_metric or []:
            if m not in known:
                near = difflib.get_close_matches(m, known, n=1, cutoff=0.5)
                hint = f"; did you mean {near[0]}?" if near else ""
                raise InputError(f"unknown metric '{m}' (in neither run){hint}", field="--key-metric")
        data = diff_runs(a, b, labels=(label_a, label_b), key=key_metric or None)
        typer.echo(diff_text(data), nl=False)
        if out is not None:
            target = out_file(out)
            try:
                atomic_write(target, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
            except OSError as exc:
                raise InputError(f"cannot write diff.json ({exc.strerror or exc})", path=str(target),
                                 field="--out") from None
            typer.echo(f"wrote {target}")
