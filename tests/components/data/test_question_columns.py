"""A native questions file's further columns (Question.columns) and `query_kind`, for
`report.slices`: read as text, left out of the fingerprint when a question has none, the
file's own `query_kind` winning over the tagger; per_query gets each slice column."""

from __future__ import annotations

import json
from types import SimpleNamespace

import polars as pl

from ablate.components.contract.records import Question
from ablate.components.data import load_dataset
from ablate.components.data.fingerprint import _plain
from ablate.components.data.question_columns import column_value

CORPUS = {"doc_id": "d1", "text": "Paris is the capital of France."}
Q = {"qid": "q1", "question": "What is the capital of France?", "answers": ["Paris"],
     "answerable": True, "evidence": [[{"doc_id": "d1", "start": 0, "end": 5}]]}


def _write(folder, *questions):
    folder.mkdir(exist_ok=True)
    (folder / "corpus.jsonl").write_text(json.dumps(CORPUS) + "\n")
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return load_dataset(folder)


def test_further_scalar_fields_are_columns(tmp_path):
    ds = _write(tmp_path / "d", {**Q, "type": "bridge", "level": "hard", "hops": 2, "gold": True,
                                 "meta": {"x": 1}, "tags": ["a"]})
    (q,) = ds.questions
    assert q.type == "bridge" and q.columns == (("gold", "true"), ("hops", "2"), ("level", "hard"))
    assert column_value(q, "level") == "hard" and column_value(q, "hops") == "2"
    assert column_value(q, "meta") is None and column_value(q, "type") == "bridge"


def test_a_question_without_columns_fingerprints_as_before():
    q = Question("q1", "What?", ("a",), True)
    assert "columns" not in _plain(q)
    assert _plain(Question("q1", "What?", ("a",), True, columns=(("level", "easy"),)))["columns"] == [
        ["level", "easy"]]


def test_the_data_set_fingerprint_changes_with_a_column(tmp_path):
    plain = _write(tmp_path / "a", Q)
    levelled = _write(tmp_path / "b", {**Q, "level": "easy"})
    assert plain.fingerprint != levelled.fingerprint


def test_query_kind_is_tagged_unless_the_file_gives_it():
    tagged = Question("q1", "Which city is not in France?", (), True)
    given = Question("q2", "Which city is not in France?", (), True, columns=(("query_kind", "mine"),))
    assert column_value(tagged, "query_kind") == "negation"
    assert column_value(given, "query_kind") == "mine"


def test_per_query_gets_each_slice_column_it_lacks():
    from ablate.flows.outputs.write import with_slice_columns
    questions = (Question("q1", "Which city is not in France?", (), True, columns=(("level", "hard"),)),
                 Question("q2", "Where is Rome?", (), True))
    ctx = SimpleNamespace(spec=SimpleNamespace(report=SimpleNamespace(slices=("type", "level", "query_kind"))),
                          dataset=SimpleNamespace(questions=questions))
    per_query = pl.DataFrame({"variant": ["baseline"] * 2, "qid": ["q1", "q2"], "type": [None, None]})
    out = with_slice_columns(per_query, ctx)
    assert out["level"].to_list() == ["hard", None]
    assert out["query_kind"].to_list() == ["negation", "other"]
    assert out.columns == ["variant", "qid", "type", "level", "query_kind"]
