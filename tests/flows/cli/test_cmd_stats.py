"""`ablate stats` on files: printed table, written rows, and one-line errors."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import typer
from typer.testing import CliRunner

from ablate.components.stats import STATS_COLUMNS
from ablate.flows.cli import main as cli
from ablate.flows.cli.stats import register


def _write(tmp_path) -> str:
    rng = np.random.default_rng(0)
    n = 30
    t = pl.DataFrame({
        "variant": ["base"] * n + ["better"] * n,
        "qid": [f"q{i:02d}" for i in range(n)] * 2,
        "hit": np.r_[np.zeros(n), np.ones(n)],
        "ndcg": np.r_[rng.random(n) * 0.5, rng.random(n) * 0.5 + 0.4],
        "mrr": [None if i % 10 == 0 else 0.5 for i in range(2 * n)],
    })
    path = tmp_path / "per_query.csv"
    t.write_csv(path)
    return str(path)


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)   # keep "stats" a named sub-command
    return app


def test_stats_prints_and_writes(tmp_path):
    path, out = _write(tmp_path), tmp_path / "out" / "stats.parquet"
    res = CliRunner().invoke(_app(), ["stats", path, "--baseline", "base", "--metrics",
                                      "hit,ndcg", "--metrics", "mrr", "--resamples", "500",
                                      "--bootstrap-resamples", "500", "--out", str(out)])
    assert res.exit_code == 0, res.output
    df = pl.read_parquet(out)
    assert df.columns[:len(STATS_COLUMNS)] == list(STATS_COLUMNS)
    assert df["metric"].to_list() == ["hit", "mrr", "ndcg"]
    assert df.filter(pl.col("metric") == "hit")["p_value"][0] == pytest.approx(2 / 2**30)
    lines = res.output.splitlines()
    assert lines[0].split()[:4] == ["metric", "variant", "n", "undef/miss"]
    hit = next(line for line in lines if line.startswith("hit"))
    assert "*" in hit and "30/0/0" in hit
    assert "wrote 3 rows" in res.output


def test_stats_csv_output_and_options(tmp_path):
    path, out = _write(tmp_path), tmp_path / "s.csv"
    res = CliRunner().invoke(_app(), ["stats", path, "--baseline", "base", "--test", "t",
                                      "--correction", "bh", "--alpha", "0.01", "--ci-method",
                                      "percentile", "--bootstrap-resamples", "300",
                                      "--out", str(out)])
    assert res.exit_code == 0, res.output
    df = pl.read_csv(out)
    assert set(df["test"]) == {"t"} and set(df["correction"]) == {"bh"}
    assert set(df["alpha"]) == {0.01}


@pytest.mark.parametrize("args,message", [
    (["--baseline", "nope"], "field 'baseline': baseline 'nope' is not a variant"),
    (["--baseline", "base", "--metrics", "variant"], "field 'variant': metric column is not numeric"),
    (["--baseline", "base", "--correction", "sidak"], "unknown correction"),
    (["--baseline", "base", "--out", "x.txt"], "output must end in .parquet or .csv"),
])
def test_errors_are_one_line_exit_2(tmp_path, capsys, args, message):
    path = _write(tmp_path)
    with pytest.raises(SystemExit) as exc:
        cli.main(["stats", path, "--resamples", "50", "--bootstrap-resamples", "50", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert err.startswith("ablate: error: ")
