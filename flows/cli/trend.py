"""`ablate trend EXPERIMENT`: every recorded run of an experiment (its experiment file, or
its `name`), oldest first, with each key metric's mean and cluster-robust interval and
each run against the one before, paired on the questions they share
(components/report/trend.py). The runs are the sweep folders under the output root (the
experiment file's `out`, else `runs`, relative to the current folder as for `ablate run`;
`--runs` names another) whose manifest names the experiment; a folder that cannot be read
is skipped with a line on stderr. With `--tracking-uri` the sweeps logged to that MLflow
store (the experiment's parent runs) join them, read back as folders
(flows/track/run_folder.py); a sweep both have is read from its folder. Prints the table; writes trend.parquet and trend.html
(atomically) into `--out`, by default the output root beside the runs. No runs of that
experiment, an unknown metric or variant, an experiment file without a name: one line,
exit 2. Given the experiment file, its `alerts:` rules are read over the trend
(components/report/trend_alerts.py), one line each after the table; exit 1 when a rule
alerts, so a scheduled job fails on it; each rule that alerts is also sent as a Prefect
event `ablate.alert.fired` (flows/outputs/alert_events.py; `--prefect-events warn` adds
warnings, `off` sends none), and no reachable Prefect API is one warning line."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import List, Optional

import typer

DEFAULT_ROOT = "runs"  # flows/plan/spec.py ExperimentSpec.out's default


def experiment_of(ref: str) -> tuple[str, str]:
    """(the experiment's name, its output root): from an experiment file's `name` and
    `out` when `ref` is a file, else `ref` is the name (root: DEFAULT_ROOT)."""
    from ablate.components.contract.errors import InputError
    path = Path(ref)
    if not path.is_file():
        if path.suffix.lower() in (".yaml", ".yml"):
            raise InputError("no such experiment file", path=ref)
        return ref, DEFAULT_ROOT
    from ablate.components.contract.yaml_source import line_of, read_yaml
    data, node = read_yaml(path)
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        raise InputError("an experiment file needs a name to find its runs by", path=str(path),
                         line=line_of(node, ("name",)) if isinstance(data, dict) else 1, field="name")
    out = data.get("out", DEFAULT_ROOT)
    return name, str(out) if isinstance(out, str) and out else DEFAULT_ROOT


def alert_rules(experiment: str) -> list:
    """The `alerts:` rules of the experiment file, checked with the whole file (none when
    given a name or a file without `alerts:`)."""
    if not Path(experiment).is_file():
        return []
    from ablate.components.contract.yaml_source import read_yaml
    data, _ = read_yaml(Path(experiment))
    if not isinstance(data, dict) or not data.get("alerts"):
        return []
    from ablate.flows.plan.spec_load import load_spec
    return list(load_spec(experiment).spec.alerts or [])


def load_runs(root: Path, name: str, tracking_uri: str | None = None,
              tmp: Path | None = None) -> list:
    """The readable runs of `name` under `root` (TrendRun), then those only in the MLflow
    store `tracking_uri` (read back under `tmp`); a damaged one is skipped with a line on
    stderr; none: InputError."""
    from ablate.components.contract.errors import InputError
    from ablate.components.report.sweep_data import load_sweep
    from ablate.components.report.trend import TrendRun, run_folders
    runs = []
    for folder in run_folders(root, name):
        try:
            runs.append(TrendRun(str(folder), load_sweep(folder)))
        except InputError as exc:
            typer.echo(f"ablate: skipped {exc.one_line()}", err=True)
    if tracking_uri is not None and tmp is not None:
        from ablate.flows.track.run_folder import sweep_from_run, sweep_runs
        local = {r.results.manifest.get("sweep_id") for r in runs}
        for run_id, sweep_id in sweep_runs(name, tracking_uri):
            if sweep_id in local:
                continue
            try:
                folder = sweep_from_run(run_id, tracking_uri, tmp / run_id)
                runs.append(TrendRun(f"MLflow run {run_id}", load_sweep(folder)))
            except InputError as exc:
                typer.echo(f"ablate: skipped {exc.one_line()}", err=True)
    if not runs:
        raise InputError(f"no recorded runs of experiment '{name}' under {root}", field="EXPERIMENT")
    return runs


def write(out: Path, table, page: str) -> list[Path]:
    """trend.parquet and trend.html into `out`, each atomically."""
    from ablate.components.contract.errors import InputError
    from ablate.components.runtime.atomic import atomic_write
    written = []
    for name, kwargs in (("trend.parquet", {"writer": table.write_parquet}),
                         ("trend.html", {"data": page})):
        try:
            written.append(atomic_write(out / name, **kwargs))
        except OSError as exc:
            raise InputError(f"cannot write {name} ({exc.strerror or exc})", path=str(out),
                             field="--out") from None
    return written


def notify(name: str, rules: list, results: list, at: str) -> None:
    """The Prefect events of the rules that fired (flows/outputs/alert_events.py); no
    Prefect API: one warning line (the exit code is the rules')."""
    from ablate.flows.outputs.alert_events import send, to_send
    pairs = to_send(rules, results, at)
    if not pairs:
        return
    try:
        sent = send(name, pairs)
    except RuntimeError as exc:
        typer.echo(f"ablate: warning: alert events not sent to Prefect ({exc})", err=True)
        return
    tagged = f"; flow run {sent.flow_run} tagged" if sent.flow_run else ""
    typer.echo(f"sent {sent.events} alert event{'s' if sent.events != 1 else ''} "
               f"(ablate.alert.fired) to {sent.api}{tagged}")


def register(app: typer.Typer) -> None:
    @app.command("trend")
    def trend(
        experiment: str = typer.Argument(..., help="The experiment file, or the experiment's name."),
        runs: Optional[Path] = typer.Option(
            None, help="Output root holding the runs (default: the experiment file's `out`, else runs)."),
        variant: Optional[str] = typer.Option(None, help="The variant to follow (default: the baseline)."),
        metric: Optional[List[str]] = typer.Option(
            None, help="Metric to trend (repeat for several; default: the newest run's metrics.key)."),
        out: Optional[Path] = typer.Option(
            None, help="Folder for trend.parquet and trend.html (default: beside the runs)."),
        tracking_uri: Optional[str] = typer.Option(
            None, help="Also read the experiment's sweeps logged to this MLflow store."),
        prefect_events: str = typer.Option(
            "alert", help="Send a Prefect event (ablate.alert.fired) per rule that alerts "
                          "(alert), that alerts or warns (warn), or none (off)."),
    ) -> None:
        """Every recorded run of an experiment: key metrics with their intervals, each run
        against the one before on their common questions."""
        from ablate.components.contract.errors import InputError
        from ablate.components.report.trend import trend_table
        from ablate.components.report.trend_svg import trend_page
        from ablate.components.report.trend_text import trend_text
        from ablate.flows.outputs.alert_events import LEVELS
        if prefect_events not in LEVELS:
            raise InputError(f"'{prefect_events}' is not one of {', '.join(LEVELS)}",
                             field="--prefect-events")
        name, default_root = experiment_of(experiment)
        root = runs if runs is not None else Path(default_root)
        with tempfile.TemporaryDirectory(prefix="ablate-trend-") as tmp:
            found = load_runs(root, name, tracking_uri, Path(tmp))
        table = trend_table(found, variant=variant, metrics=metric or None)
        typer.echo(trend_text(table), nl=False)
        for path in write(out if out is not None else root, table, trend_page(table, name)):
            typer.echo(f"wrote {path}")
        rules = alert_rules(experiment)
        if rules:
            from ablate.components.report.trend_alerts import alert_lines, evaluate, fired
            results = evaluate(table, rules)
            for line in alert_lines(results):
                typer.echo(line)
            notify(name, rules, results, prefect_events)
            if fired(results):
                raise typer.Exit(1)
