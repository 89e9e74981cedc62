import math

import pytest

from ablate.components.contract.records import Passage, Question, Span
from ablate.components.metrics.retrieval import (
    RETRIEVAL_METRIC_NAMES,
    metric_keys,
    retrieval_metrics,
    span_coverage,
)


def test_single_group_basic_values():
    m = retrieval_metrics(["x", "a", "y"], [{"a": 1.0}], ks=[1, 3, 5], threshold=0.5)
    assert m["hit_at_1"] == 0 and m["hit_at_3"] == 1
    assert m["mrr_at_3"] == 0.5 and m["mrr_at_1"] == 0
    assert m["precision_at_3"] == pytest.approx(1 / 3)
    assert m["precision_at_5"] == pytest.approx(1 / 5)  # divided by K though only 3 came back
    assert m["ndcg_at_3"] == pytest.approx(1 / math.log2(3))
    assert m["recall_at_3"] == 1 and m["full_support_at_3"] == 1
    assert list(m) == metric_keys([1, 3, 5])
    assert {k.rsplit("_at_", 1)[0] for k in m} == set(RETRIEVAL_METRIC_NAMES)


def test_multi_group_recall_and_full_support():
    groups = [{"a": 1.0, "b": 1.0}, {"c": 1.0}]  # fact 1 has alternatives a/b; fact 2 needs c
    m = retrieval_metrics(["b", "x", "c"], groups, ks=[1, 2, 3], threshold=0.5)
    assert m["recall_at_1"] == 0.5 and m["full_support_at_1"] == 0
    assert m["recall_at_3"] == 1 and m["full_support_at_3"] == 1
    assert m["precision_at_3"] == pytest.approx(2 / 3) and m["hit_at_1"] == 1
    # both alternatives of one group retrieved: recall counts the group once
    m2 = retrieval_metrics(["a", "b"], groups, ks=[2], threshold=0.5)
    assert m2["recall_at_2"] == 0.5 and m2["full_support_at_2"] == 0 and m2["precision_at_2"] == 1


def test_threshold_decides_relevance_and_gain_is_the_fraction():
    groups = [{"a": 0.4, "b": 0.8}]
    m = retrieval_metrics(["a", "b"], groups, ks=[1, 2], threshold=0.5)
    assert m["hit_at_1"] == 0 and m["mrr_at_2"] == 0.5 and m["precision_at_2"] == 0.5
    assert m["ndcg_at_2"] == pytest.approx(1 / math.log2(3))
    low = retrieval_metrics(["a", "b"], groups, ks=[2], threshold=0.3)
    ideal = 0.8 + 0.4 / math.log2(3)
    assert low["ndcg_at_2"] == pytest.approx((0.4 + 0.8 / math.log2(3)) / ideal)
    exp = retrieval_metrics(["a", "b"], groups, ks=[2], threshold=0.3, gain="exponential")
    g = lambda v: 2 ** v - 1  # noqa: E731
    assert exp["ndcg_at_2"] == pytest.approx((g(0.4) + g(0.8) / math.log2(3)) /
                                             (g(0.8) + g(0.4) / math.log2(3)))
    with pytest.raises(ValueError):
        retrieval_metrics(["a"], groups, ks=[1], threshold=0.5, gain="cubic")


def test_zero_threshold_does_not_make_unlabelled_chunks_relevant():
    m = retrieval_metrics(["x"], [{"a": 1.0}], ks=[1], threshold=0.0)
    assert m["recall_at_1"] == 0 and m["hit_at_1"] == 0


def test_no_evidence_is_undefined_not_zero():
    m = retrieval_metrics(["a", "b"], [], ks=[1, 5], threshold=0.5)
    assert len(m) == 12 and all(math.isnan(v) for v in m.values())


def test_evidence_not_reachable_scores_zero_not_nan():
    m = retrieval_metrics(["a"], [{}], ks=[1], threshold=0.5)
    assert m["recall_at_1"] == 0 and m["ndcg_at_1"] == 0 and m["full_support_at_1"] == 0


def test_repeated_ids_count_once():
    m = retrieval_metrics(["a", "a", "b"], [{"a": 1.0}, {"b": 1.0}], ks=[2], threshold=0.5)
    assert m["precision_at_2"] == 1 and m["full_support_at_2"] == 1


Q = Question("q", "?", ("x",), True, ((Span("d", 10, 20), Span("e", 0, 4)), (Span("d", 30, 40),)))


def test_span_coverage_best_alternative_mean_over_groups():
    assert span_coverage([], Q) == 0
    ps = [Passage("d", 0, 15, "."), Passage("d", 14, 18, "."), Passage("d", 35, 60, ".")]
    assert span_coverage(ps, Q) == pytest.approx((0.8 + 0.5) / 2)
    ps.append(Passage("e", 0, 100, "."))
    assert span_coverage(ps, Q) == pytest.approx((1.0 + 0.5) / 2)
    assert math.isnan(span_coverage(ps, Question("u", "?", (), False)))
