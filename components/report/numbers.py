"""How every table of the report writes a number, a p-value and a confidence interval.
Any number may be missing or not finite (None, NaN, ±inf: an undefined mean, an unbounded
interval, a hand-made stats table): it prints as "–", never as nan or inf, and never raises."""

from __future__ import annotations

import math
import numbers
from typing import Any

MISSING = "–"
# Marks a CI that does not contain its own estimate (or is reversed): its numbers are
# shown as computed, but the interval is inconsistent (glossary: overview.GLOSSARY).
CI_ODD = "‡"


def finite(x: Any) -> bool:
    """Whether `x` is a real, finite number (not None, NaN, ±inf, a bool or text)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return False
    return math.isfinite(x)


def fmt(x: Any, digits: int = 3) -> str:
    """One number format for every table: fixed decimals (a tiny value reads 0.001 or
    -0.000, never 5.6e-04 among 3-decimal numbers); "–" for a missing or non-finite one."""
    if x is None:
        return MISSING
    if isinstance(x, numbers.Real) and not isinstance(x, (bool, numbers.Integral)):
        return f"{x:.{digits}f}" if math.isfinite(x) else MISSING
    return str(x)


def fmt_signed(x: Any, digits: int = 3) -> str:
    """`+0.012` / `-0.012`; "–" for a missing or non-finite number."""
    return f"{x:+.{digits}f}" if finite(x) else MISSING


def fmt_p(p: Any) -> str:
    if not finite(p):
        return MISSING
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def ci_odd(low: Any, high: Any, estimate: Any) -> bool:
    """Whether a CI with finite bounds does not contain its finite estimate, or is reversed
    (beyond rounding); False when any of the three is missing or not finite."""
    if not (finite(low) and finite(high) and finite(estimate)):
        return False
    tol = 1e-9 * max(1.0, abs(low), abs(high), abs(estimate))
    return low > high + tol or estimate < low - tol or estimate > high + tol


def fmt_n(row: dict[str, Any]) -> str:
    """A comparison's n: 'questions/clusters' when its questions are clustered."""
    n, g = row.get("n_used"), row.get("n_clusters")
    if row.get("clustered_by") in (None, "none") or g is None:
        return fmt(n)
    return f"{fmt(n)}/{fmt(g)}"


def fmt_ci(low: Any, high: Any, estimate: Any = None) -> str:
    """'[low, high]', with CI_ODD after it when the interval does not contain `estimate`."""
    return f"[{fmt(low)}, {fmt(high)}]" + (CI_ODD if ci_odd(low, high, estimate) else "")


def is_significant(row: dict[str, Any], estimate: str = "delta") -> bool:
    """A row's `significant` flag, only when its estimate is a finite number (an arrow
    needs a direction: a flag beside an undefined Δ shows nothing)."""
    return bool(row.get("significant")) and finite(row.get(estimate))
