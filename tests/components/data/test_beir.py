import pytest

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Span
from ablate.components.data import load_dataset


def test_qrels_become_whole_document_spans_with_grades(fixtures):
    ds = load_dataset(fixtures / "beir")
    assert ds.source.endswith("#test")
    docs = ds.doc_by_id()
    assert docs["b1"].title == "Cats" and docs["b3"].title is None
    q = {x.qid: x for x in ds.questions}
    assert set(q) == {"x1", "x2", "x3"}  # x4 is not judged in the test split
    assert q["x1"].evidence == ((Span("b1", 0, len(docs["b1"].text), 1.0),),)
    # relevant docs are alternatives of one group, grade 0 is not evidence
    assert q["x2"].evidence == ((Span("b2", 0, len(docs["b2"].text), 2.0),
                                 Span("b3", 0, len(docs["b3"].text), 1.0)),)
    assert not q["x3"].answerable and q["x3"].evidence == ()
    assert all(x.answers == () for x in ds.questions)


def test_split_choice(fixtures):
    ds = load_dataset(fixtures / "beir", format="beir", beir_split="dev")
    assert [q.qid for q in ds.questions] == ["x4"]
    with pytest.raises(InputError, match="qrels/train.tsv"):
        load_dataset(fixtures / "beir", beir_split="train")


def test_bad_qrels_line(tmp_path, fixtures):
    import shutil
    folder = tmp_path / "b"
    shutil.copytree(fixtures / "beir", folder)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nx1\tb1\tone\n")
    with pytest.raises(InputError) as info:
        load_dataset(folder)
    assert info.value.line == 2 and info.value.field == "score"
    (folder / "qrels" / "test.tsv").write_text("x1\tzz\t1\n")
    with pytest.raises(InputError) as info:
        load_dataset(folder)
    assert info.value.line == 1 and "unknown document 'zz'" in info.value.message
