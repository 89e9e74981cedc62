"""A part of the analysis that fails (statistics, report) still lands the sweep folder with
what was made, its manifest naming what is missing, and one RunFailed with the command
that makes the rest; an unchanged re-run then analyses again. Stages run directly (no
Prefect, no MLflow), BM25 and the extractive generator: a few seconds."""

from __future__ import annotations

import json
import shlex

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from ablate.components.contract.errors import RunFailed

# SPEC: a tiny sweep: BM25, extractive answers; the shared `sweep` fixture runs it
from tests.e2e.test_console import SPEC  # noqa: F401


def _boom(*args, **kwargs):
    raise ValueError("plot backend exploded")


def _write(ctx, root):
    from ablate.flows.outputs.write import write_outputs
    return write_outputs(ctx, root, ctx.started, {})


def _manifest(folder):
    return json.loads((folder / "manifest.json").read_text())


def test_report_failure_keeps_the_tables_and_names_ablate_report(sweep, tmp_path, monkeypatch,
                                                                run_cli):
    from ablate.flows.outputs.write import outputs_in_place
    ctx, complete, _ = sweep
    monkeypatch.setattr("ablate.components.report.build.build_report", _boom)
    with pytest.raises(RunFailed) as info:
        _write(ctx, tmp_path)
    folder = tmp_path / complete.name
    assert info.value.hint == f"ablate report {folder}"
    assert info.value.message == (f"report failed (ValueError: plot backend exploded); "
                                  f"per_query.parquet and stats.parquet are in {folder}")
    for name in ("per_query.parquet", "stats.parquet", "timings.parquet", "variants.json"):
        assert (folder / name).is_file(), name
    assert not (folder / "report.md").exists() and not (folder / "summary.txt").exists()
    assert _manifest(folder)["incomplete"] == ["report"]
    assert [p.name for p in tmp_path.iterdir()] == [folder.name]  # no temporary folder left
    assert outputs_in_place(ctx, tmp_path) is None  # an unchanged re-run analyses again
    monkeypatch.undo()
    assert run_cli("report", str(folder)) == 0  # the hint's command makes the rest
    assert (folder / "report.md").is_file() and (folder / "summary.txt").is_file()
    assert "incomplete" not in _manifest(folder)  # so an unchanged re-run need not redo it
    assert outputs_in_place(ctx, tmp_path) == folder


def test_rerun_after_a_failed_report_writes_a_complete_folder(sweep, tmp_path, monkeypatch):
    from ablate.flows.outputs.write import outputs_in_place
    ctx, complete, _ = sweep
    with monkeypatch.context() as patched:
        patched.setattr("ablate.components.report.build.build_report", _boom)
        with pytest.raises(RunFailed):
            _write(ctx, tmp_path)
    assert outputs_in_place(ctx, tmp_path) is None
    folder = _write(ctx, tmp_path)
    assert "incomplete" not in _manifest(folder) and (folder / "report.md").is_file()
    assert outputs_in_place(ctx, tmp_path) == folder
    assert outputs_in_place(ctx, complete.parent) == complete


def test_statistics_failure_keeps_per_query_and_names_ablate_stats(sweep, tmp_path,
                                                                  monkeypatch, run_cli):
    ctx, complete, _ = sweep
    monkeypatch.setattr("ablate.flows.outputs.analysis.compute_stats", _boom)
    with pytest.raises(RunFailed, match=r"^statistics failed \(ValueError: plot backend "
                                        r"exploded\); per_query.parquet is in ") as info:
        _write(ctx, tmp_path)
    folder = tmp_path / complete.name
    for name in ("per_query.parquet", "timings.parquet", "manifest.json", "variants.json"):
        assert (folder / name).is_file(), name
    assert not (folder / "stats.parquet").exists()
    man = _manifest(folder)
    assert man["incomplete"] == ["stats", "report"] and man["dataset"]["questions"]
    monkeypatch.undo()
    stats_cmd, report_cmd = info.value.hint.split(", then ")
    assert stats_cmd.startswith("ablate stats ") and report_cmd == f"ablate report {folder}"
    for command in (stats_cmd, report_cmd):  # the hint's commands make the rest
        assert run_cli(*shlex.split(command)[1:]) == 0
    assert_frame_equal(pl.read_parquet(folder / "stats.parquet"),
                       pl.read_parquet(complete / "stats.parquet"))
    assert (folder / "report.md").is_file() and "incomplete" not in _manifest(folder)


def test_failure_before_the_per_question_table_leaves_nothing(sweep, tmp_path, monkeypatch):
    ctx, _, _ = sweep
    monkeypatch.setattr("ablate.flows.outputs.write.collect_per_query", _boom)
    with pytest.raises(RunFailed, match=r"^analysis failed \(ValueError: plot backend "
                                        r"exploded\); nothing new written") as info:
        _write(ctx, tmp_path)
    assert info.value.hint.startswith(f"ablate run {ctx.loaded.path}")
    assert list(tmp_path.iterdir()) == []
