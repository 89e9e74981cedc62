"""The report's worth text (components/report/worth.py, issue 56 item 5): both Bonferroni
levels, the 0/1 corners named in their rows, a starred row whose interval holds 0
explained, the test's symmetry assumption and the table-wide error rate said there."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from ablate.components.report.worth import worth_section
from ablate.components.stats.factorial import Design
from ablate.components.stats.worth_table import worth_effects

NAMES = ("a", "b", "c", "d")


def _worth(binary: bool = False) -> pl.DataFrame:
    cells = list(itertools.product((0, 1), repeat=4))
    names = ["baseline"] + [f"cell{i}" for i in range(1, 16)]
    design = Design(names=NAMES, labels=tuple(("off", "on") for _ in NAMES),
                    cells=dict(zip(names, cells)), fraction="full")
    rng = np.random.default_rng(4)
    rows = []
    for q in range(80):
        base = rng.uniform()
        for name, cell in zip(names, cells):
            x = base + 0.05 * cell[0] + rng.normal(0, 0.05)
            y = float(q < 30 and cell[0] == 1) if binary else x
            rows.append({"variant": name, "qid": f"q{q}", "cluster": f"d{q // 4}",
                         "m/x": x, "m/y": y})
    return worth_effects(pl.DataFrame(rows), design, metrics=["m/x", "m/y"], resamples=2000,
                         cluster_col="cluster")


def test_the_text_gives_the_level_of_the_values_and_of_the_pairs():
    text = "\n".join(worth_section(_worth(), ["m/x", "m/y"]))
    assert "0.9875" in text and "0.9917" in text, text


def test_a_factor_that_changes_nothing_on_a_binary_metric_is_named_in_its_row():
    w = _worth(binary=True)
    text = "\n".join(worth_section(w, ["m/x", "m/y"]))
    row = next(ln for ln in text.splitlines() if ln.startswith("| b (on)") and "no question" in ln)
    assert "[" in row


def test_a_starred_row_whose_interval_holds_zero_is_marked_and_explained():
    w = _worth().with_columns(
        significant=pl.when(pl.col("factor") == "b").then(True).otherwise(pl.col("significant")),
        ci_low=pl.when(pl.col("factor") == "b").then(-0.01).otherwise(pl.col("ci_low")),
        ci_high=pl.when(pl.col("factor") == "b").then(0.01).otherwise(pl.col("ci_high")))
    text = "\n".join(worth_section(w, ["m/x"]))
    row = next(ln for ln in text.splitlines() if ln.startswith("| b (on)"))
    assert "†" in row
    assert "† " in text and "sign-flip" in text


def test_the_symmetry_assumption_and_the_table_wide_error_rate_are_said():
    text = "\n".join(worth_section(_worth(), ["m/x", "m/y"]))
    assert "symmetric" in text
    assert "2 key metrics" in text and "0.1" in text
