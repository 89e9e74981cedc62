"""End to end through the command line: `ablate run` (real Prefect flow, BM25, extractive
answers) writes the questions and contexts the drill-down needs into the sweep folder, and
`ablate explain` lists, from that folder alone, exactly the questions whose per-question
values differ from the baseline's; a wrong variant or metric is one line with a
did-you-mean, exit 2."""

from __future__ import annotations

import math
import re

import polars as pl
import pytest

from tests.flows.direct import write_spec
from tests.specs import experiment, vary

SPEC = experiment("explain-tiny", tier="smoke", smoke_size=12, seed=3,
                  metrics={"ks": [1, 5], "key": ["final/recall_at_5", "answer/f1"]},
                  stats={"resamples": 200, "bootstrap_resamples": 200},
                  sweeps=[vary("context.budget", 32)])
VARIANT = "context.budget=32"


@pytest.fixture(scope="module")
def folder(prefect_server, tmp_path_factory, shared_cache):
    from ablate.flows.cli import main as cli
    tmp = tmp_path_factory.mktemp("explain")
    spec = write_spec(tmp, SPEC)
    with pytest.raises(SystemExit) as info:
        cli.main(["run", str(spec), "--no-mlflow", "--cache-dir", str(shared_cache),
                  "--out", str(tmp / "runs")])
    assert (info.value.code or 0) == 0
    (out,) = (tmp / "runs").iterdir()
    return out


def _differing(folder, metric: str) -> set[str]:
    pq = pl.read_parquet(folder / "per_query.parquet")
    base = dict(pq.filter(pl.col("variant") == "baseline").select("qid", metric).iter_rows())
    out = set()
    for qid, v in pq.filter(pl.col("variant") == VARIANT).select("qid", metric).iter_rows():
        b = base[qid]
        if b is not None and v is not None and math.isfinite(b) and math.isfinite(v) and abs(v - b) > 1e-9:
            out.add(qid)
    return out


def test_run_keeps_questions_and_contexts_and_explain_lists_exactly_the_changed(folder, run_cli, capsys):
    assert (folder / "questions.parquet").is_file() and (folder / "contexts.parquet").is_file()
    for metric in ("final/recall_at_5", "answer/f1"):
        capsys.readouterr()
        assert run_cli("explain", str(folder), "--variant", VARIANT, "--metric", metric,
                       "--limit", "100") == 0
        out = capsys.readouterr().out
        listed = re.findall(r"^(?:LOST|WON ) (\S+) ", out, re.M)
        assert sorted(listed) == sorted(_differing(folder, metric)), out
        assert len(set(listed)) == len(listed)
    assert _differing(folder, "final/recall_at_5")  # the test sees some change
    # a shown question carries its text, gold answer and both contexts from the folder
    questions = pl.read_parquet(folder / "questions.parquet")
    qid = sorted(_differing(folder, "final/recall_at_5"))[0]
    run_cli("explain", str(folder), "--variant", VARIANT, "--metric", "final/recall_at_5", "--limit", "100")
    out = capsys.readouterr().out
    text = questions.filter(pl.col("qid") == qid)["question"][0]
    assert f"  question: {text}" in out and "  baseline context:" in out and "  variant context:" in out
    # the report opens the same view for significant comparisons (none need be here)
    assert "## Questions behind the verdicts" in (folder / "report.md").read_text()


def test_unknown_variant_or_metric_is_one_line_with_a_hint(folder, run_cli, capsys):
    capsys.readouterr()
    assert run_cli("explain", str(folder), "--variant", "context.budget=31") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown variant 'context.budget=31'; did you mean context.budget=32?" in err[0]
    assert run_cli("explain", str(folder), "--variant", VARIANT, "--metric", "final/recal_at_5") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown metric 'final/recal_at_5'; did you mean final/recall_at_5?" in err[0]
    assert run_cli("explain", str(folder), "--variant", VARIANT, "--lost", "--won") == 2
