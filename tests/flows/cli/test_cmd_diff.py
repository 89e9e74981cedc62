"""`ablate diff A B` through the real CLI entry point: the printed diff, diff.json written
atomically with --out (Chinese kept as text), and bad input (a missing folder, a folder
that is not a sweep's output, an unreadable manifest) as one line naming the path, exit 2."""

from __future__ import annotations

import json

from tests.components.report.diff_folders import default_questions, make_run


def test_diff_prints_and_writes_json(tmp_path, run_cli, capsys):
    qa = default_questions(chinese=True)
    qb = {k: dict(v) for k, v in qa.items()}
    qb["问题03"]["question"] = "第3个问题：中国的首都？"
    a = make_run(tmp_path / "a", chinese=True, questions=qa)
    b = make_run(tmp_path / "b", chinese=True, questions=qb, chunk_size=256, shift=0.0)
    out = tmp_path / "out"
    assert run_cli("diff", str(a), str(b), "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "baseline.chunking.size: 200 → 256" in printed and "问题03 (question)" in printed
    data = json.loads((out / "diff.json").read_text(encoding="utf-8"))
    assert data["old"]["folder"] == str(a) and data["new"]["folder"] == str(b)
    assert data["data"]["questions"]["edited"] == [{"qid": "问题03", "fields": ["question"]}]
    assert "问题03" in (out / "diff.json").read_text(encoding="utf-8")  # not \\u escapes
    assert [p.name for p in out.iterdir()] == ["diff.json"]  # no temporary file left
    assert run_cli("diff", str(a), str(b), "--out", str(tmp_path / "named.json")) == 0
    assert json.loads((tmp_path / "named.json").read_text(encoding="utf-8")) == data


def test_bad_input_is_one_line_exit_2(tmp_path, run_cli, capsys):
    good = make_run(tmp_path / "good")
    empty = tmp_path / "empty"
    empty.mkdir()
    broken = make_run(tmp_path / "broken")
    (broken / "manifest.json").write_text("{not json", encoding="utf-8")
    cases = [(tmp_path / "missing", "no such sweep folder"),
             (empty, "not a sweep folder: manifest.json is missing"),
             (broken, "damaged")]
    for path, why in cases:
        capsys.readouterr()
        assert run_cli("diff", str(good), str(path)) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"ablate: error: {path}"), err
        assert why in err[0]
    assert not (tmp_path / "diff.json").exists()
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    assert run_cli("diff", str(good), str(good), "--out", str(blocker)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "blocker" in err[0] and "--out" in err[0], err


def test_key_metric_option(tmp_path, run_cli, capsys):
    a, b = make_run(tmp_path / "a"), make_run(tmp_path / "b", shift=0.0)
    assert run_cli("diff", str(a), str(b), "--key-metric", "answer/f1", "--out", str(tmp_path / "d.json")) == 0
    d = json.loads((tmp_path / "d.json").read_text())
    assert {r["metric"] for r in d["metrics"]} == {"answer/f1"}
    assert [r["metric"] for r in d["verdicts_moved"]] == ["final/recall_at_5"]  # still listed
    capsys.readouterr()
    assert run_cli("diff", str(a), str(b), "--key-metric", "answer/f2") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--key-metric" in err[0] and "answer/f2" in err[0] \
        and "did you mean answer/f1" in err[0], err
