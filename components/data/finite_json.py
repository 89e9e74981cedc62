"""JSON with finite numbers only (issue 39.6): Python's json reads NaN, Infinity and
-Infinity (and turns 1e999 into inf); a span grade of NaN then made every retrieval metric
of its question 0, and Infinity made NDCG NaN everywhere. Every data set file is read
through `loads`, which refuses a non-finite number anywhere in the document, with the
line and column it stands on.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")


class NonFinite(ValueError):
    """A non-finite number in a JSON text: `line` and `column` (1-based) where it stands."""

    def __init__(self, token: str, line: int, column: int) -> None:
        self.token, self.line, self.column = token, line, column
        super().__init__(f"the number {token} is not finite (column {column}): numbers must be finite")


def _refuse(token: str) -> Any:
    raise NonFinite(token, 0, 0)


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise NonFinite(token, 0, 0)
    return value


def first_non_finite(text: str) -> tuple[str, int] | None:
    """(token, offset) of the first non-finite number of a JSON text outside its strings."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        for token in ("NaN", "Infinity", "-Infinity"):
            if text.startswith(token, i):
                return token, i
        if c == "-" or c.isdigit():
            m = NUMBER.match(text, i)
            if m:
                if not math.isfinite(float(m.group())):
                    return m.group(), i
                i = m.end()
                continue
        i += 1
    return None


def loads(text: str) -> Any:
    """json.loads, refusing NaN, Infinity, -Infinity and numbers too large for a float
    (NonFinite naming the line and column); JSONDecodeError as json.loads raises it."""
    try:
        return json.loads(text, parse_constant=_refuse, parse_float=_finite_float)
    except NonFinite as exc:
        found = first_non_finite(text)
        if found is None:  # pragma: no cover - the scan agrees with the parser
            raise
        token, at = found
        line = text.count("\n", 0, at) + 1
        raise NonFinite(token, line, at - (text.rfind("\n", 0, at) + 1) + 1) from exc
