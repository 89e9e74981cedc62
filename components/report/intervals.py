"""How the report states its confidence intervals so that a reader can resolve them.

- Which interval a row has, from the stats table's own `ci_method` / `ci_level` / `ci_flag`
  columns: the inverted test at the level matching the corrected p (it excludes 0 exactly
  when the comparison is significant), or a per-comparison interval (bootstrap, cluster-
  robust t, the inverted test at 1 - alpha where too few pairs differ for the bootstrap),
  which is not corrected for multiple comparisons and may exclude 0 beside a comparison
  that is not significant: such a row is marked DISAGREE.
- A degenerate interval ([0, 0]: no question differs) or an unbounded one (too few
  clusters to bound it) is named in its cell with its count of differing questions
  (wins + losses of the stats row, else counted from per_query).
Any number may be missing or not finite (numbers.py); nothing here raises on it.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from ablate.components.contract.vocab import BASELINE
from ablate.components.report.numbers import finite, fmt_ci
from ablate.components.stats.inference import FLAG_FEW_UNTIED, MIN_UNTIED_FOR_BOOTSTRAP
from ablate.components.stats.inversion import FLAG_UNBOUNDED
from ablate.components.stats.paired_tests import reported_abilities

# Marks a CI that excludes 0 beside a comparison that is not significant after correction,
# or contains 0 beside one that is (glossary: DISAGREE_TEXT).
DISAGREE = "†"
DISAGREE_TEXT = ("the CI and sig. disagree (the CI excludes 0 but the comparison is not "
                 "significant, or the reverse): the CI is a per-comparison interval at its own "
                 "level, not corrected for multiple comparisons, while sig. comes from the "
                 "corrected p; read sig.")

# how the header names the test an inversion interval inverts (a test's `inverts`)
INVERTED = {"t": "cluster-robust t", "signflip": "sign-flip over clusters"}


def matches_significance(row: dict[str, Any], default_method: str | None = None) -> bool:
    """Whether a row's interval is the inverted test at the corrected level (it excludes 0
    exactly when the comparison is significant)."""
    method = row.get("ci_method") or default_method or ""
    return "inversion" in str(method) and FLAG_FEW_UNTIED not in str(row.get("ci_flag") or "")


def disagrees(row: dict[str, Any]) -> bool:
    """Whether a row's finite CI excludes 0 while the row is not significant, or the reverse."""
    lo: Any = row.get("ci_low")
    hi: Any = row.get("ci_high")
    if not (finite(lo) and finite(hi) and finite(row.get("delta"))):
        return False
    return (float(lo) > 0 or float(hi) < 0) != bool(row.get("significant"))


def shape(row: dict[str, Any]) -> str:
    """'degenerate' (both bounds finite and equal), 'unbounded' (a bound is infinite, or
    missing where the statistics say too few clusters bound it), else ''."""
    lo: Any = row.get("ci_low")
    hi: Any = row.get("ci_high")
    if finite(lo) and finite(hi):
        a, b = float(lo), float(hi)
        return "degenerate" if abs(b - a) <= 1e-12 * max(1.0, abs(a), abs(b)) else ""
    infinite = any(isinstance(x, float) and math.isinf(x) for x in (lo, hi))
    if infinite or FLAG_UNBOUNDED in str(row.get("ci_flag") or ""):
        return "unbounded"
    return ""


def differing(row: dict[str, Any], per_query: pl.DataFrame | None = None,
              baseline: str = BASELINE) -> int | None:
    """Questions whose paired difference is not 0: wins + losses of the row, else counted
    from per_query (both values finite and unequal); None when neither can tell."""
    w, losses = row.get("wins"), row.get("losses")
    if isinstance(w, int) and isinstance(losses, int):
        return w + losses
    metric, variant = row.get("metric"), row.get("variant")
    if (per_query is None or metric not in per_query.columns or "qid" not in per_query.columns
            or "variant" not in per_query.columns):
        return None
    if variant == baseline:
        return None
    col = pl.col(metric).cast(pl.Float64, strict=False).fill_nan(None)
    v, b = (per_query.filter(pl.col("variant") == name).select("qid", col.alias(alias))
            .drop_nulls().unique("qid", keep="first") for name, alias in ((variant, "v"), (baseline, "b")))
    return v.join(b, on="qid").filter(pl.col("v") != pl.col("b")).height


def note(row: dict[str, Any], per_query: pl.DataFrame | None = None) -> str:
    """'no question differs', 'zero width: k of n questions differ' or 'unbounded: k of n
    questions differ (G clusters)' for such an interval; '' for any other."""
    kind = shape(row)
    if not kind:
        return ""
    k = differing(row, per_query)
    n = row.get("n_used")
    what = (f"{k} of {n} questions" if isinstance(n, int) else
            f"{k} question{'s' * (k != 1)}") + (" differs" if k == 1 else " differ")
    if kind == "degenerate":
        if k == 0:
            return "no question differs"
        return "zero width" + (f": {what}" if k is not None else "")
    g = row.get("n_clusters")
    clusters = (f" ({g} clusters)" if row.get("clustered_by") not in (None, "none")
                and isinstance(g, int) else "")
    return "unbounded" + (f": {what}{clusters}" if k is not None else "")


def ci_cell(row: dict[str, Any], per_query: pl.DataFrame | None = None) -> str:
    """A comparison's interval as every table shows it: '[low, high]', ‡ when it does not
    contain Δ, † when it disagrees with sig., and the degenerate/unbounded note."""
    text = fmt_ci(row.get("ci_low"), row.get("ci_high"), row.get("delta"))
    text += DISAGREE if disagrees(row) else ""
    extra = note(row, per_query)
    return f"{text} {extra}" if extra else text


def _pct(level: float) -> str:
    return f"{100 * level:.1f}".rstrip("0").rstrip(".") + "%"


def _levels(rows: list[dict[str, Any]], fallback: str) -> str:
    """'95%' or '95%–98.8%': the confidence levels of these rows (ci_level); `fallback`
    when none is recorded."""
    levels = sorted({round(float(r["ci_level"]), 4) for r in rows if finite(r.get("ci_level"))
                     and 0 < r["ci_level"] < 1})
    if not levels:
        return fallback
    return _pct(levels[0]) if len(levels) == 1 else f"{_pct(levels[0])}–{_pct(levels[-1])}"


def _count(rows: list[dict[str, Any]], total: int) -> str:
    return "" if len(rows) == total else f" ({len(rows)} comparison{'s' * (len(rows) != 1)})"


def ci_text(st: dict[str, Any], stats: pl.DataFrame | None = None) -> str:
    """How this report's intervals were computed and at which level, from the stats table
    (each row's ci_method, ci_level, ci_flag; the settings in `st` where it lacks them):
    whether they agree with sig. by construction or are per comparison."""
    alpha = float(st["alpha"]) if finite(st.get("alpha")) else 0.05
    method = st.get("ci_method", "inversion")
    rows = list(stats.iter_rows(named=True)) if stats is not None and stats.height else []
    if not rows:
        rows = [{"ci_method": "inversion" if method == "inversion" else method}]
    matched = [r for r in rows if matches_significance(r, method)]
    other = [r for r in rows if not matches_significance(r, method)]
    parts = []
    if matched:
        test = INVERTED[reported_abilities(st.get("test") or "permutation").inverts or "signflip"]
        levels = _levels(matched, "at least " + _pct(1 - alpha))
        parts.append(f"the inverted paired test ({test}) at the level that matches each "
                     f"corrected p ({levels}), so it excludes 0 exactly when the comparison "
                     f"is significant{_count(matched, len(rows))}")
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(other, key=lambda r: "inversion" in str(r.get("ci_method") or method)):
        m = str(r.get("ci_method") or method)
        kind = ("inverted" if "inversion" in m else "t" if m.startswith("t")
                else m if m in ("bca", "percentile") else "other")
        by_kind.setdefault(kind, []).append(r)
    names = {"bca": f"cluster bootstrap (bca, {st.get('bootstrap_resamples')} resamples)",
             "percentile": f"cluster bootstrap (percentile, {st.get('bootstrap_resamples')} "
                           "resamples)",
             "t": "cluster-robust t", "inverted": "the inverted sign-flip test",
             "other": "the interval recorded as " + ", ".join(sorted(
                 {str(r.get("ci_method") or method) for r in by_kind.get("other", [])}))}
    for kind, members in by_kind.items():
        where = (f", where fewer than {MIN_UNTIED_FOR_BOOTSTRAP} pairs differ" if kind == "inverted"
                 and any(FLAG_FEW_UNTIED in str(r.get("ci_flag") or "") for r in members) else "")
        parts.append(f"{names[kind]} at {_levels(members, _pct(1 - alpha))}{where}"
                     f"{_count(members, len(rows))}")
    text = "; ".join(parts)
    correction = st.get("correction", "holm")
    if other and correction == "none":
        text += (f"; {'the others are' if matched else 'each is'} a per-comparison interval, as "
                 "sig. is (no correction), but sig. comes from the paired test, not from the "
                 f"interval: the two may disagree (marked {DISAGREE})")
    elif other:
        text += (f"; {'the others are' if matched else 'each is'} a per-comparison interval, "
                 f"not corrected for multiple comparisons as sig. is ({correction}): such a "
                 f"CI may exclude 0 beside a comparison that is not significant (marked "
                 f"{DISAGREE})")
    if any(shape(r) == "unbounded" for r in rows):
        text += "; – where too few clusters bound a side (unbounded)"
    return text
