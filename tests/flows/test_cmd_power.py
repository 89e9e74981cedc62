"""`ablate power` on a synthetic pilot sweep: the needed n per comparison from the pilot's
paired differences, the cost from its timings, the pilot found under `out`, and one-line
errors on bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ablate.components.stats.sample_size import n_for_dz
from ablate.flows.plan.estimate import duration
from tests.components.report.synthetic import make_sweep
from tests.specs import write_experiment


def _spec(tmp_path: Path, name: str = "exp.yaml", **extra) -> Path:
    return write_experiment(tmp_path, "synthetic", file=name, baseline=None,
                            out=str(tmp_path / "runs"), **extra)


def _power(run_cli, capsys, *argv: str) -> tuple[int, str, str]:
    code = run_cli("power", *argv)
    out, err = capsys.readouterr()
    return code, out, err


def _row(out: str, metric: str, variant: str) -> list[str]:
    line = next(x for x in out.splitlines() if x.startswith(f"{metric} ") and f" {variant} " in x)
    return line.split()


def _diffs(sweep: Path, variant: str, metric: str) -> np.ndarray:
    pq = pl.read_parquet(sweep / "per_query.parquet")
    wide = pq.pivot(on="variant", index="qid", values=metric)
    d = (wide[variant] - wide["baseline"]).to_numpy()
    return d[np.isfinite(d)]


def test_needed_n_and_cost_per_comparison(run_cli, capsys, tmp_path):
    sweep = make_sweep(tmp_path / "runs" / "synthetic-0123456789")
    code, out, err = _power(run_cli, capsys, str(_spec(tmp_path)), "--mde", "0.002")
    assert code == 0, err
    assert f"pilot: {sweep} " in out
    # holm over the 2 variants compared on each metric: alpha 0.05 / 2 per comparison
    assert "alpha 0.025 per comparison (holm, alpha 0.05, 2 comparisons per family)" in out
    d = _diffs(sweep, "chunking.size=64", "final/recall_at_5")
    n = n_for_dz(0.002 / d.std(ddof=1), 0.025, 0.8)
    row = _row(out, "final/recall_at_5", "chunking.size=64")
    assert row[2:4] == [str(d.size), f"{d.std(ddof=1):.3g}"]
    assert float(row[4]) == pytest.approx(d.mean(), rel=1e-3)
    assert row[5] == str(n)
    assert row[6] == "0.01"                      # latency/generate, 0.01 s per question
    assert " ".join(row[7:]) == duration(0.01 * n)
    # the RRF variant changes nothing, answer/f1 is equal everywhere: no n, with a reason
    assert _row(out, "final/recall_at_5", "fusion.rrf_k=10")[5] == "-"
    assert ("note: final/recall_at_5 fusion.rrf_k=10: needed n undefined: no question's "
            "score changed in the pilot") in out
    assert _row(out, "answer/f1", "chunking.size=64")[5] == "-"
    # total: baseline and chunking.size=64 share their generate stage (same key): once
    total = next(x for x in out.splitlines() if x.startswith("total:"))
    assert f"about {duration(0.01 * n)} " in total and f"baseline at {n};" in total
    assert "1 comparison(s) need more questions than the data set has (30)" in out


def test_power_and_metric_options_and_family_all(run_cli, capsys, tmp_path):
    sweep = make_sweep(tmp_path / "runs" / "synthetic-0123456789")
    spec = _spec(tmp_path, stats={"family": "all", "correction": "bonferroni"})
    code, out, err = _power(run_cli, capsys, str(spec), "--mde", "0.01", "--power", "0.9",
                            "--metric", "final/recall_at_5")
    assert code == 0, err
    # every variant x metric column in one family: 2 variants x 4 columns
    assert "alpha 0.00625 per comparison (bonferroni, alpha 0.05, 8 comparisons" in out
    d = _diffs(sweep, "chunking.size=64", "final/recall_at_5")
    row = _row(out, "final/recall_at_5", "chunking.size=64")
    assert row[5] == str(n_for_dz(0.01 / d.std(ddof=1), 0.05 / 8, 0.9))
    assert "answer/f1" not in out
    # a pilot without timings: the n stands, the cost is unknown
    (sweep / "timings.parquet").unlink()
    code, out, err = _power(run_cli, capsys, str(spec), "--metric", "final/recall_at_5")
    assert code == 0, err
    assert _row(out, "final/recall_at_5", "chunking.size=64")[5:] == [
        str(n_for_dz(0.05 / d.std(ddof=1), 0.05 / 8, 0.8)), "-", "-"]
    assert "total: - (the pilot has no stage timings)" in out


def test_latest_sweep_of_this_experiment_is_the_pilot(run_cli, capsys, tmp_path):
    runs = tmp_path / "runs"
    old = make_sweep(runs / "synthetic-old")
    new = make_sweep(runs / "synthetic-new")
    other = make_sweep(runs / "other-newest", name="other")
    for folder, created in ((old, "2026-01-01T00:00:00Z"), (new, "2026-03-01T00:00:00Z"),
                            (other, "2026-05-01T00:00:00Z")):
        man = json.loads((folder / "manifest.json").read_text())
        man["created"] = created
        (folder / "manifest.json").write_text(json.dumps(man))
    make_sweep(runs / ".synthetic-x.tmp-1")       # being written: never a pilot
    code, out, err = _power(run_cli, capsys, str(_spec(tmp_path)))
    assert code == 0, err
    assert out.startswith(f"pilot: {new} ")
    # an explicit pilot wins, and a pilot of another experiment is named
    code, out, _ = _power(run_cli, capsys, str(_spec(tmp_path)), "--pilot", str(other))
    assert code == 0 and out.startswith(f"pilot: {other} ")
    assert "note: the pilot is from experiment 'other', not 'synthetic'" in out


@pytest.mark.parametrize("args,message", [
    ([], "no finished sweep of experiment 'synthetic' in "),
    (["--pilot", "nowhere"], "no such sweep folder"),
    (["--pilot", "PILOT", "--mde", "0"], "field 'mde': the minimum detectable effect must be positive"),
    (["--pilot", "PILOT", "--power", "1.5"], "field 'power': power must be in (0, 1)"),
    (["--pilot", "PILOT", "--metric", "answer/nope"], "metric 'answer/nope' is not in the pilot"),
    (["--pilot", "PILOT", "--correction", "sidak"], "unknown correction 'sidak'"),
])
def test_bad_input_is_one_line_exit_2(run_cli, capsys, tmp_path, args, message):
    spec = _spec(tmp_path)
    pilot = make_sweep(tmp_path / "elsewhere" / "synthetic-1")
    code, out, err = _power(run_cli, capsys, str(spec),
                            *[str(pilot) if a == "PILOT" else a for a in args])
    assert code == 2 and out == ""
    err = err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("ablate: error: ") and message in err
    if not args:
        assert re.search(r"run a smoke pilot first \(ablate run \S+exp\.yaml --tier smoke\)", err)
