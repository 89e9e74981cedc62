"""The tables of every metric that is not a key metric live in report-appendix.md/.html,
linked from the report (which holds none of them), so the main report stays short."""

from __future__ import annotations

import pytest

from ablate.components.report.build import build_report
from ablate.components.report.sweep_data import load_sweep
from tests.components.report.synthetic import make_sweep


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return build_report(load_sweep(make_sweep(tmp_path_factory.mktemp("appendix") / "s", extra=True)),
                        plots=False)


def test_other_metrics_tables_are_in_the_appendix_and_linked(files):
    md, appendix = files["report.md"], files["report-appendix.md"]
    for metric in ("candidates/recall_at_5", "final/hit_at_1"):
        assert f"| variant | value | {metric} |" not in md
        assert f"## {metric}\n" in appendix and f"| variant | value | {metric} |" in appendix
        assert "| chunking.size=64 | 64 |" in appendix.split(f"## {metric}\n")[1]
    assert "## All other metrics" in md and "[report-appendix.md](report-appendix.md)" in md
    assert "| variant | value | final/recall_at_5 |" not in appendix  # key metrics stay in the report
    assert 'href="report-appendix.html"' in files["report.html"]
    assert 'href="report.html"' in files["report-appendix.html"]
    assert "<table>" in files["report-appendix.html"] and "Glossary" in appendix
