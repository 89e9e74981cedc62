"""The `torch` judge backend: the bundled SmolLM2 decoded by PyTorch in batches, each
request's JSON schema a mask of its own (components/judge/json_mask.py, no llama.cpp).
Verdicts do not depend on which requests share a batch (batch sizes 1, 2 and all give the
same replies, English and Chinese), every reply follows its schema, the end of the JSON
object ends the reply, and its verdicts are keyed apart from the llama_cpp judge's. The llama_cpp judge's threads follow the
generator's adaptive rule."""

from __future__ import annotations

import json

import pytest
import torch

from ablate.components.generation import llama_local, torch_gguf
from ablate.components.judge.backends import LlamaJudge, make_judge
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.json_mask import SchemaMask, vocab
from ablate.components.judge.keys import key_input
from ablate.components.judge.prompts import load_prompts
from ablate.components.judge.tasks import Ask, ask_many, request_of, schema
from ablate.components.judge.torch_judge import TorchJudge
from tests.cpu_fakes import others_use

CONTEXT = ("[1] The Normans were the people who in the 10th and 11th centuries gave their "
           "name to Normandy, a region in France.")
ZH_CONTEXT = "[1] 诺曼底是法国北部的一个地区，以十世纪的诺曼人命名。"
ASKS = [Ask("claims", "en", {"question": "Where is Normandy?", "answer": "Normandy is in France"}),
        Ask("support", "en", {"question": "Where is Normandy?", "statement": "Normandy is in France.",
                              "context": CONTEXT}),
        Ask("relevance", "zh", {"question": "诺曼底在哪里？", "answer": "法国"}),
        Ask("support", "zh", {"question": "诺曼底在哪里？", "statement": "诺曼底在法国。",
                              "context": ZH_CONTEXT}),
        Ask("usefulness", "en", {"question": "Where is Normandy?", "reference": "France",
                                 "passage": CONTEXT[4:]})]


def _judge(batch_size: int) -> TorchJudge:
    judge = make_judge(JudgeConfig(backend="torch", max_claims=2, batch_size=batch_size))
    assert isinstance(judge, TorchJudge)
    return judge


@pytest.mark.slow
def test_verdicts_do_not_depend_on_the_batch():
    prompts = load_prompts()
    requests = [request_of(prompts, a, 2, 48) for a in ASKS]
    replies = {size: _judge(size).complete_many(requests) for size in (1, 2, len(ASKS))}
    assert replies[1] == replies[2] == replies[len(ASKS)]
    for r, c in zip(requests, replies[1], strict=True):
        assert not c.truncated and set(json.loads(c.content)) == set(r.schema["properties"])
    verdicts = ask_many(_judge(3), prompts, ASKS, 2, 48)
    assert all(v.error is None for v in verdicts)
    assert [v.value for v in verdicts[1:]] == [json.loads(c.content)["verdict"]
                                               for c in replies[1][1:]]


def test_the_vocabulary_bytes_are_the_tokenizers():
    """Each token's bytes (GPT-2's byte map read back from the GGUF file) make the text the
    tokenizer encoded, Chinese and JSON included; control tokens are never allowed."""
    judge = _judge(1)
    tok = torch_gguf.load(judge.path)[1]
    words = vocab(judge.path)
    for text in ['{"claims": ["诺曼底在法国。"]}', " Normandy's\tname\n", "É café – 10%"]:
        ids = tok.encode(text, add_special_tokens=False)
        assert b"".join(words.tokens[i] or b"?" for i in ids) == text.encode("utf-8")
    assert words.tokens[tok.eos_token_id] is None and words.size == len(tok)


def test_each_row_has_its_own_mask_and_ends_with_its_object():
    """Two masks over one vocabulary: each keeps the best token its grammar allows (a
    token the grammar forbids loses even when the model prefers it); advancing one leaves
    the other at its start; a complete object ends at the end-of-turn token, also when
    the model prefers another end-of-generation token."""
    judge = _judge(2)
    tok = torch_gguf.load(judge.path)[1]
    eos = tok.eos_token_id
    [paris] = tok.encode(" Paris", add_special_tokens=False)
    a = SchemaMask(judge.path, schema("support", 2), eos)
    b = SchemaMask(judge.path, schema("relevance", 2), eos)
    for t in tok.encode('{"verdict": "no"}', add_special_tokens=False):
        scores = torch.zeros(a.n_vocab)
        scores[t], scores[paris] = 1.0, 5.0
        a.mask(scores)
        assert int(scores.argmax()) == t and torch.isfinite(scores).sum() == 1
        a.accept(t)
    scores = torch.zeros(a.n_vocab)
    scores[paris], scores[0] = 5.0, 4.0  # 0: <|endoftext|>, an end-of-generation token
    a.mask(scores)
    assert int(scores.argmax()) == eos and torch.isfinite(scores).sum() == 1
    fresh = torch.randn(b.n_vocab, generator=torch.Generator().manual_seed(0))
    fresh[paris] = 50.0
    b.mask(fresh)  # b has not moved: only the object's opening may come
    assert tok.decode([int(fresh.argmax())]).startswith("{")
    ties = torch.zeros(b.n_vocab)  # every token ties: the lowest id the schema allows
    b.mask(ties)
    assert int(ties.argmax()) == min(i for i in range(b.n_vocab)
                                     if (vocab(judge.path).tokens[i] or b"").startswith(b"{"))


def test_row_masks_skip_ended_rows():
    """A row that ended (its end-of-turn token) is padding: its grammar is not advanced."""
    seen: list[tuple[str, int]] = []

    class Row:
        def __init__(self, name: str) -> None:
            self.name = name

        def accept(self, token: int) -> None:
            seen.append((self.name, token))

        def mask(self, scores: torch.Tensor) -> None:
            seen.append((self.name, -1))

    masks = torch_gguf._RowMasks([Row("a"), Row("b")], width=3, eos=2)
    masks(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 5))
    masks(torch.tensor([[0, 0, 0, 7], [0, 0, 0, 2]]), torch.zeros(2, 5))
    masks(torch.tensor([[0, 0, 0, 7, 8], [0, 0, 0, 2, 2]]), torch.zeros(2, 5))
    assert seen == [("a", -1), ("b", -1), ("a", 7), ("a", -1), ("a", 8), ("a", -1)]


def test_prompt_longer_than_the_window_gets_a_note_and_the_others_are_answered():
    prompts = load_prompts()
    huge = Ask("support", "en", {"question": "q", "statement": "s", "context": "[1] " + "word " * 6000})
    judge = _judge(2)
    out = judge.complete_many([request_of(prompts, huge, 2, 16), request_of(prompts, ASKS[1], 2, 16)])
    assert out[0].content == "" and "window" in (out[0].note or "")
    assert json.loads(out[1].content)["verdict"] in ("yes", "no")


def test_torch_verdicts_are_keyed_apart_from_llama_cpp_ones():
    torch_cfg = JudgeConfig(backend="torch")
    llama_cfg = JudgeConfig(backend="llama_cpp")
    assert TorchJudge(torch_cfg).cache_identity != LlamaJudge(llama_cfg).cache_identity
    assert key_input(torch_cfg, "p") != key_input(llama_cfg, "p")
    # the batch size is a speed setting: not keyed
    assert key_input(JudgeConfig(backend="torch", batch_size=1), "p") == key_input(torch_cfg, "p")


def test_llama_threads_follow_the_idle_cores(monkeypatch):
    monkeypatch.delenv("ABLATE_LLAMA_THREADS", raising=False)
    monkeypatch.delenv("ABLATE_TORCH_THREADS", raising=False)
    llm, lock = llama_local.load_llama(LlamaJudge(JudgeConfig()).path)
    monkeypatch.setattr(llama_local.os, "sched_getaffinity", lambda _: {0, 1}, raising=False)
    others_use(monkeypatch, 1.9)
    with lock:
        assert llama_local.adapt_threads(llm) == 1
        others_use(monkeypatch, 0.0)
        assert llama_local.adapt_threads(llm) == min(2, llama_local.N_THREADS)
