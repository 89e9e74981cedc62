"""`ablate power` on a synthetic pilot sweep: the needed n per comparison from the pilot's
paired differences (in clusters of questions by default: the synthetic sweep has 5), the
cost from its timings, the pilot found under `out`, and one-line errors on bad input."""

from __future__ import annotations

import json
import math
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
    """The table row's cells (columns are two or more spaces apart)."""
    line = next(x for x in out.splitlines() if x.startswith(f"{metric} ") and f" {variant} " in x)
    return re.split(r"\s{2,}", line)


def _diffs(sweep: Path, variant: str, metric: str, cluster: str = "cluster"
           ) -> tuple[np.ndarray, np.ndarray]:
    """The pilot's used paired differences and each one's cluster label."""
    pq = pl.read_parquet(sweep / "per_query.parquet")
    wide = pq.pivot(on="variant", index=["qid", cluster], values=metric)
    d = (wide[variant] - wide["baseline"]).to_numpy()
    return d[np.isfinite(d)], wide[cluster].to_numpy()[np.isfinite(d)]


def _cluster_plan(d: np.ndarray, labels: np.ndarray, mde: float, alpha: float,
                  power: float = 0.8) -> tuple[int, int, float]:
    """(needed questions, needed clusters, design effect), written out: the cluster-robust
    SE (CR2: each cluster's squared residual sum over 1 - N_g / n; G / (G - 1) for equal
    sizes), the t test on G* clusters at sd sqrt(G) * SE (at a design
    effect of at least 1), G* times the mean used questions per cluster."""
    _, codes = np.unique(labels, return_inverse=True)
    g = codes.max() + 1
    S, N = np.bincount(codes, d), np.bincount(codes)
    se = math.sqrt(((S - d.mean() * N) ** 2 / (1 - N / d.size)).sum()) / d.size
    deff = se**2 / (d.var(ddof=1) / d.size)
    clusters = n_for_dz(mde / (math.sqrt(g * max(deff, 1.0) * d.var(ddof=1) / d.size)),
                        alpha, power)
    return math.ceil(clusters * d.size / g - 1e-9), clusters, deff


def test_needed_n_and_cost_per_comparison(run_cli, capsys, tmp_path):
    sweep = make_sweep(tmp_path / "runs" / "synthetic-0123456789")
    code, out, err = _power(run_cli, capsys, str(_spec(tmp_path)), "--mde", "0.002")
    assert code == 0, err
    assert f"pilot: {sweep} " in out
    # holm over the 2 variants compared on each metric: alpha 0.05 / 2 per comparison
    assert "alpha 0.025 per comparison (holm, alpha 0.05, 2 comparisons per family)" in out
    # the sweep's `cluster` column (stats.cluster auto): 24 used questions in 5 clusters
    assert "clusters: column 'cluster'" in out
    d, labels = _diffs(sweep, "chunking.size=64", "final/recall_at_5")
    n, clusters, deff = _cluster_plan(d, labels, 0.002, 0.025)
    # its noise is independent of the clusters: a design effect estimated below 1, planned
    # as 1, so never fewer questions than independent ones would need
    assert deff < 1 and n >= n_for_dz(0.002 / d.std(ddof=1), 0.025, 0.8)
    row = _row(out, "final/recall_at_5", "chunking.size=64")
    assert row[2:5] == ["24 in 5 clusters", f"{d.std(ddof=1):.3g}", f"{deff:.3g}"]
    assert float(row[5]) == pytest.approx(d.mean(), rel=1e-3)
    assert row[6] == f"{n} in {clusters} clusters"
    assert row[7] == "0.01"                      # latency/generate, 0.01 s per question
    # n counts the questions with both scores defined (24 of the pilot's 30): the cost is
    # that of the questions to run for them
    run = math.ceil(n * 30 / 24)
    assert row[8] == duration(0.01 * run)
    # the RRF variant changes nothing, answer/f1 is equal everywhere: no n, with a reason
    assert _row(out, "final/recall_at_5", "fusion.rrf_k=10")[6] == "-"
    assert ("note: final/recall_at_5 fusion.rrf_k=10: needed n undefined: no question's "
            "score changed in the pilot") in out
    assert _row(out, "answer/f1", "chunking.size=64")[6] == "-"
    # 5 pilot clusters: the plan says it rests on few
    assert ("warning: the plan rests on 5 pilot clusters (fewer than 10): their variance is "
            "a rough estimate") in out
    # total: baseline and chunking.size=64 share their generate stage (same key): once
    total = next(x for x in out.splitlines() if x.startswith("total:"))
    assert f"about {duration(0.01 * run)} " in total and f"baseline at {run};" in total
    assert ("note: n counts the questions with a defined metric; cost and total count the "
            "questions to run for them (final/recall_at_5: 24 of the pilot's 30)") in out
    assert ("note: 1 comparison(s) need more questions than the 24 (of the data set's 30) "
            "with a defined final/recall_at_5: only a larger effect can be detected on it") in out


def test_the_data_set_limit_counts_the_questions_with_the_metric(run_cli, capsys, tmp_path):
    """A needed n between the 24 questions with a defined recall and the data set's 30 is
    more than the data set can give; a pilot on part of the data set estimates the count
    from its share."""
    sweep = make_sweep(tmp_path / "runs" / "synthetic-0123456789")
    d, labels = _diffs(sweep, "chunking.size=64", "final/recall_at_5")
    mde = next(m for m in np.geomspace(0.0005, 0.5, 3000)
               if 24 < _cluster_plan(d, labels, m, 0.025)[0] <= 30)
    code, out, err = _power(run_cli, capsys, str(_spec(tmp_path)), "--mde", str(float(mde)),
                            "--metric", "final/recall_at_5")
    assert code == 0, err
    assert ("note: 1 comparison(s) need more questions than the 24 (of the data set's 30) "
            "with a defined final/recall_at_5") in out
    man = json.loads((sweep / "manifest.json").read_text())
    man["dataset"]["questions"] = 60
    (sweep / "manifest.json").write_text(json.dumps(man))
    code, out, err = _power(run_cli, capsys, str(_spec(tmp_path)), "--mde", str(float(mde)),
                            "--metric", "final/recall_at_5")
    assert code == 0, err
    assert "need more questions" not in out  # about 48 of the data set's 60
    code, out, err = _power(run_cli, capsys, str(_spec(tmp_path)), "--mde", "0.002",
                            "--metric", "final/recall_at_5")
    assert ("note: 1 comparison(s) need more questions than the ~48 (of the data set's 60; "
            "the pilot's share) with a defined final/recall_at_5") in out


def test_independent_questions_plan_as_before(run_cli, capsys, tmp_path):
    """--cluster-column none (or stats.cluster: none): every question its own cluster,
    the question-level plan of the paired t test, no design effect, no warning."""
    sweep = make_sweep(tmp_path / "runs" / "synthetic-0123456789")
    d, _ = _diffs(sweep, "chunking.size=64", "final/recall_at_5")
    n = n_for_dz(0.002 / d.std(ddof=1), 0.025, 0.8)
    outs = []
    for spec, args in ((_spec(tmp_path), ["--cluster-column", "none"]),
                       (_spec(tmp_path, "none.yaml", stats={"cluster": "none"}), [])):
        code, out, err = _power(run_cli, capsys, str(spec), "--mde", "0.002", *args)
        assert code == 0, err
        assert "two-sided paired t-test at alpha 0.025 per comparison" in out
        assert "clusters: none (every question independent)" in out
        row = _row(out, "final/recall_at_5", "chunking.size=64")
        assert row[2:4] == [str(d.size), f"{d.std(ddof=1):.3g}"]
        assert float(row[4]) == pytest.approx(d.mean(), rel=1e-3)
        assert row[5:] == [str(n), "0.01", duration(0.01 * math.ceil(n * 30 / 24))]
        assert "deff" not in out and "warning" not in out
        outs.append(out.split("\n", 1)[1])
    assert outs[0] == outs[1]


def test_a_named_cluster_column_with_enough_clusters(run_cli, capsys, tmp_path):
    # 15 clusters of 2 questions ('pair'), the variant's change shared within a pair
    sweep = make_sweep(tmp_path / "runs" / "synthetic-0123456789")
    pq = pl.read_parquet(sweep / "per_query.parquet").with_columns(
        pair=pl.col("qid").str.slice(1).cast(pl.Int64) // 2)
    shift = pl.when(pl.col("variant") == "chunking.size=64").then(
        0.04 * (pl.col("pair") % 3 - 1)).otherwise(0.0)
    pq.with_columns(pl.col("final/recall_at_5") + shift).write_parquet(
        sweep / "per_query.parquet")
    code, out, err = _power(run_cli, capsys, str(_spec(tmp_path)), "--mde", "0.002",
                            "--cluster-column", "pair")
    assert code == 0, err
    assert "clusters: column 'pair'" in out and "warning" not in out
    d, labels = _diffs(sweep, "chunking.size=64", "final/recall_at_5", cluster="pair")
    n, clusters, deff = _cluster_plan(d, labels, 0.002, 0.025)
    row = _row(out, "final/recall_at_5", "chunking.size=64")
    assert row[2] == "24 in 15 clusters" and row[4] == f"{deff:.3g}"
    assert row[6] == f"{n} in {clusters} clusters"
    assert deff > 1.2 and n > 1.2 * n_for_dz(0.002 / d.std(ddof=1), 0.025, 0.8)


def test_power_and_metric_options_and_family_all(run_cli, capsys, tmp_path):
    sweep = make_sweep(tmp_path / "runs" / "synthetic-0123456789")
    spec = _spec(tmp_path, stats={"family": "all", "correction": "bonferroni"})
    code, out, err = _power(run_cli, capsys, str(spec), "--mde", "0.01", "--power", "0.9",
                            "--metric", "final/recall_at_5")
    assert code == 0, err
    # every variant x metric column in one family: 2 variants x 4 columns
    assert "alpha 0.00625 per comparison (bonferroni, alpha 0.05, 8 comparisons" in out
    d, labels = _diffs(sweep, "chunking.size=64", "final/recall_at_5")
    row = _row(out, "final/recall_at_5", "chunking.size=64")
    n, clusters, _ = _cluster_plan(d, labels, 0.01, 0.05 / 8, 0.9)
    assert row[6] == f"{n} in {clusters} clusters"
    assert "answer/f1" not in out
    # a pilot without timings: the n stands, the cost is unknown
    (sweep / "timings.parquet").unlink()
    code, out, err = _power(run_cli, capsys, str(spec), "--metric", "final/recall_at_5")
    assert code == 0, err
    n, clusters, _ = _cluster_plan(d, labels, 0.05, 0.05 / 8, 0.8)
    assert _row(out, "final/recall_at_5", "chunking.size=64")[6:] == [
        f"{n} in {clusters} clusters", "-", "-"]
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
    (["--pilot", "PILOT", "--cluster-column", "nope"], "no cluster column 'nope' (columns: "),
    (["--pilot", "PILOT", "--cluster-column", "type"],
     "the cluster column 'type' has an empty value (row 1)"),
    (["--pilot", "PILOT", "--cluster-column", "tokens/in"], "every question is in one cluster"),
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


def test_the_experiments_cluster_field_is_the_default(run_cli, capsys, tmp_path):
    spec = _spec(tmp_path, stats={"cluster": "type"})
    make_sweep(tmp_path / "runs" / "synthetic-1")
    code, out, err = _power(run_cli, capsys, str(spec))
    assert code == 2 and out == ""
    assert ("field 'stats.cluster': the cluster column 'type' has an empty value (row 1)"
            in err.strip() and len(err.strip().splitlines()) == 1)


def test_power_prices_corpus_embedding_of_a_dense_sweep(run_cli, capsys, tmp_path):
    """Issue 42: a dense path swept, nothing in the stage or embedding cache: `ablate
    power` says what embedding the corpus costs, once, beside the per-question total."""
    from tests.specs import vary
    make_sweep(tmp_path / "runs" / "synthetic-0123456789")
    spec = _spec(tmp_path, cache_dir=str(tmp_path / "cache"),
                 sweeps=[vary("retrieval.paths", ["bm25", "dense"])])
    code, out, err = _power(run_cli, capsys, str(spec), "--mde", "0.002")
    assert code == 0, err
    line = next((x for x in out.splitlines() if x.startswith("embedding: about ")), None)
    assert line is not None and "chunks not in the embedding cache" in line, out
    assert line.endswith("once, on top of the total")
