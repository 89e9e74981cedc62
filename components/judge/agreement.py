"""How far a judge agrees with labelled items, counted honestly (docs/judge-calibration.md).

Every item counts. An item the judge gave no usable verdict for (a judge failure: an
unusable reply after one retry; or a transport error) is a disagreement, and is reported
(count and share), never dropped:
- agreement = items whose verdict equals the label / all items;
- Cohen's kappa over (label, verdict), with "no verdict" a third verdict category that no
  label takes (so a disagreement in kappa too; equal to scikit-learn's cohen_kappa_score on
  the three categories); NaN when chance agreement is 1 (a single category on both sides).

Intervals, two-sided at LEVEL (95%). Items about the same question are not independent
(the synthetic sets make 2 items of each kind per question): rows carrying a question id
(`qid`) are clustered by it, a row without one is its own cluster.
- agreement: Wilson score interval on the effective number of items n / deff, deff the
  design effect of the clusters: the cluster-robust variance of the agreement over its
  binomial variance, at least 1. When it cannot be estimated (every item agrees, or every
  item disagrees, or fewer than 2 clusters) its worst case sum(m_c^2) / n (the items of a
  question perfectly correlated) is used. Without clusters this is the plain Wilson interval.
- kappa: percentile bootstrap over clusters (questions resampled with replacement,
  BOOTSTRAP resamples, seed 0; resamples where kappa is undefined are dropped). It
  collapses to a point when every item agrees, or when the judge gives every item the same
  verdict (kappa 0 in every resample): read the agreement's interval then.

The target (TARGET_AGREEMENT) is on agreement's point estimate, per kind: a kind meets it
when its agreement (failures counted) is at least the target; the set meets it when every
kind in it does. The lower bound is reported beside it (`--require-lower` uses it).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Iterable, Sequence

import numpy as np

TARGET_AGREEMENT = 0.8  # below this, per kind, the judge is not to be trusted
LEVEL = 0.95
BOOTSTRAP = 2000
KIND_ORDER = ("support", "relevance", "usefulness")
# (label, verdict) cells: verdict None is "no verdict" (a failure or an error)
CELLS = ((True, True), (True, False), (True, None), (False, True), (False, False), (False, None))
INTERVALS = (f"{LEVEL:.0%} intervals: agreement by Wilson score on the effective number of "
             f"items (design effect of the question clusters); kappa by percentile bootstrap "
             f"over question clusters ({BOOTSTRAP} resamples)")


def _z() -> float:
    return NormalDist().inv_cdf(0.5 + LEVEL / 2)


def _kappa_of_counts(c: np.ndarray) -> np.ndarray:
    """Kappa from cell counts in CELLS order (last axis); NaN where undefined."""
    c = np.asarray(c, dtype=float)
    n = c.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (c[..., 0] + c[..., 4]) / n
        lt = (c[..., 0] + c[..., 1] + c[..., 2]) / n
        jt = (c[..., 0] + c[..., 3]) / n
        jf = (c[..., 1] + c[..., 4]) / n
        pe = lt * jt + (1 - lt) * jf
        k = (po - pe) / (1 - pe)
    return np.where((n > 0) & (pe < 1 - 1e-12), k, np.nan)


def _counts(pairs: Iterable[tuple[bool, bool | None]]) -> np.ndarray:
    out = np.zeros(len(CELLS))
    for a, b in pairs:
        out[CELLS.index((bool(a), None if b is None else bool(b)))] += 1
    return out


def cohen_kappa(pairs: Sequence[tuple[bool, bool | None]]) -> float:
    """Cohen's kappa of (label, verdict) pairs, verdict None a category of its own (no
    verdict); NaN when chance agreement is 1 or there is no pair."""
    return float(_kappa_of_counts(_counts(pairs)))


def wilson(successes: float, n: float) -> tuple[float, float]:
    """Wilson score interval at LEVEL of successes out of n (n may be fractional)."""
    if n <= 0:
        return (math.nan, math.nan)
    z = _z()
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def design_effect(agree: Sequence[bool], clusters: Sequence[Any]) -> float:
    """The design effect of clustered 0/1 outcomes (module doc)."""
    n = len(agree)
    groups: dict[Any, list[float]] = {}
    for y, c in zip(agree, clusters):
        groups.setdefault(c, []).append(float(y))
    worst = sum(len(g) ** 2 for g in groups.values()) / n if n else 1.0
    p = sum(agree) / n if n else math.nan
    if n == 0 or len(groups) < 2 or p in (0.0, 1.0):
        return max(1.0, worst)
    k = len(groups)
    robust = k / (k - 1) * sum(sum(y - p for y in g) ** 2 for g in groups.values()) / n ** 2
    return min(max(1.0, robust / (p * (1 - p) / n)), max(1.0, worst))


def kappa_interval(pairs: Sequence[tuple[bool, bool | None]], clusters: Sequence[Any],
                   seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of kappa over clusters (module doc)."""
    groups: dict[Any, list[tuple[bool, bool | None]]] = {}
    for pair, c in zip(pairs, clusters):
        groups.setdefault(c, []).append(pair)
    if not groups:
        return (math.nan, math.nan)
    per = np.stack([_counts(g) for g in groups.values()])
    idx = np.random.default_rng(seed).integers(0, len(per), size=(BOOTSTRAP, len(per)))
    ks = _kappa_of_counts(per[idx].sum(axis=1))
    ks = ks[~np.isnan(ks)]
    if len(ks) < BOOTSTRAP / 2:  # undefined in most resamples: no interval
        return (math.nan, math.nan)
    tail = (1 - LEVEL) / 2 * 100
    lo, hi = np.percentile(ks, [tail, 100 - tail])
    return (float(lo), float(hi))


def _cluster(row: dict[str, Any], n: int) -> Any:
    qid = row.get("qid")
    return ("q", qid) if qid not in (None, "") else ("item", row.get("id"), n)


def stats(rows: Sequence[dict[str, Any]], target: float = TARGET_AGREEMENT) -> dict[str, Any]:
    """Agreement, kappa (with intervals), failures and confusion of one group of rows
    (each: label, predicted: bool or None, failure, error, optional qid and synthetic)."""
    pairs = [(bool(r["label"]), r["predicted"]) for r in rows]
    clusters = [_cluster(r, n) for n, r in enumerate(rows)]
    agree = [b is not None and a == b for a, b in pairs]
    n = len(rows)
    judged = sum(b is not None for _, b in pairs)
    agreement = sum(agree) / n if n else math.nan
    deff = design_effect(agree, clusters) if n else math.nan
    c = _counts(pairs).astype(int).tolist()
    failures = sum(r.get("failure") is not None for r in rows)
    return {
        "items": n, "judged": judged, "no_verdict": n - judged,
        "failures": failures, "errors": sum(r.get("error") is not None for r in rows),
        "no_verdict_share": (n - judged) / n if n else math.nan,
        "agreement": agreement,
        "agreement_ci": list(wilson(agreement * n / deff, n / deff)) if n else [math.nan] * 2,
        "kappa": cohen_kappa(pairs),
        "kappa_ci": list(kappa_interval(pairs, clusters)),
        "clusters": len(set(clusters)), "design_effect": deff,
        "synthetic": sum(bool(r.get("synthetic")) for r in rows),
        "meets_target": bool(n and agreement >= target),
        "confusion": {"label_true": {"judge_true": c[0], "judge_false": c[1], "no_verdict": c[2]},
                      "label_false": {"judge_true": c[3], "judge_false": c[4], "no_verdict": c[5]}},
    }


def summarize(rows: Iterable[dict[str, Any]], target: float = TARGET_AGREEMENT) -> dict[str, Any]:
    """Overall, per kind and per language (module doc); `meets_target` only when every
    kind meets it, `below` names the kinds that do not."""
    rows = list(rows)
    out = stats(rows, target)
    kinds = [k for k in KIND_ORDER if any(r["kind"] == k for r in rows)]
    kinds += sorted({r["kind"] for r in rows} - set(kinds))
    out["by_kind"] = {k: stats([r for r in rows if r["kind"] == k], target) for k in kinds}
    out["by_lang"] = {g: stats([r for r in rows if r["lang"] == g], target)
                      for g in sorted({r["lang"] for r in rows})}
    out["below"] = [k for k, s in out["by_kind"].items() if not s["meets_target"]]
    out["meets_target"] = bool(rows) and not out["below"]
    out |= {"target": target, "target_on": "agreement, point estimate, per kind", "level": LEVEL,
            "intervals": INTERVALS, "with_qid": any(r.get("qid") for r in rows)}
    return out


def shortfalls(summary: dict[str, Any], required: float, *, lower: bool = False,
               kinds: Iterable[str] = ()) -> list[str]:
    """The kinds whose agreement (its lower bound with `lower`) is below `required`, as
    'kind 0.625' (or 'kind: no items' for a kind in `kinds` the set lacks)."""
    out = []
    for k, s in summary["by_kind"].items():
        value = s["agreement_ci"][0] if lower else s["agreement"]
        if not (value >= required):
            out.append(f"{k} {value:.3f}" if not math.isnan(value) else f"{k}: no verdict")
    out += [f"{k}: no items" for k in kinds if k not in summary["by_kind"]]
    return out
