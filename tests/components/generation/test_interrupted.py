"""An interrupted generation loses at most the batch it was in (issue 58.7): every answer is
put in the generation cache as soon as it is finished, not when the whole call returns, so
the rerun asks the generator only for the prompts it had not answered, and gets the answers
an uninterrupted run gives. One test per way answers are produced: the base loop (one
prompt at a time: extractive, llama_cpp, plugins), the torch backend's batches (the real
batching code of torch_gguf with a fake model and tokenizer) and the HTTP client."""

from __future__ import annotations

import threading

import httpx
import pytest

from ablate.components.contract.config import GeneratorConfig, PromptConfig
from ablate.components.contract.records import Answer
from ablate.components.generation.base import BaseGenerator
from ablate.components.generation.cache import GenerationCache


class Interrupted(BaseException):
    """Stands for Ctrl-C (KeyboardInterrupt) or any exception out of the generator."""


def _items(question, normans_ctx, n=6):
    return [(question(f"q{i}", f"question number {i}?" + " longer" * (i % 3)), normans_ctx)
            for i in range(n)]


class Echo(BaseGenerator):
    """Echoes the question; raises Interrupted on call number `stop_at` (1-based)."""

    def __init__(self, stop_at=None):
        super().__init__(GeneratorConfig(), PromptConfig())
        self.calls, self.stop_at = [], stop_at

    @property
    def cache_identity(self):
        return "fake/echo"

    def _generate_one(self, q, context, system, user):
        if len(self.calls) + 1 == self.stop_at:
            raise Interrupted
        self.calls.append(q.qid)
        return Answer(f"ans {q.question}", refused=False, tokens_in=len(user), tokens_out=2)


def _texts(answers):
    return [(a.text, a.refused, a.tokens_in, a.tokens_out, a.error, a.citations) for a in answers]


def test_base_loop_keeps_the_answers_finished_before_an_interruption(tmp_path, question,
                                                                     normans_ctx):
    items = _items(question, normans_ctx)
    first = Echo(stop_at=4)
    with pytest.raises(Interrupted):
        first.generate_many(items, GenerationCache(tmp_path))
    assert first.calls == ["q0", "q1", "q2"]
    again = Echo()
    out = again.generate_many(items, GenerationCache(tmp_path))
    assert again.calls == ["q3", "q4", "q5"]  # only what the first run had not finished
    assert [a.cached for a in out] == [True] * 3 + [False] * 3
    assert _texts(out) == _texts(Echo().generate_many(items))  # as an uninterrupted run's


# --- the torch backend's batches: torch_gguf.chat_many with a fake model and tokenizer ---

class _Tok:
    """Token ids are character codes; 0 ends a turn."""

    eos_token_id = 0

    def apply_chat_template(self, messages, **_):
        return {"input_ids": [ord(c) for m in messages for c in m["content"]]}

    def decode(self, ids, **_):
        return "".join(chr(i) for i in ids if i)


@pytest.fixture
def fake_torch(monkeypatch):
    """The bundled model file's generator decoding through torch_gguf's batching with a
    fake greedy step: a row's reply is made from its own prompt only, whatever else is in
    its batch. `state["stop_at"]`: the batch (1-based) that raises Interrupted;
    `state["batches"]`: the prompts (token ids) of each batch decoded."""
    pytest.importorskip("torch")
    from ablate.components.generation import torch_gguf, torch_greedy
    state = {"stop_at": None, "batches": []}

    def greedy(model, prompts, eos, max_new_tokens, stop=None, rows=None):
        if len(state["batches"]) + 1 == state["stop_at"]:
            raise Interrupted
        state["batches"].append([tuple(p) for p in prompts])
        return [[ord(c) for c in f"reply {sum(p)}"] + [eos] for p in prompts]

    monkeypatch.setattr(torch_gguf, "load", lambda path: (object(), _Tok(), threading.Lock()))
    monkeypatch.setattr(torch_greedy, "greedy", greedy)
    return state


def _smollm2(**kw):
    from ablate.components.generation import make_generator
    return make_generator(GeneratorConfig(name="smollm2", backend="torch", max_new_tokens=16,
                                          **kw), PromptConfig())


@pytest.mark.parametrize("name", ["smollm2", "closed_book"])
def test_torch_batches_finished_before_an_interruption_are_kept(tmp_path, question, normans_ctx,
                                                                fake_torch, name):
    from ablate.components.generation import make_generator
    items = _items(question, normans_ctx, n=7)
    gen = make_generator(GeneratorConfig(name=name, backend="torch", max_new_tokens=16,
                                         batch_size=2), PromptConfig())
    fake_torch["stop_at"] = 3  # two batches of two answered, the third interrupted
    with pytest.raises(Interrupted):
        gen.generate_many(items, GenerationCache(tmp_path))
    assert [len(b) for b in fake_torch["batches"]] == [2, 2]
    kept = fake_torch["batches"]
    fake_torch.update(stop_at=None, batches=[])
    out = gen.generate_many(items, GenerationCache(tmp_path))
    resumed = fake_torch["batches"]
    assert sum(map(len, resumed)) == 3  # only the three not finished
    assert sum(a.cached for a in out) == 4
    fake_torch["batches"] = []
    assert _texts(out) == _texts(gen.generate_many(items))  # as an uninterrupted run's
    # and from the same batches: the finished ones are the first of the order by prompt
    # length, so the rest of that order is what is left, batched as it would have been
    assert kept + resumed == fake_torch["batches"]


# --- the HTTP client: each answer kept as its response arrives, whatever the concurrency ---

def _openai(monkeypatch, handler, concurrency):
    from ablate.components.generation.openai_http import OpenAIGenerator
    monkeypatch.setenv("TEST_LLM_KEY", "k")
    cfg = GeneratorConfig(name="openai", base_url="http://llm.test/v1", model="m1",
                          api_key_env="TEST_LLM_KEY", concurrency=concurrency, max_retries=0)
    return OpenAIGenerator(cfg, PromptConfig(), transport=httpx.MockTransport(handler),
                           sleep=lambda s: None)


@pytest.mark.parametrize("concurrency", [1, 3])
def test_http_answers_paid_for_are_kept_when_a_request_fails_hard(tmp_path, monkeypatch,
                                                                  question, normans_ctx,
                                                                  concurrency):
    import json
    items = _items(question, normans_ctx)
    asked, lock = [], threading.Lock()

    def handler(request, fail="question number 3?"):
        user = json.loads(request.content)["messages"][1]["content"]
        if fail and fail in user:
            raise Interrupted
        with lock:
            asked.append(user)
        return httpx.Response(200, json={"choices": [{"message": {"content": user[-20:]}}],
                                         "usage": {"prompt_tokens": 5, "completion_tokens": 2}})

    with pytest.raises(Interrupted):
        _openai(monkeypatch, handler, concurrency).generate_many(items, GenerationCache(tmp_path))
    paid = len(asked)
    assert paid >= 3
    asked.clear()
    out = _openai(monkeypatch, lambda r: handler(r, fail=None), concurrency).generate_many(
        items, GenerationCache(tmp_path))
    assert len(asked) == len(items) - paid  # nothing paid for is asked again
    assert sum(a.cached for a in out) == paid
