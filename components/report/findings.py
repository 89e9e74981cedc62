"""The findings section: short sentences written from the numbers, then warnings
(underpowered comparisons, settings with no effect, unequal missingness, embedder
truncation)."""

from __future__ import annotations

from typing import Any, Sequence

import polars as pl

from ablate.components.metrics.registry import direction
from ablate.components.report.judge import judge_warnings
from ablate.components.report.numbers import fmt, fmt_p

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


def significant(stats: pl.DataFrame, key_metrics: Sequence[str]) -> list[str]:
    """One sentence per significant change on a key metric, largest change first."""
    rows = stats.filter(pl.col("metric").is_in(list(key_metrics)) & pl.col("significant"))
    rows = rows.sort(pl.col("delta").abs(), "variant", "metric", descending=[True, False, False])
    out = []
    for r in rows.iter_rows(named=True):
        verb = "raises" if r["delta"] > 0 else "lowers"
        verdict = judge(r["metric"], r["delta"])
        verb += f" ({verdict})" if verdict else ""
        out.append(f"**{r['variant']}** {verb} {r['metric']} by {abs(r['delta']):.3f} "
                   f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}], adjusted p "
                   f"{fmt_p(r['p_adjusted'])} (n={r['n_used']}).")
    return out


def warnings(stats: pl.DataFrame, key_metrics: Sequence[str], no_effect: Sequence[str],
             manifest: dict[str, Any] | None = None) -> list[str]:
    out = []
    key = stats.filter(pl.col("metric").is_in(list(key_metrics)))
    under = key.filter(~pl.col("significant") & pl.col("mde").is_not_nan()
                       & (pl.col("mde") > pl.col("delta").abs()))
    if under.height:
        pairs = [f"{r['variant']} on {r['metric']} (MDE {fmt(r['mde'])} > |Δ| "
                 f"{fmt(abs(r['delta']))})" for r in under.sort("variant", "metric").iter_rows(named=True)]
        out.append("Underpowered: the minimum detectable effect (80% power) exceeds the "
                   f"observed difference for {_listed(pairs)}; a larger tier is needed to tell.")
    for name in no_effect:
        out.append(f"No effect: {name} produced final contexts and answers (retrieval only: "
                   "reranked rankings) identical to the baseline's on every question.")
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


def findings(stats: pl.DataFrame, key_metrics: Sequence[str], no_effect: Sequence[str] = (),
             manifest: dict[str, Any] | None = None) -> list[str]:
    """Significant changes on the key metrics (or a sentence saying there are none), then warnings."""
    lines = significant(stats, key_metrics)
    if not lines:
        lines.append("No variant differs significantly from the baseline on the key metrics "
                     f"({', '.join(key_metrics)}).")
    return lines + warnings(stats, key_metrics, no_effect, manifest)
