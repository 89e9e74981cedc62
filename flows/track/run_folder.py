"""A sweep logged to MLflow read back as a sweep folder (`ablate diff RUN_ID ...`): the
parent run's manifest, variants, statistics and the other tables it carries
(PARENT_FILES), and the per-question table of every child run, put together in a
temporary folder that components/report/sweep_data.load_sweep reads like any other.
A variant's run id stands for its sweep (its parent run)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from mlflow.tracking import MlflowClient

from ablate.components.contract.errors import InputError
from ablate.components.runtime.sweep_files import MANIFEST, RECORD
from ablate.flows.track.tracking import PARENT_FILES, PARENT_TAG, check_reachable


def is_run_id(text: str) -> bool:
    """Whether `text` has the form of an MLflow run id (32 lowercase hex digits)."""
    return len(text) == 32 and all(c in "0123456789abcdef" for c in text)


def sweep_from_run(run_id: str, tracking_uri: str, dest: Path) -> Path:
    """Write the sweep that MLflow run `run_id` belongs to into `dest` (a new folder) and
    return it. InputError: an unreachable store, an unknown run, a run ablate did not
    log, a sweep run without its manifest."""
    check_reachable(tracking_uri)
    client = MlflowClient(tracking_uri=tracking_uri)
    try:
        run = client.get_run(run_id)
    except Exception:  # noqa: BLE001 - MLflow raises its own error kinds for unknown ids
        raise InputError(f"no MLflow run {run_id} in {tracking_uri}", path=run_id) from None
    role = run.data.tags.get("ablate.role")
    if role == "variant" and run.data.tags.get(PARENT_TAG):
        run = client.get_run(run.data.tags[PARENT_TAG])
    elif role != "parent":
        raise InputError("not a run ablate logged (no ablate.role tag)", path=run_id)
    pid = run.info.run_id
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    logged = {a.path for a in client.list_artifacts(pid)}
    if MANIFEST not in logged or "variants.json" not in logged:
        raise InputError(f"MLflow run {pid} carries no {MANIFEST} or variants.json", path=run_id)
    for name in PARENT_FILES:
        if name in logged and name.endswith((".json", ".parquet")):
            client.download_artifacts(pid, name, str(dest))
    kids = client.search_runs([run.info.experiment_id],
                              filter_string=f"tags.`{PARENT_TAG}` = '{pid}'")
    frames = []
    for kid in kids:
        path = client.download_artifacts(kid.info.run_id, "per_query.parquet",
                                         str(dest / f".child-{kid.info.run_id}"))
        frames.append(pl.read_parquet(path))
    if not frames:
        raise InputError(f"MLflow run {pid} has no variant runs", path=run_id)
    pl.concat(frames, how="diagonal_relaxed").write_parquet(dest / "per_query.parquet")
    # the per-question table is put together again from the children's: the folder's
    # record of each file's sha256 no longer applies
    man = json.loads((dest / MANIFEST).read_text(encoding="utf-8"))
    man.pop(RECORD, None)
    (dest / MANIFEST).write_text(json.dumps(man, ensure_ascii=False), encoding="utf-8")
    return dest


def sweep_runs(experiment: str, tracking_uri: str) -> list[tuple[str, str]]:
    """(parent run id, sweep id) of every sweep of `experiment` logged to the store (the
    MLflow experiment of that name), oldest first; none when it has no such experiment.
    InputError: an unreachable store."""
    check_reachable(tracking_uri)
    client = MlflowClient(tracking_uri=tracking_uri)
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        return []
    runs = client.search_runs([exp.experiment_id], filter_string="tags.`ablate.role` = 'parent'",
                              order_by=["attributes.start_time ASC"], max_results=50_000)
    return [(r.info.run_id, r.data.tags.get("sweep_id", "")) for r in runs]
