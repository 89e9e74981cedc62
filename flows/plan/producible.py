"""What a sweep's pipelines can measure, said before any compute (`ablate check`, `ablate run`).

- A key metric a variant's pipeline cannot produce: a metric column needs the pipeline
  stages its registry entry names (`needs`, ablate.components.metrics.registry); a
  variant runs the stages `present_stages` keeps (ablate.components.pipeline). A key
  metric that no variant produces is a warning in `ablate check` and makes `ablate run`
  refuse (when `metrics.key` names it; a default key metric is only a warning); one that
  some variants do not produce is a warning naming them.
- Ranking metrics at a cut-off k measured before the context is packed under the token
  budget (`candidates/*@k`, `reranked/*@k`: the column stages whose metrics do not need the
  assemble stage) compare k chunks, so across variants with different chunkings they
  compare different amounts of text; the metrics measured on the packed context
  (`final/*`) compare them under one token budget. A warning in `ablate check`.

Nothing here names a stage, a component or a metric: it reads the registries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.dotted import get_dotted
from ablate.components.contract.errors import InputError
from ablate.components.metrics.registry import METRICS, OPTIONAL_STAGES, SOURCES, lookup
from ablate.components.pipeline import present_stages, resolve, stage_def, stage_parts
from ablate.flows.plan.variant import Variant

MAX_NAMED = 4  # variants named in a warning before "and N more"
BUDGET_STAGE = "assemble"  # the pipeline stage that packs the context under the token budget


def needed_stages(col: str) -> tuple[str, ...]:
    """The pipeline stages a metric column reads (its metric's `needs` for its column stage)."""
    m, _ = lookup(col)
    stage = col.partition("/")[0]
    return tuple(dict(m.needs).get(stage, OPTIONAL_STAGES))


def why_absent(stage: str, cfg: PipelineConfig, experiment: dict[str, Any]) -> str:
    """'which ...': why a pipeline under `cfg` has no `stage` (the present_stages rules)."""
    sd = stage_def(stage)
    if sd.needs_input and experiment.get(sd.needs_input) is None:
        return f"which runs only when the experiment has a '{sd.needs_input}' section"
    for part in stage_parts(sd, cfg):
        choices = sd.select(cfg, part)
        decls = resolve(cfg, choices).components
        if decls and not any(d.produces for d in decls):
            _, name, chosen_by = choices[0]
            return f"which {chosen_by or decls[0].kind}: {name} leaves out"
    present = present_stages(cfg, experiment)
    for s in sd.inputs:
        if s not in sd.optional and s not in present:
            return f"which needs the {s} stage, {why_absent(s, cfg, experiment)}"
    return "which this pipeline leaves out"


def why_not(col: str, cfg: PipelineConfig, experiment: dict[str, Any]) -> str | None:
    """Why a variant under `cfg` does not produce the metric column `col` (None: it does)."""
    present = set(present_stages(cfg, experiment))
    missing = [s for s in needed_stages(col) if s not in present]
    if not missing:
        return None
    return f"it needs the {missing[0]} stage, {why_absent(missing[0], cfg, experiment)}"


@dataclass(frozen=True)
class Gap:
    """A key metric some variants (or all) do not produce."""

    metric: str
    missing: tuple[str, ...]  # the variants that do not produce it
    variants: int  # variants in all
    reason: str  # why the first of them does not

    @property
    def everywhere(self) -> bool:
        return len(self.missing) == self.variants


def gaps(variants: Sequence[Variant], key: Sequence[str], experiment: dict[str, Any]) -> list[Gap]:
    """Per key metric that some variant does not produce: which, and why."""
    out = []
    for col in key:
        why = {v.name: why_not(col, v.config, experiment) for v in variants}
        missing = tuple(name for name, reason in why.items() if reason is not None)
        if missing:
            out.append(Gap(col, missing, len(variants), str(why[missing[0]])))
    return out


def _named(names: Sequence[str]) -> str:
    more = len(names) - MAX_NAMED
    return ", ".join(names[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "")


def gap_line(gap: Gap, default: bool = False) -> str:
    """One warning line (without its 'warning: ' prefix)."""
    what = f"key metric {gap.metric}" + (" (a default: metrics.key is not set)" if default else "")
    if gap.everywhere:
        return f"{what}: no variant produces it ({gap.reason})"
    return (f"{what}: {len(gap.missing)} of {gap.variants} variants do not produce it "
            f"({_named(gap.missing)}: {gap.reason})")


def key_metric_lines(ctx) -> list[str]:  # type: ignore[no-untyped-def]
    """The warnings `ablate check` prints about the key metrics of a run context."""
    default = "key" not in ctx.spec.metrics.model_fields_set
    return [gap_line(g, default) for g in
            gaps(ctx.variants, ctx.spec.metrics.key, ctx.experiment_inputs())]


def refusal(ctx) -> InputError | None:  # type: ignore[no-untyped-def]
    """The one-line error `ablate run` stops with when `metrics.key` names a metric no
    variant produces (None: every key metric is produced by some variant, or the key
    metrics are the defaults)."""
    if "key" not in ctx.spec.metrics.model_fields_set:
        return None
    none = [g for g in gaps(ctx.variants, ctx.spec.metrics.key, ctx.experiment_inputs())
            if g.everywhere]
    if not none:
        return None
    lines = "; ".join(gap_line(g) for g in none)
    them = "it" if len(none) == 1 else "them"
    return ctx.loaded.error(f"{lines}; remove {them} from metrics.key or configure a pipeline "
                            f"that produces {them}", ("metrics", "key"))


# ---- ranking metrics at k across chunkings -------------------------------------------------

def ranking_stages() -> tuple[list[str], list[str]]:
    """(column stages of the metrics at a cut-off k that do not need the budget stage,
    those that do), from the metric registry."""
    before: list[str] = []
    after: list[str] = []
    for name in METRICS.names():
        m = METRICS.get(name)
        if not m.at_k:
            continue
        for stage, needs in m.needs:
            if "label" not in SOURCES.get(stage, ("label",)):
                continue  # not scored against the gold labels (dense/ann_recall: one chunking's
                # approximate top k against its exact one), so chunk sizes do not matter
            side = after if BUDGET_STAGE in needs else before
            if stage not in side:
                side.append(stage)
    return before, after


def _values(values: set[Any]) -> str:
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in values):
        return f"{min(values)}..{max(values)}"
    return "|".join(sorted(str(x) for x in values))


def differing_chunkings(ctx) -> dict[str, set[Any]]:  # type: ignore[no-untyped-def]
    """{field the chunk stage reads: its values} over the variants whose chunk stage
    differs from the baseline's, the fields whose values differ ({} when one chunking)."""
    base = next(v for v in ctx.variants if v.is_baseline)
    base_key = ctx.plan.by_variant[base.name].get("chunk")
    node = ctx.plan.nodes.get(base_key)
    if node is None:
        return {}
    data = {v.name: v.config.model_dump(mode="json") for v in ctx.variants}
    out: dict[str, set[Any]] = {}
    for v in ctx.variants:
        key = ctx.plan.by_variant[v.name].get("chunk")
        if key is None or key == base_key:
            continue
        reads = ctx.plan.nodes[key].resolved.reads
        for f in reads:
            mine, theirs = get_dotted(data[v.name], f), get_dotted(data[base.name], f)
            if mine != theirs:
                out.setdefault(f, set()).update({mine, theirs})
    return out


def chunking_line(ctx) -> str | None:  # type: ignore[no-untyped-def]
    """One warning line when variants differ in chunking: the ranking metrics at k (the key
    ones among them, else all) compare k chunks of different sizes; None otherwise."""
    fields = differing_chunkings(ctx)
    if not fields:
        return None
    before, after = ranking_stages()
    key = [c for c in ctx.spec.metrics.key if c.partition("/")[0] in before
           and lookup(c)[0].at_k]
    what = (", ".join(key) + (" compares" if len(key) == 1 else " compare") if key
            else ", ".join(f"{s}/*@k" for s in before) + " metrics compare")
    sized = any(f.endswith((".size", ".method")) for f in fields)
    across = " and ".join(f"{f}={_values(vals)}" for f, vals in sorted(fields.items()))
    line = (f"{what} k chunks of {'different sizes' if sized else 'different chunkings'} "
            f"across {across}: not the same number of tokens")
    budgeted = all(BUDGET_STAGE in present_stages(v.config, ctx.experiment_inputs())
                   for v in ctx.variants)
    finals = ", ".join(f"{s}/*" for s in after)
    if budgeted:
        base = next(v for v in ctx.variants if v.is_baseline)
        base_chunk = ctx.plan.by_variant[base.name].get("chunk")
        budgets = sorted({v.config.context.budget for v in ctx.variants if v.is_baseline
                          or ctx.plan.by_variant[v.name].get("chunk") != base_chunk})
        if len(budgets) > 1:
            return line + (f"; {finals} does not compare them on equal text either: these "
                           f"variants change the token budget too (context.budget "
                           f"{', '.join(map(str, budgets))})")
        return line + f"; {finals} compares them under one token budget (context.budget {budgets[0]})"
    return line + f"; no variant measures {finals}, which compares them under one token budget"
