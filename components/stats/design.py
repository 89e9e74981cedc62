"""Factorial designs: which cells (combinations of levels) a design runs, which effects it
estimates, and the per-cell weights of each effect's contrast.

Levels are indexes per factor, 0 being the baseline's level. A **full** design runs every
combination. The **half** fraction is the resolution-IV 2^(4-1) design of four two-level
factors with generator D = ABC: in ±1 coding (level 0 = -1) x_D = x_A x_B x_C, so level
d = (a + b + c) mod 2 and the all-baseline cell is in it. Its defining relation is
I = ABCD: each main effect is aliased with a three-way interaction (A = BCD) and the
two-way interactions are aliased in pairs (AB = CD, AC = BD, AD = BC).

An effect compares cells through the means of the cells holding given levels (averaged
over the other factors' levels; in a full or balanced fractional design every such
group has the same number of cells):

- main effect of factor A at level k: mean(A = k) - mean(A = 0);
- two-way interaction of A at level k and B at level l, the difference of differences:
  [mean(A=k, B=l) - mean(A=k, B=0)] - [mean(A=0, B=l) - mean(A=0, B=0)], how much more
  A's change 0 -> k is worth at B = l than at B = 0 (the textbook 2^k "AB effect" is half
  of this).
A factor with 3 levels has 2 main-effect contrasts (each level vs the baseline's) and
its interactions one contrast per pair of non-baseline levels.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ablate.components.contract.vocab import FRACTIONS

LETTERS = "ABCD"


def design_cells(levels: Sequence[int], fraction: str = "full") -> list[tuple[int, ...]]:
    """The cells of a design over factors with `levels` levels each, the all-baseline
    cell first, then in lexicographic order."""
    full = list(itertools.product(*(range(n) for n in levels)))
    if fraction == "full":
        return full
    if fraction == "half":
        if tuple(levels) != (2, 2, 2, 2):
            raise ValueError("the half fraction is defined for 4 two-level factors")
        return [c for c in full if c[3] == (c[0] + c[1] + c[2]) % 2]
    raise ValueError(f"unknown fraction '{fraction}' (known: {', '.join(FRACTIONS)})")


@dataclass(frozen=True)
class Effect:
    """A main effect (one factor) or a two-way interaction (two factors), each factor at
    one non-baseline level compared with level 0; `aliases` are the other factor sets
    whose contrast is the same in this design."""

    factors: tuple[int, ...]
    levels: tuple[int, ...]
    aliases: tuple[tuple[int, ...], ...] = ()

    @property
    def kind(self) -> str:
        return "main" if len(self.factors) == 1 else "interaction"


def _aliases(factors: tuple[int, ...], n_factors: int, fraction: str) -> tuple[tuple[int, ...], ...]:
    if fraction != "half":
        return ()
    other = tuple(i for i in range(n_factors) if i not in factors)  # S x ABCD = the rest
    return (other,)


def design_effects(levels: Sequence[int], fraction: str = "full") -> list[Effect]:
    """Every main effect contrast, then every two-way interaction contrast. In the half
    fraction an aliased pair of interactions is one effect (AB, aliases CD)."""
    n = len(levels)
    out = [Effect((a,), (k,), _aliases((a,), n, fraction))
           for a in range(n) for k in range(1, levels[a])]
    for a, b in itertools.combinations(range(n), 2):
        if fraction == "half" and a != 0:
            continue  # AB = CD, AC = BD, AD = BC: the pairs with A stand for both
        out += [Effect((a, b), (k, m), _aliases((a, b), n, fraction))
                for k in range(1, levels[a]) for m in range(1, levels[b])]
    return out


def contrast_weights(cells: Sequence[tuple[int, ...]], effect: Effect) -> np.ndarray:
    """Per-cell weights w such that an effect's contrast is sum_c w_c * y_c (module
    docstring); every weight group sums to +-1, so the weights sum to 0."""
    arr = np.asarray(cells, dtype=np.int64)
    w = np.zeros(len(cells))
    terms: list[tuple[tuple[int, ...], float]]
    if effect.kind == "main":
        (k,) = effect.levels
        terms = [((k,), 1.0), ((0,), -1.0)]
    else:
        k, m = effect.levels
        terms = [((k, m), 1.0), ((k, 0), -1.0), ((0, m), -1.0), ((0, 0), 1.0)]
    cols = arr[:, list(effect.factors)]
    for target, sign in terms:
        group = np.all(cols == np.asarray(target), axis=1)
        if not group.any():
            raise ValueError(f"the design has no cell with levels {target} of factors "
                             f"{effect.factors}")
        w[group] += sign / group.sum()
    return w


def effect_label(effect: Effect, names: Sequence[str], labels: Sequence[Sequence[str]]) -> str:
    """'chunking.size=100' or 'chunking.size=100 × rerank.weights=semantic:1'."""
    return " × ".join(f"{names[f]}={labels[f][lv]}" for f, lv in zip(effect.factors, effect.levels))


def alias_label(effect: Effect, names: Sequence[str]) -> str:
    """The aliases as factor products ('chunking.size × context.budget'), '' when none."""
    return "; ".join(" × ".join(names[f] for f in group) for group in effect.aliases)
