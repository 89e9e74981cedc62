"""MLflow logging of a finished sweep folder: one parent run per sweep, one child per variant.

The only module that imports mlflow. It reads what flows/outputs.py wrote, so a sweep can
be logged (or re-logged) at any time from its folder. Idempotent: runs are found again by
the tags `sweep_id` (parent) and `sweep_id` + `config_id` (children).
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl
from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from components.config import flatten

MAX_PARAMS = 100  # MLflow's per-call limit for params in log_batch
MAX_METRICS = 1000
PARENT_TAG = "mlflow.parentRunId"


def _batches(items: list, size: int):
    for i in range(0, len(items), size):
        yield items[i:i + size]


def experiment_id(client: MlflowClient, name: str, artifact_root: str | None) -> str:
    exp = client.get_experiment_by_name(name)
    if exp is not None:
        return exp.experiment_id
    location = f"{artifact_root.rstrip('/')}/{name}" if artifact_root else None
    return client.create_experiment(name, artifact_location=location)


def _find(client: MlflowClient, exp_id: str, filters: dict[str, str]) -> Any | None:
    query = " and ".join(f"tags.`{k}` = '{v}'" for k, v in filters.items())
    runs = client.search_runs([exp_id], filter_string=query, max_results=5,
                              order_by=["attributes.start_time ASC"])
    return runs[0] if runs else None


def _param_value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)[:6000]


def _log(client: MlflowClient, run_id: str, params: dict[str, Any], metrics: dict[str, float],
         tags: dict[str, str]) -> None:
    ts = int(time.time() * 1000)
    existing = client.get_run(run_id).data.params
    plist = [Param(k, _param_value(v)) for k, v in sorted(params.items()) if k not in existing]
    for batch in _batches(plist, MAX_PARAMS):
        client.log_batch(run_id, params=batch)
    mlist = [Metric(k, float(v), ts, 0) for k, v in sorted(metrics.items())
             if v is not None and not math.isnan(v)]
    for batch in _batches(mlist, MAX_METRICS):
        client.log_batch(run_id, metrics=batch)
    if tags:
        client.log_batch(run_id, tags=[RunTag(k, str(v)) for k, v in sorted(tags.items())])


def variant_metrics(per_query: pl.DataFrame, stats: pl.DataFrame, name: str) -> dict[str, float]:
    """Mean of each metric (defined values only), plus delta and CI bounds vs the baseline."""
    rows = per_query.filter(pl.col("variant") == name)
    out = {}
    for col in rows.columns:
        if "/" in col and rows[col].dtype == pl.Float64:
            m = rows[col].fill_nan(None).mean()
            if m is not None:
                out[col] = float(m)
    for r in stats.filter(pl.col("variant") == name).iter_rows(named=True):
        for field in ("delta", "ci_low", "ci_high", "p_adjusted"):
            if r[field] is not None:
                out[f"{r['metric']}.{field}"] = float(r[field])
    return out


def log_sweep(sweep_dir: Path, tracking_uri: str, artifact_root: str | None = None,
              flow_run_id: str | None = None) -> dict[str, Any]:
    """Log the sweep folder to MLflow; returns the parent and child run ids."""
    sweep_dir = Path(sweep_dir)
    man = json.loads((sweep_dir / "manifest.json").read_text())
    variants = json.loads((sweep_dir / "variants.json").read_text())
    per_query = pl.read_parquet(sweep_dir / "per_query.parquet")
    stats = pl.read_parquet(sweep_dir / "stats.parquet")
    client = MlflowClient(tracking_uri=tracking_uri)
    exp_id = experiment_id(client, man["experiment"], artifact_root)
    sid = man["sweep_id"]
    parent = _find(client, exp_id, {"sweep_id": sid, "ablate.role": "parent"})
    if parent is None:
        parent = client.create_run(exp_id, run_name=f"{man['experiment']} {man['created']}",
                                   tags={"sweep_id": sid, "ablate.role": "parent"})
    pid = parent.info.run_id
    _log(client, pid,
         params={"tier": man["tier"], "split": man["split"], "seed": man["seed"],
                 "n_variants": len(variants), "n_questions": man["questions"]["total"],
                 **{f"stats.{k}": v for k, v in man["statistics"].items()}},
         metrics={"wall_seconds": man["wall_seconds"]},
         tags={"git_sha": man["git_sha"], "dataset_fingerprint": man["dataset"]["fingerprint"],
               "ablate_version": man["versions"].get("ablate", ""),
               "prefect_flow_run_id": flow_run_id or "", "experiment_file": man["experiment_file"]})
    children = {}
    for v in variants:
        run = _find(client, exp_id, {"sweep_id": sid, "config_id": v["config_id"]})
        if run is None:
            run = client.create_run(exp_id, run_name=v["name"], tags={
                PARENT_TAG: pid, "sweep_id": sid, "config_id": v["config_id"],
                "ablate.role": "variant"})
        rid = run.info.run_id
        _log(client, rid, params=flatten(v["config"]),
             metrics=variant_metrics(per_query, stats, v["name"]),
             tags={"ablation.variable": v["variable"] or "none",
                   "ablation.value": v["value_label"] or "baseline",
                   "baseline": str(v["name"] == "baseline").lower(), "variant": v["name"],
                   "git_sha": man["git_sha"]})
        with tempfile.TemporaryDirectory() as tmp:
            p = Path(tmp) / "per_query.parquet"
            per_query.filter(pl.col("variant") == v["name"]).write_parquet(p)
            client.log_artifact(rid, str(p))
            c = Path(tmp) / "config.json"
            c.write_text(json.dumps(v["config"], indent=2))
            client.log_artifact(rid, str(c))
        client.set_terminated(rid)
        children[v["name"]] = rid
    for name in ("report.md", "report.html", "stats.parquet", "manifest.json", "variants.json"):
        if (sweep_dir / name).exists():
            client.log_artifact(pid, str(sweep_dir / name))
    client.set_terminated(pid)
    return {"experiment_id": exp_id, "parent": pid, "children": children}
