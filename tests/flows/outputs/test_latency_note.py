"""Dense retrieval encodes the questions together and BM25 searches them together, so their
per-question latency is a batch mean (p50 = p95): the components declare it and the report
says so."""

from __future__ import annotations

import polars as pl

from ablate.components.report.findings import warnings
from tests.specs import write_experiment


def _ctx(tmp_path, paths):
    from ablate.flows.run.context import RunOptions, build_context
    spec = write_experiment(tmp_path, "lat", file=f"{paths.replace(', ', '-')}.yaml",
                            baseline={"retrieval": {"paths": paths.split(", ")}})
    return build_context(spec, RunOptions(cache_dir=str(tmp_path / "c")))


def test_batch_mean_latency_is_declared_and_reported(tmp_path):
    from ablate.flows.outputs.write import batch_mean_latencies
    assert batch_mean_latencies(_ctx(tmp_path, "bm25, dense")) == ["retrieve_bm25",
                                                                    "retrieve_dense"]
    assert batch_mean_latencies(_ctx(tmp_path, "bm25")) == ["retrieve_bm25"]  # not fuse/rerank
    empty = pl.DataFrame(schema={"metric": pl.Utf8, "variant": pl.Utf8, "significant": pl.Boolean,
                                 "mde": pl.Float64, "delta": pl.Float64, "wins": pl.Int64,
                                 "losses": pl.Int64})
    lines = warnings(empty, [], [], {"latency_batch_means": ["retrieve_dense"]})
    assert any("Latency of retrieve_dense is the batch time split evenly" in x for x in lines)
    lines = warnings(empty, [], [], {"latency_batch_means": ["retrieve_bm25", "retrieve_dense"]})
    assert any("Latencies of retrieve_bm25 and retrieve_dense are batch times split evenly"
               in x for x in lines)
