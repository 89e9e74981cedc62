"""`ablate alerts automation --webhook URL [EXPERIMENT]`: create (or replace, by name) the
Prefect automation that calls a webhook on each `ablate.alert.fired` event of the experiment
(its file or name; none: every experiment), on the Prefect API in use
(flows/outputs/alert_automation.py, docs/scheduling.md). `ablate serve --alert-webhook URL`
does the same when it starts. A URL that is not http(s): one line, exit 2; no reachable
Prefect API: one line, exit 1."""

from __future__ import annotations

from typing import Optional

import typer

alerts_app = typer.Typer(help="Alerts through Prefect: the automation that forwards them.",
                         no_args_is_help=True)


def make_automation(experiment: Optional[str], webhook: str) -> None:
    """Create or replace the automation; print what was done; exit 1 when no API takes it."""
    from ablate.flows.cli.trend import experiment_of
    from ablate.flows.outputs.alert_automation import check_url, ensure
    from ablate.flows.outputs.alert_events import api_url
    check_url(webhook)
    name = experiment_of(experiment)[0] if experiment is not None else None
    try:
        api = api_url()
        if not api:
            raise RuntimeError("no Prefect API (set PREFECT_API_URL)")
        made = ensure(name, webhook, api)
    except Exception as exc:  # noqa: BLE001 (the API unreachable or refusing: one line)
        text = " ".join(str(exc).split())[:300] or type(exc).__name__
        typer.echo(f"ablate: the alert automation was not made: {text}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"{'created' if made.created else 'updated'} automation '{made.name}' "
               f"({made.id}) on {api}: each ablate.alert.fired event -> POST {webhook} "
               f"(webhook block {made.block})")


@alerts_app.command("automation")
def automation(
    experiment: Optional[str] = typer.Argument(
        None, help="The experiment file or name (default: every experiment)."),
    webhook: str = typer.Option(..., help="The URL to POST each alert to (JSON)."),
) -> None:
    """Create or replace the Prefect automation that POSTs each alert to a webhook."""
    make_automation(experiment, webhook)


def register(app: typer.Typer) -> None:
    app.add_typer(alerts_app, name="alerts")
