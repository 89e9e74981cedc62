"""The sweep's plan: every variant's stages as keyed nodes, shared where keys agree.

Stage definitions, reads and keys come from `ablate.components.pipeline` (declarations alone);
this module only walks them for each variant, so it never branches on a component.
Variants sharing a prefix share its nodes: an RRF-k sweep retrieves once, a generator
sweep retrieves and assembles once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ablate.components import __version__ as components_version
from ablate.components.contract.config import PipelineConfig
from ablate.components.pipeline import (
    STAGES,
    Resolved,
    present_stages,
    project,
    read_values,
    resolve,
    stage_key,
    stage_parts,
)
from ablate.flows.plan.variant import Variant

STAGE_ORDER = tuple(s.name for s in STAGES)


@dataclass(frozen=True)
class StageNode:
    stage: str
    key: str
    deps: tuple[str, ...]
    inputs: dict[str, Any] = field(compare=False, hash=False)  # input stage -> key (or part -> key)
    config: PipelineConfig = field(compare=False, hash=False)  # projected on what it reads
    resolved: Resolved = field(compare=False, hash=False)
    part: str | None = None
    questions: str | None = None  # fingerprint of the questions it runs on, when it reads them

    @property
    def label(self) -> str:
        return f"{self.stage}:{self.part}" if self.part else self.stage

    @property
    def model_bound(self) -> bool:
        return self.resolved.model_bound


@dataclass
class Plan:
    nodes: dict[str, StageNode] = field(default_factory=dict)  # insertion = topological order
    by_variant: dict[str, dict[str, str]] = field(default_factory=dict)  # variant -> label -> key

    def count(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for node in self.nodes.values():
            out[node.stage] = out.get(node.stage, 0) + 1
        return out


def add_variant(plan: Plan, name: str, cfg: PipelineConfig, experiment: dict[str, Any]) -> dict[str, str]:
    """Add one variant's stages to the plan; return its label -> key map. `experiment`
    names the variant's own questions (their fingerprint under "questions")."""
    made: dict[str, list[StageNode]] = {}
    present = present_stages(cfg, experiment)
    for sd in STAGES:
        if sd.name not in present:
            continue
        for part in stage_parts(sd, cfg):
            choices = sd.select(cfg, part) + (sd.experiment_select(experiment)
                                              if sd.experiment_select else ())
            resolved = resolve(cfg, choices)
            reads = tuple(sorted(set(resolved.reads) | set(sd.reads)))
            upstream = [s for s in sd.inputs if s in made
                        and (s != sd.context_input or resolved.reads_context)]
            deps = tuple(n for s in upstream for n in made[s])
            inputs = {s: (made[s][0].key if len(made[s]) == 1 and made[s][0].part is None
                          else {n.part: n.key for n in made[s]}) for s in upstream}
            key = stage_key(sd, resolved, read_values(cfg, reads, resolved.files), inputs,
                            experiment, part, components_version)
            node = plan.nodes.get(key)
            if node is None:
                node = StageNode(sd.name, key, tuple(d.key for d in deps), inputs,
                                 project(cfg, reads + resolved.settings), resolved, part,
                                 experiment["questions"] if "questions" in sd.experiment else None)
                plan.nodes[key] = node
            made.setdefault(sd.name, []).append(node)
    keys = {n.label: n.key for nodes in made.values() for n in nodes}
    plan.by_variant[name] = keys
    return keys


def build_plan(variants: list[Variant], experiment: dict[str, Any],
               variant_questions: dict[str, str] | None = None) -> Plan:
    """Every variant's stages; a variant in `variant_questions` runs on its own questions
    (their fingerprint), the others on the experiment's."""
    plan = Plan()
    for v in variants:
        own = (variant_questions or {}).get(v.name)
        add_variant(plan, v.name, v.config, {**experiment, "questions": own} if own else experiment)
    return plan
