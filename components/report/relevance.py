"""Which metrics a swept variable can change, derived from declarations, never from a
metric's name: a column is measured on the output of some pipeline stages (the metric
registry's `depends_on`); a variant can change it only when one of those stages, or a
stage upstream of them (the stage graph's inputs), has another key than the baseline's,
or when a config field the metric itself reads differs. A generator sweep therefore
shows no retrieval metric (same retrieval stages as the baseline: Δ 0 by construction)
and a retrieval sweep shows answers too (the context feeds the generator)."""

from __future__ import annotations

from typing import Any, Sequence

from ablate.components.contract.dotted import get_dotted
from ablate.components.metrics.registry import depends_on
from ablate.components.pipeline import STAGES

_INPUTS = {s.name: s.inputs for s in STAGES}

# Figures a reviewer wants beside the key metrics in a variable's section when the
# variable can change them: answer consistency under a perturbed query, refusals, judged
# scores, tokens and cost.
FOCUS_PREFIXES = ("robustness/", "answer/refused", "refusal/answer_coverage", "judge/", "tokens/",
                  "cost/")


def _upstream(stages: Sequence[str]) -> set[str]:
    out: set[str] = set()
    todo = list(stages)
    while todo:
        s = todo.pop()
        if s not in out:
            out.add(s)
            todo.extend(_INPUTS.get(s, ()))
    return out


def changed_stages(variant: dict[str, Any], baseline: dict[str, Any]) -> set[str] | None:
    """Stage labels (`retrieve:bm25` as `retrieve_bm25` too) whose key differs from the
    baseline's or exists on one side only; None when a record holds no stage keys."""
    a, b = variant.get("stage_keys"), baseline.get("stage_keys")
    if not a or not b:
        return None
    out: set[str] = set()
    for label in set(a) | set(b):
        if a.get(label) != b.get(label):
            out |= {label, label.partition(":")[0], label.replace(":", "_")}
    return out


def can_change(column: str, variant: dict[str, Any], baseline: dict[str, Any]) -> bool:
    """Whether `variant` can score `column` differently from `baseline` (True when the
    records or the metric declare too little to tell)."""
    changed = changed_stages(variant, baseline)
    dep = depends_on(column)
    if changed is None or dep is None:
        return True
    sources, fields = dep
    if column.startswith("latency/"):
        return bool(set(sources) & changed)
    if _upstream(sources) & changed:
        return True
    ca, cb = variant.get("config") or {}, baseline.get("config") or {}
    return any(get_dotted(ca, f, None) != get_dotted(cb, f, None) for f in fields)


def section_metrics(names: Sequence[str], records: dict[str, dict[str, Any]], key: Sequence[str],
                    metrics: Sequence[str], baseline: str) -> tuple[list[str], list[str]]:
    """(shown, not affected) for the section of the variants `names`: the key metrics
    any of them can change, then the focus figures they can change; and the key metrics
    none of them can change."""
    base = records.get(baseline)
    if base is None:
        return list(key), []

    def affected(col: str) -> bool:
        return any(can_change(col, records[n], base) for n in names if n in records)

    focus = sorted((m for m in metrics if m not in key and m.startswith(FOCUS_PREFIXES)),
                   key=lambda m: (next(i for i, p in enumerate(FOCUS_PREFIXES) if m.startswith(p)), m))
    shown = [m for m in key if affected(m)] + [m for m in focus if affected(m)]
    return shown, [m for m in key if not affected(m)]


def unaffected(variants: Sequence[dict[str, Any]], metrics: Sequence[str],
               baseline: str) -> set[tuple[str, str]]:
    """(variant, metric) pairs a variant cannot change: the overview shows them as such."""
    base = next((v for v in variants if v["name"] == baseline), None)
    if base is None:
        return set()
    return {(v["name"], m) for v in variants if v["name"] != baseline for m in metrics
            if not can_change(m, v, base)}


def latency_stages(names: Sequence[str], records: dict[str, dict[str, Any]],
                   columns: Sequence[str], baseline: str) -> list[str]:
    """The latency columns any of the variants `names` can change."""
    base = records.get(baseline)
    if base is None:
        return list(columns)
    return [c for c in columns if any(can_change(c, records[n], base) for n in names if n in records)]


# Stages that only make the context; a metric measured on these alone is retrieval's.
_CONTEXT_STAGES = {"label", "retrieve", "fuse", "rerank", "assemble"}


def reads_no_context(variant: dict[str, Any]) -> bool:
    """Whether a variant's generator declares that it reads no context (closed book); False
    when it does, produces nothing (retrieval only) or is not registered here."""
    from ablate.components.generation.base import GENERATORS
    name = get_dotted(variant.get("config") or {}, "generator.name", None)
    if not isinstance(name, str) or name not in GENERATORS:
        return False
    decl = GENERATORS.declaration(name)
    return decl.produces and not decl.reads_context


def context_metric(column: str) -> bool:
    """A metric measured on the context-making stages alone (candidates/, reranked/,
    final/ retrieval metrics), not a latency."""
    dep = depends_on(column)
    return (dep is not None and not column.startswith("latency/")
            and bool(dep[0]) and set(dep[0]) <= _CONTEXT_STAGES)


def unused(variants: Sequence[dict[str, Any]], metrics: Sequence[str]) -> set[tuple[str, str]]:
    """(variant, metric) pairs not shown because the variant's answers never see what the
    metric measures: retrieval metrics of a generator that reads no context."""
    return {(v["name"], m) for v in variants if reads_no_context(v) for m in metrics
            if context_metric(m)}
