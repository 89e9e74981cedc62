"""Group-sequential testing of a paired difference: looks after each batch of questions,
stopping a comparison as soon as it is decided, with the type-I error kept at alpha over
all looks.

Method: Lan & DeMets (1983) alpha spending with the O'Brien–Fleming-type spending function
a(t) = 2 - 2 Phi(z_{1-a/2} / sqrt(t)) applied to a = alpha/2 on each side (symmetric
two-sided bounds, the convention of gsDesign and rpact), t the information fraction
n_k / N of the look. The normal boundaries c_k are solved look by look so that the
probability of first crossing at look k under the null is alpha(t_k) - alpha(t_{k-1}), by
the recursive numerical integration of Armitage, McPherson & Rowe (1969) over the
Brownian-motion representation (Jennison & Turnbull 2000, ch. 19), here on one lattice
for all looks (so the step from look to look is a discrete convolution and ten thousand
looks take seconds). Looks at arbitrary information fractions are allowed, and only
efficacy stopping is done (a comparison never decided runs to its full n).

Tails are computed as survival functions (never 1 - cdf), so tiny early spending stays
exact; a look whose spending is below 1e-30 (it underflows on long schedules at small
alpha) spends nothing: its boundary is CAP (40) and it cannot decide. Every boundary is
finite.

The statistic at a look is the cluster-robust t of ablate.components.stats.clusters over
the questions used so far (theta / SE, CR1, df = G_k - 1 with G_k the clusters used so
far; each question its own cluster gives the paired t with n - 1 df). It is referred to
the t distribution: a look rejects when |t| >= stdtrit(df_k, Phi(c_k)), i.e. at the same
nominal one-look tail probability as the normal boundary c_k (the "significance level
approach" of Jennison & Turnbull 2000 for unknown variance). The information fraction
stays n_k / N; on clustered questions the early looks carry relatively more information
than that, which makes the looks more correlated than assumed and the procedure
conservative rather than liberal. The simulations of
tests/components/stats/test_sequential.py and benchmarks/sequential_validity.py check
the level (independent and clustered questions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from ablate.components.stats.clusters import cluster_se, cluster_sums

METHOD = ("group-sequential: Lan-DeMets alpha spending, O'Brien-Fleming-type, cluster-robust t "
          "at the looks' nominal levels (Lan & DeMets 1983; Jennison & Turnbull 2000)")
CAP = 40.0          # the boundary of a look that spends nothing: it cannot decide
_TINY = 1e-30       # spending below this is not spent (conservative)
# lattice points per standard deviation of the smallest increment, by number of looks (the
# error of the boundaries is ~ 0.015 / points^2: 4e-4 at 6, 7e-6 at 48)
_PER_SD = ((100, 48), (1000, 24), (4000, 12), (math.inf, 6))
_MIN_STEP = 1e-3    # ... but no finer than this (pathologically close looks)
_KERNEL_SD = 9.0    # the increment's density is cut at +-9 sd
_EXTENT = 13.0      # the density of B(t) is kept within +-13 sqrt(t)


def _ndtr(x):
    global _ndtr_ufunc
    if _ndtr_ufunc is None:  # lazily: importing scipy takes ~1 s
        from scipy.special import ndtr
        _ndtr_ufunc = ndtr
    return _ndtr_ufunc(x)


_ndtr_ufunc = None


def spent(t: float, alpha: float) -> float:
    """Two-sided alpha spent by information fraction t: the O'Brien–Fleming-type function
    applied to alpha/2 on each side (symmetric bounds, as gsDesign and rpact do), in
    survival-function form: 4 Phi(Phi^-1(alpha/4) / sqrt(t))."""
    from scipy.special import ndtri
    if t <= 0:
        return 0.0
    return float(4.0 * _ndtr(ndtri(alpha / 4.0) / math.sqrt(min(t, 1.0))))


def _pdf(x: np.ndarray, sd: float) -> np.ndarray:
    return np.exp(-0.5 * (x / sd) ** 2) / (sd * math.sqrt(2.0 * math.pi))


class _Region:
    """The sub-density of B(t) on the continuation region (-B, B) of the last look: its
    values at the lattice points i h (|i h| < B) and at the ends +-B (symmetric)."""

    def __init__(self, h: float, bound: float, inner: np.ndarray, end: float):
        self.h, self.bound = h, bound
        m = (inner.size - 1) // 2
        self.m = m
        x = np.concatenate(([-bound], np.arange(-m, m + 1) * h, [bound]))
        gaps = np.diff(x)
        w = np.zeros(x.size)
        w[:-1] += gaps / 2.0
        w[1:] += gaps / 2.0  # trapezoid weights
        self.x = x
        self.mass = w * np.concatenate(([end], inner, [end]))

    def _near(self, lo: float) -> slice:
        return slice(int(np.searchsorted(self.x, lo)), self.x.size)

    def upper(self, b: float, sd: float) -> float:
        """P(B(t) >= b at the next look, no crossing before): one tail of the crossing."""
        keep = self._near(b - 12.0 * sd)  # the others add < 1e-33 of their mass
        return float(self.mass[keep] @ _ndtr((self.x[keep] - b) / sd))

    def density(self, sd: float) -> tuple[np.ndarray, int]:
        """The next look's unrestricted density at the lattice points 0..r (it is
        symmetric), and r."""
        h, m = self.h, self.m
        q = int(math.ceil(_KERNEL_SD * sd / h))
        s = min(q, m)  # the points 0.. need the masses at -s.. only
        g = np.convolve(self.mass[1 + m - s:-1], _kernel(h, sd, q))[s + q:]  # points 0..m+q
        r = m + q
        # the two ends (off the lattice) reach the points within q + 1 of them
        ys = np.arange(r + 1) * h
        lo = max(0, m - q - 1)
        g[lo:] += self.mass[-1] * _pdf(ys[lo:] - self.bound, sd)
        if self.bound < (q + 1) * h:  # the lower end reaches the positive points
            g += self.mass[0] * _pdf(ys + self.bound, sd)
        return g, r

    def at(self, y: float, sd: float) -> float:
        """The next look's unrestricted density at y >= 0."""
        keep = self._near(y - 12.0 * sd)
        return float(self.mass[keep] @ _pdf(y - self.x[keep], sd))


@lru_cache(maxsize=64)
def _kernel(h: float, sd: float, q: int) -> np.ndarray:
    k = _pdf(np.arange(-q, q + 1) * h, sd)
    return k / (k.sum() * h)  # conserves mass even on a coarse lattice


def _solve_upper(region: _Region, sd: float, half: float, g: np.ndarray, r: int) -> float:
    """b >= 0 with region.upper(b, sd) = half: bracketed on the lattice's tail sums, then
    solved on the exact tail."""
    from scipy import optimize
    h = region.h
    pos = (np.cumsum(g[::-1])[::-1] - g / 2.0) * h  # ~ P(B >= lattice point 0..r)
    below = np.flatnonzero(pos <= half)
    j = int(below[0]) if below.size else r + 1
    lo, hi = max(0.0, (j - 1.5) * h), (j + 0.5) * h
    keep = region._near(lo - 12.0 * sd)  # the nodes that matter from lo on
    x, mass = region.x[keep], region.mass[keep]

    def f(b: float) -> float:
        return float(mass @ _ndtr((x - b) / sd)) - half
    if f(lo) < 0.0:
        lo = 0.0
        if region.upper(lo, sd) <= half:
            return 0.0
        x, mass = region.x, region.mass
    if f(hi) > 0.0:
        hi = region.bound + CAP * sd + CAP
        if f(hi) > 0.0:
            return hi
    return float(optimize.brentq(f, lo, hi, xtol=1e-7 * h, rtol=1e-12))


@lru_cache(maxsize=512)
def boundaries(fractions: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    """Normal boundaries c_1..c_K for looks at increasing information `fractions` (last
    <= 1); every one finite, CAP for a look that spends nothing. A look rejects when the
    nominal one-look tail of its statistic is at most 2 Phi(-c_k) (see t_boundary)."""
    from scipy.special import ndtri
    ts = [float(t) for t in fractions]
    if not ts or any(b <= a for a, b in zip(ts, ts[1:])) or ts[0] <= 0 or ts[-1] > 1 + 1e-12:
        raise ValueError(f"information fractions must increase within (0, 1]: {fractions}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1): {alpha}")
    sds = [math.sqrt(ts[0])] + [math.sqrt(b - a) for a, b in zip(ts, ts[1:])]
    per_sd = next(p for k, p in _PER_SD if len(ts) <= k)
    h = max(min(sds) / per_sd, _MIN_STEP)
    out: list[float] = []
    region: _Region | None = None
    prev_spent = 0.0
    for t, sd in zip(ts, sds):
        now = spent(t, alpha)
        target = now - prev_spent
        prev_spent = now
        root = math.sqrt(t)
        if region is None:  # the first look: B(t) ~ N(0, t)
            c = CAP if target < _TINY else min(CAP, float(-ndtri(target / 2.0)))
            keep = min(c, _EXTENT) * root
            m = max(0, int(math.ceil(keep / h)) - 1)
            inner = _pdf(np.arange(-m, m + 1) * h, root)
            end = float(_pdf(np.array([keep]), root)[0])
        else:
            g, r = region.density(sd)
            if target < _TINY:
                c = CAP
            else:
                c = min(CAP, _solve_upper(region, sd, target / 2.0, g, r) / root)
            keep = min(c, _EXTENT) * root
            m = max(0, min(int(math.ceil(keep / h)) - 1, r))
            inner = np.concatenate((g[m:0:-1], g[:m + 1]))
            end = region.at(keep, sd)
        out.append(c)
        region = _Region(h, keep, np.maximum(inner, 0.0), max(end, 0.0))
    return tuple(out)


def t_boundary(c: float, df: float) -> float:
    """The boundary of a t statistic with `df` degrees of freedom at the normal boundary
    c's nominal level: |t| >= this has the one-look tail probability 2 Phi(-c). Infinite
    (the look cannot decide) when c is CAP or there is no test (df < 1)."""
    from scipy.special import stdtrit
    if c >= CAP or not df >= 1.0:
        return math.inf
    if df > 1e7:
        return c
    b = float(-stdtrit(df, _ndtr(-c)))
    return b if math.isfinite(b) else math.inf


def cluster_t(diffs: Sequence[float] | np.ndarray, clusters: np.ndarray | None = None
              ) -> tuple[float, float]:
    """(t, df) of the mean of the defined differences, cluster-robust (CR1, df = G - 1;
    `clusters`: one label per difference, None = each its own cluster, the paired t).
    Zero SE: t = +-inf for a non-zero mean, 0 for a zero one; NaN below 2 clusters."""
    d = np.asarray(diffs, dtype=float)
    ok = np.isfinite(d)
    if clusters is None:
        d = d[ok]
        codes = np.arange(d.size)
    else:
        codes = np.unique(np.asarray(clusters)[ok], return_inverse=True)[1].reshape(-1)
        d = d[ok]
    if d.size == 0:
        return math.nan, 0.0
    S, N = cluster_sums(d[:, None], np.ones((d.size, 1), dtype=bool), codes)
    theta, se, df = (float(a[0]) for a in cluster_se(S, N))
    if not df >= 1.0:
        return math.nan, max(df, 0.0)
    if se == 0.0:
        return (0.0 if theta == 0.0 else math.copysign(math.inf, theta)), df
    return theta / se, df


@dataclass(frozen=True)
class Look:
    n: int
    fraction: float
    t: float          # the cluster-robust t of the first n questions
    df: float
    z_boundary: float  # the normal boundary c_k (CAP: spends nothing)
    boundary: float   # on the t scale (t_boundary); inf: cannot decide

    @property
    def decided(self) -> bool:
        return math.isfinite(self.boundary) and abs(self.t) >= self.boundary


def run_looks(diffs: Sequence[float] | np.ndarray, sizes: Sequence[int], alpha: float,
              clusters: np.ndarray | None = None) -> list[Look]:
    """The looks at the prefixes `sizes` of `diffs` (the comparison's full n is len(diffs);
    `clusters` one label per difference or None), up to and including the first that
    decides."""
    total = len(diffs)
    d = np.asarray(diffs, dtype=float)
    fractions = tuple(n / total for n in sizes)
    out: list[Look] = []
    for n, frac, c in zip(sizes, fractions, boundaries(fractions, alpha)):
        t, df = cluster_t(d[:n], None if clusters is None else clusters[:n])
        look = Look(n, frac, t, df, c, t_boundary(c, df))
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

