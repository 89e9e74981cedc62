"""Sequential stopping (`stats.sequential: true`): the sweep runs in looks. At look k each
undecided variant has the first batch x k questions of its sample (prefixes of one seeded
order, so a look extends the last one and every stage computed before is reused or
extended); after each look every key-metric comparison of an undecided variant is tested
against its group-sequential boundary (ablate.components.stats.sequential), at alpha divided by
the number of key comparisons (Bonferroni, valid under any dependence and any looks). A
variant stops at the look where all its key comparisons are decided, else at its full
sample. The outputs are those of the last look; the stats table's `significant` of a key
metric is the sequential decision, and the manifest records every look."""

from __future__ import annotations

from typing import Any, Callable

import polars as pl

from ablate.components.report.sweep_data import present_key
from ablate.components.stats.sequential import METHOD, boundaries, look_sizes, paired_z
from ablate.components.stats.table_prep import differences
from ablate.components.vocab import BASELINE


def run_sequential(full: dict[str, int], batch: int, alpha: float, key: list[str],
                   run_look: Callable[[dict[str, int]], pl.DataFrame]) -> dict[str, Any]:
    """Run looks until every variant is decided or complete. `full`: each variant's full
    sample size; `run_look(sizes)` computes a look and returns its per-question table.
    Returns the record the manifest keeps (the last look's sizes under `sizes`)."""
    plans = {name: look_sizes(n, batch) for name, n in full.items()}
    stopped: dict[str, int] = {}
    looks: dict[str, dict[str, list[dict[str, Any]]]] = {name: {} for name in full}
    decided: dict[tuple[str, str], bool] = {}
    metrics: list[str] = []
    each = alpha
    k = 0
    while True:
        sizes = {name: stopped.get(name, plan[min(k, len(plan) - 1)]) for name, plan in plans.items()}
        per_query = run_look(sizes)
        if not metrics:
            metrics = present_key(key, [c for c in per_query.columns if "/" in c])
            each = alpha / max(1, len(metrics) * len(full))
        for name, plan in plans.items():
            if name in stopped:
                continue
            i = min(k, len(plan) - 1)
            fractions = tuple(n / full[name] for n in plan[:i + 1])
            c = boundaries(fractions, each)[-1]
            for m in metrics:
                if decided.get((name, m)):
                    continue
                z = paired_z(differences(per_query, BASELINE, name, m))
                looks[name].setdefault(m, []).append(
                    {"n": sizes[name], "z": round(z, 4), "boundary": round(c, 4)})
                decided[(name, m)] = abs(z) >= c
            if all(decided.get((name, m)) for m in metrics) or i == len(plan) - 1:
                stopped[name] = sizes[name]
        if len(stopped) == len(plans):
            break
        k += 1
    return {"method": METHOD, "batch": batch, "alpha": alpha, "alpha_per_comparison": each,
            "metrics": metrics, "sizes": {n: stopped[n] for n in full}, "full": full,
            "decided": {f"{v}|{m}": d for (v, m), d in decided.items()}, "looks": looks}


def apply_decisions(stats: pl.DataFrame, record: dict[str, Any]) -> pl.DataFrame:
    """The stats table with `significant` of each key comparison set to its sequential
    decision (its fixed-sample p-values are kept, and do not decide)."""
    decided = record["decided"]
    keys = [f"{v}|{m}" for v, m in zip(stats["variant"], stats["metric"])]
    flags = [decided.get(k, s) for k, s in zip(keys, stats["significant"])]
    return stats.with_columns(pl.Series("significant", flags, dtype=stats["significant"].dtype))
