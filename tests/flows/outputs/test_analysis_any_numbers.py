"""The analysis step of `ablate run` (write_outputs, in process: stages run directly, no
Prefect, no MLflow; a few seconds) on numbers that once killed it, and on failures deep
inside the report or the statistics: per_query.parquet always lands, the manifest names
what is missing, and the error is one RunFailed line (the CLI prints `ablate: error:` and
that line, exit 1) with the command that makes the rest, never a raw exception."""

from __future__ import annotations

import json

import polars as pl
import pytest

from ablate.components.contract.errors import RunFailed

# SPEC: a tiny sweep: BM25, extractive answers; the shared `sweep` fixture runs it
from tests.e2e.test_console import SPEC  # noqa: F401


def _write(ctx, root):
    from ablate.flows.outputs.write import write_outputs
    return write_outputs(ctx, root, ctx.started, {})


def _manifest(folder):
    return json.loads((folder / "manifest.json").read_text())


def _one_line(exc: RunFailed) -> str:
    line = f"ablate: error: {exc.one_line()}"  # what flows/cli/main.py prints
    assert "\n" not in line and "Traceback" not in line
    return line


def test_ci_excluding_its_estimate_still_gets_every_output(sweep, tmp_path, monkeypatch):
    """The 300-question Chinese sweep: its statistics held a CI that excluded its own
    estimate, the error bar raised, and per_query, stats and report were all lost."""
    import ablate.flows.outputs.analysis as analysis
    ctx, _, _ = sweep
    real = analysis.compute_stats

    def excluding(*args, **kwargs):
        stats = real(*args, **kwargs)
        return stats.with_columns(ci_low=pl.col("delta") + 0.05, ci_high=pl.col("delta") + 0.1)
    monkeypatch.setattr(analysis, "compute_stats", excluding)
    folder = _write(ctx, tmp_path)
    assert "incomplete" not in _manifest(folder)
    for name in ("per_query.parquet", "stats.parquet", "report.md", "report.html", "summary.txt",
                 "plots/overview.svg"):
        assert (folder / name).is_file(), name
    assert "]‡" in (folder / "report.md").read_text()


def test_a_plot_that_raises_keeps_the_tables_and_is_one_line(sweep, tmp_path, monkeypatch):
    ctx, complete, _ = sweep

    def refuses(*args, **kwargs):
        raise ValueError("'yerr' must not contain negative values")
    monkeypatch.setattr("ablate.components.report.plots.variable_plot", refuses)
    with pytest.raises(RunFailed) as info:
        _write(ctx, tmp_path)
    folder = tmp_path / complete.name
    assert _one_line(info.value) == (
        "ablate: error: report failed (ValueError: 'yerr' must not contain negative values); "
        f"per_query.parquet and stats.parquet are in {folder}; to continue: ablate report {folder}")
    assert (folder / "per_query.parquet").is_file() and (folder / "stats.parquet").is_file()
    assert _manifest(folder)["incomplete"] == ["report"]


def test_statistics_failure_that_also_stops_its_command_is_one_line(sweep, tmp_path,
                                                                   monkeypatch):
    """What made the statistics fail (here: reading which columns to test) also stops the
    `ablate stats` command line the hint would give: the hint is then the run itself,
    never the raw exception."""
    ctx, complete, _ = sweep

    def no_cluster(*args, **kwargs):
        raise KeyError("cluster")
    monkeypatch.setattr("ablate.flows.outputs.analysis.tested", no_cluster)
    with pytest.raises(RunFailed) as info:
        _write(ctx, tmp_path)
    folder = tmp_path / complete.name
    line = _one_line(info.value)
    assert line.startswith("ablate: error: statistics failed (KeyError: 'cluster'); "
                           f"per_query.parquet is in {folder}; to continue: ablate run ")
    assert (folder / "per_query.parquet").is_file() and not (folder / "stats.parquet").exists()
    assert _manifest(folder)["incomplete"] == ["stats", "report"]
