"""Citations checked against gold spans (docs/metrics.md, "Citations"): no model call.

An answer's citations are the numbers of the context passages it cites
(`Answer.citations`, 1-based in prompt order: the extractive generator's copied-from
passage, or the markers a model wrote under `prompt.cite`). A cited passage **holds
evidence** for a group when a chunk of the context packed into that passage is relevant to
the group: its label reaches `metrics.label_threshold`, the relevance every `final/*`
metric uses (labels from components/text/labels.py, span or document mode alike). A chunk
belongs to the passage of its document that contains its first character (a chunk cut by
`context.policy: truncate` keeps its start; chunk ids are "{doc_id}:{start}-{end}",
ablate.components.text.chunking.chunk_documents). A number outside the context's passages (0,
or past the last one) is a wrong citation: it holds no evidence.

Per question, for a generator that cites:

| column | defined on | value |
|---|---|---|
| citation/precision | answered questions with evidence whose answer cites something | cited passages holding evidence (for any group) / passages cited |
| citation/recall | answered questions with evidence | evidence groups with a cited passage holding evidence / groups |
| citation/coverage | answered questions | 1 when the answer cites a passage, else 0 |

Undefined (NaN, excluded and counted; never 0 or 1): a generator that does not cite
(`Answer.citations` None: a model without `prompt.cite`, closed book), a refusal, a failed
generation, precision and recall of a question without evidence groups (unanswerable), and
precision of an answer that cites nothing (its recall is 0, its coverage 0).
"""

from __future__ import annotations

import math
from typing import Sequence

from ablate.components.contract.records import PackedContext
from ablate.components.metrics.registry import QuestionView, metric

COLUMNS = ("citation/precision", "citation/recall", "citation/coverage")
NEEDS = {"citation": ("assemble", "generate")}


def chunk_range(chunk_id: str) -> tuple[str, int, int] | None:
    """(doc_id, start, end) of a chunk id "{doc_id}:{start}-{end}", or None when the id is
    not of that form."""
    doc, sep, rng = chunk_id.rpartition(":")
    start, dash, end = rng.partition("-")
    if not sep or not dash or not start.isdigit() or not end.isdigit():
        return None
    return doc, int(start), int(end)


def passage_groups(context: PackedContext, groups: Sequence[dict[str, float]],
                   threshold: float) -> list[set[int]]:
    """Per passage (prompt order), the indexes of the evidence groups it holds evidence
    for: a chunk of the context that starts inside it is relevant to the group."""
    out: list[set[int]] = [set() for _ in context.passages]
    for cid in context.chunk_ids:
        rng = chunk_range(cid)
        if rng is None:
            continue
        doc, start, _ = rng
        hit = {g for g, labels in enumerate(groups) if labels.get(cid, 0.0) >= threshold}
        if not hit:
            continue
        for i, p in enumerate(context.passages):
            if p.doc_id == doc and p.start <= start < p.end:
                out[i] |= hit
                break
    return out


def citation_scores(view: QuestionView) -> dict[str, float]:
    """The three citation columns of one question (module doc)."""
    nan = dict.fromkeys(COLUMNS, math.nan)
    answer, context = view.answer, view.generator_context
    if (answer is None or answer.citations is None or context is None
            or answer.error is not None or answer.refused):
        return nan
    cited = list(dict.fromkeys(answer.citations))
    out = {**nan, "citation/coverage": float(bool(cited))}
    if not view.question.evidence or not view.groups:
        return out
    holds = passage_groups(context, view.groups, view.params["label_threshold"])
    found = [holds[n - 1] if 1 <= n <= len(holds) else set() for n in cited]
    if cited:
        out["citation/precision"] = sum(1 for f in found if f) / len(cited)
    covered = set().union(*found) if found else set()
    out["citation/recall"] = len(covered) / len(view.groups)
    return out


def _citation_metric(name: str, description: str) -> None:
    def compute(view: QuestionView) -> dict[str, float]:
        return {f"citation/{name}": view.once("citation", lambda: citation_scores(view))[
            f"citation/{name}"]}
    compute.__module__ = __name__
    metric(name, stages=("citation",), direction="higher", needs=NEEDS,
           description=description)(compute)


_citation_metric("precision", "cited context passages that hold gold evidence / passages cited")
_citation_metric("recall", "evidence groups with a cited passage holding their evidence / groups")
_citation_metric("coverage", "the answer cites a context passage (answered questions of a "
                             "generator that cites)")
