"""Slices by columns the questions file gives (`level`) and by the tagger's `query_kind`,
end to end: a retrieval-only sweep on the bundled HotpotQA sample (BM25 against the
graph path, run directly: no Prefect, no MLflow) writes both columns into
per_query.parquet and slices.parquet rows for each of their values; the main comparisons'
rows are computed as with any slice."""

from __future__ import annotations

import polars as pl

from tests.conftest import ROOT
from tests.specs import FAST_STATS, data_set, experiment, pipeline

SAMPLE = ROOT / "experiments" / "data" / "hotpotqa-sample"
SPEC = experiment(
    "sliced-columns", dataset=data_set(SAMPLE, "jsonl"), tier="full", split="all", seed=3,
    metrics={"ks": [10], "key": ["candidates/recall_at_10"]},
    stats=FAST_STATS, report={"slices": ["level", "query_kind"]},
    baseline=pipeline(chunking={"method": "document"},
                      retrieval={"paths": ["bm25"], "depth": 10, "analyzer": "english"},
                      rerank={"method": "none"}, generator={"name": "none"}),
    variants=[{"name": "graph", "set": {"retrieval.paths": ["graph"]}}])


def test_per_query_carries_the_file_s_column_and_the_tag(sweep):
    per_query = pl.read_parquet(sweep.folder / "per_query.parquet").filter(pl.col("variant") == "baseline")
    assert per_query.group_by("level").len().sort("level").rows() == [
        ("easy", 16), ("hard", 15), ("medium", 69)]
    assert set(per_query["query_kind"]) == {"exact_match", "negation", "multi_entity", "other"}


def test_each_value_is_a_slice(sweep):
    sliced = pl.read_parquet(sweep.folder / "slices.parquet")
    assert set(sliced["slice"]) == {"level=easy", "level=hard", "level=medium",
                                    "query_kind=exact_match", "query_kind=negation",
                                    "query_kind=multi_entity", "query_kind=other"}
    tested = sliced.filter(pl.col("slice") == "level=medium")
    assert tested["n_used"].to_list() == [69] and tested["p_value"].is_not_null().all()
    one = sliced.filter(pl.col("slice") == "query_kind=negation")  # 1 question: not tested
    assert one["p_value"].is_null().all() and one["note"].str.contains("too few").all()
