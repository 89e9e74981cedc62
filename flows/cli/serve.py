"""`ablate serve`: run the scheduled deployments of prefect.yaml on this machine.

`flow.serve` needs no work pool or worker: this process polls the Prefect API and runs
each scheduled (or hand-triggered) sweep in a subprocess. Point PREFECT_API_URL at a
running `prefect server start`; schedules need a lasting server.
"""

from __future__ import annotations

from typing import Optional

import typer

from ablate.flows import env


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(
        deployment: list[str] = typer.Option(
            [], help="Only this deployment of prefect.yaml (repeatable; default: all)."),
        experiment: Optional[str] = typer.Option(
            None, help="Run this experiment file instead of the one in prefect.yaml."),
        limit: Optional[int] = typer.Option(None, min=1, help="Sweeps running at once."),
    ) -> None:
        """Serve the nightly/weekly sweep deployments until interrupted (Ctrl-C)."""
        from ablate.flows.deploy import serve as serve_deployments
        root = env.prepare()
        from prefect.settings import PREFECT_API_URL
        if not PREFECT_API_URL.value():
            typer.echo("ablate: no PREFECT_API_URL: schedules need a lasting server; start "
                           "one with `prefect server start` and export PREFECT_API_URL="
                           "http://127.0.0.1:4200/api", err=True)
        overrides = {"experiment": experiment} if experiment else None
        serve_deployments(deployment or None, overrides, limit, root / "prefect.yaml")
