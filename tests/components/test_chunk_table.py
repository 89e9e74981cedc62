"""ChunkTable: the columns give the same chunks as the objects, and picking a few chunks
makes only those."""

from __future__ import annotations

import pytest

from ablate.components.contract.config import ChunkingConfig
from ablate.components.contract.records import Chunk, Document
from ablate.components.text.chunk_table import ChunkTable, chunk_map, chunks_of_documents, id_order
from ablate.components.text.chunking import chunk_documents
from ablate.components.text.tokenizer import get_tokenizer

DOCS = [Document("b", "Rouen is a city on the Seine. Its cathedral was painted by Monet many times."),
        Document("a", "北京是中国的首都。 Beijing hosts the 2008 Olympics and many museums."),
        Document("c", "short")]


@pytest.fixture(scope="module")
def chunks() -> list[Chunk]:
    return chunk_documents(DOCS, ChunkingConfig(size=8, overlap=2), get_tokenizer())


def test_table_reads_as_the_chunks(chunks):
    docs = {d.doc_id: d for d in DOCS}
    table = ChunkTable.of(chunks, docs)
    assert len(table) == len(chunks) > 4
    assert list(table) == chunks and table == chunks and chunks == list(table)
    assert [table[i] for i in range(len(table))] == chunks
    assert table[-1] == chunks[-1] and table[1:3] == chunks[1:3]
    assert list(table.texts()) == [c.text for c in chunks]
    with pytest.raises(IndexError):
        table[len(chunks)]
    some = [chunks[3].chunk_id, chunks[0].chunk_id, "nope"]
    assert table.select(some) == {c.chunk_id: c for c in (chunks[3], chunks[0])}
    assert chunk_map(table, some) == chunk_map(chunks, some) == table.select(some)
    by_id = sorted(range(len(chunks)), key=lambda i: chunks[i].chunk_id)
    assert id_order(table) == id_order(chunks) == by_id != list(range(len(chunks)))
    assert chunks_of_documents(table, {"a", "c"}) == chunks_of_documents(chunks, {"a", "c"}) \
        == [c for c in chunks if c.doc_id in ("a", "c")]


def test_columns_must_agree():
    with pytest.raises(ValueError, match="different lengths"):
        ChunkTable(["x"], ["d"], [0], [1, 2], [1], {})
