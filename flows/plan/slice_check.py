"""`report.slices` checks: a column no question of the data set has is an error
(`check_slice_columns`, before anything runs); `ablate check`'s warnings
(ablate.components.stats.slices): a slice column no selected question gives a value, and a slice whose questions come in too few
units (clusters under `stats.cluster`, else questions) for the test to reach alpha at all,
so the run will report it untested. Counted on the selected questions; a metric undefined
on some of them (retrieval metrics without evidence) leaves fewer."""

from __future__ import annotations

from typing import Any, Sequence

from ablate.components.contract.records import Question
from ablate.components.data.clusters import cluster_labels
from ablate.components.data.question_columns import RECORD_COLUMNS, TAGGED, column_value
from ablate.components.stats.slices import smallest_p, value_label
from ablate.flows.plan.spec_errors import did_you_mean


def check_slice_columns(loaded: Any, questions: Sequence[Question]) -> None:
    """A `report.slices` column that is no question field, no column of the data set's
    questions file and not `query_kind` is a one-line error at its line (a typo, most
    likely), before anything runs."""
    known = set(RECORD_COLUMNS) | {TAGGED} | {name for q in questions for name, _ in q.columns}
    for i, column in enumerate(loaded.spec.report.slices):
        if column not in known:
            raise loaded.error(
                f"unknown slice column '{column}': no question of the data set has it "
                f"(columns: {', '.join(sorted(known))}){did_you_mean(column, sorted(known))}",
                ("report", "slices", i))


def slice_lines(ctx: Any) -> list[str]:
    """One warning line per slice column without values and per untestable slice."""
    slices = ctx.spec.report.slices
    if not slices:
        return []
    choice = ctx.spec.stats.cluster
    qs = list(ctx.questions)
    units = ([q.qid for q in qs] if choice == "none"
             else [u if u is not None else q.qid for u, q in zip(cluster_labels(qs, choice), qs)])
    out = []
    for column in slices:
        groups: dict[str, set[str]] = {}
        for q, unit in zip(qs, units):
            value = column_value(q, column)
            if value is not None:
                groups.setdefault(value_label(value), set()).add(unit)
        if not groups:
            out.append(f"report.slices: no selected question has a '{column}' value (nothing "
                       "to slice)")
        for label, seen in sorted(groups.items()):
            if smallest_p(len(seen)) > ctx.spec.stats.alpha:
                out.append(f"report.slices: {column}={label} has {len(seen)} "
                           f"{'questions' if choice == 'none' else 'clusters'}, too few to "
                           "test (the report gives its means, no p)")
    return out
