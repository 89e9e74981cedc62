"""Which cluster a question belongs to: the unit of analysis of every test and interval
(docs/statistics.md). Questions about one document are not independent, so a question's
cluster is its native `cluster` field (SQuAD: the article), else the gold document its
evidence lies in (the first in document-id order when several are gold), else the
question itself."""

from __future__ import annotations

from typing import Sequence

from ablate.components.contract.records import Question


def question_cluster(q: Question) -> str:
    """The cluster label of q (module docstring); a question alone is 'q:<qid>'."""
    if q.cluster:
        return q.cluster
    docs = sorted({span.doc_id for group in q.evidence for span in group})
    return f"doc:{docs[0]}" if docs else f"q:{q.qid}"


def cluster_labels(questions: Sequence[Question], choice: str) -> list[str | None]:
    """Each question's cluster under `stats.cluster` `choice`: `auto` (question_cluster)
    or a question field (None where a question lacks it)."""
    if choice == "auto":
        return [question_cluster(q) for q in questions]
    return [getattr(q, choice) or None for q in questions]
