"""The Prefect sweep flow: one task per unique stage key, then analysis and MLflow logging.

Tasks receive keys and paths, never large data; each finds the data set, plan and store
in its process's run context.

When nothing changed (no stage computed, and the sweep folder already holds this sweep's
complete outputs: ablate.flows.outputs.write.outputs_in_place) the analysis, report and MLflow work is
skipped and the flow says so: those outputs are what it would write again. MLflow is
skipped only when `mlflow.json` in the sweep folder records a logging of this folder to
the same tracking URI (written after a successful logging; a re-analysis replaces the
folder and so removes it).

A RunFailed (a stage crashed, the analysis or the report failed: flows/outputs/write.py leaves
what it made on disk) ends the flow run Failed, with a Markdown artifact that says why
and which command continues (publish_failure). MLflow failing does not: the run
completes, says so and records it in its result (`mlflow_error`; `ablate run` then
exits 1 after the summary).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from ablate.components.contract.errors import InputError, RunFailed, cause
from ablate.components.runtime.atomic import atomic_write
from ablate.flows import env
from ablate.flows.outputs.alert_check import AlertFired, alerts_of, in_deployment
from ablate.flows.outputs.write import outputs_in_place, write_outputs
from ablate.flows.plan.out_paths import check_out
from ablate.flows.plan.producible import refusal
from ablate.flows.run import api_lost, console
from ablate.flows.run.context import RunOptions, get_context
from ablate.flows.run.failures import exit_called, failure_time, stage_failure
from ablate.flows.run.sharded import check_scheduler, shown_label
from ablate.flows.run.stage_progress import report_progress, sweep_eta
from ablate.flows.run.stage_timing import timing_key, work_units
from ablate.flows.run.stages import release_models, run_stage
from ablate.flows.run.stale import remove_stale


def _options(opts: dict[str, Any]) -> RunOptions:
    sizes = opts.get("sizes")
    return RunOptions(**{**opts, "sizes": None if sizes is None else
                         tuple((str(k), int(n)) for k, n in sizes)})


@task(name="stage", cache_policy=NO_CACHE, persist_result=False)
def stage_task(experiment: str, opts: dict[str, Any], key: str) -> dict[str, Any]:
    ctx = get_context(experiment, _options(opts))
    node = ctx.plan.nodes[key]
    t0, wall0 = time.perf_counter(), time.time()
    try:
        computed = run_stage(ctx, node)
    except SystemExit as exc:  # a component (a plugin's) ending the program: one line instead
        raise RuntimeError(exit_called(exc)) from None
    seconds = time.perf_counter() - t0
    ctx.count("stages_done")
    done, total = ctx.counters["stages_done"], len(ctx.plan.nodes)
    how = f"computed in {seconds:.1f}s" if computed else "reused from cache"
    label = shown_label(ctx.spec.runner, node)  # with its shards, when it ran on several
    get_run_logger().info("[%d/%d] %s %s: %s (elapsed %.0fs)", done, total, label, key[:10],
                          how, time.time() - ctx.started)
    return {"key": key, "stage": node.stage, "computed": computed, "seconds": seconds,
            "label": label,
            "pid": os.getpid(), "timing_key": timing_key(node), "units": work_units(ctx, node),
            "start": wall0,
            "end": wall0 + seconds}


def _replay_remote(ctx: Any, results: list[dict[str, Any]]) -> None:
    """Stages that ran in other processes (Dask workers) count in this process's manifest."""
    for r in results:
        if r["pid"] != os.getpid():
            ctx.store.note(r["stage"], computed=r["computed"])
            if r["computed"]:
                ctx.timings[r["stage"]] = ctx.timings.get(r["stage"], 0.0) + r["seconds"]
                ctx.note_timing(r["timing_key"], r["seconds"], r["units"])


def _run_plan(experiment: str, opts: dict[str, Any], ctx: Any, started: float,
              models_done: Callable[[bool], None] | None = None) -> list[dict[str, Any]]:
    """Every stage of the context's plan as a Prefect task, in dependency order."""
    futures: dict[str, Any] = {}
    for key, node in ctx.plan.nodes.items():
        futures[key] = stage_task.with_options(task_run_name=f"{node.label}-{key[:8]}").submit(
            experiment, opts, key, return_state=False, wait_for=[futures[d] for d in node.deps])
    report_progress(futures, ctx.plan, started, models_done, sweep_eta(ctx))
    results, failures, failed_at = [], [], {}
    for key, fut in futures.items():
        try:
            results.append(fut.result())
        except Exception as exc:  # noqa: BLE001 - one line naming the stage (flows/run/failures.py)
            failures.append((key, exc))
            failed_at[key] = failure_time(fut)
    if failures:
        raise stage_failure(ctx.plan, failures, experiment, opts,
                            {k: t for k, t in failed_at.items() if t is not None}, ctx.store.root)
    _replay_remote(ctx, results)
    return results


def _sequential(experiment: str, opts: dict[str, Any], ctx: Any, started: float):
    """Run the sweep look by look (flows/run/sequential.py); the options, context and stage
    results of the last look, and the record of every look."""
    from ablate.components.stats.clusters import cluster_column
    from ablate.flows.outputs.write import collect_per_query
    from ablate.flows.run.sequential import run_sequential
    full = {v.name: len(ctx.questions_of(v.name)) for v in ctx.variants if not v.is_baseline}
    results: list[dict[str, Any]] = []
    last: dict[str, Any] = {}

    def run_look(sizes: dict[str, int]):
        o = {**opts, "sizes": tuple(sorted(sizes.items()))}
        c = get_context(experiment, _options(o))
        get_run_logger().info("sequential look: %s", ", ".join(f"{k} n={n}" for k, n in sizes.items()))
        results.extend(_run_plan(experiment, o, c, started))
        last.update(opts=o, ctx=c)
        return collect_per_query(c)[0]

    s = ctx.spec.stats
    record = run_sequential(full, s.batch, s.alpha, list(ctx.spec.metrics.key), run_look,
                            cluster_col=cluster_column(s.cluster))  # the unit of the stats
    return last["opts"], last["ctx"], results, record


@task(name="analyse", cache_policy=NO_CACHE, persist_result=False)
def analyse_task(experiment: str, opts: dict[str, Any], out_root: str, started: float,
                 sequential: dict[str, Any] | None = None) -> str:
    ctx = get_context(experiment, _options(opts))
    counters = dict(ctx.counters)
    for name, obj in ctx.memo.items():
        if name.startswith("encoder:"):
            for k, v in obj.counters.items():
                counters[f"texts_{k}"] = counters.get(f"texts_{k}", 0) + v
    out = write_outputs(ctx, Path(out_root), started, counters, sequential)
    get_run_logger().info("results written to %s", out)
    try:
        from ablate.flows.track.artifacts import publish_artifacts
        publish_artifacts(out)
    except Exception as exc:  # the results are on disk; artifacts are a convenience
        get_run_logger().warning("Prefect artifacts not published (%s: %s)", type(exc).__name__, exc)
    return str(out)


MLFLOW_MARKER = "mlflow.json"


def logged_to(sweep_dir: Path, tracking_uri: str) -> dict[str, Any] | None:
    """The runs recorded by an earlier logging of this folder to `tracking_uri`, else None."""
    try:
        data = json.loads((Path(sweep_dir) / MLFLOW_MARKER).read_text())
    except (OSError, ValueError):
        return None
    return data.get("runs") if data.get("tracking_uri") == tracking_uri else None


@task(name="mlflow", cache_policy=NO_CACHE, persist_result=False)
def track_task(sweep_dir: str, tracking_uri: str, artifact_root: str | None) -> dict[str, Any]:
    from ablate.flows.track.tracking import log_sweep
    runs = log_sweep(Path(sweep_dir), tracking_uri, artifact_root, flow_run_id=flow_run.get_id())
    atomic_write(Path(sweep_dir) / MLFLOW_MARKER,
                 json.dumps({"tracking_uri": tracking_uri, "runs": runs}, indent=2) + "\n")
    return runs


class GateFailed(Exception):
    """The sweep fell below its pinned reference: the flow run ends Failed."""


@task(name="gate", cache_policy=NO_CACHE, persist_result=False)
def gate_task(sweep_dir: str, reference: str, metrics: list[str], max_drop: float,
              tracking_uri: str | None) -> dict[str, Any]:
    """Compare the sweep's baseline with the reference; publish the verdict as a Markdown
    artifact; raise GateFailed unless every gated metric is shown to have dropped less
    than max_drop (non-inferiority: a fail or an inconclusive verdict stops the run)."""
    from prefect.artifacts import create_markdown_artifact

    from ablate.components.report.reference import one_line
    from ablate.components.report.sweep_data import load_sweep
    from ablate.flows.outputs.reference import gate_reference
    from ablate.flows.track.artifacts import artifact_key
    results, markdown = gate_reference(Path(sweep_dir), reference, metrics, max_drop, None,
                                       tracking_uri)
    name = load_sweep(Path(sweep_dir)).manifest.get("experiment", "experiment")
    create_markdown_artifact(markdown=markdown, key=artifact_key(name, "gate"),
                             description=f"Gate against {reference}")
    failed = [r for r in results if r.failed]
    if failed:
        raise GateFailed(f"against {reference}: " + "; ".join(one_line(r, max_drop) for r in failed))
    return {"passed": True, "metrics": [r.metric for r in results]}


@task(name="alerts", cache_policy=NO_CACHE, persist_result=False)
def alerts_task(name: str, rules: list, out_root: str) -> list[str]:
    """The experiment's `alerts:` rules over its runs (flows/outputs/alert_check.py): each
    that alerts sent as a Prefect event naming this flow run (tagged ablate-alert), the
    lines published as an artifact; the fired lines returned."""
    from prefect.artifacts import create_markdown_artifact

    from ablate.flows.outputs.alert_check import check, markdown
    from ablate.flows.track.artifacts import artifact_key
    checked = check(name, rules, Path(out_root))
    logger = get_run_logger()
    for line in checked.lines:
        logger.info("%s", line)
    logger.info("%s", checked.sent)
    create_markdown_artifact(markdown=markdown(name, checked), key=artifact_key(name, "alerts"),
                             description="Alert rules over the experiment's runs")
    return checked.fired


def _prepare_in_background(tracking_uri: str | None) -> threading.Thread:
    """On a side thread, import what the analysis and the report use (scipy.special,
    matplotlib), then MLflow, opening its store (a new SQLite one made first:
    flows/track/mlflow_store.py): from the moment the model-bound stages are done (or after the
    stages), so MLflow's ~100 MB (benchmarks/memory.py) are never resident beside the
    encoder, and the imports run while the light stages leave the interpreter idle."""
    def work() -> None:
        try:
            import scipy.special  # noqa: F401 - the statistics

            import ablate.components.report.build  # noqa: F401 - matplotlib and the report
        except Exception:  # noqa: BLE001 - the analysis imports them again and says why
            pass
        if not tracking_uri:
            return
        try:
            from ablate.flows.track.mlflow_store import open_store
            open_store(tracking_uri)
        except Exception:  # noqa: BLE001 - log_sweep meets and reports the same problem
            pass
    thread = threading.Thread(target=work, name="ablate-prepare", daemon=True)
    thread.start()
    return thread


def publish_failure(flow: Any, flow_run: Any, state: Any) -> None:
    """The sweep flow's on_failure hook: a RunFailed that ended the run (a stage crashed,
    the analysis or the report failed) is published on it as a Markdown artifact (key
    `ablate-<experiment>-failure`): the cause, what is on disk and the command that
    continues. The flow run stays Failed and the exception reaches the caller."""
    try:
        exc = state.result(raise_on_failure=False)
    except Exception:  # noqa: BLE001 - no exception to tell of
        return
    if not isinstance(exc, RunFailed):
        return
    try:
        from prefect.artifacts import create_markdown_artifact

        from ablate.flows.track.artifacts import artifact_key
        params = flow_run.parameters
        ctx = get_context(params["experiment"], _options(
            {k: params.get(k) for k in ("tier", "split", "cache_dir")}))
        hint = f"\n\nTo continue: `{exc.hint}`\n" if exc.hint else "\n"
        create_markdown_artifact(markdown=f"## Run failed\n\n{exc.message}{hint}",
                                 key=artifact_key(ctx.spec.name, "failure"),
                                 description="Why the sweep stopped")
    except Exception as err:  # noqa: BLE001 - the run's own failure is what matters
        get_run_logger().warning("failure artifact not published (%s)", cause(err))


@flow(name="ablate-sweep", log_prints=True, on_failure=[publish_failure])
def sweep_flow(experiment: str, out: str | None = None, tier: str | None = None,
               split: str | None = None, cache_dir: str | None = None,
               tracking_uri: str | None = None, artifact_root: str | None = None,
               mlflow: bool = True, gate_reference: str | None = None,
               gate_metrics: list[str] | None = None, gate_max_drop: float | None = None
               ) -> dict[str, Any]:
    """Run every unique stage of the sweep once, then write results and log to MLflow
    (a failed analysis or report raises RunFailed: the run ends Failed).
    With `gate_reference` (a stored sweep folder or MLflow run id), the baseline is then
    gated against it on `gate_metrics` and the run ends Failed unless each is shown to have
    dropped less than `gate_max_drop` (required with a reference: checked before any stage)."""
    if gate_reference and not (gate_max_drop and gate_max_drop > 0):
        raise InputError("gate_max_drop: a gated run needs the largest drop to rule out, "
                         "above 0 (a drop of 0 can never be proven)", field="gate_max_drop")
    started = time.time()
    opts = {"tier": tier, "split": split, "cache_dir": cache_dir}
    ctx = get_context(experiment, _options(opts))
    refused = refusal(ctx)  # a key metric no variant produces: refused here too (deployments)
    if refused is not None:
        raise refused
    check_out(ctx.loaded, out)  # before any stage (flows/plan/out_paths.py)
    logger = get_run_logger()
    for gone in remove_stale(Path(out or ctx.spec.out), ctx.store.root):  # a killed run's
        logger.info("removed %s, left by a run that was stopped", gone)
    counts = ctx.plan.count()
    logger.info("%d variants, %d questions, %d unique stages (%s)", len(ctx.variants),
                len(ctx.questions), len(ctx.plan.nodes),
                ", ".join(f"{k} {v}" for k, v in counts.items()))
    if mlflow and tracking_uri is None:  # deployments: the same defaults as `ablate run`
        tracking_uri = env.tracking_uri(None, Path.cwd())
        artifact_root = artifact_root or env.default_artifact_root(Path.cwd())
    sequential = None
    prepared: threading.Thread | None = None
    timeline: dict[str, float] = {}

    def models_done(computed: bool) -> None:
        """No model-bound stage left: unload the encoders and, when this run computed
        something (so it analyses and logs), prepare the analysis and MLflow on a side
        thread while the light stages finish."""
        nonlocal prepared
        release_models(ctx)
        timeline["models_released"] = time.time()
        if computed:
            prepared = _prepare_in_background(tracking_uri if mlflow else None)

    if ctx.spec.stats.sequential and tier is None:
        opts, ctx, results, sequential = _sequential(experiment, opts, ctx, started)
    else:
        results = _run_plan(experiment, opts, ctx, started, models_done)
    timeline["stages_done"] = time.time()
    release_models(ctx, indexes=True)
    ctx.stage_times.update({r["key"]: (round(r["start"], 3), round(r["end"], 3))
                            for r in results if r["computed"]})
    # every look's and every worker's, and none from an earlier run of this process
    ctx.computed_keys = {r["key"] for r in results if r["computed"]}
    out_root = Path(out or ctx.spec.out)
    unchanged = None if any(r["computed"] for r in results) else outputs_in_place(ctx, out_root)
    if prepared is None and unchanged is None:
        prepared = _prepare_in_background(tracking_uri if mlflow else None)
    if unchanged is not None:
        sweep_dir = str(unchanged)
        logger.info("nothing changed: every stage reused and the outputs are in place in %s; "
                    "analysis and report skipped", sweep_dir)
    else:
        sweep_dir = analyse_task(experiment, opts, str(out_root.resolve()), started, sequential)
    result: dict[str, Any] = {"sweep_dir": sweep_dir, "mlflow": None, "unchanged": unchanged is not None,
                              "stage_pids": sorted({r["pid"] for r in results}),
                              "timeline": timeline}
    if mlflow and tracking_uri and unchanged is not None and logged_to(unchanged, tracking_uri):
        result["mlflow"] = logged_to(unchanged, tracking_uri)
        result["mlflow_skipped"] = True
        logger.info("MLflow: this sweep folder is logged to %s already (%s); skipped",
                    tracking_uri, result["mlflow"].get("parent"))
    elif mlflow and tracking_uri:
        if prepared is not None:
            prepared.join()  # whatever it did, log_sweep opens (or creates) the store
        try:
            result["mlflow"] = track_task(sweep_dir, tracking_uri, artifact_root)
        except Exception as exc:  # results are safe on disk; say so and carry on
            logger.warning("MLflow logging failed (%s); results are in %s; "
                           "log them later with: ablate sync %s", cause(exc), sweep_dir,
                           sweep_dir, extra=console.SAID_BY_CLI)
            result["mlflow_error"] = cause(exc)
    fired: list[str] = []
    if alerts_of(ctx.spec) and in_deployment():  # a scheduled run reads its alert rules
        fired = alerts_task(ctx.spec.name, alerts_of(ctx.spec), str(out_root.resolve()))
        result["alerts"] = fired
    if gate_reference:
        metrics = list(gate_metrics or ctx.spec.metrics.key)
        result["gate"] = gate_task(sweep_dir, gate_reference, metrics, float(gate_max_drop or 0.0),
                                   tracking_uri)
    if fired:
        raise AlertFired("; ".join(fired))
    return api_lost.keep(result)  # the result, even when Prefect cannot record the run's end


def run_sweep(experiment: str, workers: int | None = None, **kwargs: Any) -> dict[str, Any]:
    """Run the flow with the task runner the spec (or the caller) asks for."""
    ctx = get_context(experiment, _options({k: kwargs.get(k) for k in ("tier", "split", "cache_dir")}))
    n = workers or ctx.spec.runner.workers
    runner: TaskRunner[Any] = ThreadPoolTaskRunner(max_workers=n)
    check_scheduler(ctx.loaded)  # an unreachable runner.address: one line, before any stage
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
