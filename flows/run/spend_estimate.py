"""The spend `ablate check` estimates before any call (issue 53.5), at the experiment's
prices (`costs:`; a generator's own `cost_per_1k_*` wins, as in the run):

- per variant, its generator's: for each of its questions and repeats, a prompt of the
  context budget (`context.budget`; none for a generator that reads no context) plus the
  question's tokens (experiment tokenizer; the prompt's fixed wording is not counted), and
  at most `generator.max_new_tokens` out (an upper bound); a generate stage the store
  already holds asks nothing;
- the judge's, for the run: the prompt tokens the judge line counts (prompts shared by
  variants counted once, ablate.flows.run.judge_cost) and at most `judge.max_new_tokens`
  out per call.

Nothing is printed when no price is set.
"""

from __future__ import annotations

from typing import Any

from ablate.flows.run.context import RunContext
from ablate.flows.run.cost_usage import pricing
from ablate.flows.run.stages import questions_of

TALLY = "judge_tally"  # ctx.memo: the judge's tally, left there by judge_cost_lines


def _money(x: float) -> str:
    return f"{x:.4g}"


def _priced(ctx: RunContext) -> bool:
    g = [v.config.generator for v in ctx.variants]
    return ctx.spec.costs.any() or any(x.cost_per_1k_in or x.cost_per_1k_out for x in g)


def generator_spend(ctx: RunContext, variant: Any) -> tuple[float, int, int, int] | None:
    """(US dollars, answers, prompt tokens, most output tokens) of a variant's generator,
    or None when its generate stage is stored (or it has none)."""
    key = ctx.plan.by_variant[variant.name].get("generate")
    if key is None or ctx.store.has("generate", key, use=False):
        return None
    node = ctx.plan.nodes[key]
    cfg = variant.config
    price = pricing(ctx.spec.costs, cfg)
    budget = cfg.context.budget if node.resolved.reads_context else 0
    qs = questions_of(ctx, node)
    answers = len(qs) * cfg.generator.repeats
    prompt = sum(budget + ctx.tokenizer.count(q.question) for q in qs) * cfg.generator.repeats
    out = answers * cfg.generator.max_new_tokens
    return (prompt * price["in"] + out * price["out"]) / 1000, answers, prompt, out


def spend_lines(ctx: RunContext) -> list[str]:
    """The lines `ablate check` prints for the estimated spend (module doc)."""
    if not _priced(ctx):
        return []
    lines = ["spend:     estimated before any call, US dollars at the experiment's prices "
             "(output tokens at their cap: an upper bound)"]
    for v in ctx.variants:
        got = generator_spend(ctx, v)
        if got is None:
            has = "generate" in ctx.plan.by_variant[v.name]
            lines.append(f"  {v.name}: generator " + ("nothing to ask (stored)" if has else "none"))
            continue
        usd, answers, prompt, out = got
        lines.append(f"  {v.name}: generator ~{_money(usd)} ({answers} answers, ~{prompt} prompt "
                     f"tokens, at most {out} output tokens)")
    tally, judge = ctx.memo.get(TALLY), ctx.spec.judge
    if tally is not None and judge is not None:
        costs = ctx.spec.costs
        out = tally.calls * judge.max_new_tokens
        usd = (tally.tokens * costs.judge_in_per_1k + out * costs.judge_out_per_1k) / 1000
        lines.append(f"  judge (the run): ~{_money(usd)} ({tally.calls} calls, ~{tally.tokens} "
                     f"prompt tokens, at most {out} output tokens; prompts shared by variants "
                     "counted once)")
    return lines
