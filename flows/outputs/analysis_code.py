"""The version of the code that turns stage results into a sweep's outputs: a hash of the
sources of the statistics, the report and the outputs package (flows/outputs/: per-query
table, manifest, judge summary), recorded in the manifest (`analysis_code`). An unchanged
re-run reuses the outputs in place only when it is the same
(ablate.flows.outputs.write.outputs_in_place), so new statistics or report code re-analyse
even when every stage is reused."""

from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the folder holding components/ and flows/
SOURCES = ("components/stats", "components/report", "flows/outputs")


def analysis_version(root: Path = ROOT, sources: tuple[str, ...] = SOURCES) -> str:
    """sha256 (16 hex) over every Python source under `sources`, by relative path."""
    h = hashlib.sha256()
    for src in sources:
        p = root / src
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
        for f in files:
            h.update(f"{f.relative_to(root)}\0".encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]
