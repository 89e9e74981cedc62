"""The experiment tokenizer counts Chinese per character, so budgets hold on Chinese text."""

import itertools

import pytest

from ablate.components.contract.config import ChunkingConfig
from ablate.components.contract.records import Document
from ablate.components.text.chunking import chunk_documents
from ablate.components.text.context import pack_context
from ablate.components.text.tokenizer import get_tokenizer

ZH = ("台北101是台灣最高的建築，高度為508公尺。它位於信義區，觀景台在89樓。"
      "向量检索的 recall 怎么提升？可以把 BM25 与稠密向量混合检索。")


def test_one_token_per_chinese_character():
    tok = get_tokenizer()
    assert tok.count("向量检索") == 4
    assert tok.offsets("向量检索") == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert tok.count("知識圖譜。") == 5  # Traditional characters and the full stop too
    text = "用BM25检索"
    pieces = [text[s:e] for s, e in tok.offsets(text)]
    assert pieces[0] == "用" and pieces[-2:] == ["检", "索"] and "".join(pieces) == text


@pytest.mark.parametrize("policy", ["skip", "stop", "truncate"])
@pytest.mark.parametrize("budget", [7, 30, 64])
def test_packing_chinese_never_exceeds_the_budget(policy, budget):
    tok = get_tokenizer()
    docs = [Document(f"d{i}", ZH[i * 7:] + ZH[:i * 7]) for i in range(6)]
    chunks = chunk_documents(docs, ChunkingConfig(size=24, overlap=6), tok)
    by_id = {c.chunk_id: c for c in chunks}
    doc_map = {d.doc_id: d for d in docs}
    order = [c.chunk_id for c in itertools.islice(itertools.cycle(reversed(chunks)), 40)]
    ranking = [(cid, 1.0 / (r + 1)) for r, cid in enumerate(dict.fromkeys(order))]
    ctx = pack_context(ranking, by_id, doc_map, budget, policy, tok, depth=30)
    assert ctx.n_tokens <= budget and (ctx.chunk_ids or budget < 24)
    assert sum(tok.count(p.text) for p in ctx.passages) == ctx.n_tokens
    for p in ctx.passages:
        assert p.text == doc_map[p.doc_id].text[p.start:p.end]
