"""The findings section: short sentences written from the numbers, then warnings
(underpowered comparisons, settings with no effect, unequal missingness, embedder
truncation).

Each finding names the stage its metric is measured on (the column's prefix: fused
candidates, reranked top, final context, answer, ...), so a change of `final/recall_at_5`
is not read as a retrieval finding: the final context is the reranked top packed into the
token budget (`context.budget`), and a chunk-size change there is largely what fits in
the budget (100-token chunks: about 5 in 512 tokens; 400-token chunks: about 1). For a
`final/` metric the sentence says whether the budget binds for that variant (see
budget_use, said once for every finding in one Budget note) and, when it binds, the same
metric's change before the budget (`reranked/`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.dotted import get_dotted
from ablate.components.contract.vocab import BASELINE, TIERS
from ablate.components.metrics.consistency import COLUMN as CONSISTENCY
from ablate.components.metrics.registry import compared, direction
from ablate.components.report.answer_checks import length_warning, robust_key_metrics, unanswerable_accepted
from ablate.components.report.comparability import chunk_units_finding
from ablate.components.report.intervals import ci_cell
from ablate.components.report.judge import judge_warnings
from ablate.components.report.numbers import fmt, fmt_p
from ablate.components.report.stats_caveats import cannot_reject, few_changed, off_level
from ablate.components.stats.clusters import FEW_CLUSTERS
from ablate.components.stats.consistency import consistency_rates, reference_of
from ablate.components.text.chunking import chunk_token_limit

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
STAGE_TEXT = {
    "candidates": "the fused retrieval candidates (before reranking and the budget)",
    "reranked": "the reranked top (retrieval and reranking, before the context budget)",
    "final": "the final context (the reranked top packed into the context token budget)",
    "answer": "the generated answer",
    "refusal": "the generator's refusals",
    "tokens": "the generator's tokens",
    "cost": "the generation's cost",
    "judge": "the judge's verdicts on the answer",
    "robustness": "the answers to the perturbed query against the baseline's",
}
BINDS = 0.5  # the budget "binds" for a variant when it is full on at least this share of contexts


def stage_text(metric: str) -> str:
    """What a metric column is measured on, from its prefix ('final/recall_at_5': the final
    context, after the budget)."""
    stage = metric.partition("/")[0]
    return STAGE_TEXT.get(stage, f"the {stage} stage")


@dataclass(frozen=True)
class BudgetUse:
    """How a variant's contexts use the token budget (from its config and per_query)."""

    budget: int
    size: int  # tokens per chunk at most (text.chunking.chunk_token_limit)
    depth: int  # rerank.depth: the reranked chunks the context may take
    full: float  # share of contexts with no room for another chunk (0 when the top always fits)
    tokens: float  # mean context tokens
    cut_evidence: float  # share of answerable questions whose evidence the budget cut
    # mean chunks per final context, counted in the contexts (`final/context_chunks`);
    # NaN for a sweep folder scored before that column existed
    held: float = math.nan

    @property
    def can_bind(self) -> bool:
        return self.depth * self.size > self.budget

    @property
    def binds(self) -> bool:
        return self.can_bind and self.full >= BINDS


def budget_use(name: str, variants: Sequence[dict[str, Any]],
               per_query: pl.DataFrame | None) -> BudgetUse | None:
    """A variant's use of the budget, None when unknown (no config, no `final/context_tokens`).
    A context is *full* when it has no room for another chunk of the variant's size
    (more than budget − chunking.size tokens) while its reranked top held more than the
    budget (rerank.depth × chunking.size > budget; else every reranked chunk fits and the
    budget cannot bind). `cut_evidence`: the failure bucket budget_cut (gold evidence in
    the reranked top, dropped by the budget) over the answerable questions."""
    cfg = next((v.get("config") for v in variants if v.get("name") == name), None)
    col = "final/context_tokens"
    if not cfg or per_query is None or col not in per_query.columns:
        return None
    budget, depth, size = _positive(cfg, "context.budget"), _positive(cfg, "rerank.depth"), chunk_token_limit(cfg)
    if budget is None or size is None or depth is None:
        return None
    rows = per_query.filter(pl.col("variant") == name)
    tokens = rows[col].cast(pl.Float64).fill_nan(None).drop_nulls().to_numpy()
    if not tokens.size:
        return None
    can_bind = depth * size > budget
    full = float((tokens > budget - size).mean()) if can_bind else 0.0
    cut = math.nan
    if "bucket" in rows.columns and "answerable" in rows.columns:
        buckets = rows.filter(pl.col("answerable"))["bucket"].to_list()
        if buckets:
            cut = sum(b == "budget_cut" for b in buckets) / len(buckets)
    return BudgetUse(budget, size, depth, full, float(tokens.mean()), cut, _mean(rows, CHUNKS))


CHUNKS = "final/context_chunks"


def _mean(rows: pl.DataFrame, col: str) -> float:
    """The mean of a column over its defined values (NaN when absent or none defined)."""
    if col not in rows.columns:
        return math.nan
    values = rows[col].cast(pl.Float64).fill_nan(None).drop_nulls()
    return float(values.mean()) if values.len() else math.nan  # type: ignore[arg-type]


def _positive(cfg: dict[str, Any], dotted: str) -> int | None:
    value = get_dotted(cfg, dotted)
    return value if isinstance(value, int) and value > 0 else None


def _stage_clause(r: dict[str, Any], rows: dict[tuple[str, str], dict[str, Any]],
                  variants: Sequence[dict[str, Any]], per_query: pl.DataFrame | None,
                  baseline: str, noted: bool = False) -> str:
    """', measured on …' for a finding; for a final/ metric whose budget binds (for the
    variant or the baseline), the same metric's change before the budget. How the budget
    is used is said once for every finding (budget_note; `noted`: there is one to refer to)."""
    metric = r["metric"]
    text = f", measured on {'the final context' if noted and metric.startswith('final/') else stage_text(metric)}"
    if not metric.startswith("final/"):
        return text + "."
    use = budget_use(r["variant"], variants, per_query)
    if use is None:
        return text + "; whether the budget binds is not known here."
    base = budget_use(baseline, variants, per_query)
    ref = f" ({BUDGET_REF})" if noted else ""
    if use.binds or (base is not None and base.binds):
        before = rows.get((r["variant"], "reranked/" + metric.partition("/")[2]))
        if before is not None:
            return text + (f"; before the budget, {before['metric']} changes by "
                           f"{before['delta']:+.3f} [{fmt(before['ci_low'])}, "
                           f"{fmt(before['ci_high'])}], adjusted p {fmt_p(before['p_adjusted'])}, "
                           f"the rest being what the budget lets in{ref}.")
        return text + f"; part of this change may be what fits in the budget{ref}."
    return text + f"{ref}."


BUDGET_REF = "see Budget below"


def budget_note(names: Sequence[str], variants: Sequence[dict[str, Any]],
                per_query: pl.DataFrame | None, baseline: str = BASELINE) -> list[str]:
    """The one sentence on the context token budget that the final/ findings refer to:
    per variant named (and the baseline, once), whether the budget binds and what it cut."""
    uses = [(n, u) for n in [baseline, *names]
            if (u := budget_use(n, variants, per_query)) is not None]
    if len(uses) < 2 or uses[0][0] != baseline:
        return []
    budget = uses[0][1].budget
    parts = [f"{n} {_budget_state(u, budget)}" for n, u in uses]
    return [f"Budget: final/* metrics measure the final context, the reranked top packed into "
            f"the {budget}-token context budget, so a final/ change mixes retrieval with what "
            "fits. Per variant: " + "; ".join(parts) + "."]


def _budget_state(use: BudgetUse, budget: int) -> str:
    """'binds (100% of contexts full), ≈2.0 chunks of 200 in 403 tokens, gold evidence
    cut for 15% of answerable questions' (the budget named when it is not `budget`)."""
    own = f" its {use.budget}-token budget" if use.budget != budget else ""
    if not use.can_bind:
        state = (f"cannot bind{own} (the reranked top {use.depth} chunks of ≤ {use.size} "
                 "tokens all fit)")
    elif use.binds:
        state = f"binds{own} ({use.full:.0%} of contexts have no room for another chunk)"
    elif use.full > 0:
        state = f"binds{own} on {use.full:.0%} of contexts"
    else:
        state = f"does not bind{own} (every context has room for another chunk)"
    # what the contexts hold, counted (never the budget over chunking.size: chunks may be
    # shorter than the size, e.g. paragraphs)
    held = "" if math.isnan(use.held) else f"{use.held:.1f} chunks (≤ {use.size} tokens each) in "
    state += f", {held}{use.tokens:.0f} tokens on average"
    if not math.isnan(use.cut_evidence):
        state += f", gold evidence cut for {use.cut_evidence:.0%} of answerable questions"
    return state


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
                   + _stage_clause(r, every, variants, per_query, baseline, bool(note)))
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
    return [f"Few clusters: the key comparisons rest on {int(g.max())} clusters of questions "  # type: ignore[arg-type]
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
    if not lines:
        lines.append("No variant differs significantly from the baseline on the key metrics "
                     f"({', '.join(read)}).")
    compared_metrics = stats["metric"].unique().to_list() if stats.height else []
    return (lines + unanswerable_accepted(per_query) + consistency(per_query, variants)
            + chunk_units_finding(compared_metrics, variants)
            + length_warning(manifest, key_metrics) + warnings(stats, read, no_effect, manifest))
