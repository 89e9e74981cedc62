"""How a variant's contexts use the context token budget, and the findings' words for it.

A `final/` metric is measured on the reranked top packed into the token budget
(`context.budget`), so its change mixes retrieval with what fits: a finding on it says
whether the budget binds for that variant (budget_use), refers to one Budget note for all
variants (budget_note) and, when it binds, gives the same metric's change before the
budget (`reranked/`). stage_text names what any metric column is measured on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.dotted import get_dotted
from ablate.components.contract.vocab import BASELINE
from ablate.components.report.numbers import fmt, fmt_p
from ablate.components.text.chunking import chunk_token_limit

STAGE_TEXT = {
    "candidates": "the fused retrieval candidates (before reranking and the budget)",
    "reranked": "the reranked top (retrieval and reranking, before the context budget)",
    "final": "the final context (the reranked top packed into the context token budget)",
    "answer": "the generated answer",
    "refusal": "the generator's refusals",
    "tokens": "the generator's tokens",
    "cost": "the cost of the pipeline's stages (and the judge's) at the experiment's prices",
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
    budget, depth = _positive(cfg, "context.budget"), _positive(cfg, "rerank.depth")
    size = chunk_token_limit(cfg)
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


def stage_clause(r: dict[str, Any], rows: dict[tuple[str, str], dict[str, Any]],
                  variants: Sequence[dict[str, Any]], per_query: pl.DataFrame | None,
                  baseline: str, noted: bool = False) -> str:
    """', measured on …' for a finding; for a final/ metric whose budget binds (for the
    variant or the baseline), the same metric's change before the budget. How the budget
    is used is said once for every finding (budget_note; `noted`: there is one to refer to)."""
    metric = r["metric"]
    where = 'the final context' if noted and metric.startswith('final/') else stage_text(metric)
    text = f", measured on {where}"
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
