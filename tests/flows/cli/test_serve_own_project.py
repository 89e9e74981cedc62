"""Scheduling one's own experiment (issue 40): from the user's own folder, with no
prefect.yaml, `ablate serve --experiment EXP.yaml --cron ...` serves that experiment alone
(no demo gate reference), and its flow run ends Completed with its outputs and cache in
that folder. And the `mlflow ui` hint names a command that runs without the venv on PATH."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

import pytest

from tests.flows.run.test_deploy import TINY


def test_serving_needs_prefect_yaml_or_an_experiment(tmp_path, monkeypatch, run_cli, capsys):
    monkeypatch.chdir(tmp_path)
    assert run_cli("serve") == 2
    err = capsys.readouterr().err
    assert "--experiment" in err and "Traceback" not in err


def test_own_definition_has_the_users_schedule_and_no_gate():
    from ablate.flows.deploy import own_definition
    d = own_definition("exp.yaml", crons=["0 3 * * *"], name=None)
    assert d.name == "exp" and d.crons == ("0 3 * * *",)
    assert d.parameters == {"experiment": "exp.yaml"}
    gated = own_definition("exp.yaml", crons=[], name="mine", gate_reference="runs/ref",
                           gate_max_drop=0.02)
    assert gated.name == "mine" and gated.parameters["gate_reference"] == "runs/ref"


@pytest.mark.slow
def test_own_experiment_served_from_its_folder_completes(prefect_server, tmp_path,
                                                        monkeypatch):
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.runner import Runner

    from ablate.flows.deploy import own_definition, runner_deployments
    monkeypatch.chdir(tmp_path)  # the user's own project folder: no prefect.yaml, no clone
    (tmp_path / "exp.yaml").write_text(TINY)
    d = own_definition("exp.yaml", crons=["0 2 * * *"], name="own-tiny")
    (deployment,) = runner_deployments([d], {"mlflow": False}, paused=True)

    async def main():
        runner = Runner(name="ablate-own-runner", query_seconds=1, pause_on_shutdown=False)
        await runner.add_deployment(deployment)
        run = await run_deployment("ablate-sweep/own-tiny", timeout=0)
        await runner.start(run_once=True)
        async with get_client() as client:
            return await client.read_flow_run(run.id)
    flow_run = asyncio.run(main())
    assert flow_run.state is not None and flow_run.state.is_completed(), flow_run.state
    assert len(list((tmp_path / "runs").glob("deploy-tiny-*/per_query.parquet"))) == 1
    assert list((tmp_path / ".ablate" / "cache").glob("chunk/*/*.sha256"))


def test_mlflow_ui_hint_runs_without_the_venv_on_path():
    from ablate.flows.track.mlflow_links import ui_lines
    lines = ui_lines("sqlite:////tmp/x/mlflow.db", {"experiment_id": "1"})
    command = shlex.split(lines[0].split("open the UI with: ", 1)[1])
    assert Path(command[0]).is_absolute() and Path(command[0]).exists(), command
