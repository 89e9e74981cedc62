"""Shapley values and interaction indices of a two-level factorial (components/stats/worth.py)
and their per-question analysis with cluster intervals (components/stats/worth_table.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest

from ablate.components.contract.errors import InputError
from ablate.components.stats.factorial import Design
from ablate.components.stats.worth import (
    all_cells,
    factor_pairs,
    interaction_indices,
    permutation_plan,
    permutation_weights,
    plan_cells,
    sampled_shapley,
    shapley_values,
)
from ablate.components.stats.worth_table import WORTH_SCHEMA, worth_applies, worth_effects


def brute_shapley(v: dict, k: int) -> np.ndarray:
    """The definition: the marginal contribution averaged over all k! orders."""
    phi = np.zeros(k)
    for order in itertools.permutations(range(k)):
        cell = [0] * k
        for f in order:
            before = v[tuple(cell)]
            cell[f] = 1
            phi[f] += v[tuple(cell)] - before
    return phi / math.factorial(k)


def brute_interaction(v: dict, k: int, i: int, j: int) -> float:
    """Grabisch's definition, summed over the subsets T of the other factors."""
    rest = [f for f in range(k) if f not in (i, j)]
    total = 0.0
    for t in range(len(rest) + 1):
        for T in itertools.combinations(rest, t):
            def val(extra):
                cell = [0] * k
                for f in (*T, *extra):
                    cell[f] = 1
                return v[tuple(cell)]
            delta = val((i, j)) - val((i,)) - val((j,)) + val(())
            total += math.factorial(t) * math.factorial(k - t - 2) / math.factorial(k - 1) * delta
    return total


@pytest.mark.parametrize("k", [2, 3, 5])
def test_exact_values_match_the_definition(k):
    rng = np.random.default_rng(k)
    cells = all_cells(k)
    y = rng.normal(size=len(cells))
    v = dict(zip(cells, y))
    np.testing.assert_allclose(shapley_values(y, cells), brute_shapley(v, k), atol=1e-12)
    inter = interaction_indices(y, cells)
    for col, (i, j) in enumerate(factor_pairs(k)):
        assert inter[col] == pytest.approx(brute_interaction(v, k, i, j), abs=1e-12)


@pytest.mark.parametrize("k", [2, 4, 8])
def test_efficiency_values_sum_to_full_minus_empty_for_every_metric(k):
    rng = np.random.default_rng(10 + k)
    cells = all_cells(k)
    Y = rng.normal(size=(7, len(cells))) * rng.uniform(0.1, 100, size=(7, 1))  # 7 metrics
    phi = shapley_values(Y, cells)
    full, empty = cells.index((1,) * k), cells.index((0,) * k)
    np.testing.assert_allclose(phi.sum(axis=1), Y[:, full] - Y[:, empty], rtol=0, atol=1e-9)


def test_additive_game_gives_each_factor_its_effect_and_no_interaction():
    k = 4
    effects = np.array([0.3, -0.1, 0.0, 0.05])
    cells = all_cells(k)
    y = np.array([0.5 + effects @ np.array(c) for c in cells])
    np.testing.assert_allclose(shapley_values(y, cells), effects, atol=1e-12)
    np.testing.assert_allclose(interaction_indices(y, cells), 0.0, atol=1e-12)


def test_substitutes_split_their_shared_worth_and_interact_negatively():
    """Dense and BM25 find the same evidence: either alone gives 0.4, both 0.4. Removing
    one from the baseline costs nothing; Shapley gives each half, the interaction -0.4."""
    cells = all_cells(3)  # factor 2 is a dummy
    y = np.array([0.4 if (c[0] or c[1]) else 0.0 for c in cells])
    phi = shapley_values(y, cells)
    np.testing.assert_allclose(phi, [0.2, 0.2, 0.0], atol=1e-12)
    inter = dict(zip(factor_pairs(3), interaction_indices(y, cells)))
    assert inter[(0, 1)] == pytest.approx(-0.4)
    assert inter[(0, 2)] == pytest.approx(0.0, abs=1e-12)


def test_too_few_cells_are_refused():
    with pytest.raises(ValueError, match="every cell of a full 2"):
        shapley_values(np.zeros(3), all_cells(2)[:3])


def test_sampled_shapley_is_exact_in_sum_close_in_value_and_reports_its_error():
    k = 10
    rng = np.random.default_rng(3)
    beta = rng.normal(0, 0.1, k)
    gamma = rng.normal(0, 0.1, (k, k))

    def v(cell):
        x = np.array(cell, dtype=float)
        return float(beta @ x + x @ np.triu(gamma, 1) @ x + 0.3 * x[0] * x[1] * x[2]
                     + 0.2 * x[3] * x[4] * x[5] * x[6])
    # exact Shapley of a sum of unanimity terms: each term's weight shared by its members
    exact = beta + 0.5 * (np.triu(gamma, 1).sum(axis=1) + np.triu(gamma, 1).sum(axis=0))
    exact[:3] += 0.1
    exact[3:7] += 0.05
    orders = permutation_plan(k, 200, seed=1)
    cells = plan_cells(orders)
    assert len(cells) < 2 ** k
    values = {c: v(c) for c in cells}
    est, se = sampled_shapley(orders, values)
    assert est.sum() == pytest.approx(v((1,) * k) - v((0,) * k), abs=1e-9)
    assert np.all(np.abs(est - exact) < 5 * se + 1e-12)  # within its reported error
    assert np.all(se[:7] > 1e-3)  # the factors with higher-order terms are not exact
    W = permutation_weights(orders, cells)
    np.testing.assert_allclose(np.array([values[c] for c in cells]) @ W, est, atol=1e-12)
    again, _ = sampled_shapley(permutation_plan(k, 200, seed=1), values)
    np.testing.assert_array_equal(est, again)


# --- the per-question analysis ------------------------------------------------------------

FAST = dict(resamples=2000, bootstrap_resamples=1000)


def clustered_table(k, true_phi, inter=0.0, n_clusters=40, per=6, seed=0, noise=0.3):
    """Per-question scores of every cell of a 2^k design: an additive part `true_phi`,
    an interaction `inter` of factors 0 and 1, and cluster-shared noise."""
    rng = np.random.default_rng(seed)
    cells = all_cells(k)
    n = n_clusters * per
    clusters = np.repeat(np.arange(n_clusters), per)
    base = rng.normal(0.5, 0.2, n)
    rows = []
    for c in cells:
        x = np.array(c, dtype=float)
        y = (base + x @ np.asarray(true_phi) + inter * x[0] * x[1]
             + noise * (rng.normal(0, 1, n_clusters)[clusters] + rng.normal(0, 1, n)))
        name = "baseline" if not any(c) else "cell" + "".join(map(str, c))
        rows += [{"variant": name, "qid": f"q{i:04d}", "cluster": f"d{clusters[i]}",
                  "m/score": float(y[i])} for i in range(n)]
    names = tuple("ABCDEFGH"[:k])
    design = Design(names, tuple(("off", "on") for _ in names), "full",
                    {("baseline" if not any(c) else "cell" + "".join(map(str, c))): c
                     for c in cells})
    return pl.DataFrame(rows), design


def test_worth_table_rows_efficiency_and_planted_values():
    df, design = clustered_table(3, [0.5, 0.0, 0.2], inter=-0.4, seed=1, noise=0.2)
    out = worth_effects(df, design, metrics=["m/score"], cluster_col="cluster", seed=1, **FAST)
    assert out.schema == pl.Schema(WORTH_SCHEMA)
    assert out["kind"].to_list() == ["shapley"] * 3 + ["interaction"] * 3
    assert out["factor"].to_list()[3] == "A × B"
    sh = out.filter(pl.col("kind") == "shapley")
    assert sh["value"].sum() == pytest.approx(sh["full_minus_empty"][0], abs=1e-9)
    v = dict(zip(sh["factor"], sh.iter_rows(named=True)))
    # true Shapley: A 0.5 - 0.2 (half the interaction), B -0.2, C 0.2
    assert v["A"]["ci_low"] < 0.3 < v["A"]["ci_high"] and v["A"]["p_adjusted"] < 0.05
    assert v["B"]["ci_low"] < -0.2 < v["B"]["ci_high"]
    ab = out.filter(pl.col("factor") == "A × B").row(0, named=True)
    assert ab["ci_low"] < -0.4 < ab["ci_high"] and ab["significant"]
    ac = out.filter(pl.col("factor") == "A × C").row(0, named=True)
    assert not ac["significant"]
    assert set(out["family_size"].to_list()) == {3}
    assert out["ci_level"].to_list() == pytest.approx([1 - 0.05 / 3] * 6)
    assert all(m.startswith("cluster-") for m in out["ci_method"])
    again = worth_effects(df, design, metrics=["m/score"], cluster_col="cluster", seed=1, **FAST)
    assert out.equals(again)


def test_clusters_widen_the_intervals():
    df, design = clustered_table(2, [0.1, 0.1], seed=4, noise=0.5)
    clustered = worth_effects(df, design, metrics=["m/score"], cluster_col="cluster", **FAST)
    plain = worth_effects(df, design, metrics=["m/score"], cluster_col=None, **FAST)
    width = lambda t: (t["ci_high"] - t["ci_low"]).to_numpy()  # noqa: E731
    assert np.all(width(clustered) > 1.3 * width(plain))


def test_only_two_level_full_designs_apply():
    assert not worth_applies(Design(("A", "B"), (("0", "1"), ("0", "1", "2")), "full", {}))
    assert not worth_applies(Design(tuple("ABCD"), (("0", "1"),) * 4, "half", {}))
    assert worth_applies(Design(("A", "B"), (("0", "1"),) * 2, "full", {}))
    with pytest.raises(InputError, match="two-level"):
        worth_effects(pl.DataFrame({"variant": ["x"], "qid": ["q"], "m/s": [1.0]}),
                      Design(tuple("ABCD"), (("0", "1"),) * 4, "half", {}), metrics=["m/s"])


def test_the_cluster_bootstrap_is_an_option():
    df, design = clustered_table(2, [0.1, 0.1], seed=4)
    t = worth_effects(df, design, metrics=["m/score"], cluster_col="cluster", **FAST)
    b = worth_effects(df, design, metrics=["m/score"], cluster_col="cluster", ci_method="bca",
                      **FAST)
    assert set(t["ci_method"]) == {"cluster-t-bonferroni"}
    assert set(b["ci_method"]) == {"cluster-bca-bonferroni"}
    assert t["value"].equals(b["value"]) and not t["ci_low"].equals(b["ci_low"])
