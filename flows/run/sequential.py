"""Sequential stopping (`stats.sequential: true`): the sweep runs in looks. At look k each
undecided variant has the first batch x k questions of its sample (prefixes of one seeded
order, so a look extends the last one and every stage computed before is reused or
extended); after each look every key-metric comparison of an undecided variant is tested
against its group-sequential boundary (ablate.components.stats.sequential: the
cluster-robust t of the questions used so far, df = clusters - 1, at the nominal level of
the look's Lan-DeMets O'Brien-Fleming boundary), at alpha divided by the number of key
comparisons (Bonferroni, valid under any dependence and any looks). A variant stops at the
look where all its key comparisons are decided, else at its full sample. The outputs are
those of the last look; the stats table's `significant` of a key metric is the sequential
decision, and the manifest records every look (n, t, df, boundary on the t scale, the
normal boundary it comes from)."""

from __future__ import annotations

import math
from typing import Any, Callable

import polars as pl

from ablate.components.contract.vocab import BASELINE
from ablate.components.report.sweep_data import present_key
from ablate.components.stats.sequential import (
    METHOD,
    boundaries,
    cluster_t,
    look_sizes,
    t_boundary,
)
from ablate.components.stats.table_prep import paired_differences

NAIVE_FLAG = "naive_after_sequential_stop"


def _num(x: float, digits: int = 4) -> float | None:
    """A JSON-safe number: None for an undefined or infinite statistic (below two clusters;
    no spread) or a boundary that cannot be crossed."""
    return round(float(x), digits) if math.isfinite(x) else None


def run_sequential(full: dict[str, int], batch: int, alpha: float, key: list[str],
                   run_look: Callable[[dict[str, int]], pl.DataFrame],
                   cluster_col: str | None = None) -> dict[str, Any]:
    """Run looks until every variant is decided or complete. `full`: each variant's full
    sample size; `run_look(sizes)` computes a look and returns its per-question table;
    `cluster_col`: the per-question table's cluster column (checked before any stage:
    flows/run/context.check_clusters), None: each question its own cluster. Returns the
    record the manifest keeps (the last look's sizes under `sizes`)."""
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
            # the boundaries of a spending function at look i depend on looks 1..i only
            c = boundaries(tuple(n / full[name] for n in plan), each)[i]
            for m in metrics:
                if decided.get((name, m)):
                    continue
                t, df = cluster_t(*paired_differences(per_query, BASELINE, name, m, cluster_col))
                bound = t_boundary(c, df)
                looks[name].setdefault(m, []).append(
                    {"n": sizes[name], "t": _num(t), "df": df, "boundary": _num(bound),
                     "z_boundary": _num(c)})
                decided[(name, m)] = math.isfinite(bound) and abs(t) >= bound
            if all(decided.get((name, m)) for m in metrics) or i == len(plan) - 1:
                stopped[name] = sizes[name]
        if len(stopped) == len(plans):
            break
        k += 1
    return {"method": METHOD, "batch": batch, "alpha": alpha, "alpha_per_comparison": each,
            "metrics": metrics, "cluster": cluster_col, "sizes": {n: stopped[n] for n in full},
            "full": full, "decided": {f"{v}|{m}": d for (v, m), d in decided.items()},
            "looks": looks}


def apply_decisions(stats: pl.DataFrame, record: dict[str, Any]) -> pl.DataFrame:
    """The stats table with `significant` of each key comparison set to its sequential
    decision, the only stopping-aware number in it. Every row of a variant that stopped
    early gets NAIVE_FLAG in `ci_flag`: its p-values and CI are fixed-sample (naive)
    numbers computed on a sample whose size the looks chose; they ignore the looks and are
    not valid after optional stopping (nor is a non-key metric's `significant`). A variant
    that ran to its full sample has valid fixed-sample p-values and CIs."""
    decided = record["decided"]
    keys = [f"{v}|{m}" for v, m in zip(stats["variant"], stats["metric"])]
    flags = [decided.get(k, s) for k, s in zip(keys, stats["significant"])]
    early = {v for v, n in record["sizes"].items() if n < record["full"][v]}
    out = stats.with_columns(pl.Series("significant", flags, dtype=stats["significant"].dtype))
    if "ci_flag" not in stats.columns or not early:
        return out
    marked = [("; ".join(x for x in (f, NAIVE_FLAG) if x) if v in early else f)
              for v, f in zip(stats["variant"], stats["ci_flag"].fill_null(""))]
    nulls = stats["ci_flag"].is_null()
    marked = [None if (null and v not in early) else f
              for f, v, null in zip(marked, stats["variant"], nulls)]
    return out.with_columns(pl.Series("ci_flag", marked, dtype=pl.String))
