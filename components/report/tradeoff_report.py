"""The report's trade-off section and plot (issue 53): the primary key quality metric (the
first key metric that measures quality: tails.quality_metrics) of each variant against
its P95 end-to-end latency and its cost per question (ablate.components.report.tradeoff),
the Pareto-optimal variants marked, what dominates each other one, and the variants that
are faster or cheaper than the baseline without being significantly worse
(tradeoff_callout)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from ablate.components.contract.vocab import BASELINE  # noqa: E402
from ablate.components.report.figure_svg import EXT, figure_bytes  # noqa: E402
from ablate.components.report.numbers import fmt  # noqa: E402
from ablate.components.report.relevance import unused  # noqa: E402
from ablate.components.report.tails import quality_metrics  # noqa: E402
from ablate.components.report.tradeoff import (  # noqa: E402
    COST,
    LATENCY,
    Point,
    cost_per_question,
    dominated_by,
    ms,
    p95_latency,
    pareto_front,
    qualities,
    usd,
)
from ablate.components.stats.tails import lower_is_better  # noqa: E402

FRONT = "tradeoff" + EXT
HEAD = "## Quality, latency and cost"
AXIS_TEXT = {LATENCY: "P95 end-to-end latency", COST: "cost per question"}
ON_FRONT, OFF_FRONT, BASE_EDGE = "#1a7f37", "#8c959f", "#24292f"


@dataclass(frozen=True)
class Front:
    """The variants on the plane of `metric` (its direction: `lower_better`)."""

    metric: str
    lower_better: bool
    points: list[Point]

    def axes(self) -> list[str]:
        """The axes some variant is placed on: latency, cost, both or none."""
        return [a for a in (LATENCY, COST) if dominated_by(self.points, a, self.lower_better)]

    def point(self, name: str) -> Point | None:
        return next((p for p in self.points if p.variant == name), None)


def front_of(per_query: pl.DataFrame, stats: pl.DataFrame, timings: pl.DataFrame | None,
             variants: Sequence[dict[str, Any]], key: Sequence[str],
             manifest: dict[str, Any]) -> Front | None:
    """The front of the primary key quality metric with a per-question column; None when
    there is none."""
    metric = next((m for m in quality_metrics(key) if m in per_query.columns), None)
    if metric is None:
        return None
    order = [v["name"] for v in variants] or per_query["variant"].unique(maintain_order=True).to_list()
    nested = set((manifest.get("questions") or {}).get("per_variant") or {})
    quality = qualities(per_query, stats, metric, order, nested, unused(variants, [metric]))
    latency, cost = p95_latency(timings), cost_per_question(per_query)
    points = [Point(v, q, latency.get(v, math.nan), cost.get(v, math.nan))
              for v, q in quality.items()]
    return Front(metric, lower_is_better(metric), points)


def _cell(by: dict[str, list[str]], name: str) -> str:
    if name not in by:
        return "–"
    return "**Pareto**" if not by[name] else "dominated by " + ", ".join(by[name])


def tradeoff_section(front: Front | None, plot_files: Sequence[str],
                     callouts: Sequence[str]) -> list[str]:
    """The section's lines; empty with fewer than two variants or none placed."""
    if front is None or len(front.points) < 2 or not front.axes():
        return []
    axes = front.axes()
    by = {a: dominated_by(front.points, a, front.lower_better) for a in axes}
    better = "lower" if front.lower_better else "higher"
    out = [HEAD, "",
           f"Each variant's {front.metric} (the first key quality metric; {better} is better) "
           "against what it spends: its P95 end-to-end latency (per question, the sum of its "
           "stage latencies as in the latency table, then the 95th percentile) and its mean "
           "cost per question (cost/total: serving it, from the query's embedding to the "
           "generator, at the experiment's `costs:` prices; the judge's cost is not "
           "serving's). A variant is "
           "**Pareto**-optimal when no other has at least its quality at no more latency "
           "(or cost), better in one. The latencies are those the run recorded, where batched "
           "work (BM25 and dense search, generation) is split over its questions: a small "
           "difference is not a serving-latency difference.", ""]
    if FRONT in plot_files:
        out += [f"![{front.metric} against P95 latency and cost, the Pareto front marked]"
                f"(plots/{FRONT})", ""]
    for a in axes:
        out.append(f"- Pareto-optimal on {front.metric} and {AXIS_TEXT[a]}: "
                   f"{', '.join(pareto_front(front.points, a, front.lower_better))}.")
    if COST not in axes:
        out.append("- No variant has a cost per question (no priced answer: the generator's "
                   "prices `generator.cost_per_1k_in` and `_out` are 0 by default, and no "
                   "other stage has a price): the front is drawn on latency alone.")
    else:
        free = [p.variant for p in front.points if not math.isfinite(p.cost)]
        if free:
            out.append(f"- No cost per question for {', '.join(free)} (no priced answer): "
                       "on the latency front only.")
    if LATENCY not in axes:
        out.append("- No latency recorded (no timings.parquet): the front is drawn on cost alone.")
    out += [f"- {c}" for c in callouts]
    priced = COST in axes
    out += ["", f"| variant | {front.metric} | P95 end-to-end ms | "
            + ("cost per question (USD) | " if priced else "")
            + " | ".join(f"front: {a}" for a in axes) + " |",
            "|---|---:|---:|" + ("---:|" if priced else "") + "---|" * len(axes)]
    for p in front.points:
        out.append(f"| {p.variant} | {fmt(p.quality)} | {ms(p.latency)} | "
                   + (f"{usd(p.cost)} | " if priced else "")
                   + " | ".join(_cell(by[a], p.variant) for a in axes) + " |")
    return out + [""]


def tradeoff_plot(front: Front | None) -> dict[str, bytes]:
    """{FRONT: SVG} with one panel per placed axis, each variant a numbered point (the key
    under the panels names them: names overlap where variants spend alike); empty when the
    section is."""
    if front is None or len(front.points) < 2 or not front.axes():
        return {}
    axes_names = front.axes()
    fig, axes = plt.subplots(1, len(axes_names), figsize=(5.2 * len(axes_names), 3.8),
                             squeeze=False)
    number = {p.variant: i + 1 for i, p in enumerate(front.points)}
    for ax, a in zip(axes[0], axes_names):
        _panel(ax, front, a, number)
    fig.suptitle(f"{front.metric} against what each variant spends (filled: Pareto-optimal; "
                 "■ baseline)", fontsize=9)
    fig.tight_layout()
    fig.text(0.01, 0.0, "\n".join(_key_lines([f"{n} {name}" for name, n in number.items()],
                                             60 * len(axes_names))),
             fontsize=7, va="top", ha="left")
    return {FRONT: figure_bytes(fig)}


def _key_lines(entries: Sequence[str], width: int) -> list[str]:
    """The entries side by side, on lines of about `width` characters, never split."""
    lines: list[str] = []
    for e in entries:
        if lines and len(lines[-1]) + 3 + len(e) <= width:
            lines[-1] += "   " + e
        else:
            lines.append(e)
    return lines


def _panel(ax, front: Front, axis: str, number: dict[str, int]) -> None:
    by = dominated_by(front.points, axis, front.lower_better)
    scale = 1e3 if axis == LATENCY else 1.0
    placed = [p for p in front.points if p.variant in by]
    best = sorted((p for p in placed if not by[p.variant]), key=lambda p: p.spend(axis))
    if len(best) > 1:
        ax.plot([p.spend(axis) * scale for p in best], [p.quality for p in best],
                color=ON_FRONT, lw=1, ls="--", zorder=1)
    for p in placed:
        on = not by[p.variant]
        ax.plot([p.spend(axis) * scale], [p.quality], "s" if p.variant == BASELINE else "o",
                ms=7, color=ON_FRONT if on else OFF_FRONT, mfc=ON_FRONT if on else "white",
                mec=BASE_EDGE if p.variant == BASELINE else (ON_FRONT if on else OFF_FRONT),
                zorder=3)
        ax.annotate(str(number[p.variant]), (p.spend(axis) * scale, p.quality),
                    xytext=(5, 3), textcoords="offset points", fontsize=8)
    spend = [p.spend(axis) for p in placed]
    if min(spend) > 0 and max(spend) >= 10 * min(spend):  # generation next to retrieval
        ax.set_xscale("log")
    ax.set_xlabel(("P95 end-to-end latency (ms per question)" if axis == LATENCY
                   else "cost per question (USD, mean)")
                  + (", log scale" if ax.get_xscale() == "log" else ""), fontsize=8)
    ax.set_ylabel(front.metric + (" (lower is better)" if front.lower_better else ""), fontsize=8)
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)
    ax.margins(x=0.15, y=0.15)
