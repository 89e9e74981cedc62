from pathlib import Path

import pytest

from ablate.components.contract.config import ChunkingConfig
from ablate.components.contract.records import Chunk, Question, Span
from ablate.components.data import load_dataset
from ablate.components.text.chunking import chunk_documents
from ablate.components.text.labels import ChunkIndex, label_chunks
from ablate.components.text.tokenizer import get_tokenizer

DEMO = Path(__file__).resolve().parents[2] / "experiments/data/squad2-dev-half/dev-v2.0.json"


def _chunk(doc, s, e):
    return Chunk(f"{doc}:{s}-{e}", doc, s, e, "x" * (e - s), 1)


CHUNKS = [_chunk("d", 0, 10), _chunk("d", 5, 15), _chunk("d", 10, 20), _chunk("e", 0, 50)]


def test_covered_fraction_of_a_span_per_chunk():
    q = Question("q", "?", ("a",), True, ((Span("d", 8, 12),),))
    assert label_chunks(CHUNKS, [q]) == {"q": ({"d:0-10": 0.5, "d:5-15": 1.0, "d:10-20": 0.5},)}


def test_alternatives_take_the_best_span_per_chunk():
    group = (Span("d", 0, 4), Span("d", 12, 14), Span("e", 10, 20))
    q = Question("q", "?", ("a",), True, (group,))
    (labels,) = label_chunks(CHUNKS, [q])["q"]
    assert labels == {"d:0-10": 1.0, "d:5-15": 1.0, "d:10-20": 1.0, "e:0-50": 1.0}
    partial = Question("p", "?", ("a",), True, ((Span("d", 8, 12), Span("d", 9, 11)),))
    assert label_chunks(CHUNKS, [partial])["p"][0]["d:0-10"] == 0.5  # max(2/4, 1/2)


def test_multi_group_questions_keep_one_dict_per_group():
    q = Question("q", "?", ("a",), True, ((Span("d", 0, 2),), (Span("e", 40, 60 - 10),)))
    g1, g2 = label_chunks(CHUNKS, [q])["q"]
    assert g1 == {"d:0-10": 1.0} and g2 == {"e:0-50": 1.0}


def test_grade_scales_the_label_and_unanswerable_is_empty():
    q = Question("q", "?", (), True, ((Span("e", 0, 100, grade=2.0),),))
    assert label_chunks(CHUNKS, [q])["q"] == ({"e:0-50": 1.0},)  # 50/100 * 2
    none = Question("n", "?", (), False)
    assert label_chunks(CHUNKS, [none])["n"] == ()
    missing = Question("m", "?", ("a",), True, ((Span("zzz", 0, 3),),))
    assert label_chunks(CHUNKS, [missing])["m"] == ({},)


def test_chunk_index_overlapping_bounds():
    idx = ChunkIndex(CHUNKS)
    assert [c.chunk_id for c in idx.overlapping("d", 10, 11)] == ["d:5-15", "d:10-20"]
    assert [c.chunk_id for c in idx.overlapping("d", 9, 10)] == ["d:0-10", "d:5-15"]
    assert idx.overlapping("d", 20, 30) == [] and idx.overlapping("x", 0, 1) == []


@pytest.fixture(scope="module")
def demo():
    return load_dataset(DEMO)


@pytest.mark.parametrize("size", [64, 128, 256, 512])
def test_every_demo_answer_span_maps_consistently(demo, size):
    """Every SQuAD answer span of the demo gets labels equal to its offsets' overlap."""
    tok = get_tokenizer()
    chunks = chunk_documents(demo.documents, ChunkingConfig(size=size, overlap=size // 8), tok)
    labels = label_chunks(chunks, demo.questions)
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    docs = demo.doc_by_id()
    n_spans = n_whole = 0
    for q in demo.questions:
        assert len(labels[q.qid]) == len(q.evidence)
        for group, got in zip(q.evidence, labels[q.qid]):
            expected: dict[str, float] = {}
            for span in group:
                n_spans += 1
                answer = docs[span.doc_id].text[span.start:span.end]
                covered = set()
                for c in by_doc[span.doc_id]:
                    inter = min(c.end, span.end) - max(c.start, span.start)
                    if inter > 0:
                        expected[c.chunk_id] = max(expected.get(c.chunk_id, 0.0), inter / span.length)
                        covered.update(range(max(c.start, span.start), min(c.end, span.end)))
                    if c.start <= span.start and span.end <= c.end:
                        assert answer in c.text
                        n_whole += 1
                assert len(covered) == span.length, (q.qid, span)  # overlapping windows cover it
            assert got == pytest.approx(expected, abs=1e-12)
            assert set(got) == set(expected) and any(v > 0 for v in got.values())
    assert n_spans == 5109 and n_whole >= n_spans


LONG = [_chunk("b", 0, 100), _chunk("b", 100, 200), _chunk("b", 200, 300), _chunk("b", 300, 350),
        _chunk("other", 0, 100)]


def test_document_mode_gives_every_chunk_of_a_relevant_document_its_grade():
    # a BEIR qrel: the whole 350-character document "b", grade 2
    q = Question("q", "?", (), True, ((Span("b", 0, 350, 2.0),),))
    (doc,) = label_chunks(LONG, [q], mode="document")["q"]
    assert doc == {"b:0-100": 2.0, "b:100-200": 2.0, "b:200-300": 2.0, "b:300-350": 2.0}
    # span mode: each chunk covers under half of the document, so none would reach 0.5 x grade
    (span,) = label_chunks(LONG, [q])["q"]
    assert span == pytest.approx({"b:0-100": 100 / 350 * 2, "b:100-200": 100 / 350 * 2,
                                  "b:200-300": 100 / 350 * 2, "b:300-350": 50 / 350 * 2})
    assert label_chunks(LONG, [q], mode="span") == label_chunks(LONG, [q])


def test_document_mode_keeps_groups_best_grade_and_no_evidence():
    group = (Span("b", 0, 350, 1.0), Span("other", 0, 100, 3.0), Span("b", 10, 20, 2.0))
    q = Question("q", "?", (), True, (group,))
    none = Question("n", "?", (), False, ())
    out = label_chunks(LONG, [q, none], mode="document")
    assert out["q"] == ({"b:0-100": 2.0, "b:100-200": 2.0, "b:200-300": 2.0, "b:300-350": 2.0,
                         "other:0-100": 3.0},)
    assert out["n"] == ()
    with pytest.raises(ValueError, match="label mode"):
        label_chunks(LONG, [q], mode="chunk")


def test_document_mode_on_a_chunked_beir_data_set(tmp_path):
    import json
    text = " ".join(f"Sentence {i} talks about cats and their habits." for i in range(12))
    (tmp_path / "corpus.jsonl").write_text(
        json.dumps({"_id": "long", "title": "Cats", "text": text}) + "\n"
        + json.dumps({"_id": "short", "title": "", "text": "Dogs bark."}) + "\n")
    (tmp_path / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "cats?"}) + "\n")
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tlong\t2\n")
    ds = load_dataset(tmp_path, format="beir")
    chunks = chunk_documents(ds.documents, ChunkingConfig(size=16, overlap=0), get_tokenizer())
    of_doc = sorted(c.chunk_id for c in chunks if c.doc_id == "long")
    assert len(of_doc) > 2  # a multi-chunk relevant document
    (doc,) = label_chunks(chunks, ds.questions, mode="document")["q1"]
    assert doc == {c: 2.0 for c in of_doc}
    (span,) = label_chunks(chunks, ds.questions, mode="span")["q1"]
    assert max(span.values()) < 0.5 * 2.0  # span mode: no chunk reaches the threshold
