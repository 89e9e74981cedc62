"""The experiment file's `alerts:` rules read over a trend (components/report/trend_alerts.py):
on three hand-made nightly runs whose third loses 0.3 recall on every question, the
threshold, declines and drop rules say what they should, a gate rule is reported as not
read, and `ablate trend` given the experiment file prints one line per rule and exits 1
when one alerts."""

from __future__ import annotations

import pytest

from ablate.components.report.sweep_data import load_sweep
from ablate.components.report.trend import TrendRun, trend_table
from ablate.components.report.trend_alerts import alert_lines, evaluate, fired, series
from ablate.flows.plan.spec_alerts import AlertRule
from tests.components.report.trend_runs import series as nightly
from tests.specs import write_experiment

RECALL = "final/recall_at_5"


@pytest.fixture
def table(tmp_path):
    folders = nightly(tmp_path / "runs")
    return trend_table([TrendRun(f.name, load_sweep(f)) for f in folders], metrics=[RECALL])


def test_each_rule_reads_the_series_of_its_metric(table):
    points, labels = series(table, RECALL)
    assert len(points) == 3 and all(p.se > 0 for p in points) and labels[2] == "night-a"
    assert points[2].mean < points[1].mean and points[2].upper == table["ci_high"][2]
    rules = [AlertRule(metric=RECALL, below=points[1].mean - 0.05),  # the third's bound is below
             AlertRule(metric=RECALL, below=0.0),
             AlertRule(metric=RECALL, declines=2),  # runs 1 and 2 are equal: one decline only
             AlertRule(metric=RECALL, declines=1),
             AlertRule(metric=RECALL, drop=0.05, questions="fresh"),
             AlertRule(metric=RECALL, drop=0.9),
             AlertRule(gate=True)]
    found = evaluate(table, rules)
    levels = [r.finding.level if r.finding else None for r in found]
    assert levels == ["alert", "ok", "ok", "alert", "alert", "ok", None]
    assert found[0].label == found[3].label == "night-a"
    assert fired(found) and not fired(found[1:3])
    lines = alert_lines(found)
    assert lines[0].startswith(f"ALERT {RECALL} below ") and lines[0].endswith("(run night-a)")
    assert lines[-1].startswith("not read: gate")


def test_trend_of_an_experiment_file_with_alerts_exits_1(tmp_path, run_cli, capsys, monkeypatch):
    nightly(tmp_path / "runs")
    quiet = write_experiment(tmp_path, "diff-demo", file="quiet.yaml", out="runs",
                             metrics={"ks": [5]}, alerts=[{"metric": RECALL, "below": 0.0}])
    loud = write_experiment(tmp_path, "diff-demo", file="loud.yaml", out="runs",
                            metrics={"ks": [5]}, alerts=[{"metric": RECALL, "declines": 1}])
    monkeypatch.chdir(tmp_path)
    assert run_cli("trend", str(quiet), "--metric", RECALL) == 0
    assert f"OK {RECALL} below 0" in capsys.readouterr().out
    assert run_cli("trend", str(loud), "--metric", RECALL) == 1
    assert f"ALERT {RECALL} declines 1: 1 declines in a row" in capsys.readouterr().out
