"""Answer metrics on hand-made cases, including SQuAD v2 normalisation edge cases."""

import math

import pytest

from ablate.components.contract.records import Answer, PackedContext, Passage, Question
from ablate.components.metrics.answer import (
    answer_cost,
    answer_metrics,
    exact_match,
    is_correct,
    lexical_support,
    normalize_answer,
    token_f1,
)


@pytest.mark.parametrize("raw, norm", [
    ("The Eiffel Tower", "eiffel tower"),
    ("  an   apple, a pear!  ", "apple pear"),
    ("Theatre", "theatre"),              # 'the' only as a whole word
    ("A.D. 1066", "ad 1066"),             # punctuation removed, not replaced by spaces
    ("rock-and-roll", "rockandroll"),
    ("Normans'", "normans"),
    ("“quoted”", "“quoted”"),             # only ASCII punctuation, as the official script
    ("THE", ""),
    ("", ""),
])
def test_normalize_answer_squad_rules(raw, norm):
    assert normalize_answer(raw) == norm


def test_exact_match_max_over_references():
    assert exact_match("the Normans", ["Vikings", "Normans"]) == 1.0
    assert exact_match("Normans.", ["Norman"]) == 0.0


def test_token_f1_partial_and_max():
    # pred [10th, century], gold [10th, and, 11th, centuries]: overlap 1 -> P=1/2, R=1/4
    assert token_f1("10th century", ["10th and 11th centuries"]) == pytest.approx(1 / 3)
    assert token_f1("10th century", ["10th and 11th centuries", "10th century"]) == 1.0
    assert token_f1("Paris", ["London"]) == 0.0


def test_token_f1_counts_repeated_tokens_once_per_match():
    # pred "paris paris" vs gold "paris": common=1, P=1/2, R=1 -> 2/3
    assert token_f1("paris paris", ["Paris"]) == pytest.approx(2 / 3)


def test_empty_references_behave_like_official_script():
    # references that normalise to nothing are dropped; none left -> gold is ['']
    assert exact_match("", ["the", "!"]) == 1.0
    assert token_f1("something", ["a"]) == 0.0


def _q(answerable=True, answers=("Paris",)):
    return Question(qid="q1", question="What is the capital of France?",
                    answers=answers if answerable else (), answerable=answerable)


CTX = PackedContext(chunk_ids=("c1",), passages=(
    Passage("d1", 0, 40, "Paris is the capital and largest city of France."),), n_tokens=10,
    budget=64)


def test_unanswerable_correct_only_when_refused():
    m = answer_metrics(_q(False), Answer("I don't know.", refused=True), CTX)
    assert (m["em"], m["f1"], m["correct"], m["refused"]) == (1.0, 1.0, 1.0, 1.0)
    m = answer_metrics(_q(False), Answer("Paris", refused=False), CTX)
    assert (m["em"], m["f1"], m["correct"]) == (0.0, 0.0, 0.0)


def test_answerable_refused_scores_zero():
    m = answer_metrics(_q(), Answer("I don't know.", refused=True), CTX)
    assert (m["em"], m["f1"], m["correct"]) == (0.0, 0.0, 0.0)
    assert math.isnan(m["lexical_support"])


def test_answer_metrics_keys_and_values():
    a = Answer("Paris, France", refused=False, tokens_in=100, tokens_out=4, latency_s=0.25)
    m = answer_metrics(_q(), a, CTX, cost_per_1k_in=1.0, cost_per_1k_out=2.0)
    assert set(m) >= {"em", "f1", "refused", "lexical_support", "tokens_in", "tokens_out",
                      "latency_s"}
    assert m["em"] == 0.0 and m["f1"] == pytest.approx(2 / 3) and m["correct"] == 1.0
    assert m["lexical_support"] == 1.0
    assert (m["tokens_in"], m["tokens_out"], m["latency_s"]) == (100.0, 4.0, 0.25)
    assert m["cost"] == pytest.approx((100 * 1.0 + 4 * 2.0) / 1000)


def test_is_correct_threshold_is_a_parameter():
    assert is_correct(answerable=True, em=0.0, f1=0.5, refused=False)
    assert not is_correct(answerable=True, em=0.0, f1=0.5, refused=False, f1_threshold=0.6)
    assert is_correct(answerable=True, em=1.0, f1=0.0, refused=False, f1_threshold=0.9)
    assert not is_correct(answerable=True, em=1.0, f1=1.0, refused=True)


def test_lexical_support_is_share_of_content_tokens_in_context():
    assert lexical_support("the capital of Spain", CTX) == pytest.approx(0.5)  # capital yes, spain no
    assert lexical_support("with of", CTX) == 0.5  # only stop words: then all tokens count
    assert math.isnan(lexical_support("The!", CTX))  # normalises to nothing
    assert math.isnan(lexical_support("", CTX))
    assert math.isnan(lexical_support("Paris", None))  # closed book: undefined, not 0


def test_answer_cost():
    assert answer_cost(Answer("x", False, tokens_in=2000, tokens_out=500), 0.5, 1.5) == \
        pytest.approx(1.0 + 0.75)


def test_failed_generation_has_undefined_answer_metrics_not_a_refusal():
    q = Question("q", "Where?", ("Paris",), True)
    ctx = PackedContext(("c",), (Passage("d", 0, 5, "Paris"),), 1, 10)
    failed = Answer("", refused=True, tokens_in=12, latency_s=2.0, error="HTTP 503 after 4 attempts")
    m = answer_metrics(q, failed, ctx)
    for key in ("em", "f1", "correct", "refused", "lexical_support"):
        assert math.isnan(m[key]), key
    assert m["generation_error"] == 1.0
    assert m["tokens_in"] == 12.0 and m["latency_s"] == 2.0  # the attempt still cost
    ok = answer_metrics(q, Answer("Paris", refused=False), ctx)
    assert ok["generation_error"] == 0.0 and ok["em"] == 1.0 and ok["lexical_support"] == 1.0
    assert math.isnan(answer_metrics(q, Answer("Paris", refused=False), None)["lexical_support"])
