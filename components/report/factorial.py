"""The report's "Factorial: interactions" section and its interaction plots, for a sweep
run with a factorial `design`.

The section states the design and how effects are defined, then per pair of design
variables one interaction plot (a panel per key metric: the mean metric against the
levels of the first variable, one line per level of the second; parallel lines mean no
interaction), then per key metric the effects table of factorial.parquet (main effects,
two-way interactions, estimate, CI, p, corrected p). Means in the plots are over the
questions the effects use (a defined score in every cell), averaged over the other
variables' levels, so their difference of differences is the table's interaction.
"""

from __future__ import annotations

import itertools
import math
import re
import textwrap
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from ablate.components.report.figure_svg import EXT, figure_bytes  # noqa: E402
from ablate.components.report.findings import judge  # noqa: E402
from ablate.components.report.numbers import fmt, fmt_ci, fmt_p, fmt_signed, is_significant  # noqa: E402
from ablate.components.report.overview import head  # noqa: E402
from ablate.components.report.plots import tick_labels  # noqa: E402
from ablate.components.stats.factorial import Design, design_from_records  # noqa: E402

SECTION = "Factorial: interactions"
LINE_COLORS = ("#57606a", "#0969da", "#bf3989")


def sweep_design(manifest: dict[str, Any], variants: list[dict[str, Any]]) -> Design | None:
    """The sweep's factorial design (manifest `design`, variants' `factors`), or None."""
    return design_from_records(manifest.get("design") or {}, variants)


def plot_file(a: str, b: str) -> str:
    """'interaction_chunking_size__rerank_weights.svg'."""
    def safe(x: str) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "_", x).strip("_")
    return f"interaction_{safe(a)}__{safe(b)}{EXT}"


def pairs(design: Design) -> list[tuple[int, int]]:
    return list(itertools.combinations(range(len(design.names)), 2))


def cell_means(per_query: pl.DataFrame, design: Design, metric: str) -> dict[str, float]:
    """Each cell's mean of `metric` over the questions with a defined value in every cell."""
    cells = list(design.cells)
    rows = (per_query.filter(pl.col("variant").is_in(cells))
            .select("variant", "qid", pl.col(metric).cast(pl.Float64).alias("y"))
            .filter(pl.col("y").is_finite()))
    complete = rows.group_by("qid").len().filter(pl.col("len") == len(cells))["qid"].to_list()
    means = rows.filter(pl.col("qid").is_in(complete)).group_by("variant").agg(pl.col("y").mean())
    return {r["variant"]: r["y"] for r in means.iter_rows(named=True)}


def marginal_means(means: dict[str, float], design: Design, a: int, b: int) -> np.ndarray:
    """levels(a) x levels(b): mean over the cells at those levels of the cell means."""
    out = np.full((len(design.labels[a]), len(design.labels[b])), np.nan)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            vals = [means[n] for n, c in design.cells.items()
                    if c[a] == i and c[b] == j and n in means]
            if vals:
                out[i, j] = float(np.mean(vals))
    return out


def interaction_plot(per_query: pl.DataFrame, design: Design, a: int, b: int,
                     metrics: Sequence[str], effects: pl.DataFrame | None) -> bytes:
    """One panel per metric: mean against the levels of variable a, one line per level of b."""
    n = max(1, len(metrics))
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 2.9 * rows), squeeze=False)
    name_a, name_b = design.names[a], design.names[b]
    xs = list(range(len(design.labels[a])))
    for i, metric in enumerate(metrics):
        ax = axes[i // cols][i % cols]
        grid = marginal_means(cell_means(per_query, design, metric), design, a, b)
        for j, label in enumerate(design.labels[b]):
            ax.plot(xs, grid[:, j], marker="o", ms=5, color=LINE_COLORS[j % len(LINE_COLORS)],
                    ls="--" if j == 0 else "-", label=f"{name_b}={label}")
        ax.set_xticks(xs, tick_labels(design.labels[a]), fontsize=8)
        ax.set_xlabel(name_a, fontsize=8)
        ax.set_title(metric + _title_note(effects, metric, name_a, name_b), fontsize=9)
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(axis="y", alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7, frameon=False)
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle("\n".join(textwrap.wrap(
        f"{name_a} × {name_b}: mean per cell (dashed: {name_b} at the baseline's level; "
        "parallel lines: no interaction)", 45 * cols)), fontsize=9)
    fig.tight_layout()
    return figure_bytes(fig)


def _title_note(effects: pl.DataFrame | None, metric: str, a: str, b: str) -> str:
    """'\\ninteraction +0.012, p adj 0.030' when the pair has one interaction contrast."""
    if effects is None:
        return ""
    rows = effects.filter((pl.col("metric") == metric) & (pl.col("factor_a") == a)
                          & (pl.col("factor_b") == b))
    if rows.height != 1:
        return ""
    r = rows.row(0, named=True)
    return f"\ninteraction {fmt_signed(r['estimate'])}, p adj {fmt_p(r['p_adjusted'])}"


def interaction_plots(manifest: dict[str, Any], variants: list[dict[str, Any]],
                      per_query: pl.DataFrame, effects: pl.DataFrame | None,
                      metrics: Sequence[str]) -> dict[str, bytes]:
    """Plot file name -> PNG, one per pair of design variables ({} without a design)."""
    design = sweep_design(manifest, variants)
    if design is None:
        return {}
    shown = [m for m in metrics if m in per_query.columns]
    return {plot_file(design.names[a], design.names[b]):
            interaction_plot(per_query, design, a, b, shown, effects) for a, b in pairs(design)}


def _mark(r: dict[str, Any]) -> str:
    if not is_significant(r, "estimate"):
        return ""
    arrow = "▲" if r["estimate"] > 0 else "▼"
    verdict = judge(r["metric"], r["estimate"]) if r["kind"] == "main" else ""
    return f"{arrow} {verdict}".strip()


def effects_table(rows: pl.DataFrame) -> list[str]:
    out = [f"| effect | kind | estimate | {head('CI')} | {head('p')} | {head('p adj')} | "
           f"{head('sig.')} | {head('n')} |", "|---|---|---:|---|---:|---:|---|---:|"]
    for r in rows.iter_rows(named=True):
        alias = f" (= {r['aliases']})" if r["aliases"] else ""
        out.append(f"| {r['effect']}{alias} | {r['kind']} | {fmt(r['estimate'])} | "
                   f"{fmt_ci(r['ci_low'], r['ci_high'], r['estimate'])} | {fmt_p(r['p_value'])} | "
                   f"{fmt_p(r['p_adjusted'])} | {_mark(r)} | {fmt(r['n'])} |")
    return out


def _design_text(design: Design, manifest: dict[str, Any]) -> str:
    shape = " × ".join(str(len(lv)) for lv in design.labels)
    kind = ("full factorial" if design.fraction == "full" else
            "half fraction 2^(4-1) with D = ABC, A to D being the variables in the order "
            "below (resolution IV: main effects are clear of two-way interactions, which are "
            "aliased in pairs, A×B = C×D: each such row estimates the pair's sum, and the "
            "plots of a pair show the same interaction)")
    factors = "; ".join(f"**{n}** ({', '.join(lv)})" for n, lv in zip(design.names, design.labels))
    st = manifest.get("statistics", {})
    family = ("the effects of one metric" if st.get("family", "per_metric") == "per_metric"
              else "every effect of every metric")
    return (f"A {shape} {kind} over {factors}: {len(design.cells)} cells, the baseline's "
            "level first, every question in every cell. Each effect is a per-question "
            "contrast of the cells' scores: a **main effect** is the mean over the cells at "
            "a level minus the mean over the cells at the baseline's level; a two-way "
            "**interaction** is the difference of differences, how much more the first "
            "variable's change is worth at the second's level than at the second's baseline "
            "level (0 when the lines of its plot are parallel). Estimates are means over the "
            "questions with a score in every cell, tested like the comparisons "
            f"({st.get('test', 'permutation')}, {st.get('correction', 'holm')} over "
            f"{family}).")


def joint_error(st: dict[str, Any]) -> str:
    """The error over both families: the comparisons with the baseline (stats.parquet) and
    these effects (factorial.parquet) are corrected separately, each at alpha, so over
    both the bound is 2 x alpha (union bound; it holds for the false discovery rate too,
    since V1 / (R1 + R2) <= V1 / R1)."""
    alpha = float(st.get("alpha", 0.05))
    correction = st.get("correction", "holm")
    scope = ("the comparisons and effects of one metric" if st.get("family", "per_metric")
             == "per_metric" else "the comparisons and effects of every metric")
    head = ("**Joint error.** The comparisons of each cell with the baseline (stats.parquet, "
            "the overview) and these effects (factorial.parquet) are two families")
    if correction == "none":
        return (f"{head}, both uncorrected (`stats.correction: none`): each test has its own "
                f"alpha {alpha:g}, and neither family nor both together bound the chance of "
                "a false finding.")
    rate = ("false discovery rate (the expected share of false findings among the "
            "significant ones)" if correction in ("bh", "by")
            else "chance of at least one false finding")
    return (f"{head}, corrected separately, each at alpha {alpha:g} ({correction}). Over "
            f"{scope} together, the {rate} is therefore at most 2 × {alpha:g} = "
            f"{2 * alpha:g} (union bound), not {alpha:g}; to hold both together at {alpha:g}, "
            f"run with stats.alpha {alpha / 2:g}.")


def factorial_section(manifest: dict[str, Any], variants: list[dict[str, Any]],
                      effects: pl.DataFrame | None, key: Sequence[str],
                      plot_files: Sequence[str] = ()) -> list[str]:
    """The section's Markdown lines ([] when the sweep has no factorial design)."""
    design = sweep_design(manifest, variants)
    if design is None:
        return []
    lines = [f"## {SECTION}", "", _design_text(design, manifest), "",
             joint_error(manifest.get("statistics", {})), ""]
    for a, b in pairs(design):
        name = plot_file(design.names[a], design.names[b])
        if name in plot_files:
            lines += [f"![{design.names[a]} × {design.names[b]}: interaction plot of the key "
                      f"metrics](plots/{name})", ""]
    if effects is None or not effects.height:
        return lines + ["No effects were computed (factorial.parquet is missing).", ""]
    for metric in key:
        rows = effects.filter(pl.col("metric") == metric)
        if not rows.height:
            continue
        sig = rows.filter(pl.col("significant") & (pl.col("kind") == "interaction")
                          & pl.col("estimate").is_finite())
        note = ("Significant interactions: " + "; ".join(
            f"{r['effect']} ({fmt_signed(r['estimate'])}, adjusted p {fmt_p(r['p_adjusted'])})"
            for r in sig.iter_rows(named=True)) if sig.height else
            "No two-way interaction is significant after correction.")
        lines += [f"### {metric}", "", note, ""] + effects_table(rows) + [""]
    return lines
