"""`report.slices` end to end (issue 37.6): a tiny retrieval-only sweep run directly
(BM25, no Prefect, no MLflow) writes slices.parquet and a short Slices section; an
unknown slice column is one line naming file, line and field, exit 2, from `ablate check`
and `ablate run` before any stage runs."""

from __future__ import annotations

import polars as pl
import pytest

from tests.specs import FAST_STATS, TINY_SQUAD, data_set, experiment, pipeline, vary, write_experiment

SPEC = experiment(
    "sliced", tier="full", split="all", seed=3,
    # the fixture's 55 questions come in 3 documents: too few clusters for any test, so
    # the questions are the units here (stats.cluster: none), as in the main comparisons
    metrics={"ks": [1, 5], "key": ["final/recall_at_5", "final/group_recall"]},
    stats={**FAST_STATS, "cluster": "none"},
    report={"slices": ["answerable"]},
    baseline=pipeline(chunking={"size": 16, "overlap": 4}, context={"budget": 40},
                      generator={"name": "none"}),
    sweeps=[vary("context.budget", 16)])


def test_slices_parquet_holds_the_key_comparisons_per_slice(sweep):
    sliced = pl.read_parquet(sweep.folder / "slices.parquet")
    stats = pl.read_parquet(sweep.folder / "stats.parquet")
    per_query = pl.read_parquet(sweep.folder / "per_query.parquet")
    assert "slice" not in stats.columns  # stats.parquet keeps one row per comparison
    assert set(sliced["slice"]) == {"answerable=true", "answerable=false"}
    assert set(sliced["metric"]) == {"final/recall_at_5", "final/group_recall"}
    yes = sliced.filter((pl.col("slice") == "answerable=true") & pl.col("note").is_null())
    assert yes.height == 2 and yes["p_value"].is_not_null().all()
    n_answerable = per_query.filter((pl.col("variant") == "baseline") & pl.col("answerable")).height
    assert set(yes["n_used"]) == {n_answerable}
    # each key metric's main family holds its main comparison alone; its slice family
    # (on `answerable`) the testable slice's
    key = stats.filter(pl.col("metric").is_in(["final/recall_at_5", "final/group_recall"]))
    assert set(key["family_size"]) == {1} and set(yes["family_size"]) == {1}
    # unanswerable questions have no retrieval value: undefined by definition, said so
    no = sliced.filter(pl.col("slice") == "answerable=false")
    assert no["p_value"].is_null().all()
    assert no["note"].str.contains("undefined on this slice by definition").all()


def test_the_report_has_a_short_slices_section(sweep):
    report = (sweep.folder / "report.md").read_text()
    section = report.split("## Slices", 1)[1].split("\n## ", 1)[0]
    assert "Slices are a view" in section and "apart from the main comparisons" in section
    assert ("**answerable=false**: no question of this slice defines the key metrics, by their "
            "definition") in section
    assert "**answerable=true** (26 questions): 2 of 2 tested comparisons significant" in section
    assert len(section.splitlines()) < 30
    assert "Slices</h2>" in (sweep.folder / "report.html").read_text()


@pytest.mark.parametrize("command", ["check", "run"])
def test_an_unknown_slice_column_is_one_line_before_any_stage(run_cli, capsys, tmp_path, command):
    spec = write_experiment(tmp_path, "sliced", dataset=data_set(TINY_SQUAD), tier="full",
                            split="all", report={"slices": ["answerable", "typ"]},
                            sweeps=[vary("fusion.rrf_k", 60)])
    (line,) = [i for i, text in enumerate(spec.read_text().splitlines(), start=1)
               if text.startswith("report:")]
    extra = ["--no-mlflow", "--out", str(tmp_path / "runs")] if command == "run" else []
    code = run_cli(command, str(spec), "--cache-dir", str(tmp_path / "cache"), *extra)
    out, err = capsys.readouterr()
    assert code == 2 and out == "", out
    assert len(err.strip().splitlines()) == 1, err
    assert f"{spec}:{line}: field 'report.slices.1'" in err and "did you mean type?" in err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "cache").exists()


def test_check_warns_of_a_slice_too_small_to_test_and_a_column_without_values(
        run_cli, capsys, tmp_path):
    """The fixture's 55 questions come in 3 documents: each answerable value has 3
    clusters, too few for the permutation test to reach alpha (2/2^3 = 0.25); no SQuAD
    question has a `type`."""
    from ablate.flows.run.context import forget_contexts
    spec = write_experiment(tmp_path, "sliced", dataset=data_set(TINY_SQUAD), tier="full",
                            split="all", report={"slices": ["answerable", "type"]},
                            sweeps=[vary("fusion.rrf_k", 60)])
    forget_contexts()
    code = run_cli("check", str(spec), "--cache-dir", str(tmp_path / "cache"))
    out, err = capsys.readouterr()
    assert code == 0, err
    warned = [x for x in out.splitlines() if x.startswith("warning: report.slices")]
    assert warned == [
        "warning: report.slices: answerable=false has 3 clusters, too few to test (the report "
        "gives its means, no p)",
        "warning: report.slices: answerable=true has 3 clusters, too few to test (the report "
        "gives its means, no p)",
        "warning: report.slices: no selected question has a 'type' value (nothing to slice)"]


def test_a_significant_slice_comparison_is_a_finding_that_explain_opens(sweep, run_cli, capsys):
    """Issue 54: significant slice results reached no finding and no `explain`."""
    report = (sweep.folder / "report.md").read_text()
    findings = report.split("## Findings", 1)[1].split("\n## ", 1)[0]
    line = next(ln for ln in findings.splitlines() if "On the slice **answerable=true**" in ln)
    assert "within the slice's own family" in line
    assert "--variant context.budget=16 --slice answerable=true`" in line
    code = run_cli("explain", str(sweep.folder), "--variant", "context.budget=16",
                   "--slice", "answerable=true")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("slice answerable=true: 26 questions;")
    assert "(significant after correction)" in out
    code = run_cli("explain", str(sweep.folder), "--variant", "context.budget=16",
                   "--slice", "answerable=ture")
    _, err = capsys.readouterr()
    assert code == 2 and "unknown slice 'answerable=ture'; did you mean answerable=true?" in err
    assert err.count("\n") == 1
