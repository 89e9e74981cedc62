"""The report's overview, shown first: one forest plot (each variant's paired Δ against
the baseline with its CI, one panel per key metric, rows grouped by swept variable,
significant changes coloured better/worse) and one table of the same numbers; plus the
glossary the table headers link to."""

from __future__ import annotations

import math
import textwrap
from typing import AbstractSet, Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from ablate.components.report.figure_svg import EXT, figure_bytes  # noqa: E402
from ablate.components.report.findings import judge  # noqa: E402
from ablate.components.report.intervals import DISAGREE, DISAGREE_TEXT, ci_cell  # noqa: E402
from ablate.components.report.numbers import CI_ODD, ci_odd, finite, fmt, is_significant  # noqa: E402

FOREST = "overview" + EXT
BETTER, WORSE, NEUTRAL, NONSIG = "#1a7f37", "#cf222e", "#0969da", "#57606a"
GLOSSARY = [
    ("baseline, same questions", "the baseline's mean on exactly the questions of this comparison "
     "(a variant run on its own nested sample is compared with the baseline on those questions, "
     "not with the baseline row's mean over all of its questions)"),
    ("Δ", "variant mean minus baseline mean, paired on question id (same questions, same gold spans)"),
    ("CI", "confidence interval of Δ: by default the inverted paired test over clusters of questions, at "
           "the level matching the corrected p (at least 95%), so it excludes 0 exactly when sig."),
    ("unbounded", "a side of the CI the test cannot bound (shown –): too few clusters for the test to "
                  "reject any shift (about 5 or fewer at alpha 0.05); the cell says how many questions "
                  "differ"),
    ("no question differs", "a CI of [0, 0]: every question ties with the baseline, so there is no "
                            "difference to estimate (not a precise 0); 'zero width' names a CI [x, x] "
                            "whose clusters all have the same summed difference (for example, "
                            "the differing questions cancel within each cluster)"),
    (CI_ODD, "the CI does not contain its own Δ (or its bounds are reversed): an inconsistent "
             "interval, shown as computed; read Δ and p, not the interval"),
    ("p", "two-sided p-value of the paired test (sign-flip randomisation by default)"),
    ("p adj", "p after the multiple-comparison correction over the family (Holm by default)"),
    ("sig.", "▲/▼ significant after correction (higher/lower than the baseline), with better/worse "
             "by the metric's direction"),
    ("d_z", "standardised paired effect: mean of the per-question differences divided by their "
            "standard deviation"),
    ("W/T/L", "questions where the variant scores above / equal to / below the baseline"),
    ("n", "questions with a defined value in both runs (unanswerable questions have no retrieval "
          "scores) / the clusters they come in (questions sharing a document: the unit of the tests)"),
    ("not affected", "the variant computes the same stage outputs as the baseline for this metric "
                     "(e.g. a generator sweep and retrieval metrics): Δ 0 by construction, not a finding"),
    ("P10", "where the worst tenth of a variant's questions starts: at least a tenth of them "
            "score this or worse (the k-th worst of the n defined scores, k = ⌈n/10⌉; the "
            "highest tenth for a lower-is-better metric); descriptive, not tested"),
    ("MDE", "minimum detectable effect: the smallest Δ these clusters detect with 80% power at the "
            "corrected level"),
    ("ok", "bucket: answerable, answered correctly"),
    ("retrieval_miss", "bucket: no gold evidence among the fused candidates"),
    ("ranking_loss", "bucket: among the candidates, but not in the reranked top (before the budget)"),
    ("budget_cut", "bucket: in the reranked top, but dropped by the context token budget"),
    ("partial_support", "bucket: some but not every evidence group in the prompt (a multi-hop "
                        "question missing one of its supporting passages)"),
    ("answer_wrong", "bucket: gold evidence in the prompt (or closed book), but the answer is "
                     "wrong or refused"),
    ("generation_error", "bucket: the generator failed (timeout, HTTP error, no output after "
                         "retries); the answer metric of the same name counts these"),
    ("not used", "a retrieval metric of a variant whose generator reads no context (closed "
                 "book): its answers never see what the metric measures, so it is not shown"),
    ("correct_refusal", "bucket: unanswerable question, and the generator refused"),
    ("false_acceptance", "bucket: unanswerable question answered anyway"),
    ("no_evidence", "bucket: the data gives no evidence span, so retrieval cannot be judged"),
]


def head(label: str) -> str:
    """A table header linked to its glossary entry."""
    return f"[{label}](#glossary)"


def glossary_lines(ci: str | None = None, disagree: bool = False) -> list[str]:
    """The glossary; `ci`: this report's own meaning of CI (intervals.ci_text), in place of
    the default; `disagree`: with the entry of the mark of a CI that disagrees with sig."""
    lines = ['<h2 id="glossary">Glossary</h2>', "", "| term | meaning |", "|---|---|"]
    for t, d in GLOSSARY:
        text = f'confidence interval of Δ in this report: {ci}' if t == 'CI' and ci else d
        lines.append(f"| {t} | {text} |")
        if t == CI_ODD and disagree:
            lines.append(f"| {DISAGREE} | {DISAGREE_TEXT} |")
    return lines


def _rows(variables: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str, str]]:
    """(variable, variant, value label) for every non-baseline variant, grouped by variable."""
    return [(var, name, value) for var, pts in variables.items() for name, value in pts[1:]]


def _sig(r: dict[str, Any]) -> str:
    if not is_significant(r):
        return ""
    verdict = judge(r["metric"], r["delta"])
    return ("▲ " if r["delta"] > 0 else "▼ ") + verdict


def overview_table(variables: dict[str, list[tuple[str, str]]], key: Sequence[str],
                   means: dict[tuple[str, str], float], srows: dict[tuple[str, str], dict],
                   unaffected: AbstractSet[tuple[str, str]] = frozenset(),
                   per_query: pl.DataFrame | None = None,
                   unused: AbstractSet[tuple[str, str]] = frozenset()) -> list[str]:
    """One row per variant: its Δ [CI] and significance on every key metric
    ("not affected" where the variant computes the same stage outputs as the baseline);
    `per_query` counts the differing questions of a degenerate or unbounded interval."""
    cols = " | ".join(f"{m}: {head('Δ')} {head('CI')} | {head('sig.')}" for m in key)
    out = [f"| variable | value | {cols} |", "|---|---|" + "---:|---|" * len(key)]
    base = " | ".join(f"mean {fmt(means.get(('baseline', m), math.nan))} | " for m in key)
    out.append(f"| baseline | | {base}|")
    for var, name, value in _rows(variables):
        cells = []
        for m in key:
            r = srows.get((name, m))
            if (name, m) in unused:  # retrieval of a variant that reads no context
                cells.append("[not used](#glossary) | ")
                continue
            if (name, m) in unaffected:
                cells.append("[not affected](#glossary) | ")
                continue
            if r is None:
                cells.append("– | ")
                continue
            cells.append(f"{fmt(r.get('delta'))} {ci_cell(r, per_query)} | {_sig(r)}")
        out.append(f"| {var} | {value} | " + " | ".join(cells) + " |")
    return out


def forest_plot(variables: dict[str, list[tuple[str, str]]], key: Sequence[str],
                srows: dict[tuple[str, str], dict],
                unaffected: AbstractSet[tuple[str, str]] = frozenset()) -> bytes:
    """forest_figure as SVG bytes."""
    return figure_bytes(forest_figure(variables, key, srows, unaffected))


def forest_figure(variables: dict[str, list[tuple[str, str]]], key: Sequence[str],
                  srows: dict[tuple[str, str], dict],
                  unaffected: AbstractSet[tuple[str, str]] = frozenset()):
    """Δ with its CI per variant (rows, grouped by variable) and key metric (panels), on
    axes that hold 0 (the dashed line: no difference); nothing is drawn where the variant
    cannot change the metric or Δ is not finite; an infinite bound is not drawn, and a CI
    that does not contain Δ gets an open diamond. Returns the matplotlib figure."""
    rows = _rows(variables)
    n = max(1, len(key))
    labels = ["\n".join(textwrap.wrap(f"{var} = {value}", 34)) or var for var, _, value in rows]
    height = 0.42 * sum(1 + lbl.count("\n") * 0.6 for lbl in labels) + 1.3
    fig, axes = plt.subplots(1, n, figsize=(2.6 * n + 2.6, max(2.0, height)), sharey=True,
                             squeeze=False)
    ys = list(range(len(rows)))[::-1]
    any_odd = False
    for i, metric in enumerate(key):
        ax = axes[0][i]
        ax.axvline(0, color=NONSIG, lw=0.8, ls="--")
        for y, (_, name, _) in zip(ys, rows):
            r = srows.get((name, metric))
            if (name, metric) in unaffected or r is None or not finite(r.get("delta")):
                continue
            sig = is_significant(r)
            verdict = judge(metric, r["delta"]) if sig else ""
            color = {"better": BETTER, "worse": WORSE}.get(verdict, NEUTRAL if sig else NONSIG)
            lo, hi = r.get("ci_low"), r.get("ci_high")
            if finite(lo) and finite(hi):
                ax.plot([lo, hi], [y, y], color=color, lw=2, solid_capstyle="butt")
            odd = ci_odd(lo, hi, r["delta"])
            any_odd = any_odd or odd
            ax.plot([r["delta"]], [y], "D" if odd else "o", color=color, ms=6 if sig else 4,
                    mfc=color if sig and not odd else "white")
        ax.set_title(metric, fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", alpha=0.3)
        # thin separators between swept variables
        for y in range(len(rows) - 1):
            if rows[len(rows) - 1 - y][0] != rows[len(rows) - 2 - y][0]:
                ax.axhline(y + 0.5, color="#d0d7de", lw=0.8)
    axes[0][0].set_yticks(ys, labels, fontsize=8)
    axes[0][0].set_ylim(-0.6, len(rows) - 0.4)
    fig.suptitle("Δ vs baseline with CI (filled: significant after correction; "
                 "green better, red worse)"
                 + ("\n◇: the CI does not contain Δ" if any_odd else ""), fontsize=9)
    fig.tight_layout()
    return fig
