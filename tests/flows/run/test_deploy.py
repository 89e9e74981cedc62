"""Deployments: prefect.yaml is valid for `prefect deploy`, and a deployment built by
flows/deploy.py runs the sweep once through a real Prefect API (the test harness)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.specs import experiment, pipeline, vary

TINY = experiment("deploy-tiny", smoke_size=8, seed=2,
                  metrics={"ks": [1, 3], "key": ["final/recall_at_3"]},
                  stats={"resamples": 200, "bootstrap_resamples": 100},
                  baseline=pipeline(generator=None), sweeps=[vary("fusion.rrf_k", 5)])


def test_the_nightly_reference_holds_the_nightly_baselines_questions():
    """The gate pairs tonight's baseline with the pinned one question by question: the
    reference must hold exactly the questions the nightly's baseline runs on (500: sized
    so that the gate's allowed drop can be proven, docs/statistics.md)."""
    import polars as pl

    from ablate.flows.deploy import load_definitions
    from ablate.flows.run.context import RunOptions, get_context
    nightly = {d.name: d for d in load_definitions(ROOT / "prefect.yaml")}["nightly-smoke"]
    params = nightly.parameters
    ref = pl.read_parquet(ROOT / params["gate_reference"] / "per_query.parquet")
    ctx = get_context(str(ROOT / params["experiment"]), RunOptions(tier=params.get("tier")))
    tonight = {q.qid for q in ctx.questions_of("baseline")}
    assert set(ref["qid"].to_list()) == tonight and len(tonight) == 500


@pytest.mark.parametrize("drop, message", [(None, "needs the allowed drop"),
                                           (0, "a drop of 0 can never be proven"),
                                           ("0.02", "must be a number")])
def test_a_gated_deployment_needs_an_allowed_drop(tmp_path, drop, message):
    from ablate.components.contract.errors import InputError
    from ablate.flows.deploy import load_definitions
    params = {"experiment": "e.yaml", "gate_reference": "refs/x"}
    if drop is not None:
        params["gate_max_drop"] = drop
    import yaml
    path = tmp_path / "prefect.yaml"
    path.write_text(yaml.safe_dump({"deployments": [{"name": "n", "parameters": params}]}))
    with pytest.raises(InputError, match=message) as info:
        load_definitions(path)
    assert info.value.field == "deployments[0].parameters.gate_max_drop"


def test_definitions_read_from_prefect_yaml():
    from prefect.client.schemas.schedules import construct_schedule

    from ablate.flows.deploy import load_definitions
    defs = {d.name: d for d in load_definitions(ROOT / "prefect.yaml")}
    assert set(defs) == {"nightly-smoke", "weekly-full"}
    assert "tier" not in defs["nightly-smoke"].parameters  # the demo's own plan
    # the nightly run is gated against a pinned reference sweep that ships with the project
    assert (ROOT / defs["nightly-smoke"].parameters["gate_reference"] / "per_query.parquet").is_file()
    assert defs["nightly-smoke"].parameters["gate_max_drop"] > 0
    assert defs["weekly-full"].parameters["tier"] == "full"
    for d in defs.values():
        assert d.entrypoint == "flows/sweep.py:sweep_flow"
        assert (ROOT / d.parameters["experiment"]).is_file()
        assert len(d.crons) == 1
        construct_schedule(cron=d.crons[0], timezone=d.timezone)  # a valid cron
    assert defs["nightly-smoke"].crons != defs["weekly-full"].crons


def test_unknown_deployment_is_input_error():
    from ablate.components.contract.errors import InputError
    from ablate.flows.deploy import serve
    with pytest.raises(InputError, match="no deployment nope"):
        serve(names=["nope"], path=ROOT / "prefect.yaml")


def _api_env() -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL
    env = dict(os.environ)
    env["PREFECT_API_URL"] = PREFECT_API_URL.value()
    return env


@pytest.mark.slow
def test_prefect_deploy_registers_both_deployments(prefect_server):
    """`prefect deploy --all` from the project root accepts prefect.yaml as written."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate

    async def pool():
        async with get_client() as client:
            try:
                await client.read_work_pool("ablate-pool")
            except Exception:
                await client.create_work_pool(WorkPoolCreate(name="ablate-pool", type="process"))
    asyncio.run(pool())
    prefect = Path(sys.executable).with_name("prefect")
    proc = subprocess.run([str(prefect), "--no-prompt", "deploy", "--all"], cwd=ROOT,
                          env=_api_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    async def read():
        async with get_client() as client:
            return {n: await client.read_deployment_by_name(f"ablate-sweep/{n}")
                    for n in ("nightly-smoke", "weekly-full")}
    deps = asyncio.run(read())
    for name, tier in (("nightly-smoke", None), ("weekly-full", "full")):
        dep = deps[name]
        assert dep.work_pool_name == "ablate-pool"
        assert dep.entrypoint == "flows/sweep.py:sweep_flow"
        assert dep.parameters.get("tier") == tier  # nightly: the demo's own plan
        assert [s.schedule.cron for s in dep.schedules] and all(s.active for s in dep.schedules)
        step = dep.pull_steps[0]["prefect.deployments.steps.set_working_directory"]
        assert Path(step["directory"]) == ROOT.resolve()


@pytest.mark.slow
def test_served_deployment_runs_the_sweep_once(prefect_server, tmp_path, shared_cache,
                                               monkeypatch):
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.runner import Runner

    from ablate.flows.deploy import load_definitions, runner_deployments
    monkeypatch.chdir(ROOT)  # the flow run starts where a user would serve from
    spec = tmp_path / "exp.yaml"
    spec.write_text(TINY)
    # Its own name: a served deployment must not update the work-pool one registered above
    # (Prefect would keep that one's pull steps).
    nightly = [replace(d, name="nightly-smoke-served") for d in load_definitions(
        ROOT / "prefect.yaml") if d.name == "nightly-smoke"]
    overrides = {"experiment": str(spec), "out": str(tmp_path / "runs"),
                 "cache_dir": str(shared_cache), "mlflow": False,
                 "gate_reference": None}  # the pinned reference is the demo's, not this spec's
    (deployment,) = runner_deployments(nightly, overrides, paused=True)

    async def main():
        runner = Runner(name="ablate-test-runner", query_seconds=1, pause_on_shutdown=False)
        await runner.add_deployment(deployment)
        run = await run_deployment(f"ablate-sweep/{deployment.name}", timeout=0)
        await runner.start(run_once=True)
        async with get_client() as client:
            return await client.read_flow_run(run.id)
    flow_run = asyncio.run(main())
    assert flow_run.state is not None and flow_run.state.is_completed(), flow_run.state
    assert flow_run.parameters.get("tier") is None  # the nightly runs the experiment's plan
    runs = list((tmp_path / "runs").glob("deploy-tiny-*/per_query.parquet"))
    assert len(runs) == 1
