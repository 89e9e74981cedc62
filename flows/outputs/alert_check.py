"""A scheduled sweep's own alert check: after a deployment's run of an experiment whose file
has `alerts:` rules, the rules are read over the trend of its runs under the output root
(as `ablate trend EXP.yaml` reads them), each rule that alerts is sent as a Prefect event
(flows/outputs/alert_events.py: it names this flow run, which is tagged `ablate-alert`), the
lines are published as a Markdown artifact, and the flow ends Failed with the alert lines
(flows/sweep.py raises AlertFired after the gate). A run by hand (`ablate run`, no
deployment) does not check: `ablate trend` does it on demand."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


class AlertFired(Exception):
    """A rule of the experiment's `alerts:` alerted: the flow run ends Failed."""


@dataclass(frozen=True)
class Checked:
    """The rule lines, the fired ones, and what was sent (None: not sent, with why)."""

    lines: list[str]
    fired: list[str]
    sent: str


def metrics_of(rules: list) -> list[str]:
    """The metrics the rules watch, in the order written (a gate rule watches none)."""
    out: list[str] = []
    for rule in rules:
        if rule.metric and rule.metric not in out:
            out.append(rule.metric)
    return out


def check(name: str, rules: list, root: Path) -> Checked:
    """Read `rules` over the runs of `name` under `root`; send the fired ones to Prefect."""
    from ablate.components.contract.errors import InputError
    from ablate.components.report.sweep_data import load_sweep
    from ablate.components.report.trend import TrendRun, run_folders, trend_table
    from ablate.components.report.trend_alerts import alert_lines, evaluate
    from ablate.flows.outputs.alert_events import send, to_send
    runs = []
    for folder in run_folders(root, name):
        try:
            runs.append(TrendRun(str(folder), load_sweep(folder)))
        except InputError:
            continue  # a damaged folder: `ablate trend` names it
    metrics = metrics_of(rules)
    if not runs or not metrics:
        return Checked([], [], "nothing to read")
    table = trend_table(runs, metrics=metrics)
    results = evaluate(table, rules)
    lines = alert_lines(results)
    fired = [line for line, r in zip(lines, results)
             if r.finding is not None and r.finding.level == "alert"]
    pairs = to_send(rules, results)
    if not pairs:
        return Checked(lines, fired, "no event (nothing alerted)")
    try:
        sent = send(name, pairs)
    except RuntimeError as exc:
        return Checked(lines, fired, f"alert events not sent to Prefect ({exc})")
    return Checked(lines, fired, f"sent {sent.events} alert event(s) to {sent.api}")


def markdown(name: str, checked: Checked) -> str:
    body = "\n".join(f"- {line}" for line in checked.lines) or "- no rule read"
    return f"# Alerts of {name}\n\n{body}\n\n{checked.sent}\n"


def in_deployment() -> bool:
    """Whether this flow run was started from a deployment (a scheduled or triggered run)."""
    from prefect.context import FlowRunContext
    ctx = FlowRunContext.get()
    return bool(ctx is not None and ctx.flow_run is not None and ctx.flow_run.deployment_id)


def alerts_of(spec: Any) -> list:
    return list(getattr(spec, "alerts", None) or [])
