"""trec_eval's measures over a ranking: average precision (`map`), precision at 30 and
recall at 1000, as trec_eval and pytrec_eval compute them on a run file that lists the
ranking in order (ablate's run files do: export_trec / `ablate reproduce --run`).

Conventions (trec_eval's): a document is relevant when its judged relevance is at least
1 (graded qrels count as binary here); AP divides by every relevant document of the
topic, retrieved or not, and ranks only as deep as the run (1000 for TREC runs);
P@k divides by k however many came back; a topic without judgments is not scored
(NaN, left out of every mean), a judged topic without relevant documents scores 0.
"""

from __future__ import annotations

import math
from typing import Callable, Collection, Mapping, Sequence

from ablate.components.metrics.registry import QuestionView, metric


def relevant_of(judged: Mapping[str, float], level: float = 1) -> set[str]:
    """The documents judged at least `level`."""
    return {d for d, r in judged.items() if r >= level}


def _first_seen(ranked: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    return [d for d in ranked if not (d in seen or seen.add(d))]  # type: ignore[func-returns-value]


def average_precision(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """Sum of the precision at each relevant document's rank / all relevant documents."""
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    for rank, d in enumerate(_first_seen(ranked), start=1):
        if d in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant)


def precision_at(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    return sum(1 for d in _first_seen(ranked)[:k] if d in relevant) / k


def recall_at(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    if not relevant:
        return 0.0
    return sum(1 for d in _first_seen(ranked)[:k] if d in relevant) / len(relevant)


MEASURES = {
    "map": lambda r, rel: average_precision(r, rel),
    "P_30": lambda r, rel: precision_at(r, rel, 30),
    "recall_1000": lambda r, rel: recall_at(r, rel, 1000),
}


def evaluate(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
             measures: Sequence[str] = ("map", "P_30")) -> dict[str, dict[str, float]]:
    """{qid: {measure: value}} of every judged topic the run answers (trec_eval's set of
    topics), rankings in run order."""
    return {q: {m: MEASURES[m](run[q], relevant_of(qrels[q])) for m in measures}
            for q in sorted(run) if q in qrels}


def mean(per_topic: Mapping[str, Mapping[str, float]], measure: str) -> float:
    vals = [v[measure] for v in per_topic.values()]
    return math.fsum(vals) / len(vals) if vals else math.nan


# ---- in the metric registry: over the candidates, relevance from the labels ------------------
# Only a sweep over a TREC data set (format trec) has these columns (its metrics params
# say `trec`), so no other sweep gets three more compared metrics. Relevance there comes
# from the labels (document mode: every chunk of a judged-relevant document, graded), so
# qrels of documents the collection lacks do not count, unlike in trec_eval.

def _relevant(view: QuestionView) -> set[str] | None:
    """Chunks labelled at least the label threshold in any evidence group (a TREC
    collection's qrels, with chunking.method document); None for an unjudged question."""
    if not view.groups:
        return None
    t = view.params["label_threshold"]
    return {c for g in view.groups for c, v in g.items() if v >= t}


def _trec_metric(name: str, fn: Callable[[Sequence[str], set[str]], float],
                 description: str) -> None:
    def compute(view: QuestionView) -> dict[str, float]:
        if not view.params.get("trec"):  # columns of TREC collections only
            return {}
        rel = _relevant(view)
        ranked = view.rankings.get("candidates", [])
        return {f"candidates/{name}": math.nan if rel is None else fn(ranked, rel)}
    compute.__module__ = __name__
    metric(name, stages=("candidates",), direction="higher", description=description)(compute)


_trec_metric("map", average_precision,
             "average precision over the candidates (trec_eval's map at retrieval.depth)")
_trec_metric("precision_at_30", lambda r, rel: precision_at(r, rel, 30),
             "relevant candidates in the top 30 / 30 (trec_eval's P_30)")
_trec_metric("recall_at_1000", lambda r, rel: recall_at(r, rel, 1000),
             "relevant candidates in the top 1000 / all relevant (trec_eval's recall_1000)")
