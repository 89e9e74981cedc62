"""A judged metric added as one file with one registration (judged_plugin.py) is asked,
judged and scored end to end by the generic judge (a scripted backend), keyed by its own
declaration, and gone once its registration is undone; the built-ins are registered the
same way and the judge knows none of them by name."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ablate.components.contract.plugins import load_plugins
from ablate.components.contract.records import Answer, PackedContext, Passage, Question
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.keys import key_input
from ablate.components.judge.prompts import load_prompts
from ablate.components.judge.run import Item, judge_item
from ablate.components.metrics.judged import judged_names
from ablate.components.metrics.registry import METRICS, QuestionView, score_question
from tests.components.judge.fakes import ScriptedJudge, rule_script
from tests.conftest import registries_restored

HERE = Path(__file__).parent
TEXT = "Paris is the capital of France."
CTX = PackedContext(("c0",), (Passage("d0", 0, len(TEXT), TEXT),), 8, 512)
Q = Question("q1", "What is the capital of France?", ("Paris",), True)
UNANSWERABLE = Question("q2", "What is the capital of Atlantis?", (), False)


def _score(q, judgments):
    view = QuestionView(q, [], {}, CTX, CTX, Answer("x", False), {}, judgments=judgments)
    return score_question(view, [n for n in METRICS.names() if n.startswith("judge/")])


def test_a_judged_metric_from_one_file_is_judged_and_scored_end_to_end():
    with registries_restored():
        load_plugins(["judged_plugin.py"], HERE)
        assert judged_names()[-1] == "answer_support"
        cfg = JudgeConfig(metrics=("context_recall", "answer_support"))
        judge = ScriptedJudge(rule_script, cfg)
        prompts = load_prompts()
        j = judge_item(judge, prompts, cfg, Item(Q, Answer("Paris", False), CTX, CTX))
        assert j.judgments == {"context_recall": {"status": "ok", "claims": ["Paris"],
                                                  "verdicts": ["yes"], "reference_form": "span"},
                               "answer_support": {"status": "ok", "verdicts": ["yes"]}}
        asked = [r.messages[1][1] for r in judge.calls]
        assert len(asked) == 2 and "Context:\n[1] Paris\n" in asked[1]  # the reference
        assert _score(Q, j.judgments) == {"judge/context_recall": 1.0, "judge/answer_support": 1.0}
        wrong = judge_item(judge, prompts, cfg, Item(Q, Answer("Lyon", False), CTX, CTX))
        assert _score(Q, wrong.judgments)["judge/answer_support"] == 0.0
        none = judge_item(judge, prompts, cfg, Item(UNANSWERABLE, Answer("Paris", False), CTX, CTX))
        assert none.judgments["answer_support"] == {"status": "undefined",
                                                    "reason": "no reference answer"}
        assert math.isnan(_score(UNANSWERABLE, none.judgments)["judge/answer_support"])
        # keyed by its own declaration, which names the plugin's source
        keyed = key_input(cfg, "p")
        assert any(m.startswith("metric:judge/answer_support@1+src:") for m in keyed["metrics"])
        assert key_input(JudgeConfig(metrics=("context_recall",)), "p") != keyed
    assert "answer_support" not in judged_names()  # the registration did not leak
    with pytest.raises(ValueError, match="unknown judged metric 'answer_support'"):
        JudgeConfig(metrics=("answer_support",))


def test_the_built_in_judged_metrics_are_registered_like_any_other():
    assert judged_names() == ("faithfulness", "answer_relevancy", "addresses_question",
                              "context_precision", "context_recall")
    assert JudgeConfig().metrics == judged_names()
    for name in judged_names():
        decl = METRICS.declaration(f"judge/{name}")
        assert decl.origin == "ablate.components.judge.ragas"
