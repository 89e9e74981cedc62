"""Report plots as SVG bytes (matplotlib, no display needed).

- one figure per swept variable: each key metric's Δ vs the baseline against the swept
  value, error bars its CI, on an axis that always holds 0 (the baseline), the baseline's
  mean in the title (a CI that does not contain its estimate, or is reversed, is drawn
  clipped at Δ with an open diamond and named under the figure; numbers that are not
  finite are not drawn);
- failure buckets per variant as stacked bars;
- latency per stage and tokens in/out per variant.
Deterministic: fixed figure sizes, the same bytes for the same figure
(ablate.components.report.figure_svg).
"""

from __future__ import annotations

import math
import re
import textwrap
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from ablate.components.contract.vocab import BASELINE  # noqa: E402
from ablate.components.report.figure_svg import EXT, figure_bytes  # noqa: E402
from ablate.components.report.numbers import ci_odd, finite, is_significant  # noqa: E402

BASE_COLOR, VAR_COLOR, UP, DOWN = "#57606a", "#0969da", "#1a7f37", "#cf222e"
BUCKET_COLORS = {"ok": "#2da44e", "correct_refusal": "#8cc0a0", "retrieval_miss": "#cf222e",
                 "ranking_loss": "#fb8f44", "budget_cut": "#d4a72c", "partial_support": "#bf8700",
                 "answer_wrong": "#8250df", "generation_error": "#24292f",
                 "false_acceptance": "#bf3989",
                 "false_refusal": "#6e7781", "no_evidence": "#afb8c1"}
BUCKETS, COST = "buckets" + EXT, "cost" + EXT
ODD_NOTE = "◇: the CI does not contain Δ (bar clipped at Δ)"


def plot_name(variable: str) -> str:
    """File-safe name for a variable's plot: 'fusion.rrf_k' -> 'sweep_fusion_rrf_k.svg'."""
    return "sweep_" + re.sub(r"[^A-Za-z0-9]+", "_", variable).strip("_") + EXT


def _numeric(label: str) -> float | None:
    try:
        return float(label)
    except (TypeError, ValueError):
        return None


def _order(points: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(variant, value label) sorted by value when every value is a number, else as given."""
    values = [x for _, lbl in points if (x := _numeric(lbl)) is not None]
    if len(values) == len(points):
        return [p for _, p in sorted(zip(values, points), key=lambda vp: vp[0])]
    return points


def tick_labels(labels: Sequence[str], width: int = 16) -> list[str]:
    """Value labels that stay legible side by side: long ones (`{fusion: 0.5, semantic:
    0.5}`) wrapped onto lines of at most `width` characters, at most 4 lines."""
    out = []
    for lbl in labels:
        lines = textwrap.wrap(str(lbl), width, break_long_words=True) or [""]
        out.append("\n".join(lines[:3] + (["…"] if len(lines) > 3 else [])))
    return out


def error_bar(row: dict[str, Any]) -> tuple[float, float, float, bool] | None:
    """(Δ, below, above, odd) of a comparison's error bar on the Δ scale: its CI around
    Δ; the half-widths are never negative (clipped at 0 when the CI does not contain its
    estimate: `odd`). None when Δ or a bound is missing or not finite."""
    values: tuple[Any, ...] = (row.get("delta"), row.get("ci_low"), row.get("ci_high"))
    if not all(finite(v) for v in values):
        return None
    y, lo, hi = (float(v) for v in values)
    odd = ci_odd(lo, hi, y)
    return y, max(y - lo, 0.0), max(hi - y, 0.0), odd


def variable_figure(variable: str, points: Sequence[tuple[str, str]], metrics: Sequence[str],
                    means: dict[tuple[str, str], float], stats_rows: dict[tuple[str, str], dict]):
    """Each key metric's Δ vs the baseline against the swept value, with the CI of Δ as
    error bars; the baseline is the zero line, which every panel's axis holds, so a small
    Δ whose CI spans 0 never fills the panel (a panel of means spanning 0.945-0.960 made
    a non-significant -0.015 look large). The title gives the baseline's mean; `points`
    are (variant, value label), baseline included. Returns the matplotlib figure."""
    pts = _order(list(points))
    n = max(1, len(metrics))
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 2.7 * rows), squeeze=False)
    xs = list(range(len(pts)))
    any_odd = False
    for i, metric in enumerate(metrics):
        ax = axes[i // cols][i % cols]
        ax.axhline(0.0, color=BASE_COLOR, lw=0.8, ls="--", zorder=1)
        for x, (name, _) in zip(xs, pts):
            r = stats_rows.get((name, metric))
            if name == BASELINE:
                ax.plot([x], [0.0], "s", color=BASE_COLOR, ms=6, zorder=3)
                continue
            if r is None or not finite(r.get("delta")):
                continue
            color = VAR_COLOR
            if is_significant(r):
                color = UP if r["delta"] > 0 else DOWN
            bar = error_bar(r)
            if bar is not None:
                y, below, above, odd = bar
                any_odd = any_odd or odd
                ax.errorbar([x], [y], yerr=[[below], [above]], fmt="D" if odd else "o",
                            mfc="white" if odd else color, color=color, capsize=3, ms=5, zorder=3)
            else:
                ax.plot([x], [float(r["delta"])], "o", color=color, ms=5, zorder=3)
        ax.set_xticks(xs, tick_labels([lbl for _, lbl in pts]),
                      rotation=30 if len(pts) > 4 else 0, fontsize=8)
        base = means.get((BASELINE, metric), math.nan)
        ax.set_title(f"{metric}\n(baseline mean {base:.3f})" if finite(base) else metric, fontsize=9)
        ax.set_ylabel("Δ vs baseline", fontsize=8)
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(axis="y", alpha=0.3)
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle(f"{variable}: Δ vs baseline (■ baseline = 0, bars: CI of Δ; "
                 "green/red: significant after correction)"
                 + (f"\n{ODD_NOTE}" if any_odd else ""), fontsize=9)
    fig.tight_layout()
    return fig


def variable_plot(variable: str, points: Sequence[tuple[str, str]], metrics: Sequence[str],
                  means: dict[tuple[str, str], float], stats_rows: dict[tuple[str, str], dict]) -> bytes:
    """variable_figure as SVG bytes."""
    return figure_bytes(variable_figure(variable, points, metrics, means, stats_rows))


def buckets_plot(per_query: pl.DataFrame, order: Sequence[str]) -> bytes:
    """Failure buckets per variant as stacked horizontal bars (question counts)."""
    counts = per_query.group_by("variant", "bucket").len()
    table = {(r["variant"], r["bucket"]): r["len"] for r in counts.iter_rows(named=True)}
    buckets = sorted({b for _, b in table}, key=lambda b: (b not in BUCKET_COLORS,
                                                          list(BUCKET_COLORS).index(b)
                                                          if b in BUCKET_COLORS else 0, b))
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(order) + 1.2))
    left = [0] * len(order)
    ys = list(range(len(order)))[::-1]
    for b in buckets:
        vals = [table.get((v, b), 0) for v in order]
        ax.barh(ys, vals, left=left, color=BUCKET_COLORS.get(b, None), label=b, height=0.6)
        left = [a + c for a, c in zip(left, vals)]
    ax.set_yticks(ys, list(order), fontsize=8)
    ax.set_xlabel("questions", fontsize=8)
    if buckets:
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    ax.set_title("Failure buckets per variant", fontsize=9)
    fig.tight_layout()
    return figure_bytes(fig)


def latency_means(timings: pl.DataFrame, columns: Sequence[str],
                  order: Sequence[str]) -> dict[str, list[float]]:
    """Per variant, the mean seconds per question of each latency column (0 for a stage it
    did not time, or whose mean is not finite: a NaN must not blank the variant's whole bar)."""
    means = timings.group_by("variant").agg([pl.col(c).fill_nan(None).mean() for c in columns])
    table = {r["variant"]: r for r in means.iter_rows(named=True)}
    return {v: [_bar(table.get(v, {}).get(c)) for c in columns] for v in order}


def _bar(x: Any) -> float:
    """A bar's length: 0 for a missing or non-finite mean (an inf would break the axes)."""
    return float(x) if finite(x) else 0.0


def cost_plot(per_query: pl.DataFrame, timings: pl.DataFrame | None, order: Sequence[str]) -> bytes:
    """Mean latency per stage (stacked, seconds) and mean tokens in/out per variant."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 0.45 * len(order) + 1.4))
    ys = list(range(len(order)))[::-1]
    lat = [c for c in (timings.columns if timings is not None else []) if c.startswith("latency/")]
    if timings is not None and lat:
        table = latency_means(timings, lat, order)
        left = [0.0] * len(order)
        for i, c in enumerate(lat):
            vals = [table[v][i] for v in order]
            ax1.barh(ys, vals, left=left, height=0.6, label=c.split("/", 1)[1])
            left = [a + b for a, b in zip(left, vals)]
        ax1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False,
                   ncol=len(lat))
    else:
        ax1.text(0.5, 0.5, "no latency recorded", ha="center", va="center", fontsize=8)
    ax1.set_yticks(ys, list(order), fontsize=8)
    ax1.set_xlabel("seconds per question (mean; the bar's length is end to end)", fontsize=8)
    ax1.set_title("Latency", fontsize=9)
    tok = [c for c in ("tokens/in", "tokens/out") if c in per_query.columns]
    if tok:
        means = per_query.group_by("variant").agg([pl.col(c).fill_nan(None).mean() for c in tok])
        tok_rows = {r["variant"]: r for r in means.iter_rows(named=True)}
        h = 0.8 / len(tok)
        for i, c in enumerate(tok):
            vals = [_bar(tok_rows.get(v, {}).get(c)) for v in order]
            ax2.barh([y + (i - (len(tok) - 1) / 2) * h for y in ys], vals, height=h, label=c)
        ax2.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False,
                   ncol=len(tok))
    ax2.set_yticks(ys, list(order), fontsize=8)
    ax2.set_xlabel("tokens per question (mean)", fontsize=8)
    ax2.set_title("Tokens", fontsize=9)
    fig.tight_layout()
    return figure_bytes(fig)


def all_plots(variables: dict[str, list[tuple[str, str]]], key_metrics: Sequence[str],
              means: dict[tuple[str, str], float], stats_rows: dict[tuple[str, str], Any],
              per_query: pl.DataFrame, timings: pl.DataFrame | None,
              order: Sequence[str]) -> dict[str, bytes]:
    """Every report plot by file name (relative to the plots/ folder)."""
    out = {plot_name(v): variable_plot(v, pts, key_metrics, means, stats_rows)
           for v, pts in variables.items()}
    if "bucket" in per_query.columns:
        out[BUCKETS] = buckets_plot(per_query, order)
    out[COST] = cost_plot(per_query, timings, order)
    return out
