"""`ablate check`'s warnings on `report.slices` (ablate.components.stats.slices): a slice
column no selected question gives a value, and a slice whose questions come in too few
units (clusters under `stats.cluster`, else questions) for the test to reach alpha at all,
so the run will report it untested. Counted on the selected questions; a metric undefined
on some of them (retrieval metrics without evidence) leaves fewer."""

from __future__ import annotations

from typing import Any

from ablate.components.data.clusters import cluster_labels
from ablate.components.stats.slices import smallest_p, value_label


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
            value = getattr(q, column)
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
