"""timings.parquet's marks of reused latencies: beside each `latency/<stage>` column (the
score stage's, seconds per question of computing that stage), `reused/<stage>`.

`reused/<stage>` is True where that latency was recorded earlier and reused rather than
timed by this run: the stage's stored result came from an earlier run (its latency is
the one recorded when it was computed), or the stage, computed now, served part of that
question's work from a cache and counts the seconds recorded when that work was computed
(query vectors from the embedding cache, answers from the generation cache). Either
way the figure is the cost of computing, not of the lookup; the mark says it was not
measured now.
"""

from __future__ import annotations

import polars as pl

from ablate.flows.run.context import RunContext
from ablate.flows.run.frames import reused_latency
from ablate.flows.run.stages import load

LATENCY, REUSED = "latency/", "reused/"


def with_reused(ctx: RunContext, timings: pl.DataFrame) -> pl.DataFrame:
    """`timings` (variant, qid, latency/* columns) with a Boolean `reused/<stage>` after
    its latency columns for each of them, in the same order."""
    lat = [c for c in timings.columns if c.startswith(LATENCY)]
    rows = list(zip(timings["variant"], timings["qid"]))
    marks: dict[tuple[str, str], dict[str, bool]] = {}  # (stage, key) -> qid -> reused
    columns = []
    for col in lat:
        label = col[len(LATENCY):]
        per_variant: dict[str, dict[str, bool] | bool] = {}
        for variant in {v for v, _ in rows}:
            # a latency column names its stage as variants.json does, `:` written `_`
            keys = {k.replace(":", "_"): (k.split(":")[0], key)
                    for k, key in ctx.plan.by_variant[variant].items()}
            if label not in keys:  # a stage this variant does not run: no latency
                per_variant[variant] = False
                continue
            stage, key = keys[label]
            if key not in ctx.computed_keys:
                per_variant[variant] = True  # stored by an earlier run
            else:
                if (stage, key) not in marks:
                    marks[stage, key] = reused_latency(load(ctx, stage, key))
                per_variant[variant] = marks[stage, key]
        values = []
        for variant, qid in rows:
            got = per_variant[variant]
            values.append(got if isinstance(got, bool) else got.get(qid, False))
        columns.append(pl.Series(REUSED + label, values, dtype=pl.Boolean))
    return timings.with_columns(columns)
