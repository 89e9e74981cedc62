"""`ablate report`, `ablate gate` and `ablate sync` on a synthetic sweep folder, through the
real CLI entry point (exit codes and one-line errors)."""

from __future__ import annotations

import socket

import pytest

from ablate.flows.cli import main as cli
from tests.components.report.synthetic import make_sweep


def _run(argv: list[str]) -> int:
    try:
        cli.main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.fixture()
def sweep(tmp_path):
    return make_sweep(tmp_path / "sweep")


def test_report_rebuilds_from_saved_results(sweep, capsys):
    assert not (sweep / "report.md").exists()
    assert _run(["report", str(sweep), "--latex", "--key-metric", "final/recall_at_5"]) == 0
    for name in ("report.md", "report.html", "report.tex", "summary.txt", "plots/buckets.svg"):
        assert (sweep / name).is_file(), name
    md = (sweep / "report.md").read_text()
    assert "## All other metrics" in md  # answer/f1 is no longer a key metric
    assert "(report-appendix.md)" in md and "| answer/f1 |" not in md
    assert "| variant | value | answer/f1 |" in (sweep / "report-appendix.md").read_text()
    assert "wrote 12 files" in capsys.readouterr().out  # plots/tradeoff.svg among them


def test_report_bad_input_is_one_line_exit_2(sweep, tmp_path, capsys):
    assert _run(["report", str(tmp_path / "nowhere")]) == 2
    assert _run(["report", str(sweep), "--key-metric", "final/nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("ablate: error: ") for line in err)
    assert not (sweep / "report.md").exists()


def test_gate_exit_codes(sweep, capsys):
    """Non-inferiority by default: 0 only when the drop is shown below --max-drop; 1 on a
    fail or an inconclusive gate (the synthetic questions share 5 documents: too few
    clusters to bound two comparisons); 2 on bad input (a missing or zero margin)."""
    recall = ["gate", str(sweep), "--metric", "final/recall_at_5"]
    assert _run(recall + ["--max-drop", "0.02"]) == 1
    out = capsys.readouterr()
    assert "INCONCLUSIVE fusion.rrf_k=10" in out.out and "needs ~29 questions" in out.out
    assert "gate INCONCLUSIVE" in out.err
    assert _run(recall + ["--max-drop", "0.02", "--variant", "fusion.rrf_k=10"]) == 0
    assert "ok   fusion.rrf_k=10" in capsys.readouterr().out
    assert _run(recall + ["--max-drop", "0.5", "--variant", "chunking.size=64"]) == 0
    assert _run(recall + ["--max-drop", "0.02", "--variant", "chunking.size=64"]) == 1
    assert "FAIL chunking.size=64" in capsys.readouterr().out
    for bad in ([], ["--max-drop", "0"], ["--max-drop", "0.02", "--rule", "x"]):
        assert _run(recall + bad) == 2
    assert "a drop of 0 can never be proven" in capsys.readouterr().err
    assert _run(["gate", str(sweep), "--metric", "nope", "--max-drop", "0.02"]) == 2
    # the old rule, by name: fails only when significantly worse
    assert _run(recall + ["--rule", "worse"]) == 1
    out = capsys.readouterr()
    assert "FAIL chunking.size=64" in out.out and "gate FAILED" in out.err
    assert _run(recall + ["--rule", "worse", "--max-drop", "0.5"]) == 0
    assert _run(["gate", str(sweep), "--metric", "answer/f1", "--rule", "worse"]) == 0


def test_gate_defaults_to_the_key_metrics(sweep, capsys, tmp_path):
    """Issue 54: the docs say the gate defaults to the key metrics (metrics.key); it
    required --metric. Without it, each key metric is gated, locally and against a
    reference."""
    # two gated metrics on 5 clusters: too few to bound either (inconclusive, exit 1)
    assert _run(["gate", str(sweep), "--max-drop", "0.5", "--variant", "fusion.rrf_k=10"]) == 1
    out = capsys.readouterr().out
    assert "fusion.rrf_k=10: final/recall_at_5" in out and "fusion.rrf_k=10: answer/f1" in out
    assert "over 2 gated comparison(s)" in out
    _run(["gate", str(sweep), "--reference", str(sweep), "--max-drop", "0.5"])
    out = capsys.readouterr().out
    assert "| final/recall_at_5 |" in out and "| answer/f1 |" in out


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when we return


def test_sync_unreachable_then_later(sweep, tmp_path, monkeypatch, capsys):
    from mlflow.tracking import MlflowClient
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    down = f"http://127.0.0.1:{_closed_port()}"
    assert _run(["sync", str(sweep), "--tracking-uri", down]) == 1
    err = capsys.readouterr().err
    assert "unreachable" in err and str(sweep) in err
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)  # the environment's URI is the default
    for _ in range(2):
        assert _run(["sync", str(sweep), "--artifact-root", (tmp_path / "art").as_uri()]) == 0
    out = capsys.readouterr().out
    assert "3 child runs" in out
    assert "then its runs table: http://127.0.0.1:5000/#/experiments/" in out
    assert "/runs?workflowType=machine_learning" in out
    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs([client.get_experiment_by_name("synthetic").experiment_id])
    assert len(runs) == 4  # one parent, three children, no duplicates after the second sync
