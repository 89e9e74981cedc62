"""`ablate run EXPERIMENT.yaml`: validate, run the sweep flow, print the summary."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Optional

import typer

from ablate.components.contract.vocab import SPLITS, TIERS
from ablate.flows import env
from ablate.flows.run import console


def _resume(experiment: Path) -> str:
    """The command that resumes this run: the command line it was started with (else the
    plain `ablate run EXPERIMENT`, when called in-process)."""
    import sys
    started = Path(sys.argv[0]).name == "ablate" or sys.argv[0].endswith("cli/main.py")
    return shlex.join(["ablate", *sys.argv[1:]] if started else ["ablate", "run", str(experiment)])


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run(
        cli: typer.Context,
        experiment: Path = typer.Argument(..., help="Experiment YAML file."),
        out: Optional[str] = typer.Option(None, help="Output root (default: the spec's `out`)."),
        tier: Optional[str] = typer.Option(None, help=" | ".join(TIERS)),
        split: Optional[str] = typer.Option(None, help=" | ".join(SPLITS)),
        tracking_uri: Optional[str] = typer.Option(
            None, help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI or .ablate/mlflow.db)."),
        no_mlflow: bool = typer.Option(False, "--no-mlflow", help="Do not log to MLflow."),
        workers: Optional[int] = typer.Option(None, min=1, help="Task runner workers."),
        cache_dir: Optional[str] = typer.Option(None, help="Stage result cache folder."),
        verbose: bool = typer.Option(False, "--verbose", "-v",
                                     help="Show Prefect's and MLflow's log lines too."),
    ) -> None:
        """Run an ablation sweep and write its report.

        The console shows a header, one line per stage and the summary; `--verbose` adds
        Prefect's and MLflow's own log lines (the Prefect UI keeps them either way). A run
        that fails after it started (a stage, the analysis, the report, MLflow) ends with
        one line naming the cause and the command that continues, and exit code 1."""
        from ablate.components.contract.errors import InputError, RunFailed
        from ablate.flows.plan.producible import key_metric_lines, refusal
        from ablate.flows.run import server
        from ablate.flows.run.context import RunOptions, get_context

        root = env.prepare()
        from ablate.flows.run import interrupt
        cli.call_on_close(interrupt.install(_resume(experiment)))  # Ctrl-C/SIGTERM stop at once
        prefect_server = server.Background()  # starts or finds it while the data load
        if tier is not None and tier not in TIERS:
            raise InputError(f"unknown tier '{tier}' ({', '.join(TIERS)})", field="--tier")
        if split is not None and split not in SPLITS:
            raise InputError(f"unknown split '{split}' ({', '.join(SPLITS)})", field="--split")
        # Validate spec, data and component names before anything starts.
        ctx = get_context(str(experiment), RunOptions(tier, split, cache_dir))
        refused = refusal(ctx)  # a key metric that no variant's pipeline produces
        if refused is not None:
            raise refused
        from ablate.flows.plan.out_paths import check_out
        check_out(ctx.loaded, out)  # a file, or a name too long: before any stage
        uri = env.tracking_uri(tracking_uri, root)
        (root / env.STATE_DIR).mkdir(exist_ok=True)
        for notice in ctx.notices:
            typer.echo(f"notice: {notice}")
        for line in key_metric_lines(ctx):  # key metrics some variants cannot produce
            typer.echo(f"warning: {line}")
        typer.echo(f"ablate: {ctx.spec.name}: {len(ctx.variants)} variants x "
                   f"{len(ctx.questions)} questions, {len(ctx.plan.nodes)} unique stages")
        info = prefect_server.join()
        if info is not None:
            how = (f"started in {prefect_server.seconds:.1f} s (kept for later runs; "
                   "`ablate server stop` stops it)" if prefect_server.started else "reused")
            typer.echo(f"Prefect server {info.api_url}: {how}")
        if not verbose:
            console.quiet_shutdown()
        from ablate.flows.run.api_lost import Watch
        with console.quiet(not verbose), Watch(info.pid if info else None,
                                                     _resume(experiment)) as watch:
            from ablate.flows.sweep import run_sweep
            interrupt.keep_prefect_out()
            try:
                result = run_sweep(str(experiment), workers=workers, out=out, tier=tier,
                                   split=split, cache_dir=cache_dir,
                                   tracking_uri=None if no_mlflow else uri,
                                   artifact_root=env.default_artifact_root(root),
                                   mlflow=not no_mlflow)
            except Exception as exc:  # noqa: BLE001 - recover() re-raises all but a lost API
                result = watch.recover(exc)
                typer.echo(watch.warning(), err=True)
        sweep_dir = Path(result["sweep_dir"])
        if console.hidden_warnings():
            typer.echo(f"({console.hidden_warnings()} Python warnings from libraries hidden; "
                       "--verbose shows them)")
        typer.echo("")
        if result.get("unchanged"):
            typer.echo(f"Nothing changed: every stage reused and the outputs are in place in "
                       f"{sweep_dir}; analysis and report skipped"
                       + ("; MLflow already logged" if result.get("mlflow_skipped") else ""))
        typer.echo((sweep_dir / "summary.txt").read_text())
        if result.get("mlflow"):
            from ablate.flows.track.mlflow_links import ui_lines
            typer.echo(f"MLflow: parent run {result['mlflow']['parent']} in {uri}")
            typer.echo("\n".join(ui_lines(uri, result["mlflow"])))
        typer.echo(f"Report: {sweep_dir / 'report.md'}")
        from ablate.flows.outputs.generation_check import all_generations_failed
        failed = all_generations_failed(sweep_dir)
        if failed:  # the numbers of those variants mean nothing: not a success
            raise RunFailed(f"every generation failed for {', '.join(failed)} (answer/"
                            "generation_error = 1 on every question; the Prefect log names "
                            f"the errors); the results are in {sweep_dir}", hint=shlex.join(
                                ["ablate", "run", str(experiment)]
                                + (["--cache-dir", cache_dir] if cache_dir else [])))
        if result.get("mlflow_error"):
            sync = ["ablate", "sync", str(sweep_dir)]
            raise RunFailed(f"MLflow logging failed ({result['mlflow_error']}); the results "
                            f"are in {sweep_dir}", hint=shlex.join(
                                sync + (["--tracking-uri", tracking_uri] if tracking_uri else [])))
