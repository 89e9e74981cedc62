"""One variant of a sweep (its name, config and where the YAML defines it), the content
hash that tells two configs apart, and the error for a path no config has."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.dotted import flatten
from ablate.components.contract.vocab import BASELINE
from ablate.flows.plan.spec_errors import did_you_mean


@dataclass(frozen=True)
class Variant:
    name: str
    variable: str | None  # dotted path of the swept field; None for the baseline
    value: Any
    config: PipelineConfig
    config_id: str
    loc: tuple[Any, ...] = ()  # where in the YAML this variant comes from
    sample: tuple[str | None, int | None] | None = None  # its sweep's own (tier, n)
    cell: tuple[int, ...] | None = None  # its level per `design` variable (0: the baseline's)

    @property
    def is_baseline(self) -> bool:
        return self.name == BASELINE


def config_id(config: PipelineConfig) -> str:
    """Content hash of a full config (canonical JSON)."""
    blob = json.dumps(config.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def unknown_variable(base: dict[str, Any], dotted: str) -> str:
    """'unknown variable X' with the nearest pipeline field, for a path `base` lacks."""
    known = set(flatten(base))
    for name in list(known):
        parts = name.split(".")
        known.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return f"unknown variable '{dotted}'{did_you_mean(dotted, sorted(known))}"
