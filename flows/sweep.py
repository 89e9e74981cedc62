"""The Prefect sweep flow: one task per unique stage key, then analysis and MLflow logging.

Tasks receive keys and paths, never large data; each finds the data set, plan and store
in its process's run context.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import wait
from prefect.runtime import flow_run
from prefect.task_runners import ThreadPoolTaskRunner

from flows import env
from flows.context import RunOptions, get_context
from flows.outputs import write_outputs
from flows.stages import run_stage


def _options(opts: dict[str, Any]) -> RunOptions:
    return RunOptions(**opts)


@task(name="stage", cache_policy=NO_CACHE, persist_result=False)
def stage_task(experiment: str, opts: dict[str, Any], key: str) -> dict[str, Any]:
    ctx = get_context(experiment, _options(opts))
    node = ctx.plan.nodes[key]
    t0, wall0 = time.perf_counter(), time.time()
    computed = run_stage(ctx, node)
    seconds = time.perf_counter() - t0
    ctx.count("stages_done")
    done, total = ctx.counters["stages_done"], len(ctx.plan.nodes)
    how = f"computed in {seconds:.1f}s" if computed else "reused from cache"
    get_run_logger().info("[%d/%d] %s %s: %s (elapsed %.0fs)", done, total, node.label, key[:10],
                          how, time.time() - ctx.started)
    return {"key": key, "stage": node.stage, "computed": computed, "seconds": seconds,
            "pid": os.getpid(), "start": wall0, "end": wall0 + seconds}


def _replay_remote(ctx: Any, results: list[dict[str, Any]]) -> None:
    """Stages that ran in other processes (Dask workers) count in this process's manifest."""
    for r in results:
        if r["pid"] != os.getpid():
            ctx.store.note(r["stage"], computed=r["computed"])
            if r["computed"]:
                ctx.timings[r["stage"]] = ctx.timings.get(r["stage"], 0.0) + r["seconds"]


@task(name="analyse", cache_policy=NO_CACHE, persist_result=False)
def analyse_task(experiment: str, opts: dict[str, Any], out_root: str, started: float) -> str:
    ctx = get_context(experiment, _options(opts))
    counters = dict(ctx.counters)
    for name, obj in ctx.memo.items():
        if name.startswith("encoder:"):
            for k, v in obj.counters.items():
                counters[f"texts_{k}"] = counters.get(f"texts_{k}", 0) + v
    out = write_outputs(ctx, Path(out_root), started, counters)
    get_run_logger().info("results written to %s", out)
    try:
        from flows.artifacts import publish_artifacts
        publish_artifacts(out)
    except Exception as exc:  # the results are on disk; artifacts are a convenience
        get_run_logger().warning("Prefect artifacts not published (%s: %s)", type(exc).__name__, exc)
    return str(out)


@task(name="mlflow", cache_policy=NO_CACHE, persist_result=False)
def track_task(sweep_dir: str, tracking_uri: str, artifact_root: str | None) -> dict[str, Any]:
    from flows.tracking import log_sweep
    return log_sweep(Path(sweep_dir), tracking_uri, artifact_root, flow_run_id=flow_run.get_id())


@flow(name="ablate-sweep", log_prints=True)
def sweep_flow(experiment: str, out: str | None = None, tier: str | None = None,
               split: str | None = None, cache_dir: str | None = None,
               tracking_uri: str | None = None, artifact_root: str | None = None,
               mlflow: bool = True) -> dict[str, Any]:
    """Run every unique stage of the sweep once, then write results and log to MLflow."""
    started = time.time()
    logger = get_run_logger()
    opts = {"tier": tier, "split": split, "cache_dir": cache_dir}
    ctx = get_context(experiment, _options(opts))
    counts = ctx.plan.count()
    logger.info("%d variants, %d questions, %d unique stages (%s)", len(ctx.variants),
                len(ctx.questions), len(ctx.plan.nodes),
                ", ".join(f"{k} {v}" for k, v in counts.items()))
    futures: dict[str, Any] = {}
    for key, node in ctx.plan.nodes.items():
        futures[key] = stage_task.with_options(task_run_name=f"{node.label}-{key[:8]}").submit(
            experiment, opts, key, wait_for=[futures[d] for d in node.deps])
    wait(list(futures.values()))
    results = [fut.result() for fut in futures.values()]  # raises the first stage failure
    _replay_remote(ctx, results)
    ctx.stage_times.update({r["key"]: (round(r["start"], 3), round(r["end"], 3))
                            for r in results if r["computed"]})
    out_root = Path(out or ctx.spec.out)
    sweep_dir = analyse_task(experiment, opts, str(out_root.resolve()), started)
    result: dict[str, Any] = {"sweep_dir": sweep_dir, "mlflow": None,
                              "stage_pids": sorted({r["pid"] for r in results})}
    if mlflow and tracking_uri is None:  # deployments: the same defaults as `ablate run`
        tracking_uri = env.tracking_uri(None, Path.cwd())
        artifact_root = artifact_root or env.default_artifact_root(Path.cwd())
    if mlflow and tracking_uri:
        try:
            result["mlflow"] = track_task(sweep_dir, tracking_uri, artifact_root)
        except Exception as exc:  # results are safe on disk; say so and carry on
            logger.warning("MLflow logging failed (%s: %s); results are in %s; "
                           "log them later with: ablate sync %s", type(exc).__name__, exc,
                           sweep_dir, sweep_dir)
            result["mlflow_error"] = f"{type(exc).__name__}: {exc}"
    return result


def run_sweep(experiment: str, workers: int | None = None, **kwargs: Any) -> dict[str, Any]:
    """Run the flow with the task runner the spec (or the caller) asks for."""
    ctx = get_context(experiment, _options({k: kwargs.get(k) for k in ("tier", "split", "cache_dir")}))
    n = workers or ctx.spec.runner.workers
    runner = ThreadPoolTaskRunner(max_workers=n)
    if ctx.spec.runner.kind == "dask":
        # Worker processes rebuild the run context from these paths: make them absolute.
        # One single-threaded worker per core (Dask's nanny sets OMP/MKL threads to 1, so
        # torch uses one thread) keeps heavy stages from oversubscribing the cores.
        from prefect_dask import DaskTaskRunner
        experiment = str(Path(experiment).resolve())
        kwargs["cache_dir"] = str(ctx.store.root.resolve())
        runner = (DaskTaskRunner(address=ctx.spec.runner.address) if ctx.spec.runner.address
                  else DaskTaskRunner(cluster_kwargs={"n_workers": n, "threads_per_worker": 1,
                                                      "processes": True,
                                                      "dashboard_address": None}))
    return sweep_flow.with_options(task_runner=runner)(experiment=experiment, **kwargs)
