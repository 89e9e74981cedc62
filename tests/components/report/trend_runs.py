"""Hand-made runs of one experiment for `ablate trend` (tests/components/report/diff_folders.py
writes each folder): `series` writes three nightly runs under one output root, the third
with the baseline's recall lowered on every question (the drop a trend must show); each
run its own sweep id (the folder's name after the experiment's)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from tests.components.report.diff_folders import default_questions, make_run

CREATED = ("2026-03-01T02:00:00Z", "2026-03-02T02:00:00Z", "2026-03-03T02:00:00Z")


def lower(folder: Path, metric: str, by: float, variant: str = "baseline") -> None:
    """Lower `variant`'s `metric` by `by` on every question of the folder's per_query.parquet."""
    path = folder / "per_query.parquet"
    pq = pl.read_parquet(path)
    pq = pq.with_columns(pl.when(pl.col("variant") == variant)
                         .then((pl.col(metric) - by).clip(0.0, 1.0))
                         .otherwise(pl.col(metric)).alias(metric))
    pq.write_parquet(path)


def rename(folder: Path, experiment: str | None = None, sweep_id: str | None = None) -> None:
    """Give the run another experiment name (its manifest's `experiment`) or sweep id."""
    path = folder / "manifest.json"
    man = json.loads(path.read_text(encoding="utf-8"))
    man["experiment"] = experiment or man["experiment"]
    man["sweep_id"] = sweep_id or man["sweep_id"]
    path.write_text(json.dumps(man, ensure_ascii=False, indent=2), encoding="utf-8")


DOCUMENTS = 10  # three questions a document: ten clusters (a sign-flip test over five
# clusters cannot reach p < 0.0625)


def questions(chinese: bool = False) -> dict[str, dict]:
    """diff_folders' 30 questions, question i on document i // 3."""
    qs = default_questions(chinese)
    for i, q in enumerate(qs.values()):
        q["doc"] = i // 3
    return qs


def series(root: Path, *, chinese: bool = False, drop: float = 0.3,
           experiment: str | None = None, **third) -> list[Path]:
    """Three runs under `root` (folder names not in time order), the third's baseline
    recall lowered by `drop`; `third`: make_run's keywords for the third run only."""
    names = ("night-b", "night-c", "night-a")
    out = []
    for i, (name, created) in enumerate(zip(names, CREATED)):
        extra = {"questions": questions(chinese), **(third if i == 2 else {})}
        folder = make_run(root / name, chinese=chinese, created=created, shift=0.0,
                          documents=DOCUMENTS, **extra)
        if i == 2 and drop:
            lower(folder, "final/recall_at_5", drop)
        rename(folder, experiment, sweep_id=f"{experiment or 'diff-demo'}-{name}")
        out.append(folder)
    return out
