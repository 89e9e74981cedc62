import gzip
import json
from pathlib import Path

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Span
from ablate.components.data import load_dataset


def test_native_folder_loads_groups_and_alternatives(fixtures):
    ds = load_dataset(fixtures / "native")
    assert [d.doc_id for d in ds.documents] == ["d1", "d2", "d3"]
    assert ds.documents[0].credibility == 0.9 and ds.documents[1].source == "wiki"
    q1, q2, q3 = ds.questions
    assert q1.evidence == ((Span("d1", 0, 5),),)
    assert len(q2.evidence) == 2 and len(q2.evidence[1]) == 2  # two facts, one with 2 alternatives
    assert q2.cluster == "rivers" and q2.type == "multi"
    assert not q3.answerable and q3.evidence == ()
    assert ds.source.startswith("jsonl:") and ds.fingerprint.startswith("sha256:")


def test_gzip_gives_same_records_and_fingerprint(fixtures, tmp_path):
    for name in ("corpus.jsonl", "questions.jsonl"):
        with gzip.open(tmp_path / (name + ".gz"), "wb") as fh:
            fh.write((fixtures / "native" / name).read_bytes())
    plain, zipped = load_dataset(fixtures / "native"), load_dataset(tmp_path, format="jsonl")
    assert zipped.documents == plain.documents and zipped.questions == plain.questions
    assert zipped.fingerprint == plain.fingerprint


DOC = {"doc_id": "d1", "text": "Alpha beta gamma."}
Q = {"qid": "q1", "question": "?", "answers": ["Alpha"], "answerable": True,
     "evidence": [[{"doc_id": "d1", "start": 0, "end": 5}]]}


def _write(folder: Path, docs: list, qs: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("corpus.jsonl", docs), ("questions.jsonl", qs)):
        lines = [r if isinstance(r, (str, bytes)) else json.dumps(r) for r in rows]
        data = b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n"
        (folder / name).write_bytes(data)
    return folder


def _with(base: dict, **changes) -> dict:
    out = dict(base)
    for k, v in changes.items():
        if v is ...:
            out.pop(k)
        else:
            out[k] = v
    return out


def _span(**kw):
    return _with(Q, evidence=[[{**{"doc_id": "d1", "start": 0, "end": 5}, **kw}]])


CASES = [
    # (docs, questions, file, line, field, words in message)
    ([DOC, "{not json"], [Q], "corpus.jsonl", 2, None, "invalid JSON"),
    ([DOC], [Q, "[1, 2]"], "questions.jsonl", 2, None, "JSON object"),
    ([_with(DOC, text=...)], [Q], "corpus.jsonl", 1, "text", "missing"),
    ([_with(DOC, doc_id=7)], [Q], "corpus.jsonl", 1, "doc_id", "must be a string"),
    ([DOC], [_with(Q, answerable="yes")], "questions.jsonl", 1, "answerable", "boolean"),
    ([DOC], [_with(Q, evidence=...)], "questions.jsonl", 1, "evidence", "missing"),
    ([DOC], [_with(Q, answers=[1])], "questions.jsonl", 1, "answers[0]", "string"),
    ([DOC], [_span(start="0")], "questions.jsonl", 1, "evidence[0][0].start", "integer"),
    ([DOC], [_span(start=True)], "questions.jsonl", 1, "evidence[0][0].start", "integer"),
    ([DOC, DOC], [Q], "corpus.jsonl", 2, "doc_id", "duplicate doc_id"),
    ([DOC], [Q, Q], "questions.jsonl", 2, "qid", "duplicate qid"),
    ([DOC], [_span(doc_id="nope")], "questions.jsonl", 1, "evidence[0][0].doc_id", "unknown document"),
    ([DOC], [_span(end=99)], "questions.jsonl", 1, "evidence[0][0].end", "beyond"),
    ([DOC], [_span(start=-1)], "questions.jsonl", 1, "evidence[0][0].start", "negative"),
    ([DOC], [_span(start=3, end=3)], "questions.jsonl", 1, "evidence[0][0].end", "empty span"),
    ([DOC], [_with(Q, evidence=[[]])], "questions.jsonl", 1, "evidence[0]", "empty evidence group"),
    ([DOC], [_with(Q, answerable=False)], "questions.jsonl", 1, "evidence", "unanswerable"),
    ([_with(DOC, text="  \n")], [Q], "corpus.jsonl", 1, "text", "empty text"),
    ([DOC, b'{"doc_id": "d2", "text": "caf\xe9"}'], [Q], "corpus.jsonl", 2, None, "undecodable"),
    ([_with(DOC, credibility=1.5)], [Q], "corpus.jsonl", 1, "credibility", "0..1"),
    ([DOC], [_with(Q, tier="huge")], "questions.jsonl", 1, "tier", "tier"),
]


@pytest.mark.parametrize("docs,qs,fname,line,field,words", CASES)
def test_each_invalid_input_gives_one_line_naming_file_line_field(tmp_path, docs, qs, fname,
                                                                   line, field, words):
    folder = _write(tmp_path / "ds", docs, qs)
    with pytest.raises(InputError) as info:
        load_dataset(folder)
    err = info.value
    assert err.path == str(folder / fname) and err.line == line and err.field == field
    msg = err.one_line()
    assert words in msg and "\n" not in msg
    assert msg.startswith(f"{folder / fname}:{line}: ")


def test_first_error_in_file_order_wins(tmp_path):
    folder = _write(tmp_path / "ds", [DOC], [Q, Q, "{bad"])
    with pytest.raises(InputError) as info:
        load_dataset(folder)
    assert info.value.line == 2 and "duplicate qid" in info.value.message


def test_blank_lines_are_skipped_and_counted(fixtures):
    # the fixture's questions.jsonl has a blank line 3; q3 is on line 4
    ds = load_dataset(fixtures / "native")
    assert [q.qid for q in ds.questions] == ["q1", "q2", "q3"]


def test_missing_files_and_unknown_format(tmp_path, fixtures):
    with pytest.raises(InputError, match="no such file"):
        load_dataset(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="neither"):
        load_dataset(tmp_path / "empty")
    with pytest.raises(InputError, match="questions.jsonl"):
        (tmp_path / "half").mkdir()
        (tmp_path / "half" / "corpus.jsonl").write_text(json.dumps(DOC) + "\n")
        load_dataset(tmp_path / "half", format="jsonl")
    with pytest.raises(InputError, match="unknown data format"):
        load_dataset(fixtures / "native", format="csv")


def test_duplicate_alternatives_are_deduplicated(tmp_path):
    q = _with(Q, evidence=[[{"doc_id": "d1", "start": 0, "end": 5}] * 3])
    ds = load_dataset(_write(tmp_path / "ds", [DOC], [q]))
    assert ds.questions[0].evidence == ((Span("d1", 0, 5),),)


def test_utf8_bom_on_first_line_is_accepted(tmp_path):
    folder = _write(tmp_path / "ds", [DOC], [Q])
    corpus = folder / "corpus.jsonl"
    corpus.write_bytes(b"\xef\xbb\xbf" + corpus.read_bytes())
    assert load_dataset(folder).documents[0].doc_id == "d1"
