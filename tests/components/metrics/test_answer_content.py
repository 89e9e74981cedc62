"""Content-token answer scores (question words removed): a restatement of the question or
an invented entity scores 0 against a long reference, where token F1 rewards them."""

import math

import pytest

from ablate.components.contract.records import Answer, Question
from ablate.components.metrics.answer import token_f1
from ablate.components.metrics.answer_content import (
    content_metrics,
    content_scores,
    content_tokens,
    median_lengths,
)
from ablate.components.metrics.registry import QuestionView, score_question

Q = "Who wrote the 1998 report on rail safety for the transport ministry?"
REF = ("The 1998 report on rail safety for the transport ministry was written by Margaret "
       "Ellison, a former signalling engineer, who argued that most accidents came from "
       "maintenance backlogs rather than driver error.")
RESTATED = "The 1998 report on rail safety for the transport ministry."
INVENTED = "John Smith wrote the 1998 report on rail safety for the transport ministry."
RIGHT = "Margaret Ellison, a former signalling engineer"


def test_restating_the_question_or_an_invented_author_scores_zero_where_f1_does_not():
    assert token_f1(RESTATED, [REF]) > 0.4 and token_f1(INVENTED, [REF]) >= 0.4
    for wrong in (RESTATED, INVENTED):
        s = content_scores(wrong, [REF], Q, "squad")
        assert s == {"content_precision": 0.0, "content_recall": 0.0, "content_f1": 0.0}
    right = content_scores(RIGHT, [REF], Q, "squad")
    assert right["content_precision"] == 1.0
    assert right["content_f1"] > 0.4


def test_content_tokens_drop_question_words_and_stop_words():
    assert content_tokens("The report was written by Margaret Ellison", Q, "squad") == [
        "written", "margaret", "ellison"]


def test_chinese_uses_character_tokens():
    q = "《鐵道安全報告》是誰寫的？"
    ref = "《鐵道安全報告》由王美玲於1998年寫成，她曾是一名號誌工程師。"
    assert content_scores("《鐵道安全報告》是張三寫的。", [ref], q, "cmrc")["content_f1"] == 0.0
    right = content_scores("王美玲", [ref], q, "cmrc")
    assert right["content_precision"] == 1.0 and right["content_recall"] > 0.1


def test_reference_that_only_repeats_the_question_is_undefined():
    s = content_scores("yes", ["Who wrote the report"], "Who wrote the report?", "squad")
    assert all(math.isnan(v) for v in s.values())


def test_refusal_rules_follow_squad_v2():
    ans = dict(answerable=True, refused=True)
    assert content_metrics("x", [REF], Q, "squad", **ans)["content_f1"] == 0.0
    assert content_metrics("", [], Q, "squad", answerable=False, refused=True)["content_f1"] == 1.0
    assert content_metrics("Paris", [], Q, "squad", answerable=False, refused=False)["content_f1"] == 0.0


def test_registered_as_answer_columns():
    q = Question("q", Q, (REF,), True)
    view = QuestionView(q, [], {}, None, None, Answer(INVENTED, refused=False),
                        {"answer_normalizer": "auto"})
    got = score_question(view, ["answer/content_f1", "answer/content_recall", "answer/content_precision"], ("generate",))
    assert got == {"answer/content_f1": 0.0, "answer/content_recall": 0.0,
                   "answer/content_precision": 0.0}
    failed = QuestionView(q, [], {}, None, None, Answer("", True, error="HTTP 503"), {})
    assert all(math.isnan(v) for v in score_question(failed, ["answer/content_f1"], ("generate",)).values())


def test_median_lengths_take_the_shortest_reference():
    pairs = [("Paris", ["Paris", "the city of Paris in France"], "Capital?"),
             ("x y z", ["one two three four five six"], "Q?")]
    assert median_lengths(pairs) == pytest.approx((2.0, 3.5))


def test_length_check_names_variants_whose_references_are_three_times_longer():
    from ablate.components.metrics.answer_content import length_check
    long_ref = [REF]
    rows = [("closed", "John Smith", long_ref, Q), ("closed", "Jane Doe wrote it", long_ref, Q),
            ("squad", "Paris", ["Paris"], "Capital?")]
    got = length_check(rows)
    assert got["long_references"] == ["closed"]
    assert got["variants"]["squad"] == {"answer_median": 1.0, "reference_median": 1.0}


LONG_Q = "Who wrote the 1998 report on rail safety for the transport ministry?"
LONG_REF = ("The report on rail safety was written in 1998 by Margaret Ellison, a former "
            "signalling engineer, for the transport ministry.")


def _correct(text: str, correct_by: str) -> float:
    q = Question("q", LONG_Q, (LONG_REF,), True)
    view = QuestionView(q, [], {}, None, None, Answer(text, refused=False),
                        {"correct_f1": 0.5, "correct_by": correct_by})
    return score_question(view, ["answer/correct", "answer/f1"], ("generate",))["answer/correct"]


def test_correct_by_auto_reads_content_precision_where_the_reference_is_longer():
    invented = "The 1998 report on rail safety for the transport ministry was written by John Smith."
    assert token_f1(invented, [LONG_REF]) >= 0.5
    assert _correct(invented, "f1") == 1.0  # token F1: an invented author is "correct"
    assert _correct(invented, "auto") == 0.0
    assert _correct("Margaret Ellison", "f1") == 0.0  # short and right: F1 0.22
    assert _correct("Margaret Ellison", "auto") == 1.0


def test_correct_by_auto_keeps_f1_where_the_answer_is_as_long_as_the_reference():
    q = Question("q", "When were the Normans in Normandy?", ("10th and 11th centuries",), True)
    for text, want in (("10th and 11th centuries gave their name", 1.0), ("in France", 0.0)):
        view = QuestionView(q, [], {}, None, None, Answer(text, refused=False),
                            {"correct_f1": 0.5, "correct_by": "auto"})
        assert score_question(view, ["answer/correct"], ("generate",))["answer/correct"] == want
