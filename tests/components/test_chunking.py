import pytest

from ablate.components.contract.config import ChunkingConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Document
from ablate.components.text.chunking import (
    CHUNKERS,
    chunk_documents,
    chunk_limit,
    chunk_token_limit,
    sentence_spans,
    word_boundaries,
)
from ablate.components.text.tokenizer import get_tokenizer

TEXT = ("The Normans were the people who in the 10th and 11th centuries gave their name to "
        "Normandy, a region in France. They were descended from Norse raiders and pirates! "
        "Was their leader Rollo?  Yes: he swore fealty to King Charles III of West Francia.\n\n"
        "Through generations of assimilation, the Norse identity faded; antidisestablishmentarian"
        "ism-like compounds and URLs such as http://example.org/a_very_long_path stay whole. "
        "Café, naïve and 東京 are non-ASCII words.")
DOCS = [Document("a", TEXT), Document("b", "Short text. Two sentences."), Document("c", "x " * 300)]


@pytest.fixture(scope="module")
def tok():
    return get_tokenizer()


@pytest.mark.parametrize("method", ["token_window", "sentence"])
@pytest.mark.parametrize("size,overlap", [(8, 0), (8, 3), (16, 4), (64, 16), (512, 0)])
def test_exact_offsets_size_limit_and_coverage(tok, method, size, overlap):
    cfg = ChunkingConfig(method=method, size=size, overlap=overlap)
    chunks = chunk_documents(DOCS, cfg, tok)
    docs = {d.doc_id: d for d in DOCS}
    for c in chunks:
        assert c.text == docs[c.doc_id].text[c.start:c.end]
        assert c.chunk_id == f"{c.doc_id}:{c.start}-{c.end}"
        assert 0 < c.n_tokens <= size and c.n_tokens == tok.count(c.text)
    assert [(c.doc_id, c.start) for c in chunks] == sorted((c.doc_id, c.start) for c in chunks)
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    # every token of every document is inside some chunk
    for d in DOCS:
        mine = [c for c in chunks if c.doc_id == d.doc_id]
        for s, e in tok.offsets(d.text):
            assert any(c.start <= s and e <= c.end for c in mine), (d.doc_id, d.text[s:e])


def test_token_window_overlap_is_bounded_and_stable(tok):
    cfg = ChunkingConfig(method="token_window", size=16, overlap=4)
    a = chunk_documents(DOCS, cfg, tok)
    assert a == chunk_documents(DOCS, cfg, tok)
    doc_a = [c for c in a if c.doc_id == "a"]
    offs = tok.offsets(TEXT)
    shared = []
    for prev, nxt in zip(doc_a, doc_a[1:]):
        assert nxt.start > prev.start and nxt.end > prev.end
        shared.append(sum(1 for s, e in offs if nxt.start <= s and e <= prev.end))
    assert max(shared) <= 4 and sum(shared) > 0
    no_overlap = chunk_documents(DOCS, ChunkingConfig(method="token_window", size=16, overlap=0), tok)
    for prev, nxt in zip(no_overlap, no_overlap[1:]):
        if prev.doc_id == nxt.doc_id:
            assert nxt.start >= prev.end


def test_token_window_cuts_at_word_boundaries(tok):
    chunks = chunk_documents([DOCS[0]], ChunkingConfig(method="token_window", size=12, overlap=0), tok)
    for c in chunks:
        assert c.start == 0 or not (TEXT[c.start - 1].isalnum() and TEXT[c.start].isalnum())


def test_sentence_chunks_hold_whole_sentences(tok):
    longest = max(tok.count(TEXT[s:e]) for s, e in sentence_spans(TEXT))
    cfg = ChunkingConfig(method="sentence", size=longest + 5, overlap=0)
    chunks = chunk_documents(DOCS[:2], cfg, tok)
    assert sum(c.doc_id == "a" for c in chunks) > 1
    starts = {s for s, _ in sentence_spans(TEXT)}
    ends = {e for _, e in sentence_spans(TEXT)}
    for c in (c for c in chunks if c.doc_id == "a"):
        assert c.start in starts and c.end in ends
    assert [c.text for c in chunks if c.doc_id == "b"] == ["Short text. Two sentences."]
    assert sentence_spans("One. Two!  Three?\n\nFour") == [(0, 4), (5, 9), (11, 17), (19, 23)]


def test_sentence_overlap_repeats_trailing_sentences(tok):
    text = " ".join(f"Sentence number {i} is here." for i in range(12))
    chunks = chunk_documents([Document("s", text)], ChunkingConfig(method="sentence", size=20,
                                                                   overlap=8), tok)
    assert len(chunks) > 2
    for prev, nxt in zip(chunks, chunks[1:]):
        assert prev.start < nxt.start < prev.end  # overlap by one whole sentence (7 tokens)
        assert text[nxt.start:prev.end].endswith(".")


def test_long_word_is_cut_inside(tok):
    doc = Document("w", "zqxj" * 24)  # one word (< 100 chars, else [UNK]) of many word pieces
    chunks = chunk_documents([doc], ChunkingConfig(method="token_window", size=8, overlap=0), tok)
    assert len(chunks) > 1 and all(c.n_tokens <= 8 for c in chunks)
    assert "".join(c.text for c in chunks) == doc.text


def test_word_boundaries():
    text = "ab cd,ef"
    offsets = [(0, 2), (3, 5), (5, 6), (6, 8)]
    assert word_boundaries(text, offsets) == [0, 1, 2, 3, 4]
    assert word_boundaries("abc", [(0, 2), (2, 3)]) == [0, 2]


def test_registry_names_and_unknown(tok):
    assert CHUNKERS.names() == ["document", "sentence", "token_window"]
    with pytest.raises(InputError, match="unknown chunker 'para'"):
        chunk_documents(DOCS, ChunkingConfig(method="para"), tok)


ZH_TEXT = ("台北101是台灣最高的建築，高度為508公尺。它位於信義區！"
           "遊客常問：「觀景台在幾樓？」答案是89樓；"
           "BM25 與向量檢索可以一起使用。最後一句沒有句號")


def test_sentence_chunks_end_at_chinese_sentence_ends(tok):
    spans = sentence_spans(ZH_TEXT)
    assert [ZH_TEXT[s:e] for s, e in spans] == [
        "台北101是台灣最高的建築，高度為508公尺。", "它位於信義區！", "遊客常問：「觀景台在幾樓？」",
        "答案是89樓；", "BM25 與向量檢索可以一起使用。", "最後一句沒有句號"]
    longest = max(tok.count(ZH_TEXT[s:e]) for s, e in spans)
    chunks = chunk_documents([Document("z", ZH_TEXT)],
                             ChunkingConfig(method="sentence", size=longest, overlap=0), tok)
    starts, ends = {s for s, _ in spans}, {e for _, e in spans}
    assert len(chunks) > 1
    for c in chunks:
        assert c.text == ZH_TEXT[c.start:c.end] and c.n_tokens <= longest
        assert c.start in starts and c.end in ends


def test_document_chunker_keeps_each_document_whole(tok):
    long_text = " ".join(f"word{i}" for i in range(400))  # far beyond size
    docs = [Document("a", "  Short text.  "), Document("b", long_text), Document("c", "   ")]
    cfg = ChunkingConfig(method="document", size=16, overlap=0)
    chunks = chunk_documents(docs, cfg, tok)
    assert [(c.doc_id, c.start, c.end) for c in chunks] == [("a", 2, 13), ("b", 0, len(long_text))]
    assert chunks[1].text == long_text and chunks[1].n_tokens > 16


def test_chunk_token_limit_is_the_size_only_where_the_chunker_reads_it():
    assert chunk_token_limit({"chunking": {"method": "token_window", "size": 128}}) == 128
    assert chunk_token_limit({"chunking": {"method": "sentence", "size": 64}}) == 64
    assert chunk_token_limit({"chunking": {"method": "document", "size": 128}}) is None
    assert chunk_token_limit({"chunking": {"method": "no_such_chunker", "size": 128}}) is None
    assert chunk_token_limit({}) == 256  # the defaults: token_window, 256


def test_chunk_limit_of_a_typed_section_agrees_with_the_stored_reading():
    for method, size in [("token_window", 128), ("sentence", 64), ("document", 128)]:
        typed = ChunkingConfig(method=method, size=size)
        assert chunk_limit(typed) == chunk_token_limit({"chunking": typed.model_dump(mode="json")})
    assert chunk_limit(ChunkingConfig(method="document")) is None
    assert chunk_limit(ChunkingConfig()) == 256
