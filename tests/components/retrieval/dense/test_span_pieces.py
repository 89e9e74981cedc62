"""Word pieces of spans of documents (ablate.components.retrieval.dense.span_pieces): each
exactly what encoding the span's text on its own gives, spans that cut a word and other
tokenizers included."""

from __future__ import annotations

import numpy as np
import pytest

from ablate.components.retrieval.dense import span_pieces as sp
from ablate.components.retrieval.dense.span_pieces import (
    by_words,
    encode_counts,
    load_tokenizer,
    span_piece_counts,
    special_tokens,
)
from ablate.components.runtime.models import minilm_path

PARTS = ["word", "Wörter", "naïve", "café", "ﬁne", "İstanbul", "中文的句子", "日本語", "한국어", "🙂",
         "e-mail", "a.b@c.org", "U.S.", "don't", "5€", "$10", "3.14159", "(x)", "“quote”", "—",
         "foo\u200bbar", "x\u0301y", "tab\there", "new\nline", "\xa0", "  ", "[MASK]", "[CLS]",
         "unbelievably", "x" * 120, "snake_case", "\u3000", "ǅ", "ß", "é"]


def _docs(rng: np.random.Generator, n: int) -> dict[str, str]:
    return {f"d{i}": "".join(str(rng.choice(PARTS)) + str(rng.choice([" ", "", "  ", "\n", ", "]))
                             for _ in range(int(rng.integers(1, 80)))) for i in range(n)}


def _spans(rng: np.random.Generator, docs: dict[str, str], n: int,
           at_spaces: bool = False) -> list[tuple[str, int, int]]:
    """Spans with ends anywhere, or (at_spaces) next to whitespace, as a chunker cuts."""
    out = []
    for _ in range(n):
        doc = str(rng.choice(sorted(docs)))
        text = docs[doc]
        cuts = ([i for i in range(len(text) + 1) if i in (0, len(text)) or text[i - 1].isspace()
                 or text[i].isspace()] if at_spaces else list(range(len(text) + 1)))
        a, b = sorted(int(x) for x in rng.choice(cuts, size=2))
        out.append((doc, a, b))
    return out


@pytest.fixture(scope="module")
def minilm():
    return load_tokenizer(minilm_path() / "tokenizer.json")


def test_spans_count_what_encoding_each_alone_gives(minilm, monkeypatch):
    monkeypatch.setattr(sp, "DOC_BLOCK", 5)  # documents and lone spans in several blocks
    rng = np.random.default_rng(11)
    docs = {**_docs(rng, 12), "blank": " \n\xa0 ", "empty": ""}
    spans = (_spans(rng, docs, 1500) + _spans(rng, docs, 1500, at_spaces=True)
             + [(d, 0, len(t)) for d, t in docs.items()] + [("d0", 3, 3), ("blank", 1, 3)])
    assert by_words(minilm) and special_tokens(minilm) == 2
    got = span_piece_counts(minilm, docs.__getitem__, *zip(*spans))
    want = [len(minilm.encode(docs[d][a:b]).ids) for d, a, b in spans]
    assert got.tolist() == want


def test_chunks_at_word_boundaries_are_counted_from_their_documents(minilm, monkeypatch):
    """Only a span that cuts a word is encoded on its own."""
    docs = {"a": "The naïve café's menu: 中文 text, e-mail a.b@c.org!", "b": "x" * 120 + " y"}
    spans = [("a", 0, 9), ("a", 4, 22), ("a", 9, 30), ("a", 2, 12), ("b", 0, 120), ("b", 60, 122)]
    alone: list[list[str]] = []
    real = sp.encode_counts
    monkeypatch.setattr(sp, "encode_counts", lambda tok, texts: alone.append(texts) or real(tok, texts))
    got = span_piece_counts(minilm, docs.__getitem__, *zip(*spans))
    assert got.tolist() == [len(minilm.encode(docs[d][a:b]).ids) for d, a, b in spans]
    assert alone == [[docs["a"][2:12], docs["b"][60:122]]]  # 'e naïve ca', half a long word


def test_other_tokenizers_encode_every_span(minilm):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    rng = np.random.default_rng(12)
    docs = _docs(rng, 6)
    bpe.train_from_iterator(docs.values(), trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    spans = _spans(rng, docs, 300)
    assert not by_words(bpe) and special_tokens(bpe) == 0
    got = span_piece_counts(bpe, docs.__getitem__, *zip(*spans))
    assert got.tolist() == [len(bpe.encode(docs[d][a:b]).ids) for d, a, b in spans]
    assert encode_counts(minilm, ["", "a b"]) == [2, 4]
