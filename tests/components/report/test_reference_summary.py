"""A baseline-only run (how the docs make a gate reference) says what it has (issue 54,
item 5): its key metrics' means with cluster-robust intervals, n questions in G clusters,
and that it is a reference; `ablate gate` on a sweep defaults to the key metrics."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl

from ablate.components.report.build import build_report
from ablate.components.report.sweep_data import load_sweep
from tests.components.report.synthetic import make_sweep


def baseline_only(folder):
    make_sweep(folder)
    pq = pl.read_parquet(folder / "per_query.parquet").filter(pl.col("variant") == "baseline")
    pq.write_parquet(folder / "per_query.parquet")
    stats = pl.read_parquet(folder / "stats.parquet")
    stats.clear().write_parquet(folder / "stats.parquet")
    variants = json.loads((folder / "variants.json").read_text())[:1]
    (folder / "variants.json").write_text(json.dumps(variants))
    return folder


def test_a_baseline_only_summary_gives_means_intervals_clusters_and_says_reference(tmp_path):
    folder = baseline_only(tmp_path / "ref")
    files = build_report(load_sweep(folder), plots=False)
    text = files["summary.txt"]
    pq = pl.read_parquet(folder / "per_query.parquet")
    recall = pq["final/recall_at_5"].drop_nans()
    assert "baseline only: a reference" in text and "ablate gate" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("final/recall_at_5"))
    assert f"{recall.mean():.3f}" in line
    assert "24 questions in 5 clusters" in line  # 24 answerable questions, documents doc0-4
    low, high = (float(x) for x in line.split("[", 1)[1].split("]", 1)[0].split(","))
    assert low < recall.mean() < high and high - low < 0.5
    f1 = next(ln for ln in text.splitlines() if ln.startswith("answer/f1"))
    assert "30 questions in 5 clusters" in f1
    # the interval: mean ± t(df) x the CR2 cluster-robust SE over the 5 clusters
    from scipy import stats as st

    from ablate.components.stats.clusters import cluster_se, cluster_sums
    sub = pq.filter(pl.col("final/recall_at_5").is_not_nan())
    codes = np.unique(sub["cluster"].to_numpy(), return_inverse=True)[1]
    y = sub["final/recall_at_5"].to_numpy()[:, None]
    theta, se, df = cluster_se(*cluster_sums(y, np.ones_like(y, dtype=bool), codes))
    half = float(st.t.ppf(0.975, df[0]) * se[0])
    assert math.isclose(low, round(theta[0] - half, 3), abs_tol=1e-9)
    assert math.isclose(high, round(theta[0] + half, 3), abs_tol=1e-9)


def test_a_baseline_only_report_shows_the_reference_table_not_an_empty_comparison(tmp_path):
    """The report's overview of a reference (issue 54, item 5; seen in a browser: an empty
    Δ plot, a table of no metric rendered as a line of pipes, and 'No variant differs ...
    on the key metrics ()'): the key metrics' means with their intervals instead."""
    folder = baseline_only(tmp_path / "ref")
    files = build_report(load_sweep(folder), plots=True)
    md = files["report.md"]
    overview = md.split("## Overview", 1)[1].split("## Findings", 1)[0]
    assert "Baseline only: a reference" in overview and "`ablate gate SWEEP_DIR" in overview
    assert "| metric | mean | 95% CI (cluster-robust t) | n |" in overview
    summary_line = next(ln for ln in files["summary.txt"].splitlines()
                        if ln.startswith("final/recall_at_5"))
    mean = summary_line.split()[1]
    assert f"| final/recall_at_5 | {mean} |" in overview
    assert "| variable | value |" not in overview and "plots/overview" not in md
    assert "plots/overview.svg" not in files
    assert "No variant differs" not in md
    assert "<table>" in files["report.html"].split("Findings", 1)[0]
