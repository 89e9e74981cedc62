"""The labels file (`judge.labels: FILE`, docs/judge-labels.md): a good file reads into a
frame; every kind of bad input is one line naming the file and the line (issue 29)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from ablate.components.contract.errors import InputError
from ablate.components.judge.labels import LABEL_COLUMNS, read_labels

QIDS = {"q1", "q2", "q3"}


def _write(tmp_path, lines: list) -> str:
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n",
                    encoding="utf-8")
    return str(path)


GOOD = [
    {"qid": "q1", "metric": "judge/faithfulness", "answer": "Paris.", "label": 1,
     "annotator": "ann", "labelled_at": "2025-03-01"},
    {"qid": "q1", "metric": "judge/faithfulness", "answer": "Lyon.", "label": "no"},
    {"qid": "q2", "metric": "judge/addresses_question", "variant": "bm25", "label": "partly",
     "labelled_at": "2025-03-02T10:00:00"},
    {"qid": "q3", "metric": "judge/faithfulness", "variant": "bm25", "label": 0.25},
]


def test_a_good_file_reads_into_a_frame(tmp_path):
    path = _write(tmp_path, GOOD[:2] + [""] + GOOD[2:])  # blank lines are skipped
    df = read_labels(path, known_qids=QIDS)
    assert isinstance(df, pl.DataFrame) and df.columns == list(LABEL_COLUMNS)
    assert df["label"].to_list() == [1.0, 0.0, 0.5, 0.25]
    assert df["line"].to_list() == [1, 2, 4, 5]
    assert df["answer"].to_list() == ["Paris.", "Lyon.", None, None]
    assert df["variant"].to_list() == [None, None, "bm25", "bm25"]
    assert df["annotator"].to_list() == ["ann", None, None, None]
    assert df["labelled_at"].to_list()[:3] == ["2025-03-01", None, "2025-03-02T10:00:00"]
    # without known ids nothing is checked against the questions
    assert read_labels(path).height == 4


@pytest.mark.parametrize("bad, line, words", [
    ('{"qid": "q1", "metric": ', 2, "invalid JSON"),
    ('["q1"]', 2, "JSON object"),
    ({"qid": "q9", "metric": "judge/faithfulness", "answer": "x", "label": 1}, 2,
     "unknown question id 'q9'"),
    ({**GOOD[0], "annotator": "other"}, 2, "duplicate"),
    ({"qid": "q1", "metric": "judge/faithfulness", "answer": "x", "label": 1.5}, 2, "[0, 1]"),
    ({"qid": "q1", "metric": "judge/faithfulness", "answer": "x", "label": "maybe"}, 2,
     "yes, partly, no"),
    ({"qid": "q1", "metric": "judge/faithfulness", "answer": "x", "label": True}, 2, "label"),
    ({"qid": "q1", "metric": "judge/faithfulness", "answer": "x", "label": None}, 2, "label"),
    ({"qid": "q1", "metric": "judge/faithfulness", "answer": "x"}, 2, "label"),
    ({"qid": "q1", "metric": "faithfulness", "answer": "x", "label": 1}, 2, "judge/"),
    ({"qid": "q1", "metric": "judge/faithfulness", "label": 1}, 2, "answer or variant"),
    ({"qid": "q1", "metric": "judge/faithfulness", "answer": "x", "variant": "v", "label": 1},
     2, "not both"),
    ({"qid": 3, "metric": "judge/faithfulness", "answer": "x", "label": 1}, 2, "qid"),
    ({"qid": "q1", "metric": "judge/faithfulness", "answer": "x", "label": 1,
      "labelled_at": "yesterday"}, 2, "ISO"),
    ({"qid": "q1", "metric": "judge/faithfulness", "answer": "x", "label": 1, "lable": 0},
     2, "unknown field 'lable'"),
    ({"qid": "q1", "metric": "judge/faithfulness", "variant": "", "label": 1}, 2, "variant"),
])
def test_bad_input_is_one_line_with_file_and_line(tmp_path, bad, line, words):
    path = _write(tmp_path, [GOOD[0], bad])
    with pytest.raises(InputError) as err:
        read_labels(path, known_qids=QIDS)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{path}:{line}: "), msg
    assert words in msg, msg


def test_duplicate_names_the_first_line_and_variant_and_answer_are_separate_keys(tmp_path):
    same_text = {**GOOD[0], "answer": "bm25"}
    as_variant = {"qid": "q1", "metric": "judge/faithfulness", "variant": "bm25", "label": 1}
    assert read_labels(_write(tmp_path, [same_text, as_variant])).height == 2
    other_metric = {**GOOD[0], "metric": "judge/context_recall"}
    assert read_labels(_write(tmp_path, [GOOD[0], other_metric])).height == 2
    with pytest.raises(InputError, match="first at line 1"):
        read_labels(_write(tmp_path, [GOOD[0], GOOD[1], {**GOOD[0], "label": 0}]))


def test_known_metrics_are_checked_when_given(tmp_path):
    path = _write(tmp_path, [GOOD[0], GOOD[2]])
    with pytest.raises(InputError, match=r"labels\.jsonl:2: .*judge/addresses_question"):
        read_labels(path, metrics={"judge/faithfulness"})


def test_unreadable_empty_and_undecodable_files(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        read_labels(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="no label"):
        read_labels(empty)
    raw = tmp_path / "latin1.jsonl"
    raw.write_bytes(json.dumps(GOOD[0]).encode() + b"\n" + b'{"qid": "q\xe9"}\n')
    with pytest.raises(InputError) as err:
        read_labels(raw)
    assert str(err.value).startswith(f"{raw}:2: ") and "UTF-8" in str(err.value)


def test_a_misspelled_variant_is_one_line_when_the_variants_are_known(tmp_path):
    path = _write(tmp_path, [GOOD[0], {**GOOD[2], "variant": "bm52"}])
    with pytest.raises(InputError) as err:
        read_labels(path, variants=["baseline", "bm25"])
    line = err.value.one_line()
    assert "labels.jsonl:2" in line and "variant" in line and "bm52" in line
    assert read_labels(_write(tmp_path, GOOD), variants=["baseline", "bm25"]).height == 4
