"""The sweep's stages as they finish: one console line per stage, one sweep-level ETA line
after each computed stage (quiet mode; flows/run/sweep_eta.py), and AfterModels, the
trigger that unloads the models and opens MLflow once the last model-bound stage is done
while the light stages still run. flows/sweep.py waits on its Prefect futures here."""

from __future__ import annotations

import time
from typing import Any, Callable

from prefect.futures import as_completed

from ablate.flows.run import console


class AfterModels:
    """Calls `then(any stage computed so far)` once, as soon as no model-bound stage (dense
    retrieval, semantic rerank, a local LLM: they run a model) of `keys` is left."""

    def __init__(self, plan: Any, keys: Any, then: Callable[[bool], None] | None) -> None:
        self.waiting = {k for k in keys if plan.nodes[k].model_bound}
        self.then, self.computed = then, False
        if not self.waiting:
            self._fire()

    def finished(self, key: str, computed: bool) -> None:
        self.computed = self.computed or computed
        self.waiting.discard(key)
        if not self.waiting:
            self._fire()

    def _fire(self) -> None:
        then, self.then = self.then, None
        if then is not None:
            then(self.computed)


def report_progress(futures: dict[str, Any], plan: Any, started: float,
                     models_done: Callable[[bool], None] | None = None,
                     eta: Any = None) -> None:
    """Wait for every stage, printing one compact console line per stage as it finishes
    (quiet mode; the task's own log line goes to Prefect either way); `models_done` is
    called while the light stages still run (AfterModels)."""
    keys = {id(fut): key for key, fut in futures.items()}
    after = AfterModels(plan, futures, models_done)
    for done, fut in enumerate(as_completed(list(futures.values())), start=1):
        node = plan.nodes[keys[id(fut)]]
        try:
            r = fut.result()
        except Exception:  # raised below, once every stage has finished
            r = None
        console.stage_line(done, len(futures),
                           r["label"] if isinstance(r, dict) else node.label, node.key,
                           r["computed"] if isinstance(r, dict) else None,
                           r["seconds"] if isinstance(r, dict) else 0.0, time.time() - started)
        after.finished(node.key, isinstance(r, dict) and r["computed"])
        if eta is not None and isinstance(r, dict):  # one sweep-level ETA line (sweep_eta.py)
            eta.finished(node.key, bool(r["computed"]), float(r["seconds"]))


def sweep_eta(ctx: Any) -> Any:
    """The sweep-level ETA (flows/run/sweep_eta.py), in quiet mode only; None if it fails."""
    if not console.quieting():
        return None
    from ablate.flows.run.sweep_eta import SweepEta
    try:
        return SweepEta(ctx)
    except Exception:  # noqa: BLE001 - an estimate never stops a run
        return None
