"""TREC collections (JsonCollection, HtmlCollection, topics, qrels) and trec_eval's
measures, checked against pytrec_eval on an exported run."""

from __future__ import annotations

import math
import random

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.data import trec
from ablate.components.metrics import trec as tm


def test_json_collection_file_and_folder(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "1.jsonl").write_text('{"id": "d1", "contents": "x y"}\n\n{"id": "d2", "contents": "z"}\n')
    (tmp_path / "a" / "2.json").write_text('{"id": "d3", "contents": "w"}\n')
    assert [d.doc_id for d in trec.read_collection(tmp_path / "a")] == ["d1", "d2", "d3"]
    assert [d.doc_id for d in trec.read_collection(tmp_path / "a" / "2.json")] == ["d3"]


def test_html_collection_ids_from_file_names(tmp_path):
    (tmp_path / "D-1.html").write_text("<html>\n<pre>\nA &amp; B, a < b\n</pre>\n</html>\n")
    docs = trec.read_collection(tmp_path)
    assert docs[0].doc_id == "D-1"
    assert docs[0].contents.split() == ["A", "&", "B,", "a", "<", "b"]


@pytest.mark.parametrize("content,where", [
    ('{"id": "d1", "contents": "x"}\n{"id": "d2"}\n', ":2: field 'contents'"),
    ('{"id": "d1", "contents": "x"}\nnot json\n', ":2: not a JSON object"),
    ('{"id": "d 1", "contents": "x"}\n', ":1: field 'id'"),
])
def test_json_collection_errors_name_file_and_line(tmp_path, content, where):
    f = tmp_path / "c.jsonl"
    f.write_text(content)
    with pytest.raises(InputError) as e:
        trec.read_collection(f)
    assert str(f) + where in str(e.value)
    assert "\n" not in str(e.value)


def test_topics_in_three_formats(tmp_path):
    t = tmp_path / "trec.txt"
    t.write_text("<top>\n<num> Number: 051\n<title> Topic: Airbus Subsidies\n\n<desc> Description:\n"
                 "Document will discuss\n</top>\n<top>\n<num> Number: 52\n<title> South Africa\n</top>\n")
    assert trec.read_topics(t) == {"051": "Airbus Subsidies", "52": "South Africa"}
    c = tmp_path / "cacm.txt"
    c.write_text("<DOC>\n<DOCNO> 01 </DOCNO>\n\n What articles\nexist?\n</DOC>\n<DOC>\n<DOCNO> 2 </DOCNO>\nPooch\n</DOC>\n")
    assert trec.read_topics(c) == {"1": "\n What articles\nexist?\n", "2": "Pooch\n"}
    s = tmp_path / "q.tsv"
    s.write_text("q1\thello world\nq2\tbye\n")
    assert trec.read_topics(s) == {"q1": "hello world", "q2": "bye"}
    s.write_text("q1\thello\nq2 no tab\n")
    with pytest.raises(InputError, match=r"q\.tsv:2: expected"):
        trec.read_topics(s)
    c.write_text("<DOC>\n<DOCNO> 1 </DOCNO>\nx\n</DOC>\n<DOC>\n<DOCNO> 1 </DOCNO>\ny\n</DOC>\n")
    with pytest.raises(InputError, match=r"cacm\.txt:5: topic '1' repeats"):
        trec.read_topics(c)


def test_qrels_graded_and_errors(tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text("1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n")
    assert trec.read_qrels(q) == {"1": {"d1": 2, "d2": 0}, "2": {"d3": 1}}
    q.write_text("1 0 d1 2\n1 0 d2 high\n")
    with pytest.raises(InputError, match=r"qrels\.txt:2: field 'relevance'"):
        trec.read_qrels(q)
    q.write_text("1 0 d1\n")
    with pytest.raises(InputError, match=r"qrels\.txt:1: expected"):
        trec.read_qrels(q)


def test_measures_equal_pytrec_eval_on_the_exported_run(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from ablate.components.export.export_trec import write_trec_run
    from ablate.components.export.regression import distinct_scores
    rnd = random.Random(7)
    docs = [f"d{i:03d}" for i in range(200)]
    qrels = {f"q{q}": {d: rnd.choice([0, 1, 2]) for d in rnd.sample(docs, 25)} for q in range(12)}
    qrels["q_norel"] = {"d001": 0}
    run = {}
    for q in list(qrels) + ["q_unjudged"]:
        ranked = rnd.sample(docs, 120)
        # many equal scores: the run file must still hold ablate's order
        run[q] = [(d, float(rnd.choice([1, 2, 3]))) for d in ranked]
        run[q].sort(key=lambda p: (-p[1], p[0]))
    path = write_trec_run(tmp_path / "run.txt", {q: distinct_scores(r) for q, r in run.items()})
    with open(path) as fh:
        parsed = pytrec_eval.parse_run(fh)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_30", "recall_1000"}).evaluate(parsed)
    ours = tm.evaluate({q: [d for d, _ in r] for q, r in run.items()}, qrels,
                       ("map", "P_30", "recall_1000"))
    assert set(ours) == set(ref) and "q_unjudged" not in ours  # only judged topics count
    for q in ours:
        for m in ("map", "P_30", "recall_1000"):
            assert ours[q][m] == pytest.approx(ref[q][m], abs=1e-12), (q, m)


def test_trec_folder_is_a_data_set(tmp_path):
    from ablate.components.data.load import detect_format, load_dataset
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "c.jsonl").write_text(
        '{"id": "d1", "contents": "apple pie"}\n{"id": "d2", "contents": "cherry"}\n')
    (tmp_path / "topics.txt").write_text("1\tapple\n2\tcherry\n3\tnot judged\n")
    (tmp_path / "qrels.txt").write_text("1 0 d1 2\n1 0 d9 1\n2 0 d2 0\n")
    assert detect_format(tmp_path) == "trec"
    ds = load_dataset(tmp_path)
    qs = {q.qid: q for q in ds.questions}
    assert sorted(qs) == ["1", "2"]  # only judged topics
    (span,), = qs["1"].evidence  # d9 is not in the collection: left out
    assert (span.doc_id, span.start, span.end, span.grade) == ("d1", 0, 9, 2.0)
    assert not qs["2"].answerable
    (tmp_path / "qrels.txt").write_text("1 0 d1 2\n4 0 d2 1\n")
    with pytest.raises(InputError, match="topic '4' is judged but not in topics.txt"):
        load_dataset(tmp_path)


def test_validate_cli_reports_the_bad_line(tmp_path, run_cli, capsys):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "c.jsonl").write_text('{"id": "d1", "contents": "x"}\n{"id": "d1", "contents": "y"}\n')
    (tmp_path / "topics.txt").write_text("1\tx\n")
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    assert run_cli("validate", str(tmp_path)) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("c.jsonl:2: field 'id': document id 'd1' repeats") and "\n" not in err


def test_registered_measures_only_for_trec_collections():
    from ablate.components import catalogue
    from ablate.components.contract.records import Question
    from ablate.components.metrics.registry import METRICS, QuestionView
    catalogue.load()
    q = Question(qid="1", question="x", answers=(), answerable=True, evidence=())
    ranked = ["d3", "d1", "d7", "d2"]
    groups = [{"d1": 2.0, "d2": 1.0, "d9": 1.0, "d4": 0.25}]  # d4 below the threshold

    def view(params):
        return QuestionView(q, groups, {"candidates": ranked}, None, None, None,
                            {"ks": [1], "label_threshold": 0.5, **params}, {})
    m = METRICS.get("candidates/map").compute
    assert m(view({})) == {}  # not a TREC collection: no column
    assert m(view({"trec": True}))["candidates/map"] == pytest.approx((1 / 2 + 2 / 4) / 3)
    p30 = METRICS.get("candidates/precision_at_30").compute(view({"trec": True}))
    assert p30 == {"candidates/precision_at_30": 2 / 30}
    r = METRICS.get("candidates/recall_at_1000").compute(view({"trec": True}))
    assert r == {"candidates/recall_at_1000": 2 / 3}
    unjudged = QuestionView(q, [], {"candidates": ranked}, None, None, None,
                            {"ks": [1], "label_threshold": 0.5, "trec": True}, {})
    assert math.isnan(m(unjudged)["candidates/map"])
