"""Alerts through Prefect (flows/outputs/alert_events.py): `ablate trend` on an experiment
file whose rule fires emits one `ablate.alert.fired` event per fired rule to the Prefect API
in use, delivered before the command exits; read back from a real Prefect server (the
session's). Without a reachable API: one warning line, the exit code unchanged."""

from __future__ import annotations

import json
import time
import urllib.request

from tests.components.report.trend_runs import series as nightly
from tests.specs import write_experiment

RECALL = "final/recall_at_5"


def api_url() -> str:
    from prefect.settings import PREFECT_API_URL
    return str(PREFECT_API_URL.value())


def read_events(api: str, resource: str, wait_s: float = 60.0) -> list[dict]:
    """The server's `ablate.alert.fired` events about `resource` (the server persists events
    in batches: polled until some are there or `wait_s` passes)."""
    body = json.dumps({"filter": {"event": {"name": ["ablate.alert.fired"]},
                                  "resource": {"id": [resource]},
                                  "occurred": {"since": "2000-01-01T00:00:00Z"}},
                       "limit": 50}).encode()
    deadline = time.monotonic() + wait_s
    while True:
        req = urllib.request.Request(f"{api}/events/filter", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            events = json.loads(r.read())["events"]
        if events or time.monotonic() > deadline:
            return events
        time.sleep(0.5)


def test_a_fired_rule_is_an_event_on_the_prefect_server(prefect_server, tmp_path, run_cli,
                                                        capsys, monkeypatch):
    nightly(tmp_path / "runs", experiment="夜间-alerts")
    loud = write_experiment(tmp_path, "夜间-alerts", file="loud.yaml", out="runs",
                            metrics={"ks": [5]},
                            alerts=[{"metric": RECALL, "declines": 1},
                                    {"metric": RECALL, "below": 0.0}])
    monkeypatch.chdir(tmp_path)
    assert run_cli("trend", str(loud), "--metric", RECALL) == 1
    out = capsys.readouterr()
    assert "sent 1 alert event" in out.out, out
    events = read_events(api_url(), "ablate.experiment.夜间-alerts")
    assert len(events) == 1, events
    ev = events[0]
    assert ev["resource"]["prefect.resource.name"] == "夜间-alerts"
    assert ev["resource"]["ablate.alert.level"] == "alert"
    p = ev["payload"]
    assert p["rule"] == f"{RECALL} declines 1" and p["metric"] == RECALL
    assert p["level"] == "alert" and p["run"] and "declines in a row" in p["message"]
    assert p["experiment"] == "夜间-alerts"


def test_no_prefect_api_is_one_warning_and_the_exit_code_stays(tmp_path, run_cli, capsys,
                                                               monkeypatch):
    nightly(tmp_path / "runs")
    loud = write_experiment(tmp_path, "diff-demo", file="loud.yaml", out="runs",
                            metrics={"ks": [5]}, alerts=[{"metric": RECALL, "declines": 1}])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # nothing listens there
    assert run_cli("trend", str(loud), "--metric", RECALL) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "Prefect" in line]
    assert len(lines) == 1 and lines[0].startswith("ablate: warning: alert events not sent"), err


def test_the_flow_run_it_runs_in_is_tagged_and_named(prefect_server, tmp_path, run_cli, capsys,
                                                     monkeypatch):
    from prefect import flow
    from prefect.client.orchestration import get_client

    @flow(name="nightly-sweep")
    def nightly_sweep() -> None:
        return None

    with get_client(sync_client=True) as client:
        run = client.create_flow_run(nightly_sweep, tags=["nightly"])
    nightly(tmp_path / "runs", experiment="tagged-run")
    loud = write_experiment(tmp_path, "tagged-run", file="loud.yaml", out="runs",
                            metrics={"ks": [5]}, alerts=[{"metric": RECALL, "declines": 1}])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PREFECT__FLOW_RUN_ID", str(run.id))  # as in a flow run's subprocess
    assert run_cli("trend", str(loud), "--metric", RECALL) == 1
    assert f"flow run {run.id} tagged" in capsys.readouterr().out
    with get_client(sync_client=True) as client:
        assert set(client.read_flow_run(run.id).tags) == {"nightly", "ablate-alert"}
    (event,) = read_events(api_url(), "ablate.experiment.tagged-run")
    assert event["related"][0]["prefect.resource.id"] == f"prefect.flow-run.{run.id}"
