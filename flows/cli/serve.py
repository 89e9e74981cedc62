"""`ablate serve`: run scheduled sweeps on this machine (docs/scheduling.md).

`flow.serve` needs no work pool or worker: this process polls the Prefect API and runs
each scheduled (or hand-triggered) sweep in a subprocess, in this folder (its outputs, its
`.ablate/` cache and MLflow store). Two ways:

- `ablate serve --experiment EXP.yaml --cron "0 2 * * *"`: one's own experiment, from one's
  own folder (no prefect.yaml needed), gated only against `--gate-reference` if given;
- `ablate serve` in a folder with a prefect.yaml (the clone): its deployments.

`--alert-webhook URL` first creates (or replaces, by name) the Prefect automation that POSTs
each alert event of `ablate trend` to URL (flows/cli/alerts.py; `ablate alerts automation`
makes it alone).

It uses the machine's Prefect server that `ablate run` keeps (flows/run/server.py), which
lasts, unless PREFECT_API_URL points at another one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ablate.flows import env


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(
        deployment: list[str] = typer.Option(
            [], help="Only this deployment of prefect.yaml (repeatable; default: all)."),
        experiment: Optional[str] = typer.Option(
            None, help="Serve this experiment file alone (no prefect.yaml needed)."),
        cron: list[str] = typer.Option(
            [], help="With --experiment: a cron schedule, e.g. '0 2 * * *' (repeatable; "
                     "none: run it by hand with `prefect deployment run`)."),
        name: Optional[str] = typer.Option(
            None, help="With --experiment: the deployment's name (default: the file's stem)."),
        timezone: Optional[str] = typer.Option(None, help="With --cron: its time zone."),
        gate_reference: Optional[str] = typer.Option(
            None, help="With --experiment: gate the baseline against this stored sweep folder."),
        gate_max_drop: Optional[float] = typer.Option(
            None, help="With --gate-reference: the largest drop to rule out (above 0)."),
        limit: Optional[int] = typer.Option(None, min=1, help="Sweeps running at once."),
        alert_webhook: Optional[str] = typer.Option(
            None, help="Create (or replace) the Prefect automation that POSTs each alert of "
                       "`ablate trend` (ablate.alert.fired) to this URL (with --experiment: "
                       "that experiment's; else every experiment's)."),
    ) -> None:
        """Serve sweeps on their schedules until interrupted (Ctrl-C)."""
        from ablate.components.contract.errors import InputError
        from ablate.flows.deploy import PREFECT_YAML, own_definition
        from ablate.flows.deploy import serve as serve_deployments
        from ablate.flows.run import server
        root = env.prepare()
        if alert_webhook is not None:
            from ablate.flows.outputs.alert_automation import check_url
            check_url(alert_webhook, field="--alert-webhook")
        own = None
        if experiment is not None:
            if not Path(experiment).is_file():
                raise InputError("not found", path=experiment, field="--experiment")
            from ablate.flows.run.context import RunOptions, get_context
            get_context(experiment, RunOptions())  # a bad spec: one line now, not at 2 am
            own = [own_definition(experiment, list(cron), name, timezone, gate_reference,
                                  gate_max_drop)]
        elif not (root / PREFECT_YAML).is_file():
            raise InputError("no prefect.yaml in this folder: serve your own experiment with "
                             "`ablate serve --experiment EXP.yaml --cron '0 2 * * *'` "
                             "(docs/scheduling.md)", path=str(root / PREFECT_YAML))
        info = server.Background().join()  # before prefect is imported
        if info is not None:
            typer.echo(f"Prefect server {info.api_url} (kept for later runs; "
                       "`ablate server stop` stops it)")
        from prefect.settings import PREFECT_API_URL
        if not PREFECT_API_URL.value():
            typer.echo("ablate: no PREFECT_API_URL: schedules need a lasting server; start "
                       "one with `prefect server start` and export PREFECT_API_URL="
                       "http://127.0.0.1:4200/api", err=True)
        if alert_webhook is not None:
            from ablate.flows.cli.alerts import make_automation
            make_automation(experiment, alert_webhook)
        for d in own or []:
            when = ", ".join(d.crons) or "by hand: prefect deployment run ablate-sweep/" + d.name
            typer.echo(f"serving ablate-sweep/{d.name} ({when}) from {root}")
        overrides = None if own else ({"experiment": experiment} if experiment else None)
        serve_deployments(deployment or None, overrides, limit, root / PREFECT_YAML, own)
