"""A comparison the report calls not comparable (candidates/*@k or reranked/*@k of a
variant that chunks differently from the baseline) is never coloured better or worse: not
in the overview table, the findings, the summary nor the drill-down, while the same metric
of a variant that chunks like the baseline keeps its verdict."""

from __future__ import annotations

import json

from ablate.components.report.build import build_report
from ablate.components.report.sweep_data import SweepResults
from tests.components.report.test_report_legible import _manifest, _per_query, _row, _stats, _variant

VARIANTS = [_variant("baseline"), _variant("chunking.size=64", "chunking.size", 64, chunking__size=64),
            _variant("fusion.rrf_k=10", "fusion.rrf_k", 10, fusion__rrf_k=10)]
KEY = ["candidates/recall_at_5", "final/recall_at_5"]


def _files():
    sig = {"p_value": 0.001, "p_adjusted": 0.002, "significant": True}
    stats = _stats([_row("chunking.size=64", "candidates/recall_at_5", -0.2, -0.3, -0.1, **sig),
                    _row("fusion.rrf_k=10", "candidates/recall_at_5", -0.2, -0.3, -0.1, **sig),
                    _row("chunking.size=64", "final/recall_at_5", 0.01, -0.02, 0.04),
                    _row("fusion.rrf_k=10", "final/recall_at_5", 0.01, -0.02, 0.04)])
    variants = json.loads(json.dumps(VARIANTS))
    res = SweepResults(_manifest(settings={"metrics": {"key": KEY}}), variants,
                       _per_query(variants), stats)
    return build_report(res, KEY, plots=False)


def test_not_comparable_rows_are_never_coloured():
    files = _files()
    md = files["report.md"]
    overview = md.split("## Overview", 1)[1].split("## Findings", 1)[0]
    row = next(x for x in overview.splitlines() if x.startswith("| chunking.size | 64 |"))
    assert "▼" not in row and "worse" not in row
    other = next(x for x in overview.splitlines() if x.startswith("| fusion.rrf_k | 10 |"))
    assert "▼ worse" in other
    found = md.split("## Findings", 1)[1].split("\n## ", 1)[0]
    assert "**chunking.size=64** lowers" not in found and "**fusion.rrf_k=10** lowers (worse)" in found
    assert "Not comparable across chunk sizes" in found
    summary = files["summary.txt"].splitlines()
    assert "▼" not in next(x for x in summary if x.startswith("chunking.size=64"))
    assert "▼" in next(x for x in summary if x.startswith("fusion.rrf_k=10"))
    drill = md.split("## Questions behind the verdicts", 1)[1].split("## Failure buckets", 1)[0]
    assert "### chunking.size=64" not in drill
