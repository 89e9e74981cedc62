"""Judged metrics with generator.repeats: every repeat's answer is judged, and a judged
metric is the mean over repeats with its between-repeat spread in `sd::judge/...`, like
every other metric (issue 29, item 3). The generator and the judge are faked: the answer
depends on the repeat's seed, the relevance verdict on the answer's text."""

from __future__ import annotations

import json
import statistics

import polars as pl
import pytest

from tests.components.judge.fakes import field, rule_script
from tests.flows.direct import run_judged
from tests.specs import experiment, judged_pipeline

# two repeats of a sampled generator (faked below), judged on two metrics
REPEATS = {"name": "smollm2", "temperature": 0.7, "repeats": 2}
SPEC = experiment("judged-repeats", tier="full", split="all", seed=1,
                  judge={"metrics": ["addresses_question", "context_recall"]},
                  baseline=judged_pipeline(generator=REPEATS))
WRONG = "Bananas grow on trees"


def _fake_model(self, question, context, system, user):
    """Seed 0: the gold answer, seed 1: an answer the judge finds irrelevant; the same
    answer at both seeds for an unanswerable question."""
    from ablate.components.contract.records import Answer
    if not question.answers:
        return Answer("Unknown to me", refused=False, tokens_in=len(user))
    text = question.answers[0] if self.cfg.seed % 2 == 0 else WRONG
    return Answer(text, refused=False, tokens_in=len(user))


def _script(request):
    if request.name == "relevance":  # the verdict follows the answer's text
        answer = field(request.messages[1][1], "Answer:")
        return json.dumps({"verdict": "no" if answer == WRONG else "yes"})
    return rule_script(request)


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("judged-repeats")
    spec = tmp / "exp.yaml"
    spec.write_text(SPEC)
    return run_judged(spec, tmp / "cache", _script, _fake_model)


def test_every_repeat_is_judged(judged):
    ctx, judge = judged
    keys = ctx.plan.by_variant["baseline"]
    frame = ctx.store.read("judge", keys["judge"])
    n = len(ctx.questions)
    assert frame.height == 2 * n and sorted(frame["repeat"].unique()) == [0, 1]
    answered = [q for q in ctx.questions if q.answers]
    relevance = [r for r in judge.calls if r.name == "relevance"]
    assert len(relevance) == n + len(answered)  # one per distinct answer
    assert frame.filter(pl.col("repeat") == 1)["reused"].sum() > 0  # the same prompts
    # the context metric's prompts do not depend on the answer: asked once, then reused
    support = [r for r in judge.calls if r.name == "support"]
    assert len(support) == len({json.dumps(r.messages) for r in support})


def test_judged_metric_is_the_mean_over_repeats_with_its_spread(judged):
    ctx, _ = judged
    keys = ctx.plan.by_variant["baseline"]
    scored = ctx.store.read("score", keys["score"])
    answered = {q.qid for q in ctx.questions if q.answers}
    assert answered
    for row in scored.iter_rows(named=True):
        if row["qid"] in answered:  # repeat 0 relevant, repeat 1 not
            assert row["judge/addresses_question"] == pytest.approx(0.5)
            assert row["sd::judge/addresses_question"] == pytest.approx(statistics.stdev([1.0, 0.0]))
            assert row["sd::judge/addresses_question"] > 0
        # the context does not change between repeats: no spread
        if row["judge/context_recall"] == row["judge/context_recall"]:
            assert row["sd::judge/context_recall"] == 0.0
    assert scored.filter(pl.col("qid").is_in(sorted(answered)))["answer/em"].mean() == pytest.approx(0.5)


def test_scoring_takes_judgments_per_repeat():
    from ablate.components.contract.records import Answer, Question, Span
    from ablate.flows.run.scoring import score_variant
    q = Question("q1", "Capital of France?", ("Paris",), True, ((Span("d", 0, 5),),))
    labels = pl.DataFrame({"qid": ["q1"], "group": [0], "chunk_id": ["c1"], "gain": [1.0]})
    yes = {"addresses_question": {"status": "ok", "verdicts": ["yes"]}}
    partly = {"addresses_question": {"status": "ok", "verdicts": ["partly"]}}
    failed = {"addresses_question": {"status": "failed", "failure": "x"}}
    answers = {"q1": [Answer("Paris", False, 5, 1), Answer("Paris, France", False, 5, 1),
                      Answer("Paris!", False, 5, 1)]}
    row = score_variant(questions=[q], labels=labels, candidates={"q1": [("c1", 1.0)]},
                        reranked={"q1": [("c1", 1.0)]}, contexts={}, answers=answers, depth=1,
                        metrics={"ks": [1], "gain": "linear", "label_threshold": 0.5},
                        judgments={"q1": [yes, partly, failed]}).row(0, named=True)
    assert row["judge/addresses_question"] == pytest.approx(0.75)  # the failed repeat excluded
    assert row["sd::judge/addresses_question"] == pytest.approx(statistics.stdev([1.0, 0.5]))


def test_a_repeat_without_judgments_is_undefined_there():
    """A frame judged once per question (stage version 1) gives a list of one: the other
    repeats' judged metrics are NaN, never a copy of repeat 0's verdicts."""
    from ablate.components.contract.records import Answer, Question, Span
    from ablate.flows.run.scoring import score_variant
    from ablate.flows.run.stages import judgments_of
    q = Question("q1", "Capital of France?", ("Paris",), True, ((Span("d", 0, 5),),))
    labels = pl.DataFrame({"qid": ["q1"], "group": [0], "chunk_id": ["c1"], "gain": [1.0]})
    old = pl.DataFrame({"qid": ["q1"], "judgments": [json.dumps(
        {"addresses_question": {"status": "ok", "verdicts": ["partly"]}})]})
    judgments = judgments_of(old)
    assert len(judgments["q1"]) == 1
    row = score_variant(questions=[q], labels=labels, candidates={"q1": [("c1", 1.0)]},
                        reranked={"q1": [("c1", 1.0)]}, contexts={},
                        answers={"q1": [Answer("Paris", False, 5, 1), Answer("Lyon", False, 5, 1)]},
                        depth=1, metrics={"ks": [1], "gain": "linear", "label_threshold": 0.5},
                        judgments=judgments).row(0, named=True)
    assert row["judge/addresses_question"] == 0.5 and row["answer/em"] == 0.5
    assert row["sd::judge/addresses_question"] != row["sd::judge/addresses_question"]  # NaN: one value


def test_judge_counts_are_per_question_not_per_repeat(judged):
    from ablate.flows.outputs.judging import judgment_counts
    ctx, _ = judged
    counts = judgment_counts(ctx)["baseline"]
    for metric, c in counts.items():
        assert sum(c.values()) == len(ctx.questions), (metric, c)  # 2 repeats, counted once
