"""A variant whose generator reads no context (closed book) shows no retrieval metric in
its rows (issue 54, item 8): the context they measure never reaches its answers. Decided
from the generator's declaration (`reads_context`), not its name."""

from __future__ import annotations

import json

from ablate.components.report.build import build_report
from ablate.components.report.sweep_data import load_sweep
from tests.components.report.synthetic import make_sweep


def test_closed_book_rows_hide_retrieval_metrics(tmp_path):
    folder = make_sweep(tmp_path / "sweep")
    variants = json.loads((folder / "variants.json").read_text())
    rrf = next(v for v in variants if v["name"] == "fusion.rrf_k=10")
    rrf["config"]["generator"]["name"] = "closed_book"  # its fuse stage differs too
    (folder / "variants.json").write_text(json.dumps(variants))
    files = build_report(load_sweep(folder), plots=False)
    md = files["report.md"]
    overview = md.split("## Overview", 1)[1].split("## Findings", 1)[0]
    row = next(ln for ln in overview.splitlines() if "| 10 |" in ln)
    recall_cell = row.split("|")[3]
    assert "not used" in recall_cell, row
    other = next(ln for ln in overview.splitlines() if "| 64 |" in ln)
    assert "not used" not in other  # the extractive generator reads its context
    summary = files["summary.txt"]
    line = next(ln for ln in summary.splitlines() if ln.startswith("fusion.rrf_k=10"))
    assert line.split()[1] == "–"  # final/recall_at_5, the first key metric: not shown
