"""Two clean runs of the same sweep (separate fresh caches) give byte-identical tables."""

from __future__ import annotations

from tests.reliability.conftest import sweep


def test_two_clean_runs_are_byte_identical(clean_run, tmp_path):
    again = sweep(clean_run.spec, tmp_path / "cache", tmp_path / "runs")
    assert again.out != clean_run.out and again.cache != clean_run.cache
    # both computed everything from scratch: nothing was reused
    for run in (clean_run, again):
        assert all(c["reused"] == 0 and c["computed"] > 0
                   for c in run.manifest["stages"]["run"].values()), run.manifest["stages"]["run"]
        assert run.manifest["counters"].get("texts_embedded", 0) > 0
    assert again.per_query == clean_run.per_query
    assert again.stats == clean_run.stats
