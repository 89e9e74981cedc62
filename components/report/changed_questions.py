"""Which questions a comparison changed (the model of the drill-down, report.drilldown
renders it): for a variant vs the baseline on one metric, each question whose values differ
beyond rounding (the statistics' tie rule, stats.compare.pair_matrices), won or lost by the
metric's direction; a spread-out selection of them; the first stage where two runs diverge;
and the comparisons the report opens (every significant one on a key metric)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence, TypeGuard

import polars as pl

from ablate.components.contract.vocab import BASELINE
from ablate.components.metrics.registry import direction
from ablate.components.report.numbers import is_significant

# The pipeline's stages in order, as metric prefixes, and how the drill-down names them.
STAGES = (("candidates", "candidates"), ("reranked", "reranked"),
          ("final", "final context"), ("answer", "answer"))


@dataclass(frozen=True)
class Change:
    """One question whose value of a metric differs between the baseline and a variant."""

    qid: str
    cluster: str | None
    base: float
    value: float
    won: bool  # better by the metric's direction

    @property
    def size(self) -> float:
        return abs(self.value - self.base)


def differs(a: float, b: float) -> bool:
    """Whether two finite values differ beyond rounding (the statistics' tie rule)."""
    return abs(a - b) > 1e-12 + 1e-9 * max(abs(a), abs(b))


def finite(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def rows_of(per_query: pl.DataFrame, variant: str) -> dict[str, dict[str, Any]]:
    return {r["qid"]: r for r in per_query.filter(pl.col("variant") == variant).iter_rows(named=True)}


def changes(per_query: pl.DataFrame, variant: str, metric: str,
            baseline: str = BASELINE) -> list[Change]:
    """Every question of `variant` whose `metric` differs from the baseline's (both
    defined), in qid order."""
    if metric not in per_query.columns:
        return []
    base = rows_of(per_query.select([c for c in ("variant", "qid", metric) if c in per_query.columns]),
                 baseline)
    cols = [c for c in ("variant", "qid", "cluster", metric) if c in per_query.columns]
    higher = direction(metric) != "lower"
    out = []
    for qid, row in sorted(rows_of(per_query.select(cols), variant).items()):
        b = base.get(qid, {}).get(metric)
        v = row.get(metric)
        if finite(b) and finite(v) and differs(v, b):
            out.append(Change(qid, row.get("cluster"), float(b), float(v), (v > b) == higher))
    return out


def _spread(items: Sequence[Change], n: int) -> list[Change]:
    """The `n` largest changes, spread over clusters: each cluster's largest first (clusters
    by their largest change), then each cluster's second, and so on."""
    by_cluster: dict[Any, list[Change]] = {}
    for c in sorted(items, key=lambda c: (-c.size, c.qid)):
        by_cluster.setdefault(c.cluster, []).append(c)
    order = list(by_cluster.values())
    picked: list[Change] = []
    depth = 0
    while len(picked) < n and any(len(g) > depth for g in order):
        picked += [g[depth] for g in order if len(g) > depth][: n - len(picked)]
        depth += 1
    return picked


def select(found: Sequence[Change], limit: int, side: str | None = None) -> list[Change]:
    """All of `found` when they are at most `limit`, else the largest changes, balanced
    between lost and won and spread over clusters (a side with fewer gives its share to the
    other); `side` 'lost' or 'won' keeps that side only. Lost first, then won."""
    lost = [c for c in found if not c.won and side != "won"]
    won = [c for c in found if c.won and side != "lost"]
    if len(lost) + len(won) <= limit:
        return _spread(lost, len(lost)) + _spread(won, len(won))
    n_lost = min(len(lost), max(limit - len(won), (limit + 1) // 2))
    n_won = min(len(won), limit - n_lost)
    return _spread(lost, n_lost) + _spread(won, n_won)


def divergence(base: dict[str, Any] | None, var: dict[str, Any] | None) -> str:
    """The first stage (candidates, reranked, final context, answer) where the two runs'
    per-question metrics of that stage differ; '' when none does."""
    if not base or not var:
        return ""
    for prefix, name in STAGES:
        for col in base:
            if not col.startswith(prefix + "/") or col not in var:
                continue
            a, b = base[col], var[col]
            if finite(a) != finite(b) or (finite(a) and differs(a, b)):
                return name
    if base.get("answer") != var.get("answer"):
        return "answer"
    return ""


@dataclass(frozen=True)
class Comparison:
    """One variant vs the baseline on one metric, with its changed questions."""

    variant: str
    metric: str
    found: tuple[Change, ...]
    row: dict[str, Any]  # its stats row ({} when it has none)

    @property
    def lost(self) -> int:
        return sum(not c.won for c in self.found)

    @property
    def won(self) -> int:
        return sum(c.won for c in self.found)

    def clusters(self) -> int:
        return len({c.cluster for c in self.found})


def comparisons(per_query: pl.DataFrame, stats: pl.DataFrame, key: Sequence[str],
                variant: str | None = None, significant_only: bool = True) -> list[Comparison]:
    """The comparisons of `key` metrics the drill-down opens: every significant one (with
    `variant`, that variant's, significant or not when `significant_only` is False), in
    stats order."""
    out = []
    for r in stats.iter_rows(named=True):
        if r["metric"] not in key or r["variant"] == BASELINE:
            continue
        if variant is not None and r["variant"] != variant:
            continue
        if significant_only and not is_significant(r):
            continue
        out.append(Comparison(r["variant"], r["metric"],
                              tuple(changes(per_query, r["variant"], r["metric"])), r))
    order = {m: i for i, m in enumerate(key)}
    return sorted(out, key=lambda c: (c.variant, order.get(c.metric, 0)))
