"""One-factor-at-a-time expansion: the baseline plus one override per sweep value.

A sweep value equal to the baseline's is dropped with a notice (one line the CLI prints),
never a Python warning."""

from __future__ import annotations

import copy
from typing import Any, Callable

from pydantic import ValidationError

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.dotted import SEVERAL, format_value, has_dotted
from ablate.components.contract.frozen import ALL_FIELDS
from ablate.components.contract.vocab import BASELINE
from ablate.flows.plan.design import design_variants
from ablate.flows.plan.spec_errors import error_loc, error_message
from ablate.flows.plan.spec_load import LoadedSpec
from ablate.flows.plan.variant import Variant, config_id, unknown_variable


def _override(data: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node = out
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value
    return out


Adjust = Callable[[PipelineConfig], PipelineConfig]


def _apply(base: dict[str, Any], overrides: dict[str, Any], loaded: LoadedSpec,
           loc: tuple[Any, ...], adjust: Adjust) -> PipelineConfig:
    data = base
    for dotted, value in overrides.items():
        if not has_dotted(base, dotted):
            raise loaded.error(unknown_variable(base, dotted), loc)
        data = _override(data, dotted, value)
    try:
        return adjust(PipelineConfig.model_validate(data))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = error_loc(err)
        message = error_message(err, where, PipelineConfig)
        raise loaded.error(f"{'.'.join(str(p) for p in where)}: {message}", loc) from None


def expand(loaded: LoadedSpec, notices: list[str] | None = None,
           adjust: Adjust = lambda cfg: cfg) -> list[Variant]:
    """Baseline first, then sweeps in file order, then the cells of a factorial `design`
    (ablate.flows.plan.design), then explicitly named variants. What is
    dropped (a sweep value equal to the baseline) is told in `notices`, one line each.
    `adjust` resolves per-corpus choices (the `auto` analyzer) before configs are compared."""
    spec = loaded.spec
    base_cfg = adjust(spec.baseline)
    base = base_cfg.model_dump(mode="python", context={ALL_FIELDS: True})
    variants = [Variant(BASELINE, None, None, base_cfg, config_id(base_cfg), ("baseline",))]
    seen = {variants[0].config_id: BASELINE}
    for i, sweep in enumerate(spec.sweeps):
        if not has_dotted(base, sweep.variable):
            raise loaded.error(unknown_variable(base, sweep.variable), ("sweeps", i, "variable"))
        for j, value in enumerate(sweep.values):
            loc: tuple[str | int, ...] = ("sweeps", i, "values", j)
            cfg = _apply(base, {sweep.variable: value}, loaded, loc, adjust)
            cid = config_id(cfg)
            name = f"{sweep.variable}={format_value(value)}"
            if cid == variants[0].config_id:
                if notices is not None:
                    notices.append(f"{loaded.path}:{loaded.line_of(loc)}: {name} equals the "
                                   "baseline; dropped")
                continue
            if cid in seen:
                raise loaded.error(f"variant {name} has the same config as {seen[cid]}", loc)
            seen[cid] = name
            own = (sweep.tier, sweep.n) if (sweep.tier or sweep.n) else None
            variants.append(Variant(name, sweep.variable, value, cfg, cid, loc, own))
    variants = design_variants(loaded, variants, base,
                               lambda over, loc: _apply(base, over, loaded, loc, adjust), config_id)
    seen = {v.config_id: v.name for v in variants}
    for i, named in enumerate(spec.variants):
        loc = ("variants", i, "set")
        cfg = _apply(base, named.set, loaded, loc, adjust)
        cid = config_id(cfg)
        if named.name in {v.name for v in variants}:
            raise loaded.error(f"variant name '{named.name}' is used twice", ("variants", i, "name"))
        if cid in seen:
            raise loaded.error(f"variant {named.name} has the same config as {seen[cid]}", loc)
        seen[cid] = named.name
        variable = next(iter(named.set)) if len(named.set) == 1 else SEVERAL.join(sorted(named.set))
        value = next(iter(named.set.values())) if len(named.set) == 1 else named.set
        variants.append(Variant(named.name, variable, value, cfg, cid, loc))
    return variants
