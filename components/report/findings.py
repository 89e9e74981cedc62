"""The findings section: short sentences written from the numbers, then warnings
(underpowered comparisons, settings with no effect, unequal missingness, embedder
truncation).

Each finding names the stage its metric is measured on (the column's prefix: fused
candidates, reranked top, final context, answer, ...), so a change of `final/recall_at_5`
is not read as a retrieval finding: the final context is the reranked top packed into the
token budget (`context.budget`), and a chunk-size change there is largely what fits in
the budget (100-token chunks: about 5 in 512 tokens; 400-token chunks: about 1). For a
`final/` metric the sentence says whether the budget binds for that variant (see
report.budget_use, said once for every finding in one Budget note) and, when it binds, the same
metric's change before the budget (`reranked/`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.vocab import BASELINE, TIERS
from ablate.components.metrics.consistency import COLUMN as CONSISTENCY
from ablate.components.metrics.registry import compared, direction
from ablate.components.report.answer_checks import length_warning, robust_key_metrics, unanswerable_accepted
from ablate.components.report.budget_use import budget_note, stage_clause
from ablate.components.report.comparability import chunk_units_finding
from ablate.components.report.intervals import ci_cell
from ablate.components.report.judge import judge_warnings
from ablate.components.report.numbers import fmt, fmt_p
from ablate.components.report.stats_caveats import cannot_reject, few_changed, off_level
from ablate.components.stats.clusters import FEW_CLUSTERS
from ablate.components.stats.consistency import consistency_rates, reference_of

MAX_LISTED = 6


def judge(metric: str, delta: float) -> str:
    """'better' or 'worse' for a change of `delta` in `metric` ('' when it has no direction)."""
    better = direction(metric)
    if better == "none" or delta == 0:
        return ""
    return "better" if (delta > 0) == (better == "higher") else "worse"


def _listed(items: Sequence[str]) -> str:
    head = ", ".join(items[:MAX_LISTED])
    return head + (f", … ({len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else "")


# What each column stage (a metric's prefix) is measured on, for the findings' sentences.
def significant(stats: pl.DataFrame, key_metrics: Sequence[str],
                variants: Sequence[dict[str, Any]] = (), per_query: pl.DataFrame | None = None,
                baseline: str = BASELINE) -> list[str]:
    """One sentence per significant change on a key metric, largest change first, each
    naming the stage its metric measures; for final/ metrics, when `variants` (their
    configs) and `per_query` are given, the change before the budget, and after the
    sentences one note on the budget's use (budget_note) that they refer to."""
    every = {(r["variant"], r["metric"]): r for r in stats.iter_rows(named=True)}
    rows = stats.filter(pl.col("metric").is_in(list(key_metrics)) & pl.col("significant"))
    rows = rows.sort(pl.col("delta").abs(), "variant", "metric", descending=[True, False, False])
    final = list(dict.fromkeys(r["variant"] for r in rows.iter_rows(named=True)
                               if r["metric"].startswith("final/")))
    note = budget_note(final, variants, per_query, baseline) if final else []
    out = []
    for r in rows.iter_rows(named=True):
        verb = "raises" if r["delta"] > 0 else "lowers"
        verdict = judge(r["metric"], r["delta"])
        verb += f" ({verdict})" if verdict else ""
        out.append(f"**{r['variant']}** {verb} {r['metric']} by {abs(r['delta']):.3f} "
                   f"{ci_cell(r)}, adjusted p "
                   f"{fmt_p(r['p_adjusted'])} (n={n_in_clusters(r)})"
                   + stage_clause(r, every, variants, per_query, baseline, bool(note)))
    return out + note


def n_in_clusters(r: dict[str, Any]) -> str:
    """'239 in 16 clusters', or '239' when every question is its own unit."""
    g = r.get("n_clusters")
    if r.get("clustered_by") in (None, "none") or g is None:
        return f"{r.get('n_used')}"
    return f"{r.get('n_used')} in {g} clusters"


def few_clusters(key: pl.DataFrame) -> list[str]:
    """A finding when the key comparisons rest on fewer than FEW_CLUSTERS clusters."""
    if "n_clusters" not in key.columns or "clustered_by" not in key.columns or not key.height:
        return []
    clustered = key.filter(pl.col("clustered_by") != "none")
    g = clustered["n_clusters"].drop_nulls()
    if not g.len() or int(g.max()) >= FEW_CLUSTERS:  # type: ignore[arg-type]
        return []
    most = int(g.max())  # type: ignore[arg-type]
    return [f"Few clusters: the key comparisons rest on {most} clusters of questions "
            f"(questions sharing a document count as one unit), fewer than {FEW_CLUSTERS}: "
            "the tests can decide only large effects, and intervals are wide or unbounded; "
            "more documents, not more questions per document, would tell more."]


def warnings(stats: pl.DataFrame, key_metrics: Sequence[str], no_effect: Sequence[str],
             manifest: dict[str, Any] | None = None) -> list[str]:
    out = []
    key = stats.filter(pl.col("metric").is_in(list(key_metrics)))
    out += few_clusters(key)
    st = (manifest or {}).get("statistics") or {}
    out += few_changed(key) + cannot_reject(key, st)
    out += off_level((manifest or {}).get("self_test"), st)
    under = key.filter(~pl.col("significant") & pl.col("mde").is_not_nan()
                       & (pl.col("mde") > pl.col("delta").abs()))
    if under.height:
        pairs = [f"{r['variant']} on {r['metric']} (MDE {fmt(r['mde'])} > |Δ| "
                 f"{fmt(abs(r['delta']))})" for r in under.sort("variant", "metric").iter_rows(named=True)]
        out.append("Underpowered: the minimum detectable effect (80% power) exceeds the "
                   f"observed difference for {_listed(pairs)}; {_more_questions(manifest)}.")
    for name in no_effect:
        out.append(f"No effect: {name} produced final contexts (and answers, where there is "
                   "a generator) identical to the baseline's on every question.")
    ties = key.group_by("variant", maintain_order=True).agg(
        (pl.col("wins") + pl.col("losses")).sum().alias("changed"))
    for name in ties.filter(pl.col("changed") == 0)["variant"].to_list():
        if name not in no_effect:
            out.append(f"No effect: {name} ties the baseline on every question for every key "
                       "metric.")
    if "missingness_flag" in stats.columns:
        flagged = stats.filter(pl.col("missingness_flag") & pl.col("metric").is_in(list(key_metrics)))
        q = (manifest or {}).get("questions") or {}
        by_design = q.get("per_variant") or {}
        rows = [r for r in flagged.iter_rows(named=True)
                if not _sampled_by_design(r, by_design, q.get("total"))]
        if rows:
            pairs = [f"{r['variant']} on {r['metric']}" for r in rows]
            out.append(f"Unequal missingness versus the baseline: {_listed(pairs)}; "
                       "compare those means with care.")
    batch = (manifest or {}).get("latency_batch_means") or []
    if batch:
        if len(batch) == 1:
            out.append(f"Latency of {batch[0]} is the batch time split evenly over the "
                       "questions (they are processed together), so its p50 equals its p95: "
                       "read it as a mean per question, not as a distribution.")
        else:
            out.append(f"Latencies of {', '.join(batch[:-1])} and {batch[-1]} are batch times "
                       "split evenly over the questions (they are processed together), so "
                       "their p50 equals their p95: read them as means per question, not as "
                       "distributions.")
    for name, rep in ((manifest or {}).get("repeats") or {}).items():
        spread = [f"{m} {rep['mean_sd'][m]:.3f}" for m in key_metrics if m in rep["mean_sd"]]
        out.append(f"Repeats: {name} generated {rep['repeats']} answers per question (seeds "
                   f"{rep['seeds'][0]}–{rep['seeds'][-1]}); its scores are per-question means, "
                   f"and the tests use those means. Between-repeat SD per question, on average: "
                   f"{', '.join(spread) or 'none on the key metrics'}.")
    lang = (manifest or {}).get("language") or {}
    if lang.get("cjk_share", 0.0) > 0.5 and lang.get("english_only_dense_models"):
        models = ", ".join(lang["english_only_dense_models"])
        out.append(f"English dense model on a Chinese corpus: {lang['cjk_share']:.0%} of the "
                   f"corpus's letters are CJK, but {models} was trained on English and reads "
                   "Chinese poorly; dense and semantic-rerank results measure that mismatch. "
                   "Set retrieval.dense_model to a Chinese or multilingual model on disk.")
    for ch in (manifest or {}).get("chunkings", {}).values():
        share = ch.get("share_over_embedder_window", 0.0)
        if share > 0.05:
            out.append(_truncation(ch, share))
    return out + judge_warnings(manifest)


def _more_questions(manifest: dict[str, Any] | None) -> str:
    """What would tell: a larger tier, or more questions when the run's tier is already
    the largest (TIERS[-1], every question of the split)."""
    tier = (manifest or {}).get("tier")
    if tier in TIERS[:-1]:
        return "a larger tier (more questions) is needed to tell"
    if tier == TIERS[-1]:
        return (f"more questions are needed to tell (the tier is already {TIERS[-1]}: every "
                "question of the split)")
    return "more questions are needed to tell"


def _truncation(ch: dict[str, Any], share: float) -> str:
    """How much of a chunking's text the dense embedder's window cuts: the share of chunks
    over it, the word pieces beyond it and the share of characters it never reads."""
    c = ch.get("chunking", {})
    head = f"Embedder truncation: {share:.0%} of chunks with chunking size {c.get('size')} exceed"
    if "pieces_cut_max" not in ch:  # a manifest written before these were recorded
        return f"{head} the dense embedder's window; dense retrieval does not read their ends."
    unseen = ch.get("share_of_pieces_unseen", 0.0)
    return (f"{head} the {ch.get('embedder_window')} word pieces the dense embedder reads, by "
            f"{fmt(ch.get('pieces_cut_mean'), 1)} on average (at most "
            f"{ch['pieces_cut_max']}); dense retrieval never reads {unseen:.1%} of "
            "this chunking's text.")


def _sampled_by_design(row: dict[str, Any], per_variant: dict[str, int], total: int | None) -> bool:
    """A variant run on its own smaller sample (a sweep's `tier`/`n`) lacks the baseline's
    other questions by design: that alone is not unequal missingness."""
    n = per_variant.get(row["variant"])
    return (n is not None and total is not None and row.get("n_missing") == total - n
            and row.get("n_undefined_variant") == row.get("n_undefined_baseline"))


def consistency(per_query: pl.DataFrame | None, variants: Sequence[dict[str, Any]] = (),
                baseline: str = BASELINE) -> list[str]:
    """The answer-consistency finding of robustness pairs (ablate.components.stats.consistency):
    each perturbed variant's rate with its clustered 95% interval, read against the
    baseline's run-to-run agreement; no p-value (the baseline's 1 is fixed by definition)."""
    if per_query is None or CONSISTENCY not in per_query.columns:
        return []
    rates = consistency_rates(per_query, baseline)
    if not rates.height:
        return []
    parts = [f"{r['variant']} {fmt(r['rate'])} [{fmt(r['ci_low'])}, {fmt(r['ci_high'])}] "
             f"({r['changed']} of {r['n']} answers changed, {r['clusters']} clusters)"
             for r in rates.iter_rows(named=True)]
    base = next((v.get("config") for v in variants if v.get("name") == baseline), None)
    ref, why = reference_of(base) if base is not None else (math.nan, "the baseline's "
                                                               "generator is not known here")
    if math.isnan(ref):
        against = (f"The reference, the baseline's run-to-run agreement, is not known: {why}; "
                   "a rate below 1 mixes the perturbation with sampling noise.")
    else:
        against = (f"Reference {ref:g}, the baseline's run-to-run agreement ({why}): every "
                   "changed answer is the perturbation's.")
    return [f"Answer consistency (same answer as the baseline, which reads the question as "
            f"written; 95% CI with questions clustered): {'; '.join(parts)}. {against} No "
            "p-value: the baseline's consistency is 1 by definition, so a paired test against "
            "it would only count the changed answers."]


def findings(stats: pl.DataFrame, key_metrics: Sequence[str], no_effect: Sequence[str] = (),
             manifest: dict[str, Any] | None = None, variants: Sequence[dict[str, Any]] = (),
             per_query: pl.DataFrame | None = None) -> list[str]:
    """Significant changes on the key metrics (or a sentence saying there are none), then
    warnings. `variants` (variants.json) and `per_query` let a final/ finding say whether
    the token budget binds. A `relative` metric's rows (answer consistency, 1 for the
    baseline by definition) have no valid paired test: they are read by consistency()."""
    key_metrics = [m for m in key_metrics if compared(m)]
    if stats.height:
        stats = stats.filter(pl.col("metric").is_in([m for m in stats["metric"].unique().to_list()
                                                     if compared(m)]))
    read = robust_key_metrics(key_metrics, manifest, stats)  # long references: content F1
    lines = significant(stats, read, variants, per_query)
    alone = bool(variants) and all(v.get("name") == BASELINE for v in variants)
    if not lines and not alone:  # a baseline-only run (a gate reference) compares nothing
        lines.append("No variant differs significantly from the baseline on the key metrics "
                     f"({', '.join(read)}).")
    compared_metrics = stats["metric"].unique().to_list() if stats.height else []
    return (lines + unanswerable_accepted(per_query) + consistency(per_query, variants)
            + chunk_units_finding(compared_metrics, variants)
            + length_warning(manifest, key_metrics) + warnings(stats, read, no_effect, manifest))
