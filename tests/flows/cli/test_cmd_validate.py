import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"


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


def _native(folder: Path, docs: list, questions: list) -> Path:
    """A native data set; an entry that is a str is written as that raw line."""
    folder.mkdir()
    for name, rows in (("corpus.jsonl", docs), ("questions.jsonl", questions)):
        (folder / name).write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                                           for r in rows))
    return folder


def _q(qid: str, evidence: list, answerable: bool = True) -> dict:
    return {"qid": qid, "question": "?", "answers": ["a"] if answerable else [],
            "answerable": answerable, "evidence": evidence}


def test_every_error_is_listed_one_line_each(run_cli, capsys, tmp_path):
    """Errors of parsing and of the checks across records, in file order, one line each
    with file, line and field; a record that fails to parse is not reported again by the
    records that point at it."""
    folder = _native(tmp_path / "ds", [
        {"doc_id": "d", "text": "Paris is big."},
        "{not json",
        {"doc_id": "d", "text": "again"},
        {"doc_id": "bad", "text": "Rome", "credibility": "high"},
        {"doc_id": "e", "text": "Berlin.", "credibility": 2},
    ], [
        _q("q1", [[{"doc_id": "d", "start": 0, "end": 99}]]),
        _q("q2", [[{"doc_id": "bad", "start": 0, "end": 2}]]),   # its document failed above
        {"qid": "q3", "question": "?", "answers": []},
        _q("q4", [[{"doc_id": "d", "start": 0, "end": 5}]], answerable=False),
        _q("q5", [[{"doc_id": "nowhere", "start": 0, "end": 1}]]),
        _q("q1", []),
    ])
    assert run_cli("validate", str(folder)) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    corpus, questions = folder / "corpus.jsonl", folder / "questions.jsonl"
    assert captured.err.splitlines() == [f"ablate: error: {x}" for x in (
        f"{corpus}:2: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
        f"{corpus}:3: field 'doc_id': duplicate doc_id 'd'",
        f"{corpus}:4: field 'credibility': must be a number, got str",
        f"{corpus}:5: field 'credibility': credibility must be within 0..1",
        f"{questions}:1: field 'evidence[0][0].end': span end 99 is beyond the text of 'd' "
        "(13 characters)",
        f"{questions}:3: field 'evidence': missing required field",
        f"{questions}:4: field 'evidence': unanswerable question 'q4' has evidence",
        f"{questions}:5: field 'evidence[0][0].doc_id': unknown document 'nowhere'",
        f"{questions}:6: field 'qid': duplicate qid 'q1'")]
    assert sorted(p.name for p in folder.iterdir()) == ["corpus.jsonl", "questions.jsonl"]


def test_errors_beyond_the_limit_are_counted(run_cli, capsys, tmp_path):
    folder = _native(tmp_path / "ds", [{"doc_id": "d", "text": "abc"}],
                     [_q(f"q{i}", [[{"doc_id": "d", "start": 0, "end": 9}]]) for i in range(25)])
    assert run_cli("validate", str(folder)) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 21 and all(x.startswith("ablate: error: ") for x in lines)
    assert lines[19].startswith(f"ablate: error: {folder / 'questions.jsonl'}:20: ")
    assert lines[20] == "ablate: error: ... and 5 more (25 errors in all)"


def test_every_squad_answer_error_is_listed(run_cli, capsys, tmp_path):
    data = json.loads((FIXTURES / "squad.json").read_text())
    qas = data["data"][0]["paragraphs"][0]["qas"]
    qas[0]["answers"][0]["answer_start"] = 3
    qas[1]["is_impossible"] = False
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert run_cli("validate", str(path)) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"ablate: error: {path}: field 'data[0].paragraphs[0].qas[0].answers[0].answer_start': "
        "answer text 'The Seine' does not match the context at offset 3",
        f"ablate: error: {path}: field 'data[0].paragraphs[0].qas[1].answers': answerable "
        "question 's2' has no answers"]


def test_every_beir_error_is_listed(run_cli, capsys, tmp_path):
    import shutil
    folder = tmp_path / "beir"
    shutil.copytree(FIXTURES / "beir", folder)
    qrels = folder / "qrels" / "dev.tsv"
    qrels.write_text(qrels.read_text().rstrip("\n") + "\nq-x\tnowhere\t1\nq-y\tnowhere\tone\n")
    assert run_cli("validate", str(folder), "--beir-split", "dev") == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    assert lines == [f"ablate: error: {qrels}:4: field 'score': must be an integer, got 'one'",
                     f"ablate: error: {qrels}:3: field 'query-id': unknown query 'q-x'"]


def test_a_beir_query_that_fails_is_said_once_and_an_empty_corpus_is_named(run_cli, capsys, tmp_path):
    import json
    import shutil
    folder = tmp_path / "beir"
    shutil.copytree(FIXTURES / "beir", folder)
    queries = folder / "queries.jsonl"
    rows = [json.loads(x) for x in queries.read_text().splitlines() if x.strip()]
    judged = (folder / "qrels" / "dev.tsv").read_text().splitlines()[1].split("\t")[0]
    rows = [{**r, "text": 5} if r["_id"] == judged else r for r in rows]
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run_cli("validate", str(folder), "--beir-split", "dev") == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "queries.jsonl" in lines[0] and "text" in lines[0], lines
    (folder / "corpus.jsonl").write_text("")
    assert run_cli("validate", str(folder), "--beir-split", "dev") == 2
    assert "the corpus holds no documents" in capsys.readouterr().err


def test_a_squad_record_of_the_wrong_shape_is_listed_and_checking_goes_on(run_cli, capsys, tmp_path):
    data = json.loads((FIXTURES / "squad.json").read_text())
    par = data["data"][0]["paragraphs"][0]
    par["qas"].insert(0, "oops")  # not an object
    par["qas"][1]["answers"][0]["answer_start"] = 3  # a later question's error still found
    data["data"].append("not an article")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert run_cli("validate", str(path)) == 2
    err = capsys.readouterr().err
    last = len(data["data"]) - 1
    assert "qas[0]': must be an object" in err and f"data[{last}]': must be an object" in err
    assert "does not match the context at offset 3" in err
