"""The experiment file's `alerts:` rules read over a trend (components/report/trend.py):
each rule's metric becomes the series of the followed variant's runs, oldest first, one
RunPoint per run (its mean, CR2 standard error and recorded interval's upper bound), and
the rule's statistics (components/stats/alert_rules.py) say alert, warn or ok. A run that
does not define the metric is left out of its series. Gate rules read the gate's verdict,
which a run does not record: `ablate trend` reports them as not read (the scheduled job's
`ablate gate` exits 1 on a failed gate)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl

from ablate.components.stats.alert_rules import Finding, declines, drop, threshold
from ablate.components.stats.monitor import RunPoint


@dataclass(frozen=True)
class RuleResult:
    """A rule (as written), its finding, and the run label it is about (None: quiet)."""

    rule: str
    finding: Finding | None  # None: not read here (a gate rule)
    label: str | None


def describe(rule: Any) -> str:
    """A rule as one would write it: `answer/f1 below 0.8`, `gate`."""
    if rule.gate:
        return "gate"
    if rule.below is not None:
        return f"{rule.metric} below {rule.below:g}"
    if rule.declines is not None:
        return f"{rule.metric} declines {rule.declines}"
    how = "anytime" if rule.anytime else "this run"
    return f"{rule.metric} drop {rule.drop:g} ({how}, {rule.questions} questions)"


def series(table: pl.DataFrame, metric: str, need_se: bool = True
           ) -> tuple[list[RunPoint], list[str]]:
    """The metric's runs with a mean (and, `need_se`, a positive standard error), oldest
    first."""
    rows = table.filter(pl.col("metric") == metric).sort("run")
    points, labels = [], []
    for r in rows.iter_rows(named=True):
        mean, se = r["mean"], r["se"]
        if mean is None or not math.isfinite(mean):
            continue
        if need_se and (se is None or not se > 0):
            continue
        points.append(RunPoint(mean, se if se is not None else math.nan, r["ci_high"]))
        labels.append(r["label"])
    return points, labels


def evaluate(table: pl.DataFrame, rules: Sequence[Any]) -> list[RuleResult]:
    """Each rule's finding over the trend, in the order written."""
    out = []
    for rule in rules:
        if rule.gate:
            out.append(RuleResult(describe(rule), None, None))
            continue
        points, labels = series(table, rule.metric, need_se=rule.declines is None)
        if rule.below is not None:
            found = threshold(points, rule.below, rule.alpha)
        elif rule.declines is not None:
            found = declines(points, rule.declines)
        else:
            found = drop(points, rule.drop, rule.reference, rule.alpha, rule.questions,
                         anytime=rule.anytime)
        out.append(RuleResult(describe(rule), found,
                              labels[found.run] if found.run is not None else None))
    return out


def alert_lines(results: Sequence[RuleResult]) -> list[str]:
    """One line per rule: `ALERT answer/f1 below 0.8: ... (run LABEL)`."""
    lines = []
    for r in results:
        if r.finding is None:
            lines.append(f"not read: {r.rule} (a run does not record its gate verdict; "
                         f"`ablate gate` exits 1 on a failed gate)")
            continue
        where = f" (run {r.label})" if r.label else ""
        lines.append(f"{r.finding.level.upper()} {r.rule}: {r.finding.message}{where}")
    return lines


def fired(results: Sequence[RuleResult]) -> bool:
    return any(r.finding is not None and r.finding.level == "alert" for r in results)
