"""`ablate diff` of two MLflow runs (a sweep's parent run, or a variant's run: its sweep)
as of two folders: the run's logged manifest, variants, statistics, questions and
document digests, and its children's per-question tables, read back from the store
(a SQLite store, no server); an unknown run id is one line, exit 2."""

from __future__ import annotations

import json

from tests.components.report.diff_folders import VARIANT, default_questions, make_run


def test_diff_of_two_mlflow_runs(tmp_path, run_cli, capsys):
    from ablate.flows.track.tracking import log_sweep
    qa = default_questions(chinese=True)
    qb = {k: dict(v) for k, v in qa.items()}
    qb["问题05"]["question"] = "第5个问题：改过了？"
    a = make_run(tmp_path / "a", chinese=True, questions=qa, doc_hashes=True)
    b = make_run(tmp_path / "b", chinese=True, questions=qb, doc_hashes=True, chunk_size=256,
                 shift=0.0, docs={3: "广州不是首都，文档3。"}, fingerprint="sha256:" + "cd" * 32)
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    art = (tmp_path / "art").as_uri()
    run_a = log_sweep(a, uri, artifact_root=art)
    run_b = log_sweep(b, uri, artifact_root=art)
    capsys.readouterr()
    # A by its sweep's parent run, B by one of its variant runs
    assert run_cli("diff", run_a["parent"], run_b["children"][VARIANT], "--tracking-uri", uri,
                   "--out", str(tmp_path / "d.json")) == 0
    out = capsys.readouterr().out
    assert f"MLflow run {run_a['parent']}" in out
    assert "baseline.chunking.size: 200 → 256" in out
    assert "问题05 (question)" in out and "documents edited (1): 文档3" in out
    d = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert d["new"]["sweep_id"] == "diff-demo-256"
    moved = [(r["variant"], r["metric"]) for r in d["verdicts_moved"]]
    assert moved == [(VARIANT, "final/recall_at_5")]
    # the same as diffing the folders themselves
    assert run_cli("diff", str(a), str(b), "--out", str(tmp_path / "f.json")) == 0
    f = json.loads((tmp_path / "f.json").read_text(encoding="utf-8"))
    for part in ("config", "data", "metrics", "verdicts_moved", "stages", "versions", "models"):
        assert d[part] == f[part], part

    capsys.readouterr()
    assert run_cli("diff", str(a), "0" * 32, "--tracking-uri", uri) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"no MLflow run {'0' * 32}" in err[0], err
