"""run_sequential on synthetic per-question tables (no pipeline): the look statistic is the
cluster-robust t of the questions used so far (df = clusters - 1 when a cluster column is
given, questions - 1 without), each look records t, df and its t-scale boundary, and the
stats rows of a variant that stopped early are marked naive (apply_decisions)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from ablate.flows.run.sequential import NAIVE_FLAG, apply_decisions, run_sequential

METRIC = "final/score"


def _per_query(n_full: int, effect: dict[str, float], clusters: int | None, seed: int = 0):
    """run_look over a fixed synthetic table: variant scores = baseline + effect + noise,
    questions in `clusters` documents (a shared document shift), or none (null cluster)."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i:04d}" for i in range(n_full)]
    cl = None if clusters is None else [f"doc{i % clusters}" for i in range(n_full)]
    shift = rng.normal(0, 1.0, clusters or 1)
    base = rng.normal(0, 1.0, n_full)
    rows = {name: base + eff + (shift[np.arange(n_full) % (clusters or 1)] if clusters else 0.0)
            + rng.normal(0, 0.5, n_full) for name, eff in effect.items()}
    rows["baseline"] = base

    def run_look(sizes):
        n = max(sizes.values())
        frames = [pl.DataFrame({"variant": [name] * (sizes.get(name, n)),
                                "qid": qids[:sizes.get(name, n)],
                                "cluster": (cl or [None] * n_full)[:sizes.get(name, n)],
                                METRIC: vals[:sizes.get(name, n)]},
                               schema_overrides={"cluster": pl.String})
                  for name, vals in rows.items()]
        return pl.concat(frames)
    return run_look


def test_the_looks_use_cluster_t_with_bell_mccaffrey_df():
    run_look = _per_query(120, {"v": 0.0}, clusters=12)
    rec = run_sequential({"v": 120}, 40, 0.05, [METRIC], run_look, cluster_col="cluster")
    looks = rec["looks"]["v"][METRIC]
    assert [x["n"] for x in looks] == [40, 80, 120]
    # 12 documents, all seen at look 1: Bell-McCaffrey df of their sizes, at most G - 1 = 11
    # and exactly 11 when every document has its 10 questions (look 3)
    dfs = [x["df"] for x in looks]
    assert all(10 < x <= 11 for x in dfs) and abs(dfs[2] - 11.0) < 1e-9
    assert set(looks[0]) == {"n", "t", "df", "boundary", "z_boundary"}
    assert all(x["boundary"] > x["z_boundary"] for x in looks)  # t(11) tails are heavier
    assert rec["cluster"] == "cluster"
    json.dumps(rec, allow_nan=False)  # the manifest stays strict JSON

    rec = run_sequential({"v": 120}, 40, 0.05, [METRIC], run_look, cluster_col=None)
    assert [x["df"] for x in rec["looks"]["v"][METRIC]] == [39.0, 79.0, 119.0]  # paired t


def test_the_looks_use_the_experiments_unit_of_analysis():
    """The flow passes cluster_column(stats.cluster), the column the statistics use."""
    from ablate.components.stats.clusters import cluster_column
    assert (cluster_column("auto"), cluster_column("none"), cluster_column("type")) == (
        "cluster", None, "type")
    assert cluster_column("auto", ["qid", "m"]) is None  # a table from before clusters
    run_look = _per_query(60, {"v": 0.0}, clusters=6)
    rec = run_sequential({"v": 60}, 30, 0.05, [METRIC], run_look, cluster_col=cluster_column("none"))
    assert rec["cluster"] is None
    assert [x["df"] for x in rec["looks"]["v"][METRIC]] == [29.0, 59.0]


def test_a_large_effect_stops_early_and_its_rows_are_marked_naive():
    run_look = _per_query(200, {"big": 1.5, "none": 0.0}, clusters=None, seed=4)
    rec = run_sequential({"big": 200, "none": 200}, 50, 0.05, [METRIC], run_look)
    assert rec["sizes"]["big"] == 50 and rec["sizes"]["none"] == 200
    stats = pl.DataFrame({
        "variant": ["big", "big", "none", "none"],
        "metric": [METRIC, "final/other", METRIC, "final/other"],
        "p_value": [1e-9, 0.2, 0.7, 0.03],
        "significant": [False, False, False, True],
        "ci_flag": ["", "few_untied_pairs_inversion", "", None]})
    out = apply_decisions(stats, rec)
    assert out["significant"].to_list() == [True, False, rec["decided"][f"none|{METRIC}"], True]
    assert out["ci_flag"].to_list() == [
        NAIVE_FLAG, f"few_untied_pairs_inversion; {NAIVE_FLAG}",  # stopped at 50 of 200
        "", None]  # ran to its full sample: valid fixed-sample numbers, no mark
    assert out["p_value"].to_list() == stats["p_value"].to_list()  # kept, only marked
