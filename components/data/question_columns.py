"""A question's columns, for `report.slices`: the record's own fields (`type`,
`answerable`, `cluster`, `tier`, `split`), the further columns of a native questions file
(Question.columns: `level`, `hops`, a team's own; scalar values, kept as text), and
`query_kind`, which the rule-based tagger (query_kind.py) gives a question whose file has
no such column."""

from __future__ import annotations

from typing import Any

from ablate.components.contract.records import Question
from ablate.components.data.query_kind import query_kind

RECORD_COLUMNS = ("type", "answerable", "cluster", "tier", "split")
TAGGED = "query_kind"


def column_value(q: Question, column: str) -> Any:
    """The value of `column` for question `q`; None when the question has none."""
    if column in RECORD_COLUMNS:
        return getattr(q, column)
    own = dict(q.columns)
    if column in own:
        return own[column]
    if column == TAGGED:
        return query_kind(q.question)
    return None


def scalar_columns(obj: dict[str, Any], known: set[str]) -> tuple[tuple[str, str], ...]:
    """A questions-file record's further scalar fields (strings, numbers, booleans) as
    sorted (name, text) pairs; lists and objects are not columns."""
    out = []
    for name, value in obj.items():
        if name in known or value is None or isinstance(value, (list, dict)):
            continue
        text = str(value).lower() if isinstance(value, bool) else str(value)
        out.append((name, text))
    return tuple(sorted(out))
