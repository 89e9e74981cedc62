"""The multi-hop converter (examples/byod/convert_multihop.py): HotpotQA/2Wiki and MuSiQue
records become native JSONL whose evidence groups are the supporting paragraphs (their
spans the supporting sentences), with `type` and `level` as question columns; and the
bundled HotpotQA sample (experiments/data/hotpotqa-sample) is what it writes."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.conftest import ROOT

SAMPLE = ROOT / "experiments" / "data" / "hotpotqa-sample"
HOTPOT = {"_id": "h1", "question": "Where was the designer of the Eiffel Tower born?",
          "answer": "Dijon", "type": "bridge", "level": "hard",
          "context": [["Eiffel Tower", ["The tower is in Paris.", " Gustave Eiffel designed it."]],
                      ["Gustave Eiffel", ["Gustave Eiffel was an engineer.", " He was born in Dijon."]],
                      ["Berlin", ["Berlin is a city."]]],
          "supporting_facts": [["Eiffel Tower", 1], ["Gustave Eiffel", 1]]}
MUSIQUE = {"id": "m1", "question": "Who?", "answer": "X", "question_decomposition": [{}, {}, {}],
           "paragraphs": [{"idx": 0, "title": "A", "paragraph_text": "A is X.", "is_supporting": True},
                          {"idx": 1, "title": "B", "paragraph_text": "B is Y.", "is_supporting": False}]}


def _module():
    spec = importlib.util.spec_from_file_location(
        "convert_multihop", ROOT / "examples" / "byod" / "convert_multihop.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _read(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_hotpotqa_record(tmp_path):
    (tmp_path / "in.json").write_text(json.dumps([HOTPOT]))
    assert _module().convert(tmp_path / "in.json", tmp_path / "out") == (3, 1)
    docs = {d["doc_id"]: d["text"] for d in _read(tmp_path / "out" / "corpus.jsonl")}
    assert docs["Eiffel Tower"] == "Eiffel Tower\nThe tower is in Paris. Gustave Eiffel designed it."
    (q,) = _read(tmp_path / "out" / "questions.jsonl")
    assert (q["type"], q["level"], q["answers"]) == ("bridge", "hard", ["Dijon"])
    selected = [docs[g[0]["doc_id"]][g[0]["start"]:g[0]["end"]] for g in q["evidence"]]
    assert selected == [" Gustave Eiffel designed it.", " He was born in Dijon."]


def test_musique_record_is_typed_by_its_hops(tmp_path):
    (tmp_path / "in.jsonl").write_text(json.dumps(MUSIQUE) + "\n")
    _module().convert(tmp_path / "in.jsonl", tmp_path / "out")
    (q,) = _read(tmp_path / "out" / "questions.jsonl")
    assert q["type"] == "3hop" and [g[0]["doc_id"] for g in q["evidence"]] == ["A"]
    assert "level" not in q


def test_another_text_under_one_title_is_an_error(tmp_path):
    other = {**HOTPOT, "_id": "h2", "context": [["Berlin", ["Berlin is a capital."]]],
             "supporting_facts": [["Berlin", 0]]}
    (tmp_path / "in.json").write_text(json.dumps([HOTPOT, other]))
    with pytest.raises(ValueError, match="h2: another text for the paragraph 'Berlin'"):
        _module().convert(tmp_path / "in.json", tmp_path / "out")


def test_the_bundled_sample():
    docs = {d["doc_id"]: d["text"] for d in _read(SAMPLE / "corpus.jsonl")}
    questions = _read(SAMPLE / "questions.jsonl")
    assert (len(docs), len(questions)) == (994, 100)
    assert sorted({q["type"] for q in questions}) == ["bridge", "comparison"]
    assert all(len(q["evidence"]) == 2 for q in questions)  # two gold paragraphs each
    for q in questions:
        for (span,) in q["evidence"]:
            text = docs[span["doc_id"]]
            assert text.startswith(span["doc_id"] + "\n") and 0 < span["start"] < span["end"] <= len(text)
    assert "CC BY-SA 4.0" in (SAMPLE / "SOURCE.txt").read_text()
