"""How every table of the report writes a number and a p-value."""

from __future__ import annotations

import math
from typing import Any


def fmt(x: Any, digits: int = 3) -> str:
    """One number format for every table: fixed decimals (a tiny value reads 0.001 or
    -0.000, never 5.6e-04 among 3-decimal numbers)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def fmt_p(p: Any) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"
