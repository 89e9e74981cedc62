"""A scheduled sweep's own alert check (flows/outputs/alert_check.py, flows/sweep.py
`alerts_task`): in a flow run on a real Prefect server (the session's), the experiment's
`alerts:` rules read over its runs send the alert as an event naming that flow run, tag the
run `ablate-alert`, publish the lines as an artifact; the sweep raises AlertFired with the
alert line, so the run ends Failed saying why. A run that is not a deployment's does not
check (`ablate run` by hand is unchanged)."""

from __future__ import annotations

from prefect import flow

from ablate.flows.outputs.alert_check import AlertFired, in_deployment, metrics_of
from ablate.flows.plan.spec_alerts import AlertRule
from ablate.flows.sweep import alerts_task
from tests.components.report.trend_runs import series as nightly
from tests.flows.outputs.test_alert_events import api_url, read_events

RECALL = "final/recall_at_5"


def test_the_rules_read_in_a_flow_run_mark_it_and_fail_it(prefect_server, tmp_path):
    from prefect.client.orchestration import get_client
    nightly(tmp_path / "runs", experiment="flow-alerts")
    rules = [AlertRule(metric=RECALL, declines=1), AlertRule(metric=RECALL, below=0.0),
             AlertRule(gate=True)]
    seen: dict = {}

    @flow(name="alert-check")
    def scheduled() -> None:
        seen["deployment"] = in_deployment()
        fired = alerts_task("flow-alerts", rules, str(tmp_path / "runs"))
        if fired:
            raise AlertFired("; ".join(fired))

    state = scheduled(return_state=True)
    assert state.is_failed() and f"ALERT {RECALL} declines 1" in state.message, state.message
    assert seen["deployment"] is False  # a flow run by hand is no deployment's
    run_id = state.state_details.flow_run_id
    with get_client(sync_client=True) as client:
        assert "ablate-alert" in client.read_flow_run(run_id).tags
        arts = client.read_artifacts()
    (event,) = read_events(api_url(), "ablate.experiment.flow-alerts")
    assert event["related"][0]["prefect.resource.id"] == f"prefect.flow-run.{run_id}"
    assert any(a.key == "ablate-flow-alerts-alerts" and "ALERT" in str(a.data) for a in arts)


def test_the_metrics_read_are_the_rules_own():
    rules = [AlertRule(metric="a", declines=1), AlertRule(gate=True), AlertRule(metric="b", below=0.5),
             AlertRule(metric="a", below=0.1)]
    assert metrics_of(rules) == ["a", "b"]
