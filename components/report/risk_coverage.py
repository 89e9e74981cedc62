"""Refusal as a decision: the risk-coverage trade of a stricter refusal threshold, read
off one run.

A generator that records a confidence for its answers (`Answer.score`: the extractive
generator's support, the figure `generator.threshold` applies to) gives per_query a
`confidence` column. Raising the threshold to t withholds every answer whose confidence
is below t, so for each t (the run's own, then the deciles of the answered questions'
confidences) the table says, over the variant's questions:

- answered: answers kept, and coverage, their share of all questions;
- accuracy of answers: the share of kept answers that are correct (`answer/correct`; an
  answer to an unanswerable question is wrong);
- accuracy overall: correct kept answers plus unanswerable questions not answered, over
  all questions (an answerable question not answered is wrong);
- false acceptance: unanswerable questions answered, over the unanswerable ones.

Only thresholds at or above the run's can be read (a refused question has no answer to
score), so lowering it needs a run: sweep `generator.threshold`. Descriptive figures of
this run's questions, without intervals; a generator that records no confidence (the
model generators) has no rows. Failed generations are left out.
"""

from __future__ import annotations

import math
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from ablate.components.report.figure_svg import EXT, figure_bytes  # noqa: E402

RISK = "risk_coverage" + EXT
COLUMN = "confidence"
QUANTILES = tuple(i / 10 for i in range(1, 10))


def _usable(per_query: pl.DataFrame) -> bool:
    need = {COLUMN, "variant", "answerable", "answer/refused", "answer/correct"}
    return per_query is not None and need <= set(per_query.columns)


def risk_coverage(per_query: pl.DataFrame) -> pl.DataFrame:
    """One row per variant (with confidences) and threshold, see the module doc."""
    rows: list[dict] = []
    if not _usable(per_query):
        return pl.DataFrame(rows)
    for (name,), part in per_query.group_by("variant", maintain_order=True):
        part = part.filter(pl.col("answer/refused").is_not_nan())
        answered = part.filter((pl.col("answer/refused") == 0.0) & pl.col(COLUMN).is_not_nan())
        if not answered.height:
            continue
        conf = sorted(answered[COLUMN].to_list())
        # the lowest confidence answered (the run's own threshold), then the deciles
        cuts = sorted({conf[0]} | {conf[int(q * (len(conf) - 1))] for q in QUANTILES})
        n, unans = part.height, int((~part["answerable"]).sum())
        for t in cuts:
            kept = part.filter((pl.col("answer/refused") == 0.0) & (pl.col(COLUMN) >= t))
            right = int((kept["answer/correct"] == 1.0).sum())
            accepted = int((~kept["answerable"]).sum())
            rows.append({"variant": name, "threshold": t, "answered": kept.height, "n": n,
                         "coverage": kept.height / n,
                         "accuracy_answered": right / kept.height if kept.height else math.nan,
                         "accuracy_overall": (right + unans - accepted) / n,
                         "false_acceptance": accepted / unans if unans else math.nan})
    return pl.DataFrame(rows)


def risk_coverage_plot(per_query: pl.DataFrame) -> dict[str, bytes]:
    """{RISK: svg} of accuracy against coverage per variant ({} without confidences)."""
    table = risk_coverage(per_query)
    if not table.height:
        return {}
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for (name,), part in table.group_by("variant", maintain_order=True):
        line, = ax.plot(part["coverage"], part["accuracy_answered"], marker="o", ms=3,
                        label=f"{name}: accuracy of answers")
        ax.plot(part["coverage"], part["accuracy_overall"], ls="--", color=line.get_color(),
                label=f"{name}: accuracy overall")
    ax.set_xlabel("coverage (share of questions answered)", fontsize=8)
    ax.set_ylabel("accuracy", fontsize=8)
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_title("Risk and coverage as the refusal threshold rises (right: the run's own)",
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), frameon=False, ncol=2)
    fig.tight_layout()
    return {RISK: figure_bytes(fig)}


def _pct(x: float) -> str:
    return "–" if x != x else f"{x:.0%}"


def risk_coverage_section(per_query: pl.DataFrame, plot_files: Sequence[str] = ()) -> list[str]:
    """The report's section: the plot and a table per variant ([] without confidences)."""
    table = risk_coverage(per_query)
    if not table.height:
        return []
    lines = ["## Refusal: risk and coverage", "",
             "What a stricter refusal threshold would trade, read off this run: answers whose "
             "confidence (the generator's score, e.g. the extractive support) is below the "
             "threshold are withheld. Descriptive, on this run's questions, no intervals; "
             "thresholds below the run's own need a run (sweep `generator.threshold`).", ""]
    if RISK in plot_files:
        lines += [f"![accuracy against coverage per threshold](plots/{RISK})", ""]
    lines += ["| variant | threshold | answered | coverage | accuracy of answers | "
              "accuracy overall | false acceptance |", "|---|---|---|---|---|---|---|"]
    for r in table.iter_rows(named=True):
        lines.append(f"| {r['variant']} | {r['threshold']:.3f} | {r['answered']} of {r['n']} | "
                     f"{_pct(r['coverage'])} | {_pct(r['accuracy_answered'])} | "
                     f"{_pct(r['accuracy_overall'])} | {_pct(r['false_acceptance'])} |")
    return lines + [""]
