"""The fields of `generator:` each variant sets are ones its generator reads (issue 43.2).

Each generator accepts `name`, the shared fields and its own settings model's fields
(components/generation/settings.py). The rule, variant by variant:

- a field written for a variant (a sweep value, a design cell, a named variant's `set`)
  that its generator does not read is refused: one line at that value's YAML line;
- the baseline's fields are written for the whole sweep: one the baseline's own generator
  does not read is kept when a generator the sweep runs reads it (the demo's baseline
  sets `max_new_tokens` for the model generators its sweep reaches), else refused at its
  line;
- a variant inheriting a baseline field its generator does not read ignores it (its
  generator is handed the default, and its stage keys never hashed it), and `ablate
  check` says so, one notice line per field and variant.
"""

from __future__ import annotations

from typing import Any

from ablate.components.generation import GENERATORS
from ablate.components.generation.settings import COMMON, accepted, settings_fields
from ablate.flows.plan.spec_errors import did_you_mean
from ablate.flows.plan.spec_load import LoadedSpec
from ablate.flows.plan.variant import Variant


def _written(overrides: dict[str, Any]) -> tuple[set[str], bool]:
    """(fields of `generator:` the overrides write, whether they replace it whole)."""
    out: set[str] = set()
    whole = False
    for dotted, value in overrides.items():
        if dotted == "generator" and isinstance(value, dict):
            out |= set(value)
            whole = True
        elif dotted.startswith("generator."):
            out.add(dotted.split(".")[1])
    return out - set(COMMON), whole


def _overrides(v: Variant) -> dict[str, Any]:
    """What a variant writes over the baseline (dotted field -> value)."""
    if v.variable is None:
        return {}
    if "+" in v.variable and isinstance(v.value, dict):
        return dict(v.value)
    return {v.variable: v.value}


def _not_read(name: str, field: str) -> str:
    decl = GENERATORS.declaration(name)
    own = settings_fields(decl)
    reads = f"its fields: {', '.join(own)}" if own else "it has no settings of its own"
    hint = did_you_mean(field, sorted(accepted(decl)))
    return f"generator '{name}' does not read '{field}' ({reads}){hint}"


def check_generator_fields(loaded: LoadedSpec, variants: list[Variant],
                           notices: list[str]) -> None:
    """Refuse fields written for a generator that does not read them; tell (in
    `notices`) which baseline fields a variant's generator ignores."""
    base_gen = loaded.spec.baseline.generator
    base_written = set(base_gen.model_fields_set) - set(COMMON)
    runs: dict[str, set[str]] = {}  # generator name -> variants running it
    for v in variants:
        runs.setdefault(v.config.generator.name, set()).add(v.name)
    readers = {f: sorted(n for n in runs if f in accepted(GENERATORS.declaration(n)))
               for f in base_written}
    for f in sorted(base_written):
        if not readers[f]:
            raise loaded.error(_not_read(base_gen.name, f), ("baseline", "generator", f))
    for v in variants:
        name = v.config.generator.name
        own = accepted(GENERATORS.declaration(name))
        if v.is_baseline:
            written, whole = set(), False
        else:
            written, whole = _written(_overrides(v))
        for f in sorted(written - own):
            raise loaded.error(f"{_not_read(name, f)} (variant {v.name})", v.loc)
        inherited = set() if whole else base_written - written
        for f in sorted(inherited - own):
            others = ", ".join(g for g in readers[f] if g != name)
            line = loaded.line_of(("baseline", "generator", f))
            notices.append(f"{loaded.path}:{line}: generator.{f} is not read by {name} "
                           f"(variant {v.name}): ignored there; read by {others}")



