"""`ablate check --gate-max-drop D`: can the planned run prove the gate's margin at all?

The gate (ablate.components.report.gate) passes only when a drop is shown below D; the
smallest drop a sample can prove (margin_n: cluster-robust SE over G clusters, t quantiles
for alpha over the gated comparisons and 80 % power) shrinks as 1/sqrt(n). From an earlier
sweep of the experiment (the pilot: its variants' paired differences against its baseline,
the same variance `ablate power` plans with), each gated metric's largest margin_n over the
variants is scaled to this plan's questions; when D is below it, the gate cannot pass (at
best inconclusive), and `check` says so before any compute, with the questions D needs and
whether the data set has them (issue 54: "needs ~1172 questions", more than the split)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence


def gate_lines(pilot: Path | None, max_drop: float, metrics: Sequence[str], planned: int,
               available: int | None) -> list[str]:
    """Warning lines (without 'warning: ') for the gated metrics whose margin this plan
    cannot prove; one note line without a pilot."""
    from ablate.components.report.gate import check_gate, data_questions
    from ablate.components.report.numbers import fmt
    from ablate.components.report.sweep_data import gated_default, load_sweep
    if pilot is None:
        return [f"gate: no earlier sweep of this experiment to estimate the smallest drop "
                f"{planned} questions can prove from; after a first run, check says"]
    res = load_sweep(pilot)
    metrics = [m for m in (metrics or gated_default(res)) if m in res.per_query.columns]
    man: dict[str, Any] = res.manifest
    ran = int((man.get("questions") or {}).get("total") or 0)
    if not metrics or not ran or len(res.variants) < 2:
        return []
    results = check_gate(res.per_query, metrics, max_drop, statistics=man.get("statistics") or {},
                         seed=int(man.get("seed", 0)))
    out = []
    total = available or data_questions(man)
    for m in metrics:
        mine = [r for r in results if r.metric == m and r.n]
        if not mine:
            continue
        worst = max(mine, key=lambda r: r.margin_n)
        source = (f"the variants of the earlier sweep {pilot.name}, {worst.n} questions in "
                  f"{worst.n_clusters} clusters")
        if not math.isfinite(worst.margin_n):
            out.append(f"gate: the smallest drop in {m} this plan can prove is unknown: "
                       f"{source} bound no drop (too few clusters)")
            continue
        margin = worst.margin_n * math.sqrt(ran / planned)
        if margin <= max_drop:
            continue
        need = math.ceil(ran * (worst.margin_n / max_drop) ** 2)
        text = (f"gate: a drop of {max_drop} in {m} is below what {planned} questions can "
                f"prove (about {fmt(margin)}, from {source}): the gate cannot pass, at "
                f"best inconclusive; it needs ~{need} questions")
        if total and need > total:
            text += (f", more than the {total} of the data set (all of them prove about "
                     f"{fmt(worst.margin_n * math.sqrt(ran / total))})")
        out.append(text)
    return out
