"""A factorial `design:` as variants: one per cell (combination of levels), the
all-baseline cell being the baseline itself.

A cell that changes one variable is that variable's one-factor variant
(`chunking.size=100`); a cell that changes several is named by its changes joined with
` × ` (`chunking.size=100 × rerank.weights=semantic:1`), its `variable` the changed
fields joined with `+` (as for named variants that set several fields). Every cell
records its level per design variable (`Variant.cell`). A cell whose config a sweep
already gives is that sweep's variant (not a second one), unless the sweep runs on its
own sample: every cell must run on the same questions.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.dotted import (
    SEVERAL,
    format_value,
    get_dotted,
    has_dotted,
    several_label,
)
from ablate.components.stats.design import design_cells
from ablate.flows.plan.spec import DesignSpec
from ablate.flows.plan.spec_load import LoadedSpec
from ablate.flows.plan.variant import Variant, unknown_variable

MIN_VARIABLES, MAX_VARIABLES = 2, 4
MAX_TWO_LEVEL_VARIABLES = 8  # a full design of two-level variables (a worth analysis): 256 cells
MIN_LEVELS, MAX_LEVELS = 2, 3


def _budget_error(cells: int, max_cells: int) -> str:
    """'the design has 256 cells, more than design.max_cells (64): a 1/4 fraction (64
    cells) of it would fit; ...' (a share of the cells when their number is not 2^k)."""
    if cells & (cells - 1) == 0:  # 2^k cells: the largest 2^-p fraction that fits
        den = 1
        while cells // den > max_cells:
            den *= 2
        share = f"a 1/{den} fraction ({cells // den} cells)"
    else:
        share = f"{max_cells / cells:.0%}"
    return (f"the design has {cells} cells, more than design.max_cells ({max_cells}): "
            f"{share} of it would fit; raise "
            "design.max_cells or drop variables")


def design_labels(loaded: LoadedSpec) -> dict[str, list[str]]:
    """Design variable -> its level labels (format_value), in the file's order."""
    design = loaded.spec.design
    return {} if design is None else {var: [format_value(v) for v in values]
                                      for var, values in design.variables.items()}


def _check_shape(loaded: LoadedSpec, design: DesignSpec, base: dict[str, Any]) -> None:
    where = ("design", "variables")
    names = list(design.variables)
    two_level = design.fraction == "full" and all(len(v) == 2 for v in design.variables.values())
    if not MIN_VARIABLES <= len(names) <= (MAX_TWO_LEVEL_VARIABLES if two_level else MAX_VARIABLES):
        raise loaded.error(f"a factorial design takes {MIN_VARIABLES} to {MAX_VARIABLES} "
                           f"variables, got {len(names)} (up to {MAX_TWO_LEVEL_VARIABLES} in a "
                           "full design of two-level variables)", where)
    for var, values in design.variables.items():
        if not has_dotted(base, var):
            raise loaded.error(unknown_variable(base, var), where + (var,))
        inside = next((o for o in names if o != var and var.startswith(o + ".")), None)
        if inside is not None:
            raise loaded.error(f"'{var}' is part of '{inside}': a design's variables must be "
                               "separate fields", where + (var,))
        if not MIN_LEVELS <= len(values) <= MAX_LEVELS:
            raise loaded.error(f"a design variable takes {MIN_LEVELS} or {MAX_LEVELS} levels "
                               f"(the baseline's value first), got {len(values)}", where + (var,))
    if design.fraction == "half" and [len(v) for v in design.variables.values()] != [2] * 4:
        shape = " x ".join(str(len(v)) for v in design.variables.values())
        raise loaded.error("the half fraction is the resolution-IV 2^(4-1) design (D = ABC) "
                           f"of 4 two-level variables; this design is {shape} (use "
                           "fraction: full)", ("design", "fraction"))
    cells = len(design_cells([len(v) for v in design.variables.values()], design.fraction))
    if cells > design.max_cells:
        raise loaded.error(_budget_error(cells, design.max_cells), where)


def _reading_order(cell: tuple[int, ...]) -> tuple:
    """Cells changing fewer variables first; among them the first variable's changes first,
    each variable's levels in the file's order."""
    return (sum(1 for lv in cell if lv), [(0, lv) if lv else (1, 0) for lv in cell])


def design_variants(loaded: LoadedSpec, variants: list, base: dict[str, Any],
                    apply: Callable[[dict[str, Any], tuple[Any, ...]], PipelineConfig],
                    config_id: Callable[[PipelineConfig], str]) -> list:
    """`variants` (baseline first, then the sweeps') with the design's cells added or
    marked. `apply(overrides, loc)` validates a config of the baseline with `overrides`
    set (errors at YAML `loc`)."""
    design = loaded.spec.design
    if design is None:
        return variants
    _check_shape(loaded, design, base)
    names = list(design.variables)
    where = ("design", "variables")
    base_id = variants[0].config_id
    for var, values in design.variables.items():
        ids: dict[str, int] = {}
        for j, value in enumerate(values):
            cid = config_id(apply({var: value}, where + (var, j)))
            if j == 0 and cid != base_id:
                raise loaded.error(f"the first level must be the baseline's value "
                                   f"({format_value(get_dotted(base, var))}), got "
                                   f"{format_value(value)}", where + (var, 0))
            if cid in ids:
                raise loaded.error(f"level {j + 1} ({format_value(value)}) gives the same "
                                   f"config as level {ids[cid] + 1} "
                                   f"({format_value(values[ids[cid]])})", where + (var, j))
            ids[cid] = j
        labels = [format_value(v) for v in values]
        if len(set(labels)) < len(labels):  # levels are told apart by label in the outputs
            raise loaded.error(f"two levels read the same ({', '.join(labels)}); write them "
                               "so that they differ", where + (var,))
    out = list(variants)
    out[0] = dataclasses.replace(out[0], cell=(0,) * len(names))
    cells = design_cells([len(v) for v in design.variables.values()], design.fraction)[1:]
    for cell in sorted(cells, key=_reading_order):
        changed = [(var, design.variables[var][lv], lv) for var, lv in zip(names, cell) if lv]
        loc = where + (changed[-1][0], changed[-1][2])
        cfg = apply({var: value for var, value, _ in changed}, loc)
        cid = config_id(cfg)
        name = several_label({var: value for var, value, _ in changed})
        same = next((i for i, v in enumerate(out) if v.config_id == cid), None)
        if same is not None:
            other = out[same]
            if other.is_baseline or other.cell is not None:
                raise loaded.error(f"cell {name} has the same config as {other.name}", loc)
            if other.sample is not None:
                raise loaded.error(f"cell {name} is also {other.name} of a sweep with its own "
                                   "sample (tier or n); a design's cells all run on the "
                                   "experiment's questions", loc)
            out[same] = dataclasses.replace(other, cell=cell)
            continue
        if name in {v.name for v in out}:
            raise loaded.error(f"cell name '{name}' is used twice", loc)
        one = len(changed) == 1
        variable = changed[0][0] if one else SEVERAL.join(var for var, _, _ in changed)
        value = changed[0][1] if one else {var: value for var, value, _ in changed}
        out.append(Variant(name, variable, value, cfg, cid, loc, None, cell))
    return out
