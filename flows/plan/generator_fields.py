"""The fields of `generator:` each variant sets are ones its generator reads (issue 43.2).

Each generator accepts `name`, the shared fields and its own settings model's fields (the
model declared beside it, read through components/generation/settings.py: no field list
is kept here); a field no registered generator declares is refused when the file loads
(contract/config.py). The rule, variant by variant:

- a field written for a variant (a sweep value, a design cell, a named variant's `set`)
  that its generator does not read is refused: one line at that value's YAML line;
- the baseline's fields are the whole study's settings (the demo's baseline sets
  `max_new_tokens` for the model generators its sweep reaches, and experiment files
  written before generators had settings of their own set fields their generator never
  read): a variant whose generator does not read one ignores it (its generator is handed
  the default, its stage keys never hashed it, its config is unchanged), and `ablate
  check` says so: one notice line per field and generator, naming the variants.
"""

from __future__ import annotations

from typing import Any

from ablate.components.contract.dotted import variable_parts
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
    if len(variable_parts(v.variable)) > 1 and isinstance(v.value, dict):
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
    """Refuse fields written in a variant for a generator that does not read them; tell
    (in `notices`) which baseline fields which variants' generators ignore."""
    base_written = set(loaded.spec.baseline.generator.model_fields_set) - set(COMMON)
    runs = {v.config.generator.name for v in variants}
    ignored: dict[tuple[str, str], list[str]] = {}  # (field, generator) -> variants
    for v in variants:
        name = v.config.generator.name
        own = accepted(GENERATORS.declaration(name))
        written, whole = _written(_overrides(v))
        unread = sorted(written - own)
        if unread:  # the first, at the variant's line
            raise loaded.error(f"{_not_read(name, unread[0])} (variant {v.name})", v.loc)
        inherited = set() if whole else base_written - written
        for f in sorted(inherited - own):
            ignored.setdefault((f, name), []).append(v.name)
    for (f, name), names in sorted(ignored.items()):
        readers = sorted(g for g in runs if f in accepted(GENERATORS.declaration(g)))
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        line = loaded.line_of(("baseline", "generator", f))
        notices.append(f"{loaded.path}:{line}: generator.{f} is not read by {name}: ignored "
                       f"in its {len(names)} variant{'s' if len(names) > 1 else ''} "
                       f"({shown}); " + (f"read by {', '.join(readers)}" if readers else
                                         "no generator of this experiment reads it"))
