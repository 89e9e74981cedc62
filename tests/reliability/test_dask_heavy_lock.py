"""runner.kind dask with runner.shards > 1 deadlocked (issue 39.7): a dense retrieve
stage held the run context's `heavy` lock across the secede of `worker_client`; the task
that took its thread slot waited for `heavy`, and the seceded stage waited for that slot
(its shard tasks for a thread). On a real local scheduler with one single-threaded
worker process (the tightest case of the `--nthreads 1` set-up docs/scale.md
recommends: every stage and shard task shares one slot), two dense retrieve stages of a
tiny spec, sharded in 3, are run as the flow submits them (each a task that builds the
run context and calls run_stage), 20 times, their retrieve entries removed in between:
each time both finish."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.specs import pipeline, vary, write_experiment

REPEATS = 20
WAIT_SECONDS = 120  # a repetition takes about a second; a deadlock never ends


def _stage(experiment: str, opts: dict, key: str, *deps) -> bool:
    """What the flow's stage task does in a worker (without Prefect's logger)."""
    from ablate.flows.run.context import RunOptions, get_context
    from ablate.flows.run.stages import run_stage
    ctx = get_context(experiment, RunOptions(**opts))
    return run_stage(ctx, ctx.plan.nodes[key])


@pytest.fixture(scope="module")
def one_slot():
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    client = Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close(timeout=20)


def test_two_sharded_dense_stages_on_one_slot_never_deadlock(one_slot, tmp_path):
    from ablate.flows.run.context import RunOptions, build_context
    spec = write_experiment(
        tmp_path, "dask-heavy", tier="smoke", smoke_size=6, seed=1,
        runner={"kind": "dask", "shards": 3, "workers": 1},
        baseline=pipeline(retrieval={"paths": ["dense"], "depth": 5}, generator=None),
        sweeps=[vary("chunking.size", 32)])  # a second chunking: a second dense retrieve
    opts = {"cache_dir": str(tmp_path / "cache")}
    plan = build_context(str(spec), RunOptions(**opts)).plan
    for rep in range(REPEATS):
        # the retrieve entries removed: both dense stages compute again (the chunks and
        # the embedding cache are kept: a repetition is quick)
        shutil.rmtree(tmp_path / "cache" / "retrieve", ignore_errors=True)
        wanted = [k for k, n in plan.nodes.items() if n.stage in ("chunk", "retrieve")]
        assert sum(plan.nodes[k].stage == "retrieve" and plan.nodes[k].model_bound
                   for k in wanted) == 2
        futures: dict[str, object] = {}
        for key in wanted:
            futures[key] = one_slot.submit(_stage, str(spec), opts, key,
                                           *[futures[d] for d in plan.nodes[key].deps],
                                           pure=False, key=f"stage-{rep}-{key}")
        deadline = time.monotonic() + WAIT_SECONDS
        for key, fut in futures.items():
            try:
                computed = fut.result(timeout=max(deadline - time.monotonic(), 1))
            except TimeoutError:
                pytest.fail(f"repetition {rep}: stage {plan.nodes[key].label} never finished "
                            "(deadlock)")
            assert computed is True or plan.nodes[key].stage == "chunk"
        assert len(list(Path(opts["cache_dir"], "retrieve").rglob("*.parquet"))) == 2
