"""`ablate server status|stop`: the machine's Prefect server that `ablate run` starts once
and reuses (flows/run/server.py)."""

from __future__ import annotations

import typer

ACTIONS = ("status", "stop")


def register(app: typer.Typer) -> None:
    @app.command("server")
    def server_cmd(action: str = typer.Argument("status", help=" | ".join(ACTIONS)),
                   force: bool = typer.Option(False, "--force",
                                              help="Stop it even while runs use it.")) -> None:
        """Show or stop the Prefect server `ablate run` keeps for this machine."""
        from ablate.components.contract.errors import InputError
        from ablate.flows.run import server
        if action not in ACTIONS:
            raise InputError(f"unknown action '{action}' ({', '.join(ACTIONS)})", field="action")
        info = server.read_info()
        if action == "stop":
            using = server.users()
            if using and not force:
                from ablate.components.contract.errors import RunFailed
                raise RunFailed(f"the Prefect server is in use by pid {', '.join(map(str, using))} "
                                "(`ablate run` / `ablate serve`); not stopped",
                                hint="ablate server stop --force")
            stopped = server.stop()
            typer.echo(f"stopped the Prefect server (pid {stopped.pid}, port {stopped.port})"
                       if stopped else "no Prefect server was running")
            return
        if info is None or not server._alive(info.pid):
            typer.echo(f"no Prefect server running (state in {server.state_dir()})")
        else:
            healthy = "healthy" if server._healthy(info) else "not answering"
            typer.echo(f"Prefect server {info.api_url}: pid {info.pid}, prefect {info.prefect}, "
                       f"{healthy}; state in {server.state_dir()}")
