"""`ablate trend` on real sweep folders (run stage by stage in this process on the tiny
SQuAD fixture): three runs of one experiment, the third with a context budget too small
for the answers; the trend reads their real per-question tables, clusters and statistics
settings. The fixture has three articles, so three clusters: a sign-flip test over three
clusters cannot reach p < 0.25, and the drop is shown in the means but is not significant."""

from __future__ import annotations

import json

import polars as pl

from tests.flows.direct import run_direct
from tests.specs import experiment, pipeline

CREATED = ("2026-03-01T02:00:00Z", "2026-03-02T02:00:00Z", "2026-03-03T02:00:00Z")


def test_trend_of_three_real_runs(tmp_path, run_cli, capsys):
    folders = []
    for i, (budget, created) in enumerate(zip((96, 96, 12), CREATED)):
        spec = experiment("夜间", description=f"night {i}", baseline=pipeline(context={"budget": budget}),
                          metrics={"key": ["final/recall_at_5", "answer/f1"]})
        _, folder, _ = run_direct(tmp_path, spec)
        man = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        man["created"] = created  # runs seconds apart: fixed, so their order is the test's
        (folder / "manifest.json").write_text(json.dumps(man, ensure_ascii=False), encoding="utf-8")
        folders.append(folder)
    assert len({f.name for f in folders}) == 3
    capsys.readouterr()
    assert run_cli("trend", "夜间", "--runs", str(tmp_path / "runs")) == 0
    t = pl.read_parquet(tmp_path / "runs" / "trend.parquet")
    r = t.filter(metric="final/recall_at_5")
    assert r["label"].to_list() == [str(f) for f in folders]
    assert r["clusters"].to_list() == [3, 3, 3] and r["n_clusters"].to_list()[1:] == [3, 3]
    assert r["delta"][1] == 0 and r["mean"][2] < r["mean"][1] - 0.3
    assert r["delta_ci_high"][2] < 0  # the interval shows the drop ...
    assert r["verdict"].to_list() == [None, "not significant", "not significant"]  # ... p cannot
    assert r["shared"][2] == r["questions"][2] > r["n"][2]  # recall: the answerable questions
    out = capsys.readouterr().out
    assert "44 shared" in out
    assert "]†, p adj" in out and "† the CI and sig. disagree" in out  # marked, as in the report
