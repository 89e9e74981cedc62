"""A chunk-size sweep with dense retrieval: the variant computed second finds the query
vectors in the embedding cache. Its dense latency is still the cost of computing them
(the seconds recorded with the cache entries), timings.parquet marks it `reused/`, and
`ablate power` costs the two variants alike. A stage taken from the store on a later
run is marked reused too. Stages run directly (no Prefect); the dense model is a fake on
a fake clock (tests/clock_fakes.py), so the figures are exact: a few seconds."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.clock_fakes import ClockedModel, FakeClock, use_clock
from tests.flows.direct import write_spec
from tests.specs import FAST_STATS, experiment, pipeline, vary

PER_TEXT = 100.0  # fake seconds per text embedded: dwarfs every real stage time
VARIANT = "chunking.size=32"
SPEC = experiment(
    "reused-latency", tier="full", split="all", seed=3, stats=FAST_STATS,
    metrics={"ks": [1, 5], "key": ["candidates/recall_at_5"]},
    baseline=pipeline(retrieval={"paths": ["dense"], "depth": 5}),
    sweeps=[vary("chunking.size", 32)])


def _run(folder: Path, clock: FakeClock, out: str):
    """(context, sweep folder, fake model): every stage run directly, the encoder's model
    the clocked fake."""
    from ablate.components.retrieval.dense.encoder import DenseEncoder
    from ablate.components.runtime.models import dense_model_path
    from ablate.flows.outputs.write import write_outputs
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.run.stages import run_stage
    spec_path = write_spec(folder, SPEC)
    ctx = build_context(str(spec_path), RunOptions(cache_dir=str(folder / "cache")))
    model = ClockedModel(clock, PER_TEXT)
    cfg = ctx.variants[0].config.retrieval
    encoder = DenseEncoder(dense_model_path(cfg.dense_model), ctx.store.root / "embeddings")
    encoder._model = model
    ctx.memo[f"encoder:{cfg.dense_model}:{cfg.dense_backend}"] = encoder
    for node in ctx.plan.nodes.values():
        run_stage(ctx, node)
    return ctx, write_outputs(ctx, folder / out, ctx.started, {}), model


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The sweep run twice on one cache: the second run computes nothing."""
    mp = pytest.MonkeyPatch()
    clock = FakeClock()
    use_clock(mp, clock)
    folder = tmp_path_factory.mktemp("reused-latency")
    try:
        first = _run(folder, clock, "runs1")
        second = _run(folder, clock, "runs2")
    finally:
        mp.undo()
    return first, second


def test_cached_query_vectors_cost_what_computing_them_cost(runs):
    (ctx, out, model), _ = runs
    questions = len(ctx.questions)
    assert model.texts.count(ctx.questions[0].question) == 1  # questions embedded once
    t = pl.read_parquet(out / "timings.parquet")
    dense = {v: t.filter(pl.col("variant") == v).sort("qid")["latency/retrieve_dense"].to_list()
             for v in ("baseline", VARIANT)}
    assert dense["baseline"] == dense[VARIANT] == [PER_TEXT] * questions


def test_timings_mark_the_latencies_recorded_earlier(runs):
    (ctx, out, _), _ = runs
    t = pl.read_parquet(out / "timings.parquet")
    lat = [c for c in t.columns if c.startswith("latency/")]
    assert sorted(c for c in t.columns if c.startswith("reused/")) == sorted(
        "reused/" + c[len("latency/"):] for c in lat)
    assert all(t[f"reused/{c[len('latency/'):]}"].dtype == pl.Boolean for c in lat)
    # one of the two dense stages embedded the questions, the other reused their vectors
    marks = {v: set(t.filter(pl.col("variant") == v)["reused/retrieve_dense"].to_list())
             for v in ("baseline", VARIANT)}
    assert sorted(map(tuple, marks.values())) == [(False,), (True,)]
    assert not t["reused/fuse"].any()  # computed by this run, nothing cached in it


def test_power_costs_the_variants_alike(runs):
    from ablate.components.stats.pilot_plan import seconds_per_question
    (_, out, _), _ = runs
    secs = seconds_per_question(pl.read_parquet(out / "timings.parquet"))
    assert secs[VARIANT] == pytest.approx(secs["baseline"], rel=1e-3)  # not 0.2 ms vs 51 ms
    assert secs["baseline"] >= PER_TEXT


def test_a_stage_taken_from_the_store_keeps_its_latency_marked_reused(runs):
    (_, out1, _), (ctx2, out2, model2) = runs
    assert model2.calls == 0
    first, second = (pl.read_parquet(o / "timings.parquet").sort("variant", "qid")
                     for o in (out1, out2))
    lat = [c for c in first.columns if c.startswith("latency/")]
    assert first.select(lat).equals(second.select(lat))  # the latencies recorded then
    marks = [c for c in second.columns if c.startswith("reused/")]
    assert len(marks) == len(lat) and all(second[c].all() for c in marks)


def test_the_prefect_flow_marks_what_this_run_computed(prefect_server, tmp_path):
    """Through the real flow, twice in one process (the same cached run context): the
    first run's latencies were timed by it, the second run's were stored by the first."""
    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import run_sweep
    spec = write_spec(tmp_path, experiment(
        "reused-flow", tier="full", split="all", seed=3, stats=FAST_STATS,
        metrics={"ks": [1, 5], "key": ["candidates/recall_at_5"]},
        baseline=pipeline(generator={"name": "none"}), sweeps=[vary("chunking.size", 32)]))
    forget_contexts()
    marks = []
    for out in ("runs1", "runs2"):
        result = run_sweep(str(spec), out=str(tmp_path / out), cache_dir=str(tmp_path / "cache"),
                           mlflow=False)
        t = pl.read_parquet(Path(result["sweep_dir"]) / "timings.parquet")
        marks.append({c: set(t[c].to_list()) for c in t.columns if c.startswith("reused/")})
    forget_contexts()
    assert marks[0] and set(marks[0]) == set(marks[1])
    assert all(v == {False} for v in marks[0].values()), marks[0]
    assert all(v == {True} for v in marks[1].values()), marks[1]
