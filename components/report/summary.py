"""The short summary published on the flow run (Prefect artifacts): findings and the
key-metric tables as Markdown, and the same numbers as table rows."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Sequence

from ablate.components.contract.vocab import BASELINE
from ablate.components.report.comparability import not_comparable
from ablate.components.report.findings import findings
from ablate.components.report.intervals import ci_cell
from ablate.components.report.markdown import _variable_table, mark, unit_text, wtl
from ablate.components.report.numbers import fmt, fmt_p
from ablate.components.report.sweep_data import SweepResults, report_stats, variables, variant_means


def summary_markdown(res: SweepResults, key_metrics: Sequence[str] | None = None) -> str:
    res = replace(res, stats=not_comparable(report_stats(res.stats), res.variants))
    key = res.key_metrics(key_metrics)
    man = res.manifest
    means = variant_means(res.per_query, key)
    srows = {(r["variant"], r["metric"]): r for r in res.stats.iter_rows(named=True)}
    st = man.get("statistics", {})
    lines = [f"# Ablation: {man.get('experiment')} (`{man.get('sweep_id')}`)", "",
             f"{man.get('questions', {}).get('total')} questions, tier {man.get('tier')}, split "
             f"{man.get('split')}; {st.get('test')} test, {st.get('correction')} correction, "
             f"alpha {st.get('alpha')}; unit of analysis {unit_text(st, res.stats)}.", "",
             "## Findings", ""]
    lines += [f"- {x}" for x in findings(res.stats, key, res.no_effect, man,
                                         variants=res.variants, per_query=res.per_query)]
    for variable, points in variables(res.variants).items():
        lines += ["", f"## {variable}", ""]
        for metric in key:
            lines += _variable_table(metric, points, means, srows, res.per_query) + [""]
    return "\n".join(lines)


def summary_rows(res: SweepResults, key_metrics: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per variant x key metric (baseline rows carry only the mean)."""
    res = replace(res, stats=not_comparable(report_stats(res.stats), res.variants))
    key = res.key_metrics(key_metrics)
    means = variant_means(res.per_query, key)
    srows = {(r["variant"], r["metric"]): r for r in res.stats.iter_rows(named=True)}
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for variable, points in variables(res.variants).items():
        for name, value in points:
            if name in seen:
                continue
            seen.add(name)
            for metric in key:
                r = srows.get((name, metric)) or {}
                mean = means.get((name, metric), math.nan)
                rows.append({"variable": "" if name == BASELINE else variable,
                             "variant": name, "value": value, "metric": metric,
                             "mean": fmt(mean),
                             "baseline_same_questions": fmt(r.get("mean_baseline")) if r else "",
                             "delta": fmt(r.get("delta")),
                             "ci": ci_cell(r, res.per_query) if r else "",
                             "p": fmt_p(r.get("p_value")), "p_adj": fmt_p(r.get("p_adjusted")),
                             "sig": mark(r) if r else "", "d_z": fmt(r.get("d_z"), 2),
                             "w_t_l": wtl(r) if r else "", "n": fmt(r.get("n_used")) if r else ""})
    return rows
