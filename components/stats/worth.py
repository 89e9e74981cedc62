"""What each part is worth: Shapley values and pairwise Shapley interaction indices of
the factors of a two-level full factorial design (each factor off = the baseline's level,
on = the alternative), as linear contrasts of the cells.

A cell is the set S of factors at their alternative level (a 0/1 tuple in design order);
v(S) is a metric's value there, so v(empty) is the baseline and v(full) every change at
once. For k factors:

- the **Shapley value** of factor i is its marginal contribution v(S + i) - v(S)
  averaged over the k! orders in which the factors can be switched on:
  phi_i = sum over S not holding i of |S|! (k - |S| - 1)! / k! [v(S + i) - v(S)];
  the values add up to v(full) - v(empty) (efficiency), a factor that never changes
  anything gets 0 (dummy), and an additive game gives each factor its own effect;
- the **Shapley interaction index** of the pair i, j (Grabisch 1997) averages the
  difference of differences v(T+ij) - v(T+i) - v(T+j) + v(T) over the T holding
  neither, with weights |T|! (k - |T| - 2)! / (k - 1)!: 0 when the two parts add up,
  > 0 when the metric is higher with both than their effects add up to, < 0 when lower
  (better or worse by the metric's direction: components/report/worth.together).

Both are linear in the cell values, so a question's value of each is a fixed weighted
sum of its scores in the cells (`shapley_weights`, `interaction_weights`) and the mean
over questions is the value of the mean game: the per-question contrasts are tested and
given intervals on clusters like any paired difference (ablate.components.stats.worth_table).

Beyond the sizes that can be run in full (2^k cells), `permutation_plan` samples orders
and `sampled_shapley` estimates the values from the cells those orders visit (k + 1 per
order) with the approximation error of the sample (the standard error over orders).
Plain numpy.
"""

from __future__ import annotations

import itertools
import math
from typing import Mapping, Sequence

import numpy as np

MAX_EXACT_FACTORS = 8  # 256 cells


def all_cells(k: int) -> list[tuple[int, ...]]:
    """Every cell of a 2^k design, the all-baseline cell first, in lexicographic order
    (the order of ablate.components.stats.design.design_cells)."""
    return list(itertools.product((0, 1), repeat=k))


def _check_cells(cells: Sequence[tuple[int, ...]], k: int) -> np.ndarray:
    arr = np.asarray(cells, dtype=np.int64).reshape(len(cells), k)
    if len(cells) != 2 ** k or len({tuple(c) for c in arr.tolist()}) != 2 ** k or \
            not np.isin(arr, (0, 1)).all():
        raise ValueError(f"a worth analysis needs every cell of a full 2^{k} design "
                         f"({2 ** k} cells of 0/1 levels), got {len(cells)}")
    return arr


def shapley_weights(cells: Sequence[tuple[int, ...]]) -> np.ndarray:
    """(cells x k) weights: factor i's Shapley value is sum_c W[c, i] * v(c)."""
    k = len(cells[0]) if len(cells) else 0
    arr = _check_cells(cells, k)
    size = arr.sum(axis=1)
    fk = math.factorial(k)
    W = np.zeros((len(cells), k))
    for i in range(k):
        on = arr[:, i] == 1
        # v(S) with i in S enters as v(S' + i), S' = S - i, weight |S'|!(k-|S'|-1)!/k!;
        # v(S) with i not in S enters as -v(S), weight |S|!(k-|S|-1)!/k!
        s_prime = np.where(on, size - 1, size)
        w = np.array([math.factorial(int(s)) * math.factorial(k - int(s) - 1) / fk
                      for s in s_prime])
        W[:, i] = np.where(on, w, -w)
    return W


def factor_pairs(k: int) -> list[tuple[int, int]]:
    """The pairs (i, j), i < j, in the order of interaction_weights' columns."""
    return list(itertools.combinations(range(k), 2))


def interaction_weights(cells: Sequence[tuple[int, ...]]) -> np.ndarray:
    """(cells x k(k-1)/2) weights of the pairwise Shapley interaction indices, columns
    in factor_pairs order."""
    k = len(cells[0]) if len(cells) else 0
    arr = _check_cells(cells, k)
    pairs = factor_pairs(k)
    W = np.zeros((len(cells), len(pairs)))
    if not pairs:
        return W
    fk1 = math.factorial(k - 1)
    for col, (i, j) in enumerate(pairs):
        both = arr[:, i] + arr[:, j]
        t = arr.sum(axis=1) - both                      # |T|, T = S - {i, j}
        w = np.array([math.factorial(int(s)) * math.factorial(k - int(s) - 2) / fk1
                      for s in t])
        W[:, col] = np.where(both == 1, -w, w)
    return W


def shapley_values(values: np.ndarray, cells: Sequence[tuple[int, ...]]) -> np.ndarray:
    """Shapley values of `values` (... x cells, the last axis in `cells` order): ... x k."""
    return np.asarray(values, dtype=float) @ shapley_weights(cells)


def interaction_indices(values: np.ndarray, cells: Sequence[tuple[int, ...]]) -> np.ndarray:
    """Pairwise Shapley interaction indices of `values` (... x cells): ... x pairs."""
    return np.asarray(values, dtype=float) @ interaction_weights(cells)


def full_minus_empty_weights(cells: Sequence[tuple[int, ...]]) -> np.ndarray:
    """(cells,) weights of v(full) - v(empty), what the Shapley values add up to."""
    arr = np.asarray(cells, dtype=np.int64)
    k = arr.shape[1]
    return ((arr.sum(axis=1) == k).astype(float) - (arr.sum(axis=1) == 0).astype(float))


# --- beyond exact sizes: a random sample of orders --------------------------------------

def permutation_plan(k: int, n_orders: int, seed: int = 0) -> np.ndarray:
    """(n_orders x k) random orders of the factors, deterministic given the seed; each
    order is drawn with its reverse (antithetic pairs: the estimate's variance is lower
    and the plan visits the empty and the full cell in every pair)."""
    if k < 1 or n_orders < 4 or n_orders % 2:
        raise ValueError("a permutation plan needs at least 1 factor and an even number "
                         f"of orders (at least 4), got {n_orders}")
    rng = np.random.default_rng([seed, 0x5A91])
    fwd = np.argsort(rng.random((n_orders // 2, k)), axis=1)
    return np.concatenate([fwd, fwd[:, ::-1]])


def plan_cells(orders: np.ndarray) -> list[tuple[int, ...]]:
    """The cells the orders visit (each order's chain from empty to full), sorted."""
    k = orders.shape[1]
    seen = set()
    for order in orders.tolist():
        cell = [0] * k
        seen.add(tuple(cell))
        for f in order:
            cell[f] = 1
            seen.add(tuple(cell))
    return sorted(seen)


def order_contributions(orders: np.ndarray, cell_values: Mapping[tuple[int, ...], np.ndarray]
                        ) -> np.ndarray:
    """(orders x ... x k) marginal contribution of each factor in each order, the cell
    values being arrays (or floats) of one shape."""
    k = orders.shape[1]
    out = []
    for order in orders.tolist():
        cell = [0] * k
        prev = np.asarray(cell_values[tuple(cell)], dtype=float)
        contrib: list[np.ndarray] = [np.empty(0)] * k
        for f in order:
            cell[f] = 1
            cur = np.asarray(cell_values[tuple(cell)], dtype=float)
            contrib[f] = cur - prev
            prev = cur
        out.append(np.stack(contrib, axis=-1))
    return np.stack(out)


def sampled_shapley(orders: np.ndarray, cell_values: Mapping[tuple[int, ...], np.ndarray]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(estimate, approximation error): the mean marginal contribution over the sampled
    orders and its standard error over orders (antithetic pairs averaged first, so the
    error counts pairs, not orders; `orders` from permutation_plan). The estimates add up
    to v(full) - v(empty) exactly."""
    c = order_contributions(orders, cell_values)
    half = c.shape[0] // 2
    c = 0.5 * (c[:half] + c[half:])
    return c.mean(axis=0), c.std(axis=0, ddof=1) / math.sqrt(half)


def permutation_weights(orders: np.ndarray, cells: Sequence[tuple[int, ...]]) -> np.ndarray:
    """(cells x k) weights of sampled_shapley's estimate, for per-question contrasts."""
    index = {tuple(c): r for r, c in enumerate(cells)}
    k = orders.shape[1]
    W = np.zeros((len(cells), k))
    for order in orders.tolist():
        cell = [0] * k
        for f in order:
            W[index[tuple(cell)], f] -= 1.0
            cell[f] = 1
            W[index[tuple(cell)], f] += 1.0
    return W / orders.shape[0]
