"""Gold verdicts from the data's character spans, for judge-corrected estimates (`judge.labels`,
ablate.components.stats.ppi): where a judged metric's truth follows from the gold evidence,
ablate can label answers without a person.

`judge/context_recall` on short-answer data (SQuAD-style references: the judge is asked
whether the reference is supported by the context, which for a short span is whether the
context holds it): the gold verdict is the share of the question's evidence groups of
which some span lies wholly inside one context passage (character offsets, the same
document). A question without evidence (unanswerable) has no gold verdict.
"""

from __future__ import annotations

from typing import Sequence

from ablate.components.contract.records import Question

GOLD_METRIC = "judge/context_recall"
ANNOTATOR = "gold-spans"


def span_inside(span_doc: str, start: int, end: int,
                passages: Sequence[tuple[str, int, int]]) -> bool:
    """Whether [start, end) of `span_doc` lies wholly inside one passage (doc, start, end)."""
    return any(d == span_doc and s <= start and end <= e for d, s, e in passages)


def gold_context_recall(question: Question, passages: Sequence[tuple[str, int, int]]
                        ) -> float | None:
    """The share of `question`'s evidence groups with a span inside the context's passages;
    None without evidence."""
    if not question.evidence:
        return None
    covered = sum(any(span_inside(s.doc_id, s.start, s.end, passages) for s in group)
                  for group in question.evidence)
    return covered / len(question.evidence)
