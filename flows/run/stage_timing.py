"""What a computed stage's time is recorded under and per (the manifest's
`stages.by_component`, `ablate check`'s estimate and the sweep ETA line):
`timing_key` names the stage and its components, `work_units` counts the work its
rate is per (flows/plan/estimate.py)."""

from __future__ import annotations

import hashlib

from ablate.flows.plan.graph import StageNode
from ablate.flows.run.context import RunContext


def timing_key(node: StageNode) -> str:
    """What a stage's compute time is recorded under, for estimates (`ablate check`): the
    stage and its components, e.g. `generate:smollm2`, `retrieve:bm25+default`; a long
    list of components (every metric of `score`) is shortened to its count and a hash."""
    names = "+".join(sorted(node.resolved.names)) or "-"
    if len(names) > 48:
        digest = hashlib.sha256(names.encode()).hexdigest()[:8]
        names = f"{len(node.resolved.names)}-components-{digest}"
    return f"{node.stage}:{names}"


def own_questions(ctx: RunContext, node: StageNode) -> tuple:
    """The questions a stage runs on, unperturbed: its variant's own sample, else the
    experiment's."""
    return ctx.question_sets.get(node.questions, ctx.questions) if node.questions else ctx.questions


def work_units(ctx: RunContext, node: StageNode) -> int:
    """What a stage's compute rate is per (flows/plan/estimate.py): the documents for
    `chunk`, else the questions it runs on (a sweep on its own tier: its sample's)."""
    from ablate.flows.plan.estimate import _unit
    return _unit(node.stage, len(ctx.dataset.documents), len(own_questions(ctx, node)))
