"""Refusal indicators: their means over a set are the refusal rates of that set."""

from __future__ import annotations

import math

from ablate.components.metrics.builtin import refusal_indicators
from ablate.components.metrics.refusal import refusal_summary


def nanmean(xs):
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def test_indicator_means_equal_refusal_summary():
    answerable = [True, True, True, False, False, True]
    refused = [False, True, False, False, True, False]
    correct = [True, False, False, False, True, True]
    rows = [refusal_indicators(a, r, c) for a, r, c in zip(answerable, refused, correct)]
    summary = refusal_summary(answerable, refused, correct)
    for name in ("answer_coverage", "false_acceptance", "false_refusal", "answer_risk"):
        assert math.isclose(nanmean([r[f"refusal/{name}"] for r in rows]), summary[name]), name


def test_undefined_outside_denominator():
    row = refusal_indicators(answerable=True, refused=True, correct=False)
    assert math.isnan(row["refusal/false_acceptance"]) and math.isnan(row["refusal/answer_risk"])
    assert row["refusal/false_refusal"] == 1.0 and row["refusal/answer_coverage"] == 0.0


# ---- score_variant on hand-made stage outputs ------------------------------------------

import httpx  # noqa: E402
import polars as pl  # noqa: E402

from ablate.components.contract.config import GeneratorConfig, PromptConfig  # noqa: E402
from ablate.components.contract.records import Answer, PackedContext, Passage, Question, Span  # noqa: E402
from ablate.components.generation.openai_http import OpenAIGenerator  # noqa: E402
from ablate.components.metrics.retrieval import metric_keys, retrieval_metrics  # noqa: E402
from ablate.flows.run.scoring import score_variant  # noqa: E402

TEXT = "Paris is the capital of France. Berlin is the capital of Germany. Rome is in Italy."
METRICS = {"ks": [1, 2, 3], "gain": "linear", "label_threshold": 0.5}


def _labels(questions):
    """Every question with evidence: c1 holds its answer, c2 half of it, c9 nothing."""
    rows = [(q.qid, 0, c, v) for q in questions if q.evidence for c, v in (("c1", 1.0),
                                                                            ("c2", 0.5))]
    return pl.DataFrame(rows, schema={"qid": pl.Utf8, "group": pl.Int64, "chunk_id": pl.Utf8,
                                      "gain": pl.Float64}, orient="row")


def _q(qid="q", answerable=True, evidence=((Span("d", 0, 5),),), answers=("Paris",)):
    return Question(qid, f"What is the capital of France ({qid})?", answers, answerable,
                    evidence)


def _ctx(ids=("c1",), text=TEXT):
    return PackedContext(tuple(ids), (Passage("d", 0, len(text), text),), n_tokens=20,
                         budget=100)


def _score(questions, answers, contexts=None, candidates=None, reranked=None, **kw):
    rank = [("c1", 3.0), ("c2", 2.0), ("c9", 1.0)]
    return score_variant(
        questions=questions, labels=_labels(questions),
        candidates=candidates or {q.qid: rank for q in questions},
        reranked=reranked or {q.qid: rank for q in questions},
        contexts=contexts or {q.qid: _ctx() for q in questions},
        answers=answers, depth=2, metrics=METRICS, **kw)


def test_each_stage_is_scored_from_its_own_list():
    """A wiring error (a stage scored from another stage's list) changes these numbers."""
    q = _q()
    cand = {"q": [("c9", 3.0), ("c8", 2.0), ("c1", 1.0)]}   # answer chunk at rank 3
    rer = {"q": [("c9", 3.0), ("c1", 2.0), ("c8", 1.0)]}    # at rank 2
    ctxs = {"q": _ctx(("c1", "c9"))}                        # at rank 1
    row = _score([q], {"q": Answer("Paris", False)}, ctxs, cand, rer).row(0, named=True)
    groups = [{"c1": 1.0, "c2": 0.5}]
    for prefix, ids in (("candidates", ["c9", "c8", "c1"]), ("reranked", ["c9", "c1", "c8"]),
                        ("final", ["c1", "c9"])):
        want = retrieval_metrics(ids, groups, METRICS["ks"], 0.5)
        for key in metric_keys(METRICS["ks"]):
            assert row[f"{prefix}/{key}"] == want[key], (prefix, key)
    assert (row["candidates/mrr_at_3"], row["reranked/mrr_at_3"], row["final/mrr_at_3"]) == \
        (1 / 3, 1 / 2, 1.0)
    assert row["bucket"] == "ok"


def test_bucket_reads_the_reranked_top_and_the_prompt():
    q = _q()
    cand = {"q": [("c1", 1.0)]}
    below_depth = {"q": [("c9", 3.0), ("c8", 2.0), ("c1", 1.0)]}  # depth 2: c1 not in top
    row = _score([q], {"q": Answer("Paris", False)}, {"q": _ctx(("c9",))}, cand,
                 below_depth).row(0, named=True)
    assert row["bucket"] == "ranking_loss"
    row = _score([q], {"q": Answer("Paris", False)}, {"q": _ctx(("c9",))}, cand,
                 {"q": [("c1", 1.0)]}).row(0, named=True)
    assert row["bucket"] == "budget_cut"


def test_a_two_hop_question_with_one_group_in_the_prompt_is_partial_support():
    """Group 0 is held by c1, group 1 by c5: a context with c1 only is partial support, one
    with both is ok; the same from the reranked top without a generator."""
    q = _q(evidence=((Span("d", 0, 5),), (Span("d", 32, 38),)))
    labels = pl.DataFrame([("q", 0, "c1", 1.0), ("q", 1, "c5", 1.0)], orient="row",
                          schema={"qid": pl.Utf8, "group": pl.Int64, "chunk_id": pl.Utf8,
                                  "gain": pl.Float64})
    rank = {"q": [("c1", 3.0), ("c5", 2.0), ("c9", 1.0)]}

    def bucket(ids, answers=True):
        return score_variant(questions=[q], labels=labels, candidates=rank, reranked=rank,
                             contexts={"q": _ctx(ids)},
                             answers={"q": Answer("Paris", False)} if answers else None,
                             depth=2, metrics=METRICS).row(0, named=True)["bucket"]
    assert bucket(("c1",)) == "partial_support"
    assert bucket(("c1", "c5")) == "ok"
    assert bucket(("c1",), answers=False) == "partial_support"
    assert bucket(("c1", "c5"), answers=False) == "retrieved"


class _FailingServer:
    """An OpenAI-compatible endpoint that answers 'Paris' and fails (HTTP 503) whenever the
    question mentions 'fail'."""

    def __call__(self, request):
        import json
        user = json.loads(request.content)["messages"][1]["content"]
        if "fail" in user:
            return httpx.Response(503)
        return httpx.Response(200, json={"choices": [{"message": {"content": "Paris"}}],
                                         "usage": {"prompt_tokens": 9, "completion_tokens": 1}})


def _http_answers(questions, monkeypatch):
    monkeypatch.setenv("TEST_KEY", "k")
    gen = OpenAIGenerator(GeneratorConfig(name="openai", base_url="http://llm.test/v1", model="m",
                                          api_key_env="TEST_KEY", max_retries=1),
                          PromptConfig(), transport=httpx.MockTransport(_FailingServer()),
                          sleep=lambda s: None)
    answers = gen.generate_many([(q, _ctx()) for q in questions])
    return {q.qid: a for q, a in zip(questions, answers)}


def test_failed_generation_is_undefined_never_a_refusal(monkeypatch):
    questions = [_q("ok"), _q("fail-ans"), _q("fail-unans", answerable=False, evidence=(),
                                                answers=())]
    answers = _http_answers(questions, monkeypatch)
    assert answers["fail-ans"].error and answers["fail-ans"].refused  # how the client reports it
    frame = _score(questions, answers)
    rows = {r["qid"]: r for r in frame.iter_rows(named=True)}
    assert rows["ok"]["answer/em"] == 1.0 and rows["ok"]["answer/generation_error"] == 0.0
    assert rows["ok"]["bucket"] == "ok"
    for qid in ("fail-ans", "fail-unans"):
        r = rows[qid]
        for key in ("em", "f1", "correct", "refused", "lexical_support"):
            assert math.isnan(r[f"answer/{key}"]), (qid, key)
        for key in ("answer_coverage", "false_acceptance", "false_refusal", "answer_risk"):
            assert math.isnan(r[f"refusal/{key}"]), (qid, key)
        assert r["answer/generation_error"] == 1.0
        assert r["bucket"] == "generation_error"
    # retrieval is still scored for the failed answerable question
    assert rows["fail-ans"]["final/hit_at_1"] == 1.0


def test_failed_generations_are_excluded_and_counted_by_the_statistics(monkeypatch):
    from ablate.components.stats import compare_variants
    questions = [_q(f"q{i}") for i in range(6)] + [_q("fail-1"), _q("fail-2")]
    good = {q.qid: Answer("Paris", False) for q in questions}
    base = _score(questions, good).with_columns(variant=pl.lit("baseline"))
    var = _score(questions, _http_answers(questions, monkeypatch)).with_columns(
        variant=pl.lit("http"))
    table = pl.concat([base, var], how="diagonal_relaxed")
    stats = compare_variants(table, baseline="baseline", metrics=["answer/em", "refusal/answer_coverage"],
                             resamples=200, bootstrap_resamples=200)
    for r in stats.iter_rows(named=True):
        assert r["n_used"] == 6 and r["n_undefined"] == 2, r["metric"]
        assert r["delta"] == 0.0  # the failures are not counted as refusals (coverage 0)


def test_answerable_question_without_evidence_is_its_own_bucket_with_nan_retrieval():
    q = _q("noev", evidence=())
    frame = _score([q], {"noev": Answer("Paris", False)})
    row = frame.row(0, named=True)
    assert row["bucket"] == "no_evidence"
    retrieval = [c for c in frame.columns if c.split("/")[0] in ("candidates", "reranked")
                 or (c.startswith("final/") and c not in ("final/context_tokens",
                                                          "final/context_chunks"))]
    # + span coverage + group recall (candidates, final)
    assert len(retrieval) == 3 * len(metric_keys(METRICS["ks"])) + 3
    assert all(math.isnan(row[c]) for c in retrieval)
    assert row["answer/em"] == 1.0  # answer metrics are still defined


def test_closed_book_is_scored_without_the_context():
    q = _q()
    # the answer is in the assembled context, the evidence never reached the candidates
    miss = {"q": [("c9", 1.0)]}
    ctxs = {"q": _ctx(("c9",))}
    with_ctx = _score([q], {"q": Answer("Paris", False)}, ctxs, miss, miss).row(0, named=True)
    assert with_ctx["answer/lexical_support"] == 1.0 and with_ctx["bucket"] == "retrieval_miss"
    closed = _score([q], {"q": Answer("Paris", False)}, ctxs, miss, miss,
                    context_used=False).row(0, named=True)
    assert math.isnan(closed["answer/lexical_support"])
    assert closed["bucket"] == "ok"  # by correctness only
    wrong = _score([q], {"q": Answer("Berlin", False)}, ctxs, miss, miss,
                   context_used=False).row(0, named=True)
    assert wrong["bucket"] == "answer_wrong"
    refused = _score([q], {"q": Answer("I don't know.", True)}, ctxs, miss, miss,
                     context_used=False).row(0, named=True)
    assert refused["bucket"] == "answer_wrong"
    unans = _q("u", answerable=False, evidence=(), answers=())
    row = _score([unans], {"u": Answer("I don't know.", True)}, context_used=False).row(0, named=True)
    assert row["bucket"] == "correct_refusal"
    # retrieval columns still describe the shared retrieval
    assert closed["candidates/hit_at_1"] == with_ctx["candidates/hit_at_1"] == 0.0


def test_retrieval_only_inputs_give_retrieval_columns_only():
    """No context and no answers, every registered metric asked for: the metrics that need
    an answer or a context are not computed (they used to crash on the missing answer)."""
    q = _q()
    rank = [("c1", 3.0), ("c2", 2.0), ("c9", 1.0)]
    df = score_variant(questions=[q], labels=_labels([q]), candidates={"q": rank},
                       reranked={"q": rank}, contexts=None, answers=None, depth=2,
                       metrics=METRICS)
    stages = {c.partition("/")[0] for c in df.columns if "/" in c}
    assert {"candidates", "reranked"} <= stages
    assert not stages & {"answer", "tokens", "refusal", "context"}, stages
    # retrieval costs money too: the cost columns of the stages present, not the generator's
    assert {c for c in df.columns if c.startswith("cost/")} == {
        "cost/embed", "cost/search", "cost/rerank", "cost/total"}


def test_group_recall_counts_the_evidence_groups_in_each_stage_with_the_buckets_notion():
    """Issue 37: per-group recall of multi-hop questions (two supporting paragraphs): the
    share of evidence groups in the final context / among the candidates, the same group
    notion as the partial_support bucket; a single-group question scores 1/0 exactly as
    full support over the whole context does."""
    two = Question("mh", "Which two?", ("x",), True,
                   ((Span("d", 0, 5),), (Span("d", 10, 15),)))
    one_in, one_out = _q("in"), _q("out")
    labels = pl.DataFrame(
        [("mh", 0, "c1", 1.0), ("mh", 1, "c3", 1.0), ("in", 0, "c1", 1.0), ("out", 0, "c1", 1.0)],
        schema={"qid": pl.Utf8, "group": pl.Int64, "chunk_id": pl.Utf8, "gain": pl.Float64},
        orient="row")
    rank = [("c1", 3.0), ("c2", 2.0), ("c3", 1.0)]
    frame = score_variant(
        questions=[two, one_in, one_out], labels=labels,
        candidates={"mh": rank, "in": rank, "out": [("c9", 1.0)]},
        reranked={"mh": rank, "in": rank, "out": [("c9", 1.0)]},
        contexts={"mh": _ctx(("c1", "c2")), "in": _ctx(("c2", "c1")), "out": _ctx(("c9",))},
        answers=None, depth=3, metrics=METRICS).sort("qid")
    rows = {r["qid"]: r for r in frame.iter_rows(named=True)}
    assert rows["mh"]["final/group_recall"] == 0.5 and rows["mh"]["candidates/group_recall"] == 1.0
    assert rows["mh"]["bucket"] == "partial_support"
    assert rows["in"]["final/group_recall"] == 1.0 and rows["out"]["final/group_recall"] == 0.0
    for qid, ids in (("in", ["c2", "c1"]), ("out", ["c9"])):  # single group: full support
        full = retrieval_metrics(ids, [{"c1": 1.0}], ks=[len(ids)], threshold=0.5)
        assert rows[qid]["final/group_recall"] == full[f"full_support_at_{len(ids)}"]
    assert rows["mh"]["final/context_chunks"] == 2.0 and rows["out"]["final/context_chunks"] == 1.0


def test_group_recall_is_undefined_without_evidence():
    from ablate.components.metrics.retrieval import group_recall
    assert math.isnan(group_recall(["c1"], [], 0.5))
    assert group_recall(["c1", "c3"], [{"c1": 0.4}, {"c3": 0.5}], 0.5) == 0.5  # label threshold


def test_the_answer_score_is_the_confidence_column_and_survives_the_stage_frame():
    """The extractive support reaches per_query as `confidence` (the risk-coverage table's
    input) through the generate stage's frame; NaN for a generator without a score."""
    from ablate.flows.run.frames import answers_frame, frame_answer_repeats
    answers = {"q": Answer("Paris", False, score=0.75), "r": Answer("Rome", False)}
    back = frame_answer_repeats(answers_frame(answers).with_columns(repeat=pl.lit(0)))
    assert back["q"][0].score == 0.75 and back["r"][0].score is None
    rows = _score([_q("q"), _q("r")], {k: v[0] for k, v in back.items()})
    assert rows["confidence"].to_list()[0] == 0.75 and math.isnan(rows["confidence"].to_list()[1])
