"""Citation metrics against gold spans (issue 29, item 5): citation/precision,
citation/recall and citation/coverage, computed from the passages an answer cites, the
context's chunks packed into them and the chunks' span labels; no model call."""

from __future__ import annotations

import math

import pytest

from ablate.components.contract.records import Answer, PackedContext, Passage, Question, Span
from ablate.components.metrics.citation import COLUMNS, citation_scores
from ablate.components.metrics.registry import QuestionView, lookup, score_question

DOC = "x" * 200
PARAMS = {"ks": [1, 5], "gain": "linear", "label_threshold": 0.5, "correct_f1": 0.5}
# Passage 1: document e (no evidence); passage 2: document d, chunks d:0-40 and d:40-80
# merged; passage 3: document d again, 120-160.
CTX = PackedContext(
    chunk_ids=("e:0-30", "d:40-80", "d:0-40", "d:120-160"),
    passages=(Passage("e", 0, 30, DOC[:30]), Passage("d", 0, 80, DOC[:80]),
              Passage("d", 120, 160, DOC[120:160])),
    n_tokens=50, budget=100)
# One group: its span lies in d:40-80 (label 1.0); d:0-40 covers a sliver (0.2).
ONE = [{"d:40-80": 1.0, "d:0-40": 0.2}]
# Two groups: the first in passage 2, the second in passage 3.
TWO = [{"d:40-80": 1.0}, {"d:120-160": 0.9}]


def _q(answerable=True, groups=1):
    evidence = tuple((Span("d", 50 + 80 * g, 60 + 80 * g),) for g in range(groups))
    return Question("q", "Where?", ("x",), answerable, evidence if answerable else ())


def _view(citations, groups=ONE, q=None, refused=False, error=None, ctx=CTX, read=True):
    q = q or _q(groups=len(groups))
    a = Answer("xx", refused=refused, error=error, citations=citations)
    return QuestionView(q, groups if q.evidence else [], {"final": list(ctx.chunk_ids)}, ctx,
                        ctx if read else None, a, PARAMS)


def _scores(view):
    return score_question(view, list(COLUMNS), ("assemble", "generate"))


def _same(got, want):
    assert set(got) == set(want)
    for k, v in want.items():
        assert (math.isnan(got[k]) and math.isnan(v)) or got[k] == pytest.approx(v), (k, got[k])


NAN = math.nan


@pytest.mark.parametrize("cited, precision, recall, coverage", [
    ((2,), 1.0, 1.0, 1.0),      # the passage holding the evidence
    ((1,), 0.0, 0.0, 1.0),      # another document
    ((3,), 0.0, 0.0, 1.0),      # the right document, not the evidence
    ((1, 2), 0.5, 1.0, 1.0),
    ((2, 9), 0.5, 1.0, 1.0),    # a number outside the context's passages is a wrong citation
    ((0,), 0.0, 0.0, 1.0),
    ((), NAN, 0.0, 0.0),        # answered without citing: no precision, nothing covered
])
def test_one_group(cited, precision, recall, coverage):
    _same(_scores(_view(cited)), {"citation/precision": precision, "citation/recall": recall,
                                  "citation/coverage": coverage})


def test_recall_counts_groups():
    _same(_scores(_view((2,), groups=TWO)),
          {"citation/precision": 1.0, "citation/recall": 0.5, "citation/coverage": 1.0})
    _same(_scores(_view((3, 2), groups=TWO)),
          {"citation/precision": 1.0, "citation/recall": 1.0, "citation/coverage": 1.0})


def test_relevance_is_the_label_threshold():
    """A passage whose chunks all fall below metrics.label_threshold holds no evidence."""
    low = [{"d:40-80": 0.4}]
    assert _scores(_view((2,), groups=low))["citation/precision"] == 0.0
    view = _view((2,), groups=low)
    view.params = {**PARAMS, "label_threshold": 0.3}
    assert _scores(view)["citation/precision"] == 1.0


@pytest.mark.parametrize("kw", [
    {"citations": None},                   # the generator does not cite
    {"citations": (2,), "refused": True},  # no answer
    {"citations": (2,), "error": "timeout"},
    {"citations": (2,), "read": False},    # closed book: nothing to cite
])
def test_undefined_not_zero(kw):
    cites = kw.pop("citations")
    scores = _scores(_view(cites, **kw))
    assert set(scores) == set(COLUMNS) and all(math.isnan(v) for v in scores.values())


def test_unanswerable_question_has_coverage_only():
    scores = _scores(_view((1,), q=_q(answerable=False)))
    assert math.isnan(scores["citation/precision"]) and math.isnan(scores["citation/recall"])
    assert scores["citation/coverage"] == 1.0


def test_truncated_chunk_belongs_to_the_passage_it_starts_in():
    """Under `truncate` a chunk's kept prefix ends its passage early: the chunk still maps
    to the passage holding its start, not to a later passage of the same document."""
    ctx = PackedContext(chunk_ids=("d:100-200", "d:0-150"),
                        passages=(Passage("d", 100, 200, DOC[100:200]), Passage("d", 0, 50, DOC[:50])),
                        n_tokens=50, budget=60)
    hit = _view((2,), groups=[{"d:0-150": 0.8}], ctx=ctx)
    assert _scores(hit)["citation/precision"] == 1.0
    miss = _view((1,), groups=[{"d:0-150": 0.8}], ctx=ctx)
    assert _scores(miss)["citation/precision"] == 0.0


def test_function_and_registry_agree():
    view = _view((1, 2))
    assert citation_scores(view) == _scores(_view((1, 2)))


def test_registered_higher_needing_context_and_answers():
    for col in COLUMNS:
        m, k = lookup(col)
        assert k is None and m.direction == "higher" and (m.low, m.high) == (0.0, 1.0)
        assert dict(m.needs)["citation"] == ("assemble", "generate")
        assert m.feedable(("assemble", "generate")) == ("citation",)
        assert m.feedable(("assemble",)) == ()  # a retrieval-only study has no such column
