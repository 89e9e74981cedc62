"""`ablate sync SWEEP_DIR`: log a finished sweep folder to MLflow (e.g. after the tracking
server was unreachable during the run). Idempotent: existing runs are found and completed,
never duplicated."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ablate.flows import env


def register(app: typer.Typer) -> None:
    @app.command("sync")
    def sync(
        sweep_dir: Path = typer.Argument(..., help="A sweep output folder."),
        tracking_uri_opt: Optional[str] = typer.Option(
            None, "--tracking-uri",
            help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI or .ablate/mlflow.db)."),
        artifact_root: Optional[str] = typer.Option(
            None, help="Artifact root for a new MLflow experiment (default: .ablate/mlartifacts)."),
    ) -> None:
        """Log (or complete the logging of) a sweep folder in MLflow."""
        from ablate.components.report.sweep_data import load_sweep
        root = env.prepare()
        from ablate.components.runtime.sweep_files import SweepFolder
        load_sweep(sweep_dir)  # bad folder -> one line, exit 2, before touching MLflow
        SweepFolder(sweep_dir).check_all()  # nor a damaged report or plot logged
        uri = env.tracking_uri(tracking_uri_opt, root)
        if uri.startswith("sqlite:"):
            (root / env.STATE_DIR).mkdir(exist_ok=True)
        from ablate.flows.track.mlflow_links import ui_lines
        from ablate.flows.track.tracking import log_sweep
        try:
            out = log_sweep(sweep_dir, uri, artifact_root or env.default_artifact_root(root))
        except Exception as exc:  # unreachable server, permissions: say so, keep exit 1
            typer.echo(f"ablate: MLflow logging failed ({type(exc).__name__}: {exc}); "
                       f"nothing lost, the results stay in {sweep_dir}", err=True)
            raise typer.Exit(1) from None
        typer.echo(f"MLflow: parent run {out['parent']} with {len(out['children'])} child runs "
                   f"in {uri} (experiment {out['experiment_id']})")
        typer.echo("\n".join(ui_lines(uri, out)))
