import json
from pathlib import Path

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Span
from ablate.components.data import load_dataset
from ablate.components.data.squad import slug

DEMO = Path(__file__).resolve().parents[3] / "experiments/data/squad2-dev-half/dev-v2.0.json"


def test_article_is_one_document_with_shifted_offsets(fixtures):
    ds = load_dataset(fixtures / "squad.json")
    assert ds.source.startswith("squad:")
    docs = ds.doc_by_id()
    assert sorted(docs) == ["tiny-mountains", "tiny-rivers"]
    rivers = docs["tiny-rivers"]
    assert rivers.text == "The Seine flows through Paris.\n\nThe Thames flows through London."
    assert rivers.title == "Tiny Rivers"
    q = {x.qid: x for x in ds.questions}
    # second paragraph: offset 4 shifted by len(first context) + 2
    (s3,) = q["s3"].evidence[0]
    assert s3 == Span("tiny-rivers", 36, 42) and rivers.text[s3.start:s3.end] == "Thames"
    assert q["s3"].cluster == "tiny-rivers"


def test_annotator_answers_are_alternatives_of_one_group_deduplicated(fixtures):
    q = {x.qid: x for x in load_dataset(fixtures / "squad.json").questions}
    assert q["s1"].evidence == ((Span("tiny-rivers", 0, 9), Span("tiny-rivers", 4, 9)),)
    assert q["s1"].answers == ("The Seine", "Seine")


def test_impossible_is_unanswerable_and_plausible_answers_are_not_evidence(fixtures):
    q = {x.qid: x for x in load_dataset(fixtures / "squad.json").questions}
    assert not q["s2"].answerable and q["s2"].evidence == () and q["s2"].answers == ()


def _squad(tmp_path, qa: dict, context: str = "Alpha beta.") -> Path:
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"data": [{"title": "T", "paragraphs": [
        {"context": "First.", "qas": []}, {"context": context, "qas": [qa]}]}]}))
    return p


@pytest.mark.parametrize("qa,field,words", [
    ({"id": "a", "question": "?", "answers": [{"text": "beta", "answer_start": 0}]},
     "data[0].paragraphs[1].qas[0].answers[0].answer_start", "does not match"),
    ({"id": "a", "question": "?", "answers": [{"text": "", "answer_start": 0}]},
     "data[0].paragraphs[1].qas[0].answers[0].text", "empty answer"),
    ({"id": "a", "question": "?", "is_impossible": True,
      "answers": [{"text": "beta", "answer_start": 6}]},
     "data[0].paragraphs[1].qas[0].answers", "unanswerable"),
    ({"id": "a", "question": "?", "answers": []}, "data[0].paragraphs[1].qas[0].answers", "no answers"),
    ({"question": "?", "answers": []}, "data[0].paragraphs[1].qas[0].id", "missing"),
    ({"id": "a", "question": "?", "answers": [{"text": "beta", "answer_start": "6"}]},
     "data[0].paragraphs[1].qas[0].answers[0].answer_start", "integer"),
])
def test_bad_squad_records_name_the_field_path(tmp_path, qa, field, words):
    p = _squad(tmp_path, qa)
    with pytest.raises(InputError) as info:
        load_dataset(p)
    assert info.value.field == field and words in info.value.message
    assert info.value.path == str(p)


def test_invalid_json_reports_line(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"data": [\n{"title": "x",\n oops}]}')
    with pytest.raises(InputError) as info:
        load_dataset(p, format="squad")
    assert info.value.line == 3 and "invalid JSON" in info.value.message


def test_duplicate_qid_across_articles(tmp_path):
    qa = {"id": "a", "question": "?", "answers": [{"text": "Alpha", "answer_start": 0}]}
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"data": [
        {"title": "A", "paragraphs": [{"context": "Alpha.", "qas": [qa]}]},
        {"title": "B", "paragraphs": [{"context": "Alpha.", "qas": [qa]}]}]}))
    with pytest.raises(InputError) as info:
        load_dataset(p)
    assert "duplicate qid" in info.value.message and info.value.field == "data[1].paragraphs[0].qas[0].qid"


def test_slug_and_clashing_titles(tmp_path):
    assert slug("European_Union_law") == "european-union-law"
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"data": [
        {"title": "A b", "paragraphs": [{"context": "x", "qas": []}]},
        {"title": "A_b", "paragraphs": [{"context": "y", "qas": []}]}]}))
    assert [d.doc_id for d in load_dataset(p).documents] == ["a-b", "a-b-2"]


def test_bundled_demo_loads():
    ds = load_dataset(DEMO)
    assert len(ds.documents) == 16 and len(ds.questions) == 6078
    docs = ds.doc_by_id()
    n_spans = 0
    for q in ds.questions:
        for group in q.evidence:
            for s in group:
                assert docs[s.doc_id].text[s.start:s.end] in q.answers
                n_spans += 1
    assert n_spans > 0
    assert sum(q.answerable for q in ds.questions) == sum(1 for q in ds.questions if q.evidence)


def test_undecodable_bytes_report_line(tmp_path):
    p = tmp_path / "bad.json"
    p.write_bytes(b'{"data": [\n{"title": "caf\xe9", "paragraphs": []}]}')
    with pytest.raises(InputError) as info:
        load_dataset(p)
    assert info.value.line == 2 and "undecodable" in info.value.message


def test_utf8_bom_is_accepted(tmp_path, fixtures):
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + (fixtures / "squad.json").read_bytes())
    assert len(load_dataset(p).questions) == 4
