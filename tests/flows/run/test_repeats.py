"""generator.repeats: a stochastic generator answers N times per question (seeds seed..
seed+N-1, each cached); per-question scores are the means, the spread is reported apart,
and the paired tests see the means."""

from __future__ import annotations

import math
import statistics

import polars as pl
import pytest

from ablate.components.contract.records import Answer, Question, Span
from ablate.flows.run.scoring import score_variant
from tests.specs import write_experiment

Q = Question("q1", "Capital of France?", ("Paris",), True, ((Span("d", 0, 5),),))
LABELS = pl.DataFrame({"qid": ["q1"], "group": [0], "chunk_id": ["c1"], "gain": [1.0]})
METRICS = {"ks": [1], "gain": "linear", "label_threshold": 0.5}


def test_scores_are_means_over_repeats_with_their_spread():
    answers = {"q1": [Answer("Paris", False, 5, 1), Answer("Berlin", False, 5, 1),
                      Answer("Paris", False, 5, 1)]}
    row = score_variant(questions=[Q], labels=LABELS, candidates={"q1": [("c1", 1.0)]},
                        reranked={"q1": [("c1", 1.0)]}, contexts={}, answers=answers, depth=1,
                        metrics=METRICS).row(0, named=True)
    assert row["answer/em"] == pytest.approx(2 / 3)
    assert row["sd::answer/em"] == pytest.approx(statistics.stdev([1.0, 0.0, 1.0]))
    assert row["candidates/recall_at_1"] == 1.0 and row["sd::candidates/recall_at_1"] == 0.0
    assert row["answer"] == "Paris"  # the first repeat's text
    single = score_variant(questions=[Q], labels=LABELS, candidates={"q1": [("c1", 1.0)]},
                           reranked={"q1": [("c1", 1.0)]}, contexts={},
                           answers={"q1": answers["q1"][1]}, depth=1, metrics=METRICS)
    assert single["answer/em"][0] == 0.0 and not any(c.startswith("sd::") for c in single.columns)


@pytest.mark.slow
def test_smollm2_at_temperature_07_three_repeats(tmp_path):
    from ablate.flows.outputs.write import collect_per_query, repeat_spread
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.run.stages import run_stage
    spec = write_experiment(tmp_path, "repeats", file="e.yaml", tier="smoke", smoke_size=3, seed=2,
                            baseline={"chunking": {"size": 64, "overlap": 8},
                                      "retrieval": {"paths": ["bm25"], "depth": 5},
                                      "context": {"budget": 160},
                                      "generator": {"name": "smollm2", "temperature": 0.7,
                                                    "repeats": 3, "max_new_tokens": 16}})

    def run():
        ctx = build_context(spec, RunOptions(cache_dir=str(tmp_path / "cache")))
        for node in ctx.plan.nodes.values():
            run_stage(ctx, node)
        return ctx
    ctx = run()
    keys = ctx.plan.by_variant["baseline"]
    gen = ctx.store.read("generate", keys["generate"])
    assert sorted(gen["repeat"].unique()) == [0, 1, 2] and gen.height == 3 * 3
    by_q = gen.group_by("qid").agg(pl.col("text").n_unique().alias("distinct"))
    assert by_q["distinct"].max() > 1  # sampling at 0.7 with three seeds varies the answers
    per_query, _ = collect_per_query(ctx)
    assert not any(c.startswith("sd::") for c in per_query.columns)
    spread = repeat_spread(ctx)["baseline"]
    assert spread["repeats"] == 3 and spread["seeds"] == [0, 1, 2]
    assert math.isfinite(per_query["answer/f1"].mean())
    generated = ctx.counters.get("prompts_generated", 0)
    assert generated == 9
    again = run()  # nothing is generated twice
    assert again.counters.get("prompts_generated", 0) == 0
