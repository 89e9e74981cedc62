import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def test_ok_summary(run_cli, capsys):
    assert run_cli("validate", str(FIXTURES / "native")) in (0, None)
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("OK jsonl:")
    assert "3 documents, 3 questions (2 answerable, 1 unanswerable), fingerprint sha256:" in out[0]


@pytest.mark.parametrize("fmt", ["squad", "auto"])
def test_squad_format_option(run_cli, capsys, fmt):
    assert run_cli("validate", str(FIXTURES / "squad.json"), "--format", fmt) in (0, None)
    assert "2 documents, 4 questions (3 answerable, 1 unanswerable)" in capsys.readouterr().out


def test_beir_split_option(run_cli, capsys):
    assert run_cli("validate", str(FIXTURES / "beir"), "--beir-split", "dev") in (0, None)
    assert "1 questions" in capsys.readouterr().out


def test_error_is_one_line_exit_2_nothing_written(run_cli, capsys, tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(json.dumps({"doc_id": "d", "text": "abc"}) + "\n")
    (folder / "questions.jsonl").write_text(
        json.dumps({"qid": "q", "question": "?", "answers": [], "answerable": True,
                    "evidence": [[{"doc_id": "d", "start": 0, "end": 9}]]}) + "\n")
    assert run_cli("validate", str(folder)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert lines[0] == (f"ablate: error: {folder / 'questions.jsonl'}:1: field "
                        f"'evidence[0][0].end': span end 9 is beyond the text of 'd' (3 characters)")
    assert sorted(p.name for p in folder.iterdir()) == ["corpus.jsonl", "questions.jsonl"]


def test_wrong_format_for_path(run_cli, capsys):
    assert run_cli("validate", str(FIXTURES / "native"), "--format", "squad") == 2
    assert "needs a .json file" in capsys.readouterr().err


def test_answerable_questions_without_evidence_are_counted(run_cli, capsys, tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(json.dumps({"doc_id": "d", "text": "Paris is big."}) + "\n")
    rows = [{"qid": "with", "question": "?", "answers": ["Paris"], "answerable": True,
             "evidence": [[{"doc_id": "d", "start": 0, "end": 5}]]},
            {"qid": "bare-1", "question": "?", "answers": ["Paris"], "answerable": True,
             "evidence": []},
            {"qid": "bare-2", "question": "?", "answers": ["big"], "answerable": True,
             "evidence": []},
            {"qid": "unans", "question": "?", "answers": [], "answerable": False,
             "evidence": []}]
    (folder / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run_cli("validate", str(folder)) in (0, None)
    (line,) = capsys.readouterr().out.strip().splitlines()
    assert "4 questions (3 answerable, 1 unanswerable)" in line
    assert line.endswith("; 2 answerable without evidence (retrieval metrics undefined, "
                         "bucket no_evidence; first: bare-1, bare-2)")


def test_no_answerable_question_without_evidence_says_zero(run_cli, capsys):
    assert run_cli("validate", str(FIXTURES / "native")) in (0, None)
    assert capsys.readouterr().out.strip().endswith("; 0 answerable without evidence")
