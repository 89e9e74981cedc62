"""Retrieval metrics over span labels, per stage (fusion candidates, rerank, final prompt).

A chunk is relevant to an evidence group when its label reaches the experiment's fixed
threshold; a question's groups must all be matched for full support. Denominators:
precision@K divides by K even when fewer chunks came back; recall@K counts matched groups
over all groups. NDCG@K gains are the label values of relevant chunks (best over groups):
"linear" uses the value, "exponential" 2**value - 1; the ideal ranking sorts every
labelled relevant chunk by gain. Exponential gains of labels over 1000 (2.0 ** 1024
overflows a float) are all scaled by 2**-shift, shift the largest label less 1000: NDCG
is a ratio, so unchanged, and below that every figure is what the plain formula gives.
Questions without evidence groups are undefined: every metric is NaN, to be excluded and
counted by the caller, never scored 0 or 1.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from ablate.components.contract.records import Passage, Question

RETRIEVAL_METRIC_NAMES = ("hit", "recall", "precision", "mrr", "ndcg", "full_support")
GAINS = ("linear", "exponential")


def metric_keys(ks: Sequence[int]) -> list[str]:
    """All keys retrieval_metrics returns for these cut-offs, e.g. 'ndcg_at_10'."""
    return [f"{name}_at_{k}" for k in ks for name in RETRIEVAL_METRIC_NAMES]


SAFE_EXPONENT = 1000.0  # the largest exponent of a gain; 2.0 ** 1024 raises OverflowError


def _gain(value: float, gain: str, shift: float = 0.0) -> float:
    """The gain of a label, exponential ones scaled by 2**-shift ((2**v - 1) / 2**shift);
    shift 0 is exactly 2**v - 1."""
    return value if gain == "linear" else 2.0 ** (value - shift) - 2.0 ** -shift


def retrieval_metrics(ranked_ids: Sequence[str], groups: Sequence[Mapping[str, float]],
                      ks: Sequence[int], threshold: float,
                      gain: str = "linear") -> dict[str, float]:
    """Hit, recall (over groups), precision, MRR, NDCG and full support at each K."""
    if gain not in GAINS:
        raise ValueError(f"unknown gain '{gain}' (known: {', '.join(GAINS)})")
    if any(k < 1 for k in ks):
        raise ValueError("every K must be >= 1")
    if not groups:
        return {key: math.nan for key in metric_keys(ks)}
    ranked: list[str] = []
    seen: set[str] = set()
    for cid in ranked_ids:  # a repeated id counts once, at its first rank
        if cid not in seen:
            seen.add(cid)
            ranked.append(cid)
    relevant: dict[str, float] = {}  # chunk -> best label among groups it is relevant to
    for g in groups:
        for cid, v in g.items():
            if v >= threshold and v > relevant.get(cid, 0.0):
                relevant[cid] = v
    shift = (max(0.0, max(relevant.values()) - SAFE_EXPONENT)
             if gain == "exponential" and relevant else 0.0)
    ideal = sorted((_gain(v, gain, shift) for v in relevant.values()), reverse=True)
    out: dict[str, float] = {}
    for k in ks:
        top = ranked[:k]
        matched = sum(1 for g in groups if any(c in g and g[c] >= threshold for c in top))
        rel_ranks = [r for r, c in enumerate(top, start=1) if c in relevant]
        dcg = sum(_gain(relevant[c], gain, shift) / math.log2(r + 1)
                  for r, c in enumerate(top, start=1) if c in relevant)
        idcg = sum(gv / math.log2(r + 1) for r, gv in enumerate(ideal[:k], start=1))
        out[f"hit_at_{k}"] = 1.0 if rel_ranks else 0.0
        out[f"recall_at_{k}"] = matched / len(groups)
        out[f"precision_at_{k}"] = len(rel_ranks) / k
        out[f"mrr_at_{k}"] = 1.0 / rel_ranks[0] if rel_ranks else 0.0
        out[f"ndcg_at_{k}"] = dcg / idcg if idcg > 0 else 0.0
        out[f"full_support_at_{k}"] = 1.0 if matched == len(groups) else 0.0
    return {key: out[key] for key in metric_keys(ks)}


def groups_present(ids: Sequence[str], groups: Sequence[Mapping[str, float]],
                   threshold: float) -> int:
    """How many evidence groups have a relevant chunk (label >= threshold) among `ids`:
    the one group notion of the per-group recall and of the failure buckets (every group
    present: retrieved/ok; some but not all: partial_support)."""
    have = set(ids)
    return sum(1 for g in groups if any(c in have and v >= threshold for c, v in g.items()))


def group_recall(ids: Sequence[str], groups: Sequence[Mapping[str, float]],
                 threshold: float) -> float:
    """Share of a question's evidence groups with a relevant chunk among `ids` (a whole
    stage's chunks, no cut-off); NaN without groups. 1 or 0 for a single-group question."""
    if not groups:
        return math.nan
    return groups_present(ids, groups, threshold) / len(groups)


def _covered(intervals: list[tuple[int, int]], start: int, end: int) -> int:
    """Characters of [start, end) inside the union of `intervals`."""
    total, pos = 0, start
    for s, e in sorted(intervals):
        s, e = max(s, pos), min(e, end)
        if e > s:
            total += e - s
            pos = e
    return total


def span_coverage(passages: Sequence[Passage], question: Question) -> float:
    """Share of gold span characters present in the prompt: per group the best
    alternative's covered fraction, averaged over groups. NaN when there is no evidence."""
    if not question.evidence:
        return math.nan
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for p in passages:
        by_doc.setdefault(p.doc_id, []).append((p.start, p.end))
    fractions = []
    for group in question.evidence:
        fractions.append(max(_covered(by_doc.get(s.doc_id, []), s.start, s.end) / s.length
                             for s in group))
    return sum(fractions) / len(fractions)
