"""Group-sequential testing of a paired difference: looks after each batch of questions,
stopping a comparison as soon as it is decided, with the type-I error kept at alpha over
all looks.

Method: Lan & DeMets (1983) alpha spending with the O'Brien–Fleming-type spending function
a(t) = 2 - 2 Phi(z_{1-a/2} / sqrt(t)) applied to a = alpha/2 on each side (symmetric
two-sided bounds, the convention of gsDesign and rpact), t the information fraction
n_k / N of the look. The boundaries c_k of the standardised statistic are solved look by
look so that the probability of first crossing at look k under the null is
alpha(t_k) - alpha(t_{k-1}), by the recursive numerical integration of Armitage, McPherson
& Rowe (1969) over the Brownian-motion representation (Jennison & Turnbull 2000, ch. 19).
Looks at arbitrary information fractions are allowed (the spending function, not a fixed
number of looks, controls the error), and only efficacy stopping is done (a comparison
that is never decided runs to its full n, where c_K is close to the fixed-sample z).

The statistic at a look is the paired z = mean(d) / (sd(d) / sqrt(n)) of the per-question
differences over the first n questions (a prefix of one seeded order, so looks are
nested); with batches of 30+ questions the normal approximation is what the simulation
test checks (tests/components/stats/test_sequential.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

METHOD = ("group-sequential: Lan-DeMets alpha spending, O'Brien-Fleming-type "
          "(Lan & DeMets 1983; Jennison & Turnbull 2000)")
_GRID = 801  # points of the continuation region per look


def spent(t: float, alpha: float) -> float:
    """Two-sided alpha spent by information fraction t: the O'Brien–Fleming-type function
    applied to alpha/2 on each side (symmetric bounds, as gsDesign and rpact do)."""
    from scipy import stats as sps  # lazily: importing scipy.stats takes ~1 s
    if t <= 0:
        return 0.0
    side = 2.0 - 2.0 * sps.norm.cdf(sps.norm.ppf(1.0 - alpha / 4.0) / math.sqrt(min(t, 1.0)))
    return float(2.0 * side)


@lru_cache(maxsize=512)
def boundaries(fractions: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    """z boundaries c_1..c_K for looks at increasing information `fractions` (last <= 1):
    reject at look k when |z_k| >= c_k."""
    from scipy import optimize
    from scipy import stats as sps
    ts = [float(t) for t in fractions]
    if not ts or any(b <= a for a, b in zip(ts, ts[1:])) or ts[0] <= 0 or ts[-1] > 1 + 1e-12:
        raise ValueError(f"information fractions must increase within (0, 1]: {fractions}")
    out: list[float] = []
    # sub-density of S = B(t) on the previous continuation region (set by the first look)
    grid: np.ndarray | None = None
    dens: np.ndarray | None = None
    prev_t = 0.0
    for k, t in enumerate(ts):
        target = spent(t, alpha) - spent(prev_t, alpha)
        dt = t - prev_t
        if k == 0:
            c = float(sps.norm.ppf(1.0 - target / 2.0))
            b = c * math.sqrt(t)
            grid = np.linspace(-b, b, _GRID)
            dens = sps.norm.pdf(grid, scale=math.sqrt(t))
        else:
            assert grid is not None and dens is not None  # the look k == 0 set both
            prev = grid
            sd = math.sqrt(dt)
            w = np.full(_GRID, prev[1] - prev[0])
            w[0] = w[-1] = w[0] / 2.0  # trapezoid weights
            mass = dens * w

            def cross(c: float) -> float:
                b = c * math.sqrt(t)
                return float(np.sum(mass * (sps.norm.sf((b - prev) / sd)
                                            + sps.norm.cdf((-b - prev) / sd))))
            if target <= 0:
                c = math.inf
            else:
                c = float(optimize.brentq(lambda x: cross(x) - target, 1e-6, 40.0, xtol=1e-10))
            b = c * math.sqrt(t)
            new = np.linspace(-b, b, _GRID)
            dens = (sps.norm.pdf((new[:, None] - prev[None, :]) / sd) / sd) @ mass
            grid = new
        out.append(c)
        prev_t = t
    return tuple(out)


def paired_z(diffs: Sequence[float] | np.ndarray) -> float:
    """mean / (sd / sqrt(n)) of the defined differences (0 when they are all equal)."""
    d = np.asarray([x for x in diffs if not math.isnan(x)], dtype=float)
    if d.size < 2:
        return 0.0
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0 if float(d.mean()) == 0.0 else math.copysign(math.inf, float(d.mean()))
    return float(d.mean() / (sd / math.sqrt(d.size)))


@dataclass(frozen=True)
class Look:
    n: int
    fraction: float
    z: float
    boundary: float

    @property
    def decided(self) -> bool:
        return abs(self.z) >= self.boundary


def run_looks(diffs: Sequence[float], sizes: Sequence[int], alpha: float) -> list[Look]:
    """The looks at the prefixes `sizes` of `diffs` (the comparison's full n is len(diffs)),
    up to and including the first that decides."""
    total = len(diffs)
    fractions = tuple(n / total for n in sizes)
    bounds = boundaries(fractions, alpha)
    out: list[Look] = []
    for n, t, c in zip(sizes, fractions, bounds):
        look = Look(n, t, paired_z(diffs[:n]), c)
        out.append(look)
        if look.decided:
            break
    return out


def look_sizes(total: int, batch: int) -> list[int]:
    """batch, 2 batch, ... and the total (a last partial batch joins the previous look
    when it is smaller than half a batch)."""
    sizes = list(range(batch, total, batch)) + [total]
    if len(sizes) > 1 and sizes[-1] - sizes[-2] < batch / 2:
        sizes.pop(-2)
    return sizes
