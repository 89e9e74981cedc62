"""The bundled DRCD dev set (Traditional Chinese, SQuAD v1 format) loads with exact spans,
and every answer span maps onto token-window chunks exactly."""

from pathlib import Path

import pytest

from ablate.components.contract.config import ChunkingConfig
from ablate.components.contract.records import Chunk
from ablate.components.data import load_dataset
from ablate.components.text.chunking import chunk_documents
from ablate.components.text.labels import label_chunks
from ablate.components.text.tokenizer import get_tokenizer

DRCD = Path(__file__).resolve().parents[3] / "experiments/data/drcd-dev/DRCD_dev.json"


@pytest.fixture(scope="module")
def drcd():
    return load_dataset(DRCD)


def test_drcd_loads_with_exact_answer_spans(drcd):
    assert len(drcd.documents) == 383 and len(drcd.questions) == 3524
    docs = drcd.doc_by_id()
    assert all(q.answerable and len(q.evidence) == 1 for q in drcd.questions)
    for q in drcd.questions:
        for span in q.evidence[0]:
            assert docs[span.doc_id].text[span.start:span.end] in q.answers
    assert (DRCD.parent / "SOURCE.txt").read_text().count("CC BY-SA 3.0") == 1


@pytest.mark.parametrize("size", [64, 128, 256, 512])
def test_every_drcd_answer_span_maps_onto_chunks(drcd, size):
    chunks = chunk_documents(drcd.documents, ChunkingConfig(size=size, overlap=size // 8),
                             get_tokenizer())
    labels = label_chunks(chunks, drcd.questions)
    docs = drcd.doc_by_id()
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        assert c.text == docs[c.doc_id].text[c.start:c.end] and c.n_tokens <= size
        by_doc.setdefault(c.doc_id, []).append(c)
    n_spans = n_whole = 0  # spans, and spans that some chunk holds whole
    for q in drcd.questions:
        (group,), (got,) = q.evidence, labels[q.qid]
        expected: dict[str, float] = {}
        for span in group:
            n_spans += 1
            answer = docs[span.doc_id].text[span.start:span.end]
            covered = set()
            whole = False
            for c in by_doc[span.doc_id]:
                inter = min(c.end, span.end) - max(c.start, span.start)
                if inter > 0:
                    expected[c.chunk_id] = max(expected.get(c.chunk_id, 0.0), inter / span.length)
                    covered.update(range(max(c.start, span.start), min(c.end, span.end)))
                if c.start <= span.start and span.end <= c.end:
                    assert answer in c.text
                    whole = True
            assert len(covered) == span.length, (q.qid, span)  # overlapping windows cover it
            n_whole += whole
        assert got == pytest.approx(expected, abs=1e-12)
        assert set(got) == set(expected) and any(v > 0 for v in got.values())
    assert n_spans == 4347
    # windows are cut at punctuation inside Chinese runs: a few spans straddle two chunks
    assert n_whole == n_spans if size >= 256 else n_whole >= 0.99 * n_spans
