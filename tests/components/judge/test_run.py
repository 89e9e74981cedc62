"""One question's judgments and the judged metrics on small fixed cases (scripted judge)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ablate.components.contract.records import Answer, PackedContext, Passage, Question
from ablate.components.judge.backends import Completion
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.prompts import load_prompts
from ablate.components.judge.run import Item
from ablate.components.judge.run import judge_item as _judge_item
from ablate.components.judge.tasks import JudgeCache
from ablate.components.metrics.judged import rank_weighted_precision, share_yes
from ablate.components.metrics.registry import METRICS, QuestionView
from ablate.components.retrieval.resources import Resources
from tests.components.judge.fakes import ScriptedJudge, TableEncoder, rule_script

PROMPTS = load_prompts("v1")
CFG = JudgeConfig()
TEXTS = ("Paris is the capital of France.", "Berlin is the capital of Germany.",
         "France is in Europe and its capital is Paris.")
CTX = PackedContext(("c0", "c1", "c2"), tuple(Passage(f"d{i}", 0, len(t), t) for i, t in enumerate(TEXTS)),
                    30, 512)
EMPTY = PackedContext((), (), 0, 512)
Q = Question("q1", "What is the capital of France?", ("Paris",), True)
UNANSWERABLE = Question("q2", "What is the capital of Atlantis?", (), False)
RES = Resources.fixed(TableEncoder())  # answer relevancy's embedder (tests/.../test_relevancy.py)


def judge_item(*args, **kwargs):
    return _judge_item(*args, **kwargs, resources=RES)


def _scores(judgments):
    from ablate.components import catalogue
    catalogue.load()
    view = QuestionView(Q, [], {}, CTX, CTX, Answer("x", False), {}, judgments=judgments)
    out = {}
    for name in METRICS.names():
        if name.startswith("judge/"):
            out.update(METRICS.get(name).compute(view))
    return out


def test_rank_weighted_precision_is_ragas():
    # RAGAS: sum_k precision@k * v_k / useful passages
    assert rank_weighted_precision([True, False, True]) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert rank_weighted_precision([False, True, True]) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert rank_weighted_precision([True, True, False]) == 1.0
    assert rank_weighted_precision([False, False]) == 0.0
    assert math.isnan(rank_weighted_precision([]))
    # rank-weighted: the same useful passages score higher earlier
    assert rank_weighted_precision([True, False]) > rank_weighted_precision([False, True])
    assert share_yes(["yes", "no", "no", "yes"]) == 0.5 and math.isnan(share_yes([]))


def test_answer_with_two_claims_one_supported():
    judge = ScriptedJudge(rule_script)
    j = judge_item(judge, PROMPTS, CFG, Item(Q, Answer("Paris and Lyon are capitals of France", False), CTX, CTX))
    assert j.lang == "en" and j.failures == 0 and not j.errors
    f = j.judgments["faithfulness"]
    assert f["claims"] == ["Paris", "Lyon are capitals of France"] and f["verdicts"] == ["yes", "no"]
    assert j.judgments["context_precision"]["verdicts"] == ["yes", "no", "yes"]
    assert j.judgments["context_recall"] == {"status": "ok", "claims": ["Paris"], "verdicts": ["yes"],
                                             "reference_form": "span"}
    assert [r.name for r in judge.calls] == (["claims", "questions", "relevance"] + ["usefulness"] * 3
                                             + ["support"] + ["support"] * 2)
    assert j.asked == 9 and j.reused == 0
    s = _scores(j.judgments)
    relevancy = s.pop("judge/answer_relevancy")
    assert relevancy == pytest.approx(np.mean(j.judgments["answer_relevancy"]["cosines"]))
    assert s == pytest.approx({"judge/faithfulness": 0.5, "judge/addresses_question": 1.0,
                               "judge/context_precision": (1 + 2 / 3) / 2,
                               "judge/context_recall": 1.0})


def test_the_same_prompts_are_never_asked_twice(tmp_path):
    cache = JudgeCache(tmp_path)
    judge = ScriptedJudge(rule_script)
    first = judge_item(judge, PROMPTS, CFG, Item(Q, Answer("Paris and Lyon are capitals of France", False), CTX, CTX), cache)
    n = len(judge.calls)
    again = judge_item(judge, PROMPTS, CFG, Item(Q, Answer("Paris and Lyon are capitals of France", False), CTX, CTX), cache)
    assert len(judge.calls) == n and again.asked == 0 and again.reused == 9
    assert again.judgments == first.judgments
    # another answer on the same context: only the answer's verdicts are asked
    other = judge_item(judge, PROMPTS, CFG, Item(Q, Answer("Lyon", False), CTX, CTX), cache)
    assert [r.name for r in judge.calls[n:]] == ["claims", "questions", "relevance", "support"]
    assert other.reused == 4 and other.judgments["faithfulness"]["verdicts"] == ["no"]


@pytest.mark.parametrize("answer, why", [
    (Answer("I don't know.", True), "refusal or empty answer"),
    (Answer("", False), "refusal or empty answer"),
    (Answer("", True, error="HTTP 503"), "generation failed"),
])
def test_refusals_and_failed_generations_are_undefined_not_zero(answer, why):
    judge = ScriptedJudge(rule_script)
    j = judge_item(judge, PROMPTS, CFG, Item(Q, answer, CTX, CTX))
    assert j.judgments["faithfulness"] == {"status": "undefined", "reason": why}
    assert j.judgments["addresses_question"] == {"status": "undefined", "reason": why}
    assert j.judgments["context_recall"]["status"] == "ok"  # the context is still judged
    s = _scores(j.judgments)
    assert math.isnan(s["judge/faithfulness"]) and math.isnan(s["judge/addresses_question"])
    # RAGAS answer relevancy: a refusal is noncommittal (0, not asked); a failed generation
    # is no answer (undefined)
    if why == "generation failed":
        assert j.judgments["answer_relevancy"] == {"status": "undefined", "reason": why}
        assert math.isnan(s["judge/answer_relevancy"])
    else:
        assert j.judgments["answer_relevancy"]["noncommittal"] is True
        assert s["judge/answer_relevancy"] == 0.0
    assert {r.name for r in judge.calls} == {"usefulness", "support"}


def test_closed_book_faithfulness_undefined_and_empty_context_supports_nothing():
    judge = ScriptedJudge(rule_script)
    closed = judge_item(judge, PROMPTS, CFG, Item(Q, Answer("Paris", False), None, CTX))
    assert closed.judgments["faithfulness"]["reason"] == "closed book: no context read"
    assert closed.judgments["context_precision"]["status"] == "ok"
    empty = judge_item(judge, PROMPTS, CFG, Item(Q, Answer("Paris", False), EMPTY, EMPTY))
    assert empty.judgments["faithfulness"]["verdicts"] == ["no"]
    assert empty.judgments["context_recall"]["verdicts"] == ["no"]
    assert empty.judgments["context_precision"] == {"status": "undefined", "reason": "no passages"}
    s = _scores(empty.judgments)
    assert s["judge/faithfulness"] == 0.0 and s["judge/context_recall"] == 0.0
    assert math.isnan(s["judge/context_precision"])


def test_unanswerable_question_has_no_context_metrics():
    judge = ScriptedJudge(rule_script)
    j = judge_item(judge, PROMPTS, CFG, Item(UNANSWERABLE, Answer("Paris", False), CTX, CTX))
    assert j.judgments["context_precision"]["status"] == "undefined"
    assert j.judgments["context_recall"]["reason"] == "no reference answer"
    assert j.judgments["answer_relevancy"]["status"] == "ok"
    assert j.judgments["addresses_question"]["status"] == "ok"


def test_a_judge_failure_is_counted_and_never_a_score():
    def script(r):
        return "not json" if r.name == "usefulness" and "Berlin" in r.messages[1][1] else rule_script(r)
    j = judge_item(ScriptedJudge(script), PROMPTS, CFG, Item(Q, Answer("Paris", False), CTX, CTX))
    cp = j.judgments["context_precision"]
    assert cp["status"] == "failed" and cp["n_failed"] == 1 and "not one JSON object" in cp["failure"]
    assert j.failures == 1
    s = _scores(j.judgments)
    assert math.isnan(s["judge/context_precision"]) and s["judge/faithfulness"] == 1.0


def test_failed_claim_split_fails_faithfulness_only():
    def script(r):
        return '{"claims": []}' if r.name == "claims" else rule_script(r)
    j = judge_item(ScriptedJudge(script), PROMPTS, CFG, Item(Q, Answer("Paris", False), CTX, CTX))
    assert j.judgments["faithfulness"]["status"] == "failed"
    assert j.judgments["faithfulness"]["at"] == "claims"
    assert j.judgments["answer_relevancy"]["status"] == "ok"
    assert j.judgments["addresses_question"]["status"] == "ok"


def test_transport_error_marks_the_judgment_error():
    def script(r):
        return Completion("", error="ReadTimeout") if r.name == "relevance" else rule_script(r)
    j = judge_item(ScriptedJudge(script), PROMPTS, CFG, Item(Q, Answer("Paris", False), CTX, CTX))
    assert j.judgments["addresses_question"] == {"status": "error", "error": "ReadTimeout"}
    assert j.errors == ["ReadTimeout"] and j.failures == 0
    assert math.isnan(_scores(j.judgments)["judge/addresses_question"])


def test_sentence_claims_and_metric_selection():
    cfg = JudgeConfig(claims="sentences", metrics=("faithfulness", "context_recall"), max_claims=2)
    judge = ScriptedJudge(rule_script)
    answer = Answer("Paris is the capital of France. It is in Europe. Lyon is not.", False)
    j = judge_item(judge, PROMPTS, cfg, Item(Q, answer, CTX, CTX))
    assert set(j.judgments) == {"faithfulness", "context_recall"}
    assert j.judgments["faithfulness"]["claims"] == ["Paris is the capital of France.", "It is in Europe."]
    assert "claims" not in {r.name for r in judge.calls}
    assert set(_scores(j.judgments)) == {"judge/faithfulness", "judge/context_recall"}


def test_chinese_question_gets_chinese_prompts():
    q = Question("z1", "法國的首都是哪裡？", ("巴黎",), True)
    ctx = PackedContext(("c",), (Passage("d", 0, 9, "巴黎是法國的首都。"),), 9, 512)
    seen = []

    def script(r):
        seen.append(r.messages[1][1])
        if r.name == "questions":
            return json.dumps({"questions": ["法國的首都是哪裡？"] * 3, "noncommittal": False})
        return json.dumps({"claims": ["法國的首都是巴黎"]}) if r.name == "claims" else '{"verdict": "yes"}'
    j = judge_item(ScriptedJudge(script), PROMPTS, CFG, Item(q, Answer("巴黎", False), ctx, ctx))
    assert j.lang == "zh" and all("问题：" in u or "段落：" in u or "答案：" in u for u in seen)
    assert _scores(j.judgments)["judge/faithfulness"] == 1.0
