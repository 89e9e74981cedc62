"""Findings about the answers themselves: references much longer than answers (token F1
then rewards restating the question: the findings read the length-robust
`answer/content_f1` instead), and a variant that answers most unanswerable questions."""

from __future__ import annotations

import math
from typing import Any, Sequence

import polars as pl

from ablate.components.report.numbers import fmt

ROBUST = "answer/content_f1"
# what the robust metric stands in for when references are long
REPLACED = ("answer/f1", "answer/em", "answer/correct")
MOST = 0.5  # "answers most unanswerable questions": false acceptance above this share


def long_references(manifest: dict[str, Any] | None) -> list[str]:
    """The variants whose references are much longer than their answers (the manifest's
    `answer_lengths`, flows/outputs/manifest.answer_lengths)."""
    return list(((manifest or {}).get("answer_lengths") or {}).get("long_references") or [])


def robust_key_metrics(key_metrics: Sequence[str], manifest: dict[str, Any] | None,
                       stats: pl.DataFrame) -> list[str]:
    """The key metrics the findings read: with long references, answer/f1, answer/em and
    answer/correct give way to answer/content_f1 (when the statistics compared it)."""
    have = stats.height and ROBUST in stats["metric"].to_list()
    if not long_references(manifest) or not have:
        return list(key_metrics)
    kept = [m for m in key_metrics if m not in REPLACED]
    return kept + ([ROBUST] if ROBUST not in kept else [])


def length_warning(manifest: dict[str, Any] | None, key_metrics: Sequence[str] = ()) -> list[str]:
    """A warning naming the variants whose median reference is more than the threshold
    times their median answer, in tokens."""
    info = (manifest or {}).get("answer_lengths") or {}
    names = long_references(manifest)
    if not names:
        return []
    per = info.get("variants") or {}
    parts = [f"{n} (answers {fmt(per[n]['answer_median'], 0)}, references "
             f"{fmt(per[n]['reference_median'], 0)})" for n in names if n in per]
    instead = [m for m in key_metrics if m in REPLACED]
    read = (f"the findings read {ROBUST} instead of {', '.join(instead)}" if instead
            else f"read {ROBUST}")
    return [f"Long references: the median reference is more than "
            f"{fmt(info.get('ratio_threshold', 3.0), 0)}x the median answer, in tokens, for "
            f"{', '.join(parts)}. Token F1 and EM then reward restating the question; {read} "
            "(token F1 with the question's own words removed from answer and reference; "
            "docs/metrics.md)."]


def unanswerable_accepted(per_query: pl.DataFrame | None) -> list[str]:
    """A finding for every variant that answers more than MOST of the unanswerable
    questions (refusal/false_acceptance), with the count."""
    col = "refusal/false_acceptance"
    if per_query is None or col not in per_query.columns or "variant" not in per_query.columns:
        return []
    rates = (per_query.filter(pl.col(col).is_not_nan())
             .group_by("variant", maintain_order=True)
             .agg(pl.col(col).sum().alias("answered"), pl.len().alias("n")))
    out = []
    for r in rates.iter_rows(named=True):
        share = r["answered"] / r["n"] if r["n"] else math.nan
        if share > MOST:
            out.append(f"**{r['variant']}** answers {int(r['answered'])} of {r['n']} "
                       f"unanswerable questions ({share:.0%}), most of those it should "
                       "refuse: raise its refusal threshold (`generator.threshold`, the "
                       "extractive generator's support; the section Refusal: risk and "
                       "coverage shows what each threshold trades) or, for a model "
                       "generator, tighten the prompt's `refusal` instruction.")
    return out
