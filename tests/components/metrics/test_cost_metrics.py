"""The cost metrics (components/metrics/cost.py): per question, each stage's recorded
usage at its price; zero prices cost nothing, each price moves only its own column, and a
Chinese question's embedding tokens are the run tokenizer's count."""

from __future__ import annotations

import math

import pytest

from ablate.components.contract.records import Answer, Question
from ablate.components.metrics.cost import query_usage
from ablate.components.metrics.registry import QuestionView, score_question
from ablate.components.text.tokenizer import get_tokenizer

COLUMNS = ("cost/embed", "cost/search", "cost/rerank", "cost/generate", "cost/judge",
           "cost/total")
NAMES = [f"{c}" for c in COLUMNS]
USAGE = {"embed_tokens": 24.0, "vector_searches": 2.0, "rerank_calls": 20.0,
         "judge_in": 3000.0, "judge_out": 500.0}
ZERO = {"in": 0.0, "out": 0.0, "embed": 0.0, "search": 0.0, "rerank": 0.0,
        "judge_in": 0.0, "judge_out": 0.0}


def view(pricing, usage=USAGE, judged=True, answer=Answer("Paris", False, 1200, 40)):
    q = Question("q1", "What is the capital of France?", ("Paris",), True)
    return QuestionView(q, [], {"candidates": [], "reranked": [], "final": []}, None, None,
                        answer, {"ks": [1], "gain": "linear", "label_threshold": 0.5,
                                 "correct_f1": 0.5, "pricing": pricing},
                        judgments={} if judged else None, usage=usage)


def costs(v, available=("assemble", "generate", "judge")):
    return score_question(v, NAMES, available)


def test_zero_prices_cost_nothing():
    got = costs(view(ZERO))
    assert got == dict.fromkeys(COLUMNS, 0.0)
    assert costs(view({})) == dict.fromkeys(COLUMNS, 0.0)  # no prices at all


@pytest.mark.parametrize("price, column, expected", [
    ("embed", "cost/embed", 24 * 0.5 / 1000),
    ("search", "cost/search", 2 * 0.5),
    ("rerank", "cost/rerank", 20 * 0.5),
    ("in", "cost/generate", 1200 * 0.5 / 1000),
    ("out", "cost/generate", 40 * 0.5 / 1000),
    ("judge_in", "cost/judge", 3000 * 0.5 / 1000),
    ("judge_out", "cost/judge", 500 * 0.5 / 1000),
])
def test_each_price_alone_moves_only_its_column(price, column, expected):
    got = costs(view(ZERO | {price: 0.5}))
    assert got[column] == pytest.approx(expected)
    # the total is serving's: the judge's spend stands beside it
    serving = column != "cost/judge"
    assert got["cost/total"] == pytest.approx(expected if serving else 0.0)
    assert {c for c, v in got.items() if v != 0} == {column} | ({"cost/total"} if serving else set())


def test_generator_cost_equals_cost_usd():
    v = view(ZERO | {"in": 0.25, "out": 2.0})
    got = score_question(v, ["cost/usd", "cost/generate"], ("generate",))
    assert got["cost/usd"] == pytest.approx(got["cost/generate"]) == pytest.approx(0.38)


def test_total_sums_the_stages_present():
    prices = {"in": 1.0, "out": 1.0, "embed": 1.0, "search": 1.0, "rerank": 1.0,
              "judge_in": 1.0, "judge_out": 1.0}
    got = costs(view(prices))
    assert got["cost/total"] == pytest.approx(sum(got[c] for c in COLUMNS[:4]))
    # retrieval only: no generate or judge stage, so no such column, and the total is the rest
    bare = costs(view(prices, answer=None, judged=False), available=("assemble",))
    assert set(bare) == {"cost/embed", "cost/search", "cost/rerank", "cost/total"}
    assert bare["cost/total"] == pytest.approx(0.024 + 2 + 20)


def test_a_priced_count_not_recorded_is_nan_not_free():
    usage = {k: v for k, v in USAGE.items() if not k.startswith("judge")}
    got = costs(view(ZERO | {"judge_in": 1.0}, usage=usage))
    assert math.isnan(got["cost/judge"]) and got["cost/total"] == 0.0
    assert costs(view(ZERO, usage=usage))["cost/judge"] == 0.0  # unpriced: 0 whatever


def test_query_usage_counts_with_the_run_tokenizer_chinese_too():
    tok = get_tokenizer()
    qs = [Question("en", "Who wrote Hamlet?", ("Shakespeare",), True),
          Question("zh", "《哈姆雷特》的作者是谁？", ("莎士比亚",), True)]
    got = query_usage(qs, tok.count, {"dense": {"en", "zh"}, "dense2": {"zh"}}, {"en": 20})
    assert got["zh"]["embed_tokens"] == 2 * tok.count(qs[1].question) > 2
    assert got["en"]["embed_tokens"] == tok.count(qs[0].question)
    assert (got["zh"]["vector_searches"], got["en"]["vector_searches"]) == (2.0, 1.0)
    assert (got["en"]["rerank_calls"], got["zh"]["rerank_calls"]) == (20.0, 0.0)
