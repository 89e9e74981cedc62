"""The report's factorial section and interaction plots, from synthetic results."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ablate.components.report.factorial import (
    cell_means,
    factorial_section,
    interaction_plots,
    marginal_means,
    sweep_design,
)
from ablate.components.stats.factorial import factorial_effects

NAMES = {(0, 0): "baseline", (1, 0): "a=2", (0, 1): "b=y", (1, 1): "a=2 × b=y"}
MANIFEST = {"design": {"kind": "factorial", "fraction": "full",
                       "variables": {"a": ["1", "2"], "b": ["x", "y"]}},
            "statistics": {"test": "permutation", "correction": "holm", "family": "per_metric"}}
VARIANTS = [{"name": n, "factors": {"a": "12"[c[0]], "b": "xy"[c[1]]}} for c, n in NAMES.items()]


def per_query(seed: int = 0, n: int = 120) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for (a, b), name in NAMES.items():
        y = 0.4 + 0.1 * a + 0.2 * a * b + rng.normal(0, 0.1, n)
        y[:7] = np.nan if (a, b) == (1, 1) else y[:7]   # 7 questions lack a score in one cell
        rows += [{"variant": name, "qid": f"q{i:03d}", "answer/f1": float(y[i])} for i in range(n)]
    return pl.DataFrame(rows)


def test_section_and_plot_for_a_design():
    pq = per_query()
    design = sweep_design(MANIFEST, VARIANTS)
    effects = factorial_effects(pq, design, metrics=["answer/f1"], resamples=500,
                                bootstrap_resamples=300)
    plots = interaction_plots(MANIFEST, VARIANTS, pq, effects, ["answer/f1"])
    assert list(plots) == ["interaction_a__b.svg"] and plots["interaction_a__b.svg"][:5] == b"<?xml"
    lines = factorial_section(MANIFEST, VARIANTS, effects, ["answer/f1"], list(plots))
    text = "\n".join(lines)
    assert lines[0] == "## Factorial: interactions"
    assert "![a × b: interaction plot of the key metrics](plots/interaction_a__b.svg)" in text
    assert "Significant interactions: a=2 × b=y (+0.2" in text
    assert "| a=2 × b=y | interaction |" in text and "| 113 |" in text


def test_plotted_means_give_the_tested_interaction():
    pq = per_query(seed=1)
    design = sweep_design(MANIFEST, VARIANTS)
    effects = factorial_effects(pq, design, metrics=["answer/f1"], resamples=500,
                                bootstrap_resamples=300)
    grid = marginal_means(cell_means(pq, design, "answer/f1"), design, 0, 1)
    interaction = effects.filter(pl.col("kind") == "interaction")["estimate"][0]
    assert grid[1, 1] - grid[1, 0] - grid[0, 1] + grid[0, 0] == pytest.approx(interaction)


def test_no_section_without_a_design():
    assert sweep_design({}, VARIANTS) is None
    assert factorial_section({"design": None}, VARIANTS, None, ["answer/f1"]) == []
    assert interaction_plots({}, VARIANTS, per_query(), None, ["answer/f1"]) == {}
