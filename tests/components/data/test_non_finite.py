"""Non-finite numbers in a data set (issue 39.6): a span grade of NaN made every retrieval
metric of its question 0, Infinity made NDCG NaN everywhere; json reads NaN, Infinity
and 1e999 without a word. Refused in every numeric field, naming file and line."""

from __future__ import annotations

import json

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.data import load_dataset
from ablate.components.data.finite_json import NonFinite, loads
from tests.components.data.test_jsonl import DOC, Q, _span, _with, _write


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_non_finite_grade_is_refused_with_file_and_line(tmp_path, token):
    good = json.dumps(Q)
    bad = json.dumps(_with(_span(grade=12345.5), qid="q2")).replace("12345.5", token)
    folder = _write(tmp_path, [DOC], [good, bad])
    with pytest.raises(InputError) as info:
        load_dataset(folder, format="jsonl")
    assert info.value.path == str(folder / "questions.jsonl") and info.value.line == 2
    assert "not finite" in info.value.message and token in info.value.message


def test_a_non_finite_number_in_a_document_field_is_refused(tmp_path):
    doc = json.dumps(_with(DOC, credibility=0.5)).replace("0.5", "NaN")
    folder = _write(tmp_path, [doc], [json.dumps(Q)])
    with pytest.raises(InputError) as info:
        load_dataset(folder, format="jsonl")
    assert info.value.path == str(folder / "corpus.jsonl") and info.value.line == 1


def test_squad_json_names_the_line_of_the_non_finite_number(tmp_path):
    text = ('{"data": [{"title": "NaN and Infinity in a string are text",\n'
            '  "paragraphs": [{"context": "Alpha beta.", "qas": [{"id": "q1",\n'
            '   "question": "NaN?", "grade": NaN, "answers": []}]}]}]}\n')
    path = tmp_path / "squad.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_dataset(path, format="squad")
    assert info.value.line == 3 and "NaN" in info.value.message


def test_loads_keeps_finite_numbers_and_strings():
    assert loads('{"a": 1.5, "b": "NaN", "c": [1e3, -2]}') == {"a": 1.5, "b": "NaN", "c": [1000.0, -2]}
    with pytest.raises(NonFinite) as info:
        loads('{"a": "\\"NaN",\n "b": -Infinity}')
    assert (info.value.line, info.value.column) == (2, 7)


def test_a_grade_given_as_nan_in_python_is_refused_by_validation(tmp_path):
    """Spans built by a plugin reader, not from JSON, are checked too."""
    from ablate.components.contract.records import Document, Question, Span
    from ablate.components.data.validate import Origin, check_questions
    q = Question("q1", "?", ("Alpha",), True, ((Span("d1", 0, 5, float("nan")),),))
    with pytest.raises(InputError, match="positive finite"):
        check_questions([(q, Origin("x.jsonl", 1))], [Document("d1", "Alpha beta gamma.")])
