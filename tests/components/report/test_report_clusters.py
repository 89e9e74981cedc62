"""The report says what the unit of analysis is: "n questions in G clusters" in the
header and every table's n column, how the interval was computed, and a finding when the
comparisons rest on fewer than 10 clusters (issue 27)."""

from __future__ import annotations

import json

import polars as pl

from ablate.components.report.build import build_report
from ablate.components.report.sweep_data import load_sweep
from ablate.components.stats import compare_variants
from tests.components.report.synthetic import KEY, STATS, make_sweep


def _clustered(folder, cluster: str = "auto"):
    make_sweep(folder)
    pq = pl.read_parquet(folder / "per_query.parquet")
    stats = compare_variants(pq, baseline="baseline", metrics=KEY, seed=3, resamples=2000,
                             cluster_col=None if cluster == "none" else "cluster")
    stats.write_parquet(folder / "stats.parquet")
    man = json.loads((folder / "manifest.json").read_text())
    man["statistics"] = {**STATS, "ci_method": "inversion", "cluster": cluster}
    (folder / "manifest.json").write_text(json.dumps(man))
    return build_report(load_sweep(folder), plots=False)["report.md"]


def test_clustered_report_says_questions_in_clusters_and_few_clusters(tmp_path):
    md = _clustered(tmp_path)
    assert "**Unit of analysis** the cluster (questions sharing a document count as one unit" in md
    assert "up to 30 questions in 5 clusters per comparison" in md
    assert "| 24/5 |" in md          # recall: 24 answerable questions in 5 clusters
    assert "Few clusters: the key comparisons rest on 5 clusters" in md
    assert "excludes 0 exactly when the comparison is significant" in md
    assert "95% CI" not in md


def test_independent_report_says_the_question(tmp_path):
    md = _clustered(tmp_path, cluster="none")
    assert "**Unit of analysis** the question (stats.cluster: none" in md
    assert "| 24 |" in md and "Few clusters" not in md


def test_findings_count_questions_in_clusters():
    from ablate.components.report.findings import n_in_clusters
    assert n_in_clusters({"n_used": 239, "n_clusters": 16, "clustered_by": "cluster"}) == "239 in 16 clusters"
    assert n_in_clusters({"n_used": 239, "n_clusters": 239, "clustered_by": "none"}) == "239"
