"""The CI gate inside one sweep: every variant against the baseline on the gated metrics.

Two rules:

- `non-inferiority` (the default): a variant passes only when the one-sided corrected
  interval shows its drop is smaller than the allowed drop D (ablate.components.stats.
  noninferiority, on the per-question table, over clusters, Bonferroni over every gated
  metric and variant). Each result says the smallest drop this sweep can rule out at its
  n; when that is larger than D the verdict is `inconclusive` ("needs ~N questions"),
  never a silent pass.
- `worse`: fails only when a variant is *significantly* worse by more than D (the sweep's
  own stats table: its test, correction and interval). A small sample passes large drops
  under this rule; it is kept, under this explicit name, for a gate that only catches
  clear regressions.

'Worse' follows the metric's declared direction: lower for higher-is-better metrics,
higher for lower-is-better ones (latency, cost, false acceptance); a metric with no better
direction cannot be gated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.contract.vocab import BASELINE
from ablate.components.metrics.registry import direction
from ablate.components.report.numbers import fmt, fmt_p
from ablate.components.stats.clusters import cluster_column
from ablate.components.stats.noninferiority import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    check_margin,
    non_inferiority,
    oriented_differences,
)

NONINF, WORSE = "non-inferiority", "worse"
RULES = (NONINF, WORSE)


@dataclass(frozen=True)
class GateResult:
    """One gated (metric, variant). `delta` is in the metric's own sign (variant minus
    baseline or reference); `lower` is the one-sided bound of the change oriented so that
    positive is better (non-inferiority; NaN under `worse`)."""

    metric: str
    variant: str
    rule: str
    verdict: str  # pass | fail | inconclusive
    delta: float
    n: int
    n_clusters: int
    lower: float = math.nan
    upper: float = math.nan
    margin_n: float = math.nan
    needed_n: float = math.nan
    confidence: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    p_adjusted: float = math.nan
    significant: bool = False

    @property
    def failed(self) -> bool:
        """Not a pass: a fail or an inconclusive gate stops the pipeline."""
        return self.verdict != PASS


def check_rule(rule: str, max_drop: float | None) -> float:
    """The allowed drop for the rule (non-inferiority: > 0, given; worse: >= 0, default 0)."""
    if rule not in RULES:
        raise InputError(f"unknown rule '{rule}' (known: {', '.join(RULES)})", field="--rule")
    if rule == NONINF:
        return check_margin(max_drop)
    if max_drop is None:
        return 0.0
    if not math.isfinite(max_drop) or max_drop < 0:
        raise InputError("must be >= 0", field="--max-drop")
    return float(max_drop)


def gated_direction(metric: str) -> str:
    better = direction(metric)
    if better == "none":
        raise InputError(f"metric '{metric}' has no better direction, so it cannot be gated",
                         field="--metric")
    return better


def _known_metric(metric: str, known: Sequence[str]) -> None:
    if metric not in known:
        known = sorted(known)
        raise InputError(f"unknown metric '{metric}' (known: {', '.join(known[:12])}"
                         f"{', …' if len(known) > 12 else ''})", field="--metric")


def zero_one_metrics(table: pl.DataFrame, baseline: str, pairs: Sequence[tuple[str, str]]
                     ) -> np.ndarray:
    """Per (metric, variant) pair: whether every finite score of the pair's two variants is
    0 or 1 (a 0/1 metric: the gate bounds it with the Tango score bound,
    ablate.components.stats.binary_bound)."""
    out = []
    for metric, variant in pairs:
        col = table.filter(pl.col("variant").is_in([baseline, variant]))[metric].cast(pl.Float64)
        col = col.filter(col.is_finite())
        out.append(bool(col.len()) and bool(col.is_in([0.0, 1.0]).all()))
    return np.array(out, dtype=bool)


def noninferiority_results(table: pl.DataFrame, baseline: str, pairs: list[tuple[str, str]],
                           max_drop: float, statistics: dict[str, Any], seed: int
                           ) -> list[GateResult]:
    """The non-inferiority gate of each (metric, variant) pair of a long per-question
    table against `baseline`, one Bonferroni family over all pairs."""
    signs = [-1 if gated_direction(m) == "lower" else 1 for m, _ in pairs]
    D, M, codes = oriented_differences(table, baseline, pairs, signs,
                                       cluster_col=cluster_column(statistics.get("cluster"), table.columns))
    r = non_inferiority(D, M, codes, max_drop, alpha=float(statistics.get("alpha", 0.05)),
                        m=len(pairs), resamples=int(statistics.get("resamples", 10_000)),
                        seed=seed, binary=zero_one_metrics(table, baseline, pairs))
    return [GateResult(metric, variant, NONINF, r.verdict[j], sign * float(r.delta[j]),
                       int(r.n[j]), int(r.n_clusters[j]), float(r.lower[j]), float(r.upper[j]),
                       float(r.margin_n[j]), float(r.needed_n[j]), r.confidence)
            for j, ((metric, variant), sign) in enumerate(zip(pairs, signs))]


def check_gate(per_query: pl.DataFrame, metrics: Sequence[str] | str,
               max_drop: float | None = None, variant: str | None = None, *,
               rule: str = NONINF, statistics: dict[str, Any] | None = None, seed: int = 0,
               stats: pl.DataFrame | None = None) -> list[GateResult]:
    """One result per gated metric and compared variant (or the named one), metrics in the
    order given, variants sorted. per_query: the sweep's per-question table; statistics:
    its manifest's settings (alpha, resamples, cluster); stats: its stats table (the
    `worse` rule reads it). See the module docstring."""
    max_drop = check_rule(rule, max_drop)
    metrics = [metrics] if isinstance(metrics, str) else list(dict.fromkeys(metrics))
    worse = stats if rule == WORSE else None
    if rule == WORSE and worse is None:
        raise InputError("the worse rule reads the sweep's stats table", field="--rule")
    known = (worse["metric"].unique().to_list() if worse is not None
             else [c for c in per_query.columns if "/" in c])
    for m in metrics:
        _known_metric(m, known)
        gated_direction(m)
    names = (sorted(worse.filter(pl.col("metric").is_in(metrics))["variant"].unique().to_list())
             if worse is not None
             else sorted(set(per_query["variant"].unique().to_list()) - {BASELINE}))
    if variant is not None:
        if variant not in names:
            raise InputError(f"unknown variant '{variant}' (compared: {', '.join(names)})",
                             field="--variant")
        names = [variant]
    if worse is not None:
        return [_worse(worse, m, v, max_drop) for m in metrics for v in names]
    pairs = [(m, v) for m in metrics for v in names]
    if not pairs:
        return []
    return noninferiority_results(per_query, BASELINE, pairs, max_drop, statistics or {}, seed)


def _worse(stats: pl.DataFrame, metric: str, variant: str, max_drop: float) -> GateResult:
    rows = stats.filter((pl.col("metric") == metric) & (pl.col("variant") == variant))
    if not rows.height:
        return GateResult(metric, variant, WORSE, PASS, math.nan, 0, 0)
    return worse_result(rows.row(0, named=True), variant, max_drop)


def worse_result(r: dict[str, Any], variant: str, max_drop: float) -> GateResult:
    """The `worse` rule on one stats row: fail when significant and the change in the bad
    direction exceeds max_drop."""
    drop = r["delta"] if direction(r["metric"]) == "lower" else -r["delta"]
    sig = bool(r["significant"])
    return GateResult(r["metric"], variant, WORSE, FAIL if sig and drop > max_drop else PASS,
                      r["delta"], int(r["n_used"]), int(r.get("n_clusters") or r["n_used"]),
                      ci_low=r["ci_low"], ci_high=r["ci_high"], p_adjusted=r["p_adjusted"],
                      significant=sig)


def bad_word(metric: str) -> str:
    return "rise" if direction(metric) == "lower" else "drop"


def data_questions(manifest: dict[str, Any]) -> int | None:
    """The questions of the sweep's data set it could run on at most: its split's (the
    selection's `split` step), else the whole data set's; None when not recorded."""
    steps = (manifest.get("questions") or {}).get("selection") or []
    split = [s.get("questions") for s in steps if str(s.get("step", "")).startswith("split")]
    n = split[0] if split else (manifest.get("dataset") or {}).get("questions")
    return int(n) if n else None


def ceiling(r: GateResult, manifest: dict[str, Any]) -> str:
    """When the questions needed exceed what the data set has: '; more than the ~A ...:
    with all of them the smallest provable drop is ~X' (SE shrinking as 1/sqrt(n), as the
    needed n assumes); else ''."""
    total = data_questions(manifest)
    run = int((manifest.get("questions") or {}).get("total") or 0)
    if not total or not run or not r.n or not math.isfinite(r.needed_n):
        return ""
    have = total * r.n / run  # the data set's questions that define the metric, pro rata
    if r.needed_n <= have:
        return ""
    bad = bad_word(r.metric)
    best = (f"about {fmt(r.margin_n * math.sqrt(r.n / have))}" if math.isfinite(r.margin_n)
            else "none")
    return (f", more than the ~{have:.0f} this data set has for {r.metric}: with all of them "
            f"the smallest {bad} it could prove is {best}")


def explain(r: GateResult, max_drop: float, delta: bool = True,
            manifest: dict[str, Any] | None = None) -> str:
    """What the gate found for one result, in one line (without the verdict word; the
    change itself unless `delta` is False). With the sweep's `manifest`, an inconclusive
    result needing more questions than the data set has says so (ceiling)."""
    bad = bad_word(r.metric)
    where = f"{r.n} questions in {r.n_clusters} clusters"
    if r.rule == WORSE:
        return (f"{'delta ' + fmt(r.delta) + ' ' if delta else 'CI '}"
                f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}], adjusted p "
                f"{fmt_p(r.p_adjusted)}{' (significant)' if r.significant else ''}; {where}")
    if r.n == 0:
        return "no question where both scores are defined"
    level = f"{100 * r.confidence:.4g}%"
    worst = fmt(round(-r.lower, 9) + 0.0)  # no "-0.000"
    bound = (f"{bad} <= {worst} ({level} one-sided bound)" if math.isfinite(r.lower)
             else f"{bad} unbounded at {level} (too few clusters)")
    rules_out = (f"rules out {bad}s >= {fmt(r.margin_n)} at {where} (the smallest {bad} "
                 "it can prove at this n)" if math.isfinite(r.margin_n)
                 else f"rules out no {bad} at {where}")
    text = f"{f'delta {fmt(r.delta)}; ' if delta else ''}{bound}; {rules_out}"
    if r.verdict == PASS:
        return f"{text}: the {bad} is below {max_drop}"
    if r.verdict == INCONCLUSIVE:
        needs = (f"needs ~{int(r.needed_n)} questions (more clusters of the same sizes)"
                 f"{ceiling(r, manifest or {})}"
                 if math.isfinite(r.needed_n) else "needs more questions")
        return f"{text}: cannot prove a {bad} below {max_drop}; {needs}"
    if math.isfinite(r.upper) and r.upper < -max_drop:
        return f"{text}: the {bad} is larger than {max_drop}"
    return f"{text}: a {bad} of {max_drop} is not ruled out"


def verdict_word(r: GateResult) -> str:
    return {PASS: "ok  ", FAIL: "FAIL", INCONCLUSIVE: "INCONCLUSIVE"}[r.verdict]
