"""Publish a sweep's summary on its Prefect flow run: a Markdown artifact (findings and
key-metric tables) and a table artifact (the same numbers, one row per variant x metric).
Keys are stable per experiment, so Prefect keeps their history across runs."""

from __future__ import annotations

import re
from pathlib import Path

from prefect.artifacts import create_markdown_artifact, create_table_artifact

from ablate.components.report.summary import summary_markdown, summary_rows
from ablate.components.report.sweep_data import load_sweep


def artifact_key(experiment: str, kind: str) -> str:
    """Prefect keys allow lowercase letters, digits and dashes only."""
    slug = re.sub(r"[^a-z0-9]+", "-", experiment.lower()).strip("-") or "experiment"
    return f"ablate-{slug}-{kind}"[:100]


def publish_artifacts(sweep_dir: Path) -> dict[str, str]:
    """Create both artifacts on the current flow run; returns their ids by kind."""
    res = load_sweep(Path(sweep_dir))
    name = res.manifest.get("experiment", "experiment")
    sid = res.manifest.get("sweep_id", "")
    md_id = create_markdown_artifact(
        markdown=summary_markdown(res) + f"\n\nFull report: `{Path(sweep_dir) / 'report.html'}`\n",
        key=artifact_key(name, "summary"), description=f"Ablation summary of sweep {sid}")
    table_id = create_table_artifact(
        table=summary_rows(res), key=artifact_key(name, "table"),
        description=f"Key metrics vs baseline, sweep {sid}")
    return {"markdown": str(md_id), "table": str(table_id)}
