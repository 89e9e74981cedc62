import re

import pytest

from ablate.components.contract.records import Chunk, Document
from ablate.components.text.context import pack_context
from ablate.components.text.tokenizer import get_tokenizer


class WordTokenizer:
    """Fake: one token per whitespace-separated word."""

    def offsets(self, text):
        return [m.span() for m in re.finditer(r"\S+", text)]

    def count(self, text):
        return len(self.offsets(text))


DOC = Document("d", " ".join(f"w{i}" for i in range(40)))  # 40 one-token words
OTHER = Document("e", " ".join(f"v{i}" for i in range(40)))
DOCS = {"d": DOC, "e": OTHER}


def _chunk(doc: Document, first: int, last: int) -> Chunk:
    """Chunk of words first..last-1."""
    offs = WordTokenizer().offsets(doc.text)
    s, e = offs[first][0], offs[last - 1][1]
    return Chunk(f"{doc.doc_id}:{s}-{e}", doc.doc_id, s, e, doc.text[s:e], last - first)


A, B, C = _chunk(DOC, 0, 10), _chunk(DOC, 5, 15), _chunk(DOC, 15, 25)  # A/B overlap, B/C adjacent
X, Y = _chunk(OTHER, 0, 8), _chunk(OTHER, 20, 26)
BY_ID = {c.chunk_id: c for c in (A, B, C, X, Y)}


def _pack(order, budget, policy="skip", depth=10, tok=None):
    ranking = [(c.chunk_id, 1.0 / (i + 1)) for i, c in enumerate(order)]
    return pack_context(ranking, BY_ID, DOCS, budget, policy, tok or WordTokenizer(), depth)


def test_overlapping_and_adjacent_chunks_merge_and_count_once():
    ctx = _pack([A, B, C], budget=100)
    assert ctx.chunk_ids == (A.chunk_id, B.chunk_id, C.chunk_id)
    (p,) = ctx.passages
    assert (p.doc_id, p.start, p.end) == ("d", A.start, C.end) and p.text == DOC.text[A.start:C.end]
    assert ctx.n_tokens == 25 and ctx.budget == 100 and ctx.cut_chunk_ids == ()


def test_overlap_costs_only_new_tokens():
    ctx = _pack([A, B], budget=15)  # 10 + 10 separately, 15 merged
    assert ctx.chunk_ids == (A.chunk_id, B.chunk_id) and ctx.n_tokens == 15


def test_passages_follow_rank_order_of_their_best_chunk():
    ctx = _pack([X, C, A], budget=100)  # A and C are not adjacent (B is missing)
    assert [(p.doc_id, p.start) for p in ctx.passages] == [("e", X.start), ("d", C.start),
                                                           ("d", A.start)]
    ctx2 = _pack([A, X, C, B], budget=100)  # B joins A and C into one passage, ranked as A
    assert [(p.doc_id, p.start, p.end) for p in ctx2.passages] == [("d", A.start, C.end),
                                                                  ("e", X.start, X.end)]


def test_policy_skip_tries_next():
    ctx = _pack([A, X, Y], budget=16, policy="skip")
    assert ctx.chunk_ids == (A.chunk_id, Y.chunk_id) and ctx.cut_chunk_ids == (X.chunk_id,)
    assert ctx.n_tokens == 16


def test_policy_stop_cuts_the_rest():
    ctx = _pack([A, X, Y], budget=15, policy="stop")
    assert ctx.chunk_ids == (A.chunk_id,) and ctx.cut_chunk_ids == (X.chunk_id, Y.chunk_id)
    assert ctx.n_tokens == 10


def test_policy_truncate_keeps_a_token_prefix():
    ctx = _pack([A, X, Y], budget=15, policy="truncate")
    assert ctx.chunk_ids == (A.chunk_id, X.chunk_id) and ctx.cut_chunk_ids == (Y.chunk_id,)
    assert ctx.n_tokens == 15
    assert ctx.passages[1].text == "v0 v1 v2 v3 v4" and ctx.passages[1].start == X.start
    full = _pack([A, X], budget=10, policy="truncate")
    assert full.chunk_ids == (A.chunk_id,) and full.cut_chunk_ids == (X.chunk_id,)


def test_depth_limits_considered_chunks_and_repeats_count_once():
    ctx = _pack([A, A, X, Y], budget=100, depth=2)
    assert ctx.chunk_ids == (A.chunk_id, X.chunk_id) and ctx.cut_chunk_ids == ()


def test_unknown_policy_and_chunk():
    with pytest.raises(ValueError, match="policy"):
        _pack([A], 10, policy="squeeze")
    with pytest.raises(ValueError, match="not among"):
        pack_context([("zz", 1.0)], BY_ID, DOCS, 10, "skip", WordTokenizer(), 5)


def test_real_tokenizer_budget_is_never_exceeded():
    from dataclasses import replace
    tok = get_tokenizer()
    real = {cid: replace(c, n_tokens=tok.count(c.text)) for cid, c in BY_ID.items()}
    ranking = [(c.chunk_id, 1.0) for c in (B, X, A, Y, C)]
    for budget in (3, 7, 12, 30):
        for policy in ("skip", "stop", "truncate"):
            ctx = pack_context(ranking, real, DOCS, budget, policy, tok, 10)
            assert ctx.n_tokens == sum(tok.count(p.text) for p in ctx.passages) <= budget
            for p in ctx.passages:
                assert p.text == DOCS[p.doc_id].text[p.start:p.end]
