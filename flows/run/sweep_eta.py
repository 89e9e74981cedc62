"""The sweep-level ETA line of `ablate run` (issue 42): as computed stages finish, one
line with what is left of the sweep, from the estimator `ablate check` prints
(flows/plan/estimate.py: per-stage rates of earlier runs' manifests; and
flows/plan/embed_estimate.py: corpus embedding not in the cache), and for a stage
no earlier run has a rate for, its component's declared prior (flows/plan/generation_prior.py),
refined by what this run observed: the stages computed so far took `ratio` times their estimate, so the rest is
scaled by it; a stage without a rate is counted at the seconds per question (per document
for `chunk`) this run saw for stages doing the same work (its timing key, e.g.
`generate:smollm2`: never another component's, whose seconds can be a thousandth of it),
once one has finished, else named in the line as not estimated yet. Every rate is per
question, times the questions each stage runs on (a sweep on its own tier: its sample's).
It is summed stage compute (stages run side by side on `runner.workers` threads), as
`ablate check` says; a cached stage prints nothing. A line that would say what the last one
said (the same time left, the same stages without a rate; only the count of stages moved)
is held back until `REPEAT_AFTER` seconds have passed (issue 54: one sweep printed "2 more
without a rate yet" 57 times)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

REPEAT_AFTER = 60.0
"""Seconds after which an unchanged ETA line is printed again (a sign of life)."""


class SweepEta:
    def __init__(self, ctx: Any, out_root: Path | None = None,
                 say: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        from ablate.flows.plan.embed_estimate import embedding_costs
        from ablate.flows.plan.estimate import estimate_work, rates, read_manifests
        from ablate.flows.plan.generation_prior import prior_rate
        from ablate.flows.run import console
        from ablate.flows.run.stage_timing import timing_key, work_units

        self.say = say or console.eta_line
        self.todo = {k for k, n in ctx.plan.nodes.items()
                     if not ctx.store.has(n.stage, k, use=False)}
        rates_ = rates(read_manifests(Path(out_root or ctx.spec.out)), ctx.dataset.fingerprint)
        # plan key -> (timing key, units of work), as the manifest records them
        self.work = {k: (timing_key(n), work_units(ctx, n)) for k, n in ctx.plan.nodes.items()}
        self.guess: dict[str, float | None] = {}
        for k in self.todo:
            e = estimate_work([self.work[k]], rates_)
            prior = prior_rate(ctx.plan.nodes[k], ctx.plan.nodes)  # no rate: a declared prior
            self.guess[k] = (e.seconds if e.estimated
                             else None if prior is None else prior * self.work[k][1])
        try:
            costs = embedding_costs(ctx, self.todo)
        except Exception:  # noqa: BLE001 - an estimate never stops a run
            costs = []
        for c in costs:  # the model's embedding, shared by the stages that run it
            keys = [k for k in self.todo if _embeds(ctx.plan.nodes[k], c.model, c.backend)]
            for k in keys:
                self.guess[k] = (self.guess[k] or 0.0) + c.seconds / len(keys)
        self.observed = self.predicted = 0.0
        self.seen: dict[str, list[float]] = {}  # timing key -> [seconds, units] computed
        self.lines = 0
        self.clock = clock
        self.last: tuple[str, tuple[str, ...]] | None = None  # what the last line said
        self.last_at = clock()

    def finished(self, key: str, computed: bool, seconds: float) -> None:
        """A stage finished: one line when it was computed and stages are left."""
        if key not in self.todo:
            return
        self.todo.discard(key)
        if not computed:
            return
        tk, units = self.work[key]
        done = self.seen.setdefault(tk, [0.0, 0.0])
        done[0] += seconds
        done[1] += units
        guess = self.guess.get(key)
        if guess:
            self.observed += seconds
            self.predicted += guess
        if not self.todo:
            return
        ratio = self.observed / self.predicted if self.predicted > 0 else 1.0
        left, unknown = 0.0, []  # unknown: timing keys of stages nothing is known of
        for k in self.todo:
            g = self.guess.get(k)
            if g is not None:
                left += g * ratio
                continue
            tk, units = self.work[k]
            seen = self.seen.get(tk)
            if seen and seen[1] > 0:
                left += seen[0] / seen[1] * units
            else:
                unknown.append(tk)
        from ablate.flows.plan.estimate import duration
        said, now = (duration(left), tuple(sorted(set(unknown)))), self.clock()
        if said == self.last and now - self.last_at < REPEAT_AFTER:
            return
        self.last, self.last_at = said, now
        self.lines += 1
        self.say(eta_text(left, len(self.todo) - len(unknown), unknown,
                          ratio if self.predicted > 0 else None))


def _embeds(node: Any, model: str, backend: str) -> bool:
    from ablate.flows.plan.embed_estimate import _embeds_chunks
    r = node.config.retrieval
    return _embeds_chunks(node) and (r.dense_model, r.dense_backend) == (model, backend)


def eta_text(left: float, stages: int, unknown: list[str], ratio: float | None) -> str:
    """`left`: the seconds of the `stages` estimated; `unknown`: the timing keys of the
    stages left that nothing is known of yet (no rate, none of theirs computed), named as
    `ablate check` names them rather than counted as nothing."""
    from ablate.flows.plan.estimate import duration
    text = f"sweep ETA: about {duration(left)} of stage compute left for {stages} stages"
    if unknown:
        text += (f"; {len(unknown)} more without a rate yet "
                 f"({', '.join(sorted(set(unknown)))})")
    if ratio is not None:
        text += f"; estimates scaled x{ratio:.2f} as observed"
    return text
