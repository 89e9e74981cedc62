"""MLflow logging of a finished sweep folder: one parent run per sweep, one child per variant.

The only module that imports mlflow. It reads what flows/outputs/write.py wrote, so a sweep can
be logged (or re-logged, `ablate sync`) at any time from its folder. Idempotent: runs are
found again by the tags `sweep_id` (parent) and `sweep_id` + `config_id` (children);
params already present are skipped, metrics carry the sweep's creation time as their
timestamp (so a repeat writes the same points), and the data set input is logged once.

What each run carries is computed in flows/track/run_data.py (compare-first children);
each child also gets its per-question table (questions.json, an MLflow table:
components/report/drilldown.question_table), the parent the report, its appendix and plots,
and the folder's manifest, variants, tables, questions and document digests (what `ablate
diff RUN_ID` reads back, flows/track/run_folder.py).

Runs carry the times of their own compute: the parent spans the sweep, a child spans the
stages computed for it (a variant whose stages were all reused has a zero-length run at
the sweep's start). Short run names (`rrf_k=200`, `gen=smollm2`), the resolved model of
every model-backed stage (`resolved.generator.model_sha256`, `resolved.embedder.name`)
and MLflow's own source tags (`mlflow.source.git.commit`, `mlflow.source.name`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator, Mapping

import polars as pl
from mlflow.entities import Dataset, DatasetInput, InputTag, Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from ablate.components.contract.dotted import flatten
from ablate.components.contract.vocab import BASELINE
from ablate.components.model_identity import flat_models
from ablate.components.report.comparability import not_comparable
from ablate.components.report.drilldown import question_table
from ablate.components.report.findings import findings
from ablate.components.report.sweep_data import SweepResults, load_sweep, report_stats
from ablate.components.stats.worth_table import worth_run_metrics
from ablate.flows.track.mlflow_links import runs_page
from ablate.flows.track.mlflow_store import store_lock
from ablate.flows.track.run_data import (
    comparison_table,
    created_ms,
    judge_run_data,
    reused_latencies,
    run_times,
    variant_metrics,
)

MAX_PARAMS_TAGS = 100   # MLflow log_batch limits: params (and tags) per call,
MAX_METRICS = 1000      # metrics per call,
MAX_ENTITIES = 1000     # everything per call.
MAX_DIGEST = 36         # dataset digest length the stores accept
PARENT_TAG = "mlflow.parentRunId"
NOTE_TAG = "mlflow.note.content"  # the run description in the UI
COMPARISON_TABLE = "comparison.json"
QUESTIONS_TABLE = "questions.json"  # a child's per-question table (MLflow's table view)
SOURCE_TAGS = {"git_sha": "mlflow.source.git.commit", "experiment_file": "mlflow.source.name"}
PARENT_FILES = ("report.md", "report.html", "report-appendix.md", "report-appendix.html",
                "report.tex", "summary.txt", "stats.parquet", "factorial.parquet", "worth.parquet",
                "manifest.json", "variants.json", "timings.parquet",
                # what `ablate diff RUN_ID` compares: the questions and each document's digest
                "questions.parquet", "documents.parquet")


def batches(params: list[Param], metrics: list[Metric], tags: list[RunTag]
            ) -> Iterator[tuple[list[Param], list[Metric], list[RunTag]]]:
    """Split into log_batch calls within MLflow's per-call limits."""
    while params or metrics or tags:
        p, params = params[:MAX_PARAMS_TAGS], params[MAX_PARAMS_TAGS:]
        t, tags = tags[:MAX_PARAMS_TAGS], tags[MAX_PARAMS_TAGS:]
        room = min(MAX_METRICS, MAX_ENTITIES - len(p) - len(t))
        m, metrics = metrics[:room], metrics[room:]
        yield p, m, t


def check_reachable(tracking_uri: str, timeout: float = 5.0) -> None:
    """Fail fast (seconds, not minutes of retries) when an HTTP tracking server is down."""
    if not tracking_uri.startswith(("http://", "https://")):
        return
    url = tracking_uri.rstrip("/") + "/health"
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            pass
    except urllib.error.HTTPError:
        return  # it answered: reachable (some proxies have no /health)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ConnectionError(f"MLflow tracking server {tracking_uri} is unreachable ({reason})") from None


def artifact_folder(name: str) -> str:
    """The experiment's folder under the artifact root: its name when that is one folder
    name (spec.check_name: every name a spec may give), else its slug and a hash (a folder
    logged before names were checked), so artifacts never land outside the root."""
    from ablate.flows.plan.spec import check_name
    try:
        return check_name(name)
    except ValueError:
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "experiment"
        return f"{slug}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"


def experiment_id(client: MlflowClient, name: str, artifact_root: str | None) -> str:
    exp = client.get_experiment_by_name(name)
    if exp is not None:
        return exp.experiment_id
    location = f"{artifact_root.rstrip('/')}/{artifact_folder(name)}" if artifact_root else None
    # Without this tag MLflow 3's UI opens the experiment in its GenAI view; ablate's runs
    # belong in the run table and its comparison view.
    return client.create_experiment(name, artifact_location=location,
                                    tags={"mlflow.experimentKind": "custom_model_development"})


def _find(client: MlflowClient, exp_id: str, filters: dict[str, str]) -> Any | None:
    query = " and ".join(f"tags.`{k}` = '{v}'" for k, v in filters.items())
    runs = client.search_runs([exp_id], filter_string=query, max_results=5,
                              order_by=["attributes.start_time ASC"])
    return runs[0] if runs else None


def _param_value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    if v is None:
        return "None"
    return str(v)[:6000]


def _log(client: MlflowClient, run_id: str, params: dict[str, Any],
         metrics: Mapping[str, float | None], tags: dict[str, str], ts: int,
         new: bool = False) -> None:
    """Params (those not logged yet), metrics (those that are a finite number) and tags in
    as few log_batch calls as the limits allow; a run created just now (`new`) has no
    params to look up."""
    existing = {} if new else client.get_run(run_id).data.params
    plist = [Param(k, _param_value(v)) for k, v in sorted(params.items()) if k not in existing]
    mlist = [Metric(k, float(v), ts, 0) for k, v in sorted(metrics.items())
             if v is not None and math.isfinite(v)]
    tlist = [RunTag(k, str(v)) for k, v in sorted(tags.items())]
    for p, m, t in batches(plist, mlist, tlist):
        client.log_batch(run_id, metrics=m, params=p, tags=t)


def dataset_input(manifest: dict[str, Any]) -> DatasetInput:
    """The data set as an MLflow run input: digest = its fingerprint (truncated to fit)."""
    ds = manifest.get("dataset", {})
    fp = str(ds.get("fingerprint", ""))
    digest = fp.split(":", 1)[-1][:MAX_DIGEST]
    name = Path(str(ds.get("path", "dataset"))).parent.name or "dataset"
    profile = {"fingerprint": fp, "documents": ds.get("documents"), "questions": ds.get("questions"),
               "used_questions": manifest.get("questions", {}).get("total"),
               "tier": manifest.get("tier"), "split": manifest.get("split")}
    entity = Dataset(name=name, digest=digest, source_type="local",
                     source=json.dumps({"uri": str(ds.get("path")), "format": ds.get("format")}),
                     profile=json.dumps(profile))
    return DatasetInput(dataset=entity, tags=[InputTag("mlflow.data.context", "eval")])


def _log_input(client: MlflowClient, run_id: str, item: DatasetInput, new: bool = False) -> None:
    if new:
        client.log_inputs(run_id, datasets=[item])
        return
    inputs = client.get_run(run_id).inputs
    have = {d.dataset.digest for d in (inputs.dataset_inputs if inputs else [])}
    if item.dataset.digest not in have:
        client.log_inputs(run_id, datasets=[item])


def _log_children(client: MlflowClient, exp_id: str, pid: str, res: SweepResults,
                  ts: int, data_in: DatasetInput) -> dict[str, str]:
    man, sid = res.manifest, res.manifest["sweep_id"]
    _, spans = run_times(res)
    key = res.key_metrics()
    source = {SOURCE_TAGS[k]: str(man[k]) for k in SOURCE_TAGS if man.get(k)}
    children = {}
    for v in res.variants:
        start, end = spans[v["name"]]
        run = _find(client, exp_id, {"sweep_id": sid, "config_id": v["config_id"]})
        new = run is None
        if run is None:
            run = client.create_run(exp_id, run_name=v["name"], start_time=start or None,
                                    tags={PARENT_TAG: pid, "sweep_id": sid,
                                          "config_id": v["config_id"], "ablate.role": "variant"})
        rid = run.info.run_id
        is_base = v["name"] == BASELINE
        _log(client, rid, params={**flatten(v["config"]), **flat_models(v.get("models") or {})},
             metrics=variant_metrics(res.per_query, res.stats, res.timings, v["name"], key),
             tags={"ablation.variable": v["variable"] or "none",
                   "ablation.value": v["value_label"] or BASELINE,
                   "baseline": str(is_base).lower(), "variant": v["name"], "sweep_id": sid,
                   "config_id": v["config_id"], "git_sha": man.get("git_sha", ""),
                   "dataset_fingerprint": man.get("dataset", {}).get("fingerprint", ""),
                   "mlflow.runName": v["name"], "mlflow.source.type": "LOCAL",
                   "latency_reused": reused_latencies(res.timings, v["name"]) or "none",
                   **source}, ts=ts, new=new)
        _log_input(client, rid, data_in, new=new)
        with tempfile.TemporaryDirectory() as tmp:  # both files in one artifact call
            res.per_query.filter(pl.col("variant") == v["name"]).write_parquet(
                Path(tmp) / "per_query.parquet")
            (Path(tmp) / "config.json").write_text(json.dumps(v["config"], indent=2, sort_keys=True))
            client.log_artifacts(rid, tmp)
        _log_questions(client, rid, question_table(res.per_query, v["name"], key))
        client.set_terminated(rid, end_time=end or None)
        children[v["name"]] = rid
    return children


def _log_questions(client: MlflowClient, rid: str, table: pl.DataFrame) -> None:
    """A child's per-question table (drilldown.question_table) as an MLflow table, once
    (log_table appends to an existing file, so a repeat would double its rows)."""
    if not table.height or any(f.path == QUESTIONS_TABLE for f in client.list_artifacts(rid)):
        return
    client.log_table(rid, data=table.to_pandas(), artifact_file=QUESTIONS_TABLE)


def _log_comparison(client: MlflowClient, pid: str, res: SweepResults) -> None:
    """The full comparison table on the parent, once: MLflow table (JSON) and parquet."""
    if any(f.path == COMPARISON_TABLE for f in client.list_artifacts(pid)):
        return
    table = comparison_table(res)
    client.log_table(pid, data=table.to_pandas(), artifact_file=COMPARISON_TABLE)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "comparison.parquet"
        table.write_parquet(p)
        client.log_artifact(pid, str(p))


def log_sweep(sweep_dir: Path, tracking_uri: str, artifact_root: str | None = None,
              flow_run_id: str | None = None) -> dict[str, Any]:
    """Log the sweep folder to MLflow; returns the experiment, parent and child run ids."""
    with store_lock(tracking_uri):
        return _log_sweep(Path(sweep_dir), tracking_uri, artifact_root, flow_run_id)


def _log_sweep(sweep_dir: Path, tracking_uri: str, artifact_root: str | None,
               flow_run_id: str | None) -> dict[str, Any]:
    res = load_sweep(sweep_dir)
    man = res.manifest
    check_reachable(tracking_uri)
    client = MlflowClient(tracking_uri=tracking_uri)
    exp_id = experiment_id(client, man["experiment"], artifact_root)
    sid, ts = man["sweep_id"], created_ms(man)
    (start, end), _ = run_times(res)
    parent = _find(client, exp_id, {"sweep_id": sid, "ablate.role": "parent"})
    if parent is None:
        parent = client.create_run(exp_id, run_name=f"{man['experiment']} {man['created']}",
                                   start_time=start or None,
                                   tags={"sweep_id": sid, "ablate.role": "parent"})
    pid = parent.info.run_id
    found = findings(not_comparable(report_stats(res.stats), res.variants), res.key_metrics(),
                     res.no_effect, man, variants=res.variants, per_query=res.per_query)
    note = "\n".join(f"- {x}" for x in found)
    tags = {"git_sha": man.get("git_sha", ""), "git_dirty": str(man.get("git_dirty", "")),
            "dataset_fingerprint": man["dataset"]["fingerprint"],
            "ablate_version": man.get("versions", {}).get("ablate", ""),
            "experiment_file": man.get("experiment_file", ""), "tier": man.get("tier", ""),
            "split": man.get("split", ""), NOTE_TAG: f"Sweep {sid}\n\n{note}"[:5000],
            "mlflow.source.type": "LOCAL",
            **{SOURCE_TAGS[k]: str(man[k]) for k in SOURCE_TAGS if man.get(k)}}
    if flow_run_id:
        tags["prefect_flow_run_id"] = flow_run_id
    jparams, jmetrics = judge_run_data(man)
    _log(client, pid,
         params={"tier": man["tier"], "split": man["split"], "seed": man["seed"],
                 "n_variants": len(res.variants), "n_questions": man["questions"]["total"],
                 "key_metrics": ",".join(res.key_metrics()),
                 **{f"stats.{k}": v for k, v in man["statistics"].items()}, **jparams},
         metrics={"wall_seconds": man.get("wall_seconds"), **jmetrics,
                  **worth_run_metrics(res.worth)}, tags=tags, ts=ts)
    data_in = dataset_input(man)
    _log_input(client, pid, data_in)
    children = _log_children(client, exp_id, pid, res, ts, data_in)
    _log_comparison(client, pid, res)
    for name in PARENT_FILES:
        if (sweep_dir / name).exists():
            client.log_artifact(pid, str(sweep_dir / name))
    if (sweep_dir / "plots").is_dir():
        client.log_artifacts(pid, str(sweep_dir / "plots"), artifact_path="plots")
    client.set_terminated(pid, end_time=end or None)
    return {"experiment_id": exp_id, "parent": pid, "children": children,
            "url_path": runs_page(exp_id)}


def fetch_reference(run_id: str, tracking_uri: str):  # type: ignore[no-untyped-def]
    """A gate reference from an MLflow run: a variant's run, or a sweep's parent run (its
    baseline child is taken); its per-question scores and data fingerprint."""
    from ablate.components.contract.errors import InputError
    from ablate.components.report.reference import Reference
    check_reachable(tracking_uri)
    client = MlflowClient(tracking_uri=tracking_uri)
    try:
        run = client.get_run(run_id)
    except Exception:  # noqa: BLE001 - MLflow raises its own error kinds for unknown ids
        raise InputError(f"no MLflow run {run_id} in {tracking_uri}", field="--reference") from None
    if run.data.tags.get("ablate.role") == "parent":
        kids = client.search_runs([run.info.experiment_id],
                                  filter_string=f"tags.`{PARENT_TAG}` = '{run_id}' and "
                                                "tags.baseline = 'true'")
        if not kids:
            raise InputError(f"sweep run {run_id} has no baseline child run", field="--reference")
        run = kids[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = client.download_artifacts(run.info.run_id, "per_query.parquet", tmp)
        frame = pl.read_parquet(path)
    return Reference(frame, run.data.tags.get("dataset_fingerprint", ""), f"MLflow run {run_id}")
