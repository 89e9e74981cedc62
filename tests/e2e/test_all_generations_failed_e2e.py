"""A run in which every generation failed (issue 39.9: an endpoint that is down) exited 0
with no console line. Through the real CLI and Prefect flow: the summary, then one line
naming the variants, and exit 1."""

from __future__ import annotations

from tests.e2e.test_unreachable_mlflow_e2e import _closed_port
from tests.specs import pipeline, vary, write_experiment


def test_every_generation_failing_is_one_line_and_exit_1(prefect_server, run_cli, capsys,
                                                         tmp_path, monkeypatch):
    from ablate.flows.run.context import forget_contexts
    monkeypatch.chdir(tmp_path)
    down = {"name": "openai", "model": "m", "base_url": f"http://127.0.0.1:{_closed_port()}/v1",
            "max_retries": 0, "timeout_s": 2}
    spec = write_experiment(tmp_path, "gen-down", tier="smoke", smoke_size=6,
                            baseline=pipeline(generator=down),
                            sweeps=[vary("context.budget", 64)])
    forget_contexts()
    code = run_cli("run", str(spec), "--out", str(tmp_path / "runs"), "--cache-dir",
                   str(tmp_path / "cache"), "--no-mlflow")
    out, err = capsys.readouterr()
    assert code == 1, err
    errors = [ln for ln in err.splitlines() if ln.startswith("ablate: error: ")]
    assert len(errors) == 1, err
    assert errors[0].startswith("ablate: error: every generation failed for baseline, "
                                "context.budget=64 (")
    assert errors[0].endswith(f"; to continue: ablate run {spec} --cache-dir {tmp_path / 'cache'}")
    assert "Report: " in out  # the summary first


def test_a_partly_failed_run_is_not_refused(tmp_path):
    import polars as pl

    from ablate.flows.outputs.generation_check import all_generations_failed
    pl.DataFrame({"variant": ["a", "a", "b", "b"],
                  "answer/generation_error": [1.0, 0.0, 1.0, 1.0]}).write_parquet(
        tmp_path / "per_query.parquet")
    assert all_generations_failed(tmp_path) == ["b"]
    pl.DataFrame({"variant": ["a"], "x": [1.0]}).write_parquet(tmp_path / "per_query.parquet")
    assert all_generations_failed(tmp_path) == []  # retrieval only: no generations
