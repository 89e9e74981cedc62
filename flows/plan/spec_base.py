"""What every section of an experiment file's spec shares: frozen pydantic models that
refuse unknown fields and take each field's docstring as its documentation, and the check
that a name is registered (with a near-miss suggestion)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ablate.components.contract.registry import registry
from ablate.flows.plan.spec_errors import did_you_mean


def registered(kind: str, name: str) -> str:
    """`name` when a component of that kind is registered by it, else ValueError naming the
    near misses and the known names."""
    reg = registry(kind)
    if name not in reg:
        raise ValueError(f"unknown {kind} '{name}'{did_you_mean(name, reg.names())} "
                         f"(known: {', '.join(reg.names())})")
    return name


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


