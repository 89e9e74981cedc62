from pathlib import Path

import pytest

from components.chunking import chunk_documents
from components.config import ChunkingConfig
from components.data import load_dataset
from components.labels import ChunkIndex, label_chunks
from components.records import Chunk, Question, Span
from components.tokenizer import get_tokenizer

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
