"""The local MLflow store (SQLite): one writer at a time, and a new store made in
milliseconds from a per-machine template instead of MLflow's schema migrations.

A new SQLite store costs MLflow ~3 s of schema migrations here. The schema depends only
on the MLflow version, and a new store's rows are the same everywhere but for the
Default experiment's artifact location and times; so the first store made on a machine
for an MLflow version is also kept as a template (`~/.cache/ablate/mlflow-store/`, or
under ABLATE_STATE_HOME), and later stores are copies of it with those three fields set
as MLflow sets them. Each store is built under a temporary name and renamed into place
once complete, so a killed preparation never leaves a half-migrated store.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ablate.flows import env

PREFIX = "sqlite:///"


@contextmanager
def store_lock(tracking_uri: str) -> Iterator[None]:
    """For a local SQLite store, one writer at a time across processes: two sweeps that
    create a fresh store together would otherwise race in MLflow's schema migrations."""
    if not tracking_uri.startswith(PREFIX):
        yield
        return
    db = Path(tracking_uri[len(PREFIX):])
    with env.file_lock(db.with_name(db.name + ".lock")):
        yield


def template_dir() -> Path:
    return env.machine_state_dir("mlflow-store")


def _migrate(db: Path) -> None:
    """A new store at `db` by MLflow itself (its schema migrations)."""
    from mlflow.tracking import MlflowClient
    MlflowClient(tracking_uri=PREFIX + db.as_posix()).search_experiments(max_results=1)


def _template() -> Path:
    """This machine's empty store for the installed MLflow version, made once."""
    import mlflow
    folder = template_dir()
    path = folder / f"mlflow-{mlflow.__version__}.db"
    with env.file_lock(folder / ".lock"):
        if not path.is_file():
            tmp = path.with_name(f".{path.name}.new-{os.getpid()}")
            tmp.unlink(missing_ok=True)
            try:
                _migrate(tmp)
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
    return path


def _adopt(db: Path) -> None:
    """Set the copied template's Default experiment as MLflow sets it in a new store:
    artifact location `<working directory>/mlruns/0`, created and updated now."""
    from mlflow.store.tracking import DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH
    from mlflow.utils.time import get_current_time_millis
    from mlflow.utils.uri import append_to_uri_path, resolve_uri_if_local
    location = append_to_uri_path(resolve_uri_if_local(DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH), "0")
    now = get_current_time_millis()
    with sqlite3.connect(db) as con:
        con.execute("UPDATE experiments SET artifact_location = ?, creation_time = ?, "
                    "last_update_time = ? WHERE experiment_id = 0", (location, now, now))
    con.close()


def prepare_store(tracking_uri: str) -> None:
    """Make a new local SQLite store (a no-op for an existing one or another URI)."""
    if not tracking_uri.startswith(PREFIX):
        return
    db = Path(tracking_uri[len(PREFIX):])
    with store_lock(tracking_uri):
        if db.exists():
            return
        tmp = db.with_name(f".{db.name}.new-{os.getpid()}")
        tmp.unlink(missing_ok=True)
        try:
            shutil.copyfile(_template(), tmp)
            _adopt(tmp)
            os.replace(tmp, db)
        finally:
            tmp.unlink(missing_ok=True)


def open_store(tracking_uri: str) -> None:
    """Make a local store if needed, then open it: MLflow keeps the opened store per URI,
    so a log_sweep that follows skips the ~1 s of opening it."""
    if tracking_uri.startswith(PREFIX):
        prepare_store(tracking_uri)
        from mlflow.tracking import MlflowClient
        MlflowClient(tracking_uri=tracking_uri).search_experiments(max_results=1)
