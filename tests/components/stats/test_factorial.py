"""Factorial designs and their analysis: cells, alias structure, contrast weights, and
effects estimated and tested on synthetic per-question scores with planted effects."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from ablate.components.contract.errors import InputError
from ablate.components.stats.design import Effect, contrast_weights, design_cells, design_effects
from ablate.components.stats.factorial import Design, factorial_effects

FAST = dict(resamples=2000, bootstrap_resamples=1000)


def table(design_levels, score, n=150, seed=0, fraction="full"):
    """Per-question scores of every cell: score(cell levels, rng) -> n values, plus a
    per-question offset shared by every cell (questions differ in difficulty)."""
    rng = np.random.default_rng(seed)
    cells = design_cells(design_levels, fraction)
    names = {c: ("baseline" if not any(c) else "cell" + "".join(map(str, c))) for c in cells}
    offset = rng.normal(0.5, 0.2, n)
    rows = []
    for c in cells:
        y = offset + score(c, rng, n)
        rows += [{"variant": names[c], "qid": f"q{i:03d}", "m/score": float(y[i])} for i in range(n)]
    labels = tuple(tuple(str(k) for k in range(lv)) for lv in design_levels)
    design = Design(tuple("ABCD"[: len(design_levels)]), labels, fraction,
                    {names[c]: c for c in cells})
    return pl.DataFrame(rows), design


def row(effects: pl.DataFrame, effect: str) -> dict:
    return effects.filter(pl.col("effect") == effect).row(0, named=True)


def test_full_and_half_cells():
    assert design_cells([2, 2]) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert len(design_cells([3, 2, 2])) == 12
    half = design_cells([2, 2, 2, 2], "half")
    assert len(half) == 8 and half[0] == (0, 0, 0, 0)
    x = np.array(half) * 2 - 1                                 # +-1 coding, level 0 = -1
    assert np.array_equal(x[:, 3], x[:, 0] * x[:, 1] * x[:, 2])  # D = ABC
    for a, b in itertools.combinations(range(4), 2):             # every pair balanced
        combos = [tuple(c[[a, b]]) for c in np.array(half)]
        assert sorted(combos) == sorted([(0, 0), (0, 1), (1, 0), (1, 1)] * 2)
    with pytest.raises(ValueError):
        design_cells([2, 2, 2], "half")


def test_effects_and_aliases():
    assert [(e.factors, e.levels) for e in design_effects([2, 2])] == [
        ((0,), (1,)), ((1,), (1,)), ((0, 1), (1, 1))]
    three = design_effects([3, 3])
    assert sum(e.kind == "main" for e in three) == 4 and sum(e.kind == "interaction" for e in three) == 4
    half = design_effects([2, 2, 2, 2], "half")
    assert [e.factors for e in half if e.kind == "interaction"] == [(0, 1), (0, 2), (0, 3)]
    assert half[0].aliases == ((1, 2, 3),) and half[4].aliases == ((2, 3),)
    cells = design_cells([2, 2, 2, 2], "half")
    for e in half[4:]:  # an aliased pair has the very same contrast in the fraction
        other = Effect(e.aliases[0], (1, 1))
        assert np.allclose(contrast_weights(cells, e), contrast_weights(cells, other))
    full = design_cells([2, 2, 2, 2])
    assert not np.allclose(contrast_weights(full, Effect((0, 1), (1, 1))),
                           contrast_weights(full, Effect((2, 3), (1, 1))))


def test_contrast_weights_are_the_difference_of_differences():
    cells = design_cells([2, 2])
    assert np.allclose(contrast_weights(cells, Effect((0, 1), (1, 1))), [1, -1, -1, 1])
    assert np.allclose(contrast_weights(cells, Effect((0,), (1,))), [-0.5, -0.5, 0.5, 0.5])
    cells3 = design_cells([3, 2])
    w = contrast_weights(cells3, Effect((0, 1), (2, 1)))       # A level 2 x B level 1
    assert np.allclose(w, [1, -1, 0, 0, -1, 1]) and np.isclose(w.sum(), 0)


def test_estimates_equal_the_cell_mean_contrasts():
    data, design = table([3, 2], lambda c, rng, n: rng.normal(0.1 * c[0] * c[1], 0.2, n))
    out = factorial_effects(data, design, metrics=["m/score"], **FAST)
    m = data.group_by("variant").agg(pl.col("m/score").mean())
    mean = {r["variant"]: r["m/score"] for r in m.iter_rows(named=True)}
    cell = {c: mean[name] for name, c in design.cells.items()}
    expect = {
        "A=1": (cell[1, 0] + cell[1, 1] - cell[0, 0] - cell[0, 1]) / 2,
        "A=2": (cell[2, 0] + cell[2, 1] - cell[0, 0] - cell[0, 1]) / 2,
        "B=1": sum(cell[a, 1] - cell[a, 0] for a in range(3)) / 3,
        "A=1 × B=1": cell[1, 1] - cell[1, 0] - cell[0, 1] + cell[0, 0],
        "A=2 × B=1": cell[2, 1] - cell[2, 0] - cell[0, 1] + cell[0, 0],
    }
    for effect, value in expect.items():
        assert row(out, effect)["estimate"] == pytest.approx(value, abs=1e-12)
    assert sorted(out["effect"].to_list()) == sorted(expect)
    assert set(out["n"]) == {150} and out["family_size"].to_list() == [5] * 5


@pytest.mark.parametrize("seed", range(8))
def test_a_planted_interaction_is_found_and_a_null_one_is_not(seed):
    # both: main effects of A and B; only the first: A x B interaction of +0.1
    planted, design = table([2, 2], lambda c, rng, n: rng.normal(
        0.05 * c[0] + 0.05 * c[1] + 0.1 * c[0] * c[1], 0.15, n), seed=seed)
    null, _ = table([2, 2], lambda c, rng, n: rng.normal(
        0.05 * c[0] + 0.05 * c[1], 0.15, n), seed=seed + 100)
    hit = row(factorial_effects(planted, design, metrics=["m/score"], seed=seed, **FAST), "A=1 × B=1")
    assert hit["significant"] and hit["ci_low"] > 0
    assert abs(hit["estimate"] - 0.1) < 0.075  # 3 standard errors (contrast sd 0.3, n 150)
    out = factorial_effects(null, design, metrics=["m/score"], seed=seed, **FAST)
    assert not row(out, "A=1 × B=1")["significant"]
    assert row(out, "A=1")["significant"] and row(out, "B=1")["significant"]


def test_null_interactions_are_rarely_significant_over_seeds():
    """Under no interaction the corrected test rejects at most about alpha of the time."""
    rejected = 0
    for seed in range(40):
        data, design = table([2, 2], lambda c, rng, n: rng.normal(0.05 * c[0], 0.15, n),
                             n=60, seed=1000 + seed)
        out = factorial_effects(data, design, metrics=["m/score"], seed=seed,
                                resamples=500, bootstrap_resamples=200, ci_method="t")
        rejected += row(out, "A=1 × B=1")["p_value"] <= 0.05
    assert rejected <= 6  # 40 tests at 5 %: 2 expected; P(more than 6) < 0.01


def test_three_levels_find_the_planted_level():
    data, design = table([3, 2], lambda c, rng, n: rng.normal(
        0.12 * (c[0] == 2) * c[1], 0.15, n), seed=3)
    out = factorial_effects(data, design, metrics=["m/score"], **FAST)
    assert row(out, "A=2 × B=1")["significant"]
    assert not row(out, "A=1 × B=1")["significant"]


def test_half_fraction_main_effects_are_clear_of_two_way_interactions():
    """Resolution IV: with main effects and a large A x B interaction (no noise), every
    main effect estimate is its planted size, and A x B (= C x D) carries the interaction."""
    beta = np.array([0.1, -0.05, 0.02, 0.08])
    data, design = table([2, 2, 2, 2], lambda c, rng, n: np.full(n, float(
        beta @ np.array(c) + 0.3 * c[0] * c[1])), n=20, fraction="half")
    out = factorial_effects(data, design, metrics=["m/score"], **FAST)
    for i, letter in enumerate("ABCD"):
        assert row(out, f"{letter}=1")["estimate"] == pytest.approx(beta[i] + (0.15 if i < 2 else 0))
    ab = row(out, "A=1 × B=1")
    assert ab["estimate"] == pytest.approx(0.3) and ab["aliases"] == "C × D"
    assert row(out, "A=1 × C=1")["estimate"] == pytest.approx(0.0, abs=1e-12)


def test_questions_without_a_score_in_every_cell_are_left_out():
    data, design = table([2, 2], lambda c, rng, n: rng.normal(0, 0.1, n), n=30)
    data = data.with_columns(pl.when((pl.col("variant") == "cell11") & (pl.col("qid") < "q005"))
                             .then(float("nan")).otherwise(pl.col("m/score")).alias("m/score"))
    out = factorial_effects(data, design, metrics=["m/score"], **FAST)
    assert set(out["n"]) == {25} and set(out["n_excluded"]) == {5}


def test_a_missing_cell_is_an_input_error():
    data, design = table([2, 2], lambda c, rng, n: rng.normal(0, 0.1, n), n=10)
    with pytest.raises(InputError, match="cell11"):
        factorial_effects(data.filter(pl.col("variant") != "cell11"), design, metrics=["m/score"])
