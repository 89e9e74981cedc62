"""The report's "Worth: what each part is worth" section, for a sweep whose factorial
design has two-level factors only (worth.parquet, ablate.components.stats.worth_table):
one plot with a panel per key metric and one bar per factor (its Shapley value with the
interval), the numbers per key metric, and a small table of the pairs' interaction
indices."""

from __future__ import annotations

from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from ablate.components.report.figure_svg import EXT, figure_bytes  # noqa: E402
from ablate.components.report.intervals import DISAGREE  # noqa: E402
from ablate.components.report.numbers import finite, fmt_ci, fmt_p, fmt_signed  # noqa: E402
from ablate.components.report.plots import tick_labels  # noqa: E402
from ablate.components.stats.paired_tests import reported_abilities  # noqa: E402

SECTION = "Worth: what each part is worth"
PLOT = "worth" + EXT


def _rows(worth: pl.DataFrame, metric: str, kind: str) -> list[dict]:
    return worth.filter((pl.col("metric") == metric) & (pl.col("kind") == kind)).to_dicts()


def worth_plot(worth: pl.DataFrame | None, key: Sequence[str]) -> dict[str, bytes]:
    """{PLOT: svg}: per key metric a panel of horizontal bars (Shapley value per factor,
    its interval as an error bar); {} without worth rows for the key metrics."""
    metrics = [m for m in key if worth is not None and _rows(worth, m, "shapley")]
    if worth is None or not metrics:
        return {}
    factors = [r["factor"] for r in _rows(worth, metrics[0], "shapley")]
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics) + 1.6,
                                                       0.5 * len(factors) + 1.4),
                             sharey=True, squeeze=False)
    y = np.arange(len(factors))[::-1]
    for ax, metric in zip(axes[0], metrics):
        rows = {r["factor"]: r for r in _rows(worth, metric, "shapley")}
        vals = np.array([rows[f]["value"] if f in rows else np.nan for f in factors], float)
        lo = np.array([rows[f]["ci_low"] if f in rows else np.nan for f in factors], float)
        hi = np.array([rows[f]["ci_high"] if f in rows else np.nan for f in factors], float)
        sig = [bool(rows.get(f, {}).get("significant")) for f in factors]
        colors = ["#0969da" if s else "#8c959f" for s in sig]
        ax.barh(y, np.nan_to_num(vals), color=colors, height=0.6)
        err = np.vstack([np.nan_to_num(vals - lo), np.nan_to_num(hi - vals)]).clip(min=0)
        ax.errorbar(np.nan_to_num(vals), y, xerr=err, fmt="none", ecolor="#24292f", capsize=3)
        ax.axvline(0, color="#24292f", linewidth=0.8)
        ax.set_title(metric, fontsize=9)
        ax.tick_params(labelsize=8)
    axes[0][0].set_yticks(y, tick_labels(factors, 22))
    fig.suptitle("Shapley value per factor (bar) with its family-corrected interval", fontsize=9)
    fig.tight_layout()
    return {PLOT: figure_bytes(fig)}


NOTES = {"no_question_differs": "no question differs: widened (Tango)",
         "few_changed_clusters": "few changed clusters ({k}): widened (Tango)",
         "few_documents_iid_tango": "too few documents: a side bounded as if questions were "
                                    "independent"}


def _note(r: dict) -> str:
    flags = [f.strip() for f in str(r.get("ci_flag") or "").split(";") if f.strip()]
    return "; ".join(NOTES[f].format(k=r.get("n_changed_clusters")) for f in flags if f in NOTES)


def _disagrees(r: dict) -> bool:
    """A star (the test, corrected) beside an interval that holds 0, or the reverse: the
    interval is a separate construction (module `worth_section`)."""
    lo: Any = r.get("ci_low")
    hi: Any = r.get("ci_high")
    if not (finite(lo) and finite(hi)):
        return False
    return bool(r.get("significant")) == (float(lo) <= 0.0 <= float(hi))


def _value_table(rows: list[dict], first: str) -> list[str]:
    out = [f"| {first} | value | interval | adj. p |", "|---|---:|---|---:|"]
    for r in rows:
        mark = " *" if r["significant"] else ""
        note = _note(r)
        ci = fmt_ci(r['ci_low'], r['ci_high'], r['value']) + (DISAGREE if _disagrees(r) else "")
        out.append(f"| {r['factor']} ({r['level']}) | {fmt_signed(r['value'])}{mark} | "
                   f"{ci}{' ' + note if note else ''} | {fmt_p(r['p_adjusted'])} |")
    return out


def _levels(worth: pl.DataFrame) -> str:
    def level(kind: str) -> str:
        lv = worth.filter(pl.col("kind") == kind)["ci_level"].drop_nulls().unique().sort()
        return "-".join(f"{x:.4g}" for x in lv.to_list()[:1] + lv.to_list()[1:][-1:])
    pairs = level("interaction")
    return (f"{level('shapley')} over each metric's factors"
            + (f" and {pairs} over its pairs" if pairs else ""))


def _caveats(worth: pl.DataFrame, metrics: Sequence[str], alpha: float) -> list[str]:
    out = []
    first = worth.row(0, named=True)
    able = reported_abilities(first["test"])
    if able.symmetric:
        out.append(f"The {able.also_called or first['test']} test's p assumes each document's "
                   "summed value is symmetric about the true value; strongly skewed document effects "
                   "(a few documents "
                   "carrying the effect) can make it reject more often than alpha "
                   "(docs/statistics.md).")
    if len(metrics) > 1:
        out.append(f"Each metric's factors, and separately its pairs, are one family at alpha "
                   f"{alpha:g}: over the {len(metrics)} key metrics the chance of any false * "
                   f"among the values is at most {min(1.0, len(metrics) * alpha):.2g} "
                   "(and as much again among the pairs).")
    flags = worth["ci_flag"] if "ci_flag" in worth.columns else pl.Series([], dtype=pl.String)
    if flags.str.contains("few_changed|no_question").any():
        out.append("On a 0/1 metric a value whose per-question values are non-zero in fewer "
                   "than 10 documents has its interval widened to the Tango score bound, which "
                   "accounts for changes not seen (benchmarks/worth_rare_changes.py).")
    return out


def _also_called(test: str) -> str:
    """' (sign-flip)' after the permutation test's name: what else it is called."""
    name = reported_abilities(test).also_called
    return f" ({name})" if name else ""


def _alpha(worth: pl.DataFrame) -> float:
    """alpha from the values' Bonferroni level 1 - alpha / m, m the factors."""
    r = worth.row(0, named=True)
    m = worth.filter((pl.col("metric") == r["metric"]) & (pl.col("kind") == "shapley")).height
    return round((1.0 - float(r["ci_level"])) * max(m, 1), 6)


def together(metric: str, value: float) -> str:
    """What an interaction index says, by its sign and the metric's direction."""
    from ablate.components.metrics.registry import direction
    better = direction(metric)
    if better == "none":
        return f"together {'above' if value > 0 else 'below'} their separate effects' sum"
    good = (value > 0) == (better == "higher")
    return f"together {'better' if good else 'worse'} than their separate effects add up to"


def worth_section(worth: pl.DataFrame | None, key: Sequence[str],
                  plot_files: Sequence[str] = ()) -> list[str]:
    """The section's Markdown lines ([] without worth rows)."""
    if worth is None or not worth.height:
        return []
    metrics = [m for m in key if _rows(worth, m, "shapley")]
    if not metrics:
        return []
    first = worth.row(0, named=True)
    alpha = _alpha(worth)
    lines = [f"## {SECTION}", "",
             "Each factor's **Shapley value** is its change's effect averaged over every order "
             "in which the design's changes can be made, so a part that only matters "
             "together with another (or overlaps with it) is given its fair share rather than "
             "its effect on the baseline alone; a metric's values add up to the all-changes "
             "cell minus the baseline. A pair's **interaction index** is the average "
             "difference of differences: positive when the metric is higher with both "
             "changes than their separate effects add up to, negative when lower (better or "
             "worse by the metric's direction: two harmful changes that overlap have a "
             "positive index on a higher-is-better metric). Per question, over the questions with a "
             "score in every cell; intervals (cluster-robust t, or the cluster bootstrap with "
             "stats.ci_method bca or percentile) are at the Bonferroni "
             f"level {_levels(worth)}, adjusted p from the {first['test']} test with "
             f"{first['correction']} over the same family; * marks an adjusted p at most alpha. "
             f"The star and the interval are separate constructions, so a starred value's "
             f"interval can hold 0 (or an unstarred one exclude it): {DISAGREE} marks such a "
             f"row; read the star, which comes from the {first['test']} test"
             f"{_also_called(first['test'])} corrected for the "
             "family.", ""]
    lines += [" ".join(_caveats(worth, metrics, alpha)), ""]
    if PLOT in plot_files:
        lines += [f"![Shapley value of each factor per key metric with its interval]"
                  f"(plots/{PLOT})", ""]
    for metric in metrics:
        sv = _rows(worth, metric, "shapley")
        total = sv[0]["full_minus_empty"]
        lines += [f"### {metric}", "",
                  f"All changes together: {fmt_signed(total)} (n {sv[0]['n']} questions, "
                  f"{sv[0]['n_clusters']} clusters), shared out as below.", ""]
        lines += _value_table(sv, "factor (changed to)") + [""]
        ii = _rows(worth, metric, "interaction")
        if ii:
            sig = [r for r in ii if r["significant"] and finite(r["value"])]
            lines += [("Interacting pairs: " + "; ".join(
                f"{r['factor']} ({together(metric, r['value'])}, "
                f"{fmt_signed(r['value'])})" for r in sig) if sig else
                "No pair interacts significantly after correction."), ""]
            lines += _value_table(ii, "pair") + [""]
    return lines
