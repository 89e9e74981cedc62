"""The cost metrics on a real (small) sweep run directly: the score stage prices what the
stages recorded (the generator's tokens, the judge's tokens from the judge stage's result),
and the retrieval side of the usage (components/metrics/cost.py) is counted from the
retrieve and fuse results: query tokens with the run's tokenizer, one vector search per
vector path, the candidates a reranker scored."""

from __future__ import annotations

import polars as pl
import pytest

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.records import Question
from ablate.components.text.tokenizer import get_tokenizer
from ablate.flows.run.cost_usage import pricing, usage, vector_paths
from tests.flows.run.test_judge_stage import JUDGE, _run, _write

COSTS = "costs: {judge_in_per_1k: 1000, generator_in_per_1k: 2000, rerank_call: 5}"


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    from ablate.flows.outputs.write import write_outputs
    tmp = tmp_path_factory.mktemp("costed")
    ctx, _, _ = _run(_write(tmp, JUDGE + "\n" + COSTS), tmp / "cache")
    return write_outputs(ctx, tmp / "runs", ctx.started, dict(ctx.counters))


@pytest.fixture(scope="module")
def per_query(sweep_dir):
    return pl.read_parquet(sweep_dir / "per_query.parquet")


def test_the_score_stage_prices_what_the_run_recorded(per_query):
    base = per_query.filter(pl.col("variant") == "baseline")
    assert base.height > 0
    for row in base.iter_rows(named=True):
        assert row["cost/embed"] == row["cost/search"] == 0.0  # bm25 only
        assert row["cost/rerank"] == 0.0  # rerank.method none: no reranker, no calls
        assert row["cost/generate"] == pytest.approx(2.0 * row["tokens/in"])
        assert row["cost/usd"] == pytest.approx(row["cost/generate"])
        # the scripted judge bills 10 prompt tokens a verdict: 1 dollar a token here
        assert row["cost/judge"] % 10 == 0
        assert row["cost/total"] == pytest.approx(row["cost/generate"])  # serving's: no judge
    assert (base["cost/judge"] > 0).any()


def test_usage_counts_vector_searches_rerank_calls_and_judge_tokens():
    tok = get_tokenizer()
    qs = [Question("zh", "长城有多长？", ("两万公里",), True),
          Question("en", "How long is the Great Wall?", ("21,196 km",), True)]
    retrieved = {"bm25": pl.DataFrame({"qid": ["zh", "en"]}),
                 "dense": pl.DataFrame({"qid": ["zh", "en"]})}
    fused = pl.DataFrame({"qid": ["zh", "en"], "chunk_ids": [["a"] * 30, ["b"] * 3]})
    judged = pl.DataFrame({"qid": ["zh", "zh", "en"], "repeat": [1, 0, 0],
                           "tokens_in": [7, 5, 9], "tokens_out": [2, 1, 3]})
    cfg = PipelineConfig.model_validate({"rerank": {"method": "composite", "depth": 20}})
    got = usage(qs, tok.count, cfg, retrieved, fused, judged)
    assert vector_paths(["bm25", "dense", "graph"]) == ["dense"]
    zh, en = got["zh"], got["en"]
    assert [r["judge_in"] for r in zh] == [5.0, 7.0] and en[0]["judge_out"] == 3.0
    assert zh[0]["embed_tokens"] == tok.count("长城有多长？") > 1 and zh[0]["vector_searches"] == 1
    assert (zh[0]["rerank_calls"], en[0]["rerank_calls"]) == (20.0, 3.0)
    plain = usage(qs, tok.count, PipelineConfig(), retrieved, fused, None)
    assert plain["en"]["rerank_calls"] == 0.0 and "judge_in" not in plain["en"]


def test_a_generators_own_price_wins_over_the_costs_section():
    from ablate.flows.plan.spec_costs import CostsSpec
    costs = CostsSpec(generator_in_per_1k=1.0, generator_out_per_1k=2.0, vector_search=3.0)
    own = PipelineConfig.model_validate({"generator": {"cost_per_1k_in": 5.0}})
    assert pricing(costs, own) | {} == {"in": 5.0, "out": 2.0, "embed": 0.0, "search": 3.0,
                                        "rerank": 0.0, "judge_in": 0.0, "judge_out": 0.0}
    assert pricing(costs, PipelineConfig())["in"] == 1.0


def test_report_and_summary_show_the_judges_spend_beside_serving(sweep_dir):
    from ablate.components.report.build import build_report
    from ablate.components.report.sweep_data import load_sweep
    files = build_report(load_sweep(sweep_dir), plots=False)
    md, summary = str(files["report.md"]), str(files["summary.txt"])
    assert "## Spend" in md and "| variant | embed | search | rerank | generate | total | judge | run |" in md
    assert "spend (US dollars" in summary
    spend = summary.split("spend (US dollars")[1].splitlines()
    line = next(x for x in spend if x.startswith("baseline "))
    assert "serving " in line and "judge " in line
