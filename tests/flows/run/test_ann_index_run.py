"""A sweep over `retrieval.dense_index` (flat baseline, ivf variant searching one of two
cells) on the tiny SQuAD fixture, stages run directly: only the dense path and what
follows run again, recall against flat is scored per question (1 for flat), and the
index's build and search seconds reach timings.parquet, not per_query.parquet."""

from __future__ import annotations

import polars as pl

from tests.specs import FAST_STATS, experiment, pipeline, vary

SPEC = experiment(
    "ann-index", tier="full", split="all", seed=3,
    metrics={"ks": [1, 5], "key": ["dense/ann_recall_at_5"]}, stats=FAST_STATS,
    baseline=pipeline(chunking={"size": 48, "overlap": 16},
                      retrieval={"paths": ["dense"], "depth": 10,
                                 "ann": {"ivf_nlist": 2, "ivf_nprobe": 1}},
                      rerank={"method": "none"}, context=None, generator={"name": "none"}),
    sweeps=[vary("retrieval.dense_index", "ivf")])
IVF = "retrieval.dense_index=ivf"


def test_only_the_dense_path_and_after_run_again(sweep):
    ctx, _, _ = sweep
    base, var = ctx.plan.by_variant["baseline"], ctx.plan.by_variant[IVF]
    assert base["chunk"] == var["chunk"] and base["label"] == var["label"]
    assert base["retrieve:dense"] != var["retrieve:dense"]


def test_recall_against_flat_is_scored(sweep):
    _, out, _ = sweep
    per_query = pl.read_parquet(out / "per_query.parquet")
    recall = per_query.group_by("variant").agg(pl.col("dense/ann_recall_at_5").mean())
    got = dict(zip(recall["variant"], recall["dense/ann_recall_at_5"]))
    assert got["baseline"] == 1.0
    assert 0.0 <= got[IVF] < 1.0  # one cell of two: something is missed
    assert not [c for c in per_query.columns if c.startswith("index/")]


def test_index_seconds_reach_timings(sweep):
    _, out, _ = sweep
    timings = pl.read_parquet(out / "timings.parquet")
    for col in ("index/retrieve_dense_build_s", "index/retrieve_dense_search_s"):
        values = timings[col]
        assert values.null_count() == 0 and (values >= 0).all() and values.n_unique() > 1, col
