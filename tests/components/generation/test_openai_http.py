"""The OpenAI-compatible client against an in-process fake transport (no network)."""

import json
import threading
import time

import httpx
import pytest

from ablate.components.contract.config import GeneratorConfig, PromptConfig
from ablate.components.contract.errors import InputError
from ablate.components.generation.cache import GenerationCache
from ablate.components.generation.openai_http import OpenAIGenerator

KEY = "sk-test-SECRET-123"


def _ok(text="Paris", prompt_tokens=11, completion_tokens=2):
    return httpx.Response(200, json={
        "choices": [{"message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}})


def _gen(handler, monkeypatch, sleeps=None, **cfg):
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    c = GeneratorConfig(name="openai", base_url="http://llm.test/v1", model="m1",
                        api_key_env="TEST_LLM_KEY", **cfg)
    sleeps = [] if sleeps is None else sleeps
    return OpenAIGenerator(c, PromptConfig(), transport=httpx.MockTransport(handler),
                           sleep=sleeps.append)


def test_request_shape_and_answer(monkeypatch, normans_ctx, question):
    seen = []

    def handler(request):
        seen.append(request)
        return _ok("Answer: France\nextra")

    (a,) = _gen(handler, monkeypatch, max_new_tokens=7, seed=3).generate_many(
        [(question("q", "Where is Normandy?"), normans_ctx)])
    assert a == type(a)("France", refused=False, tokens_in=11, tokens_out=2,
                        latency_s=a.latency_s)
    (r,) = seen
    assert str(r.url) == "http://llm.test/v1/chat/completions"
    assert r.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(r.content)
    assert body["model"] == "m1" and body["max_tokens"] == 7 and body["seed"] == 3
    assert body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "[1] The Normans" in body["messages"][1]["content"]


def test_refusal_detected(monkeypatch, normans_ctx, question):
    (a,) = _gen(lambda r: _ok("I don't know."), monkeypatch).generate_many(
        [(question("q", "Who?"), normans_ctx)])
    assert a.refused


def test_retries_with_exponential_backoff_then_succeeds(monkeypatch, normans_ctx, question):
    replies = iter([httpx.Response(503), httpx.Response(429), _ok()])
    sleeps = []
    (a,) = _gen(lambda r: next(replies), monkeypatch, sleeps).generate_many(
        [(question("q", "Where?"), normans_ctx)])
    assert a.text == "Paris" and a.error is None
    assert sleeps == [0.5, 1.0]


def test_retry_after_header_is_honoured(monkeypatch, normans_ctx, question):
    replies = iter([httpx.Response(429, headers={"Retry-After": "4"}), _ok()])
    sleeps = []
    _gen(lambda r: next(replies), monkeypatch, sleeps).generate_many(
        [(question("q", "Where?"), normans_ctx)])
    assert sleeps == [4.0]


def test_timeouts_are_retried(monkeypatch, normans_ctx, question):
    calls = []

    def handler(request):
        calls.append(1)
        if len(calls) < 3:
            raise httpx.ReadTimeout("slow", request=request)
        return _ok()

    (a,) = _gen(handler, monkeypatch).generate_many([(question("q", "Where?"), normans_ctx)])
    assert a.text == "Paris" and len(calls) == 3


def test_exhausted_retries_give_uncached_error_answer(tmp_path, monkeypatch, normans_ctx,
                                                      question):
    sleeps = []
    gen = _gen(lambda r: httpx.Response(500), monkeypatch, sleeps, max_retries=2)
    cache = GenerationCache(tmp_path)
    (a,) = gen.generate_many([(question("q", "Where?"), normans_ctx)], cache)
    assert a.error == "HTTP 500 after 3 attempts" and a.refused and a.text == ""
    assert sleeps == [0.5, 1.0]
    assert not list(tmp_path.rglob("*.json"))


def test_auth_error_stops_without_leaking_key(monkeypatch, normans_ctx, question):
    gen = _gen(lambda r: httpx.Response(401, json={"error": f"bad key {KEY}"}), monkeypatch)
    with pytest.raises(InputError) as e:
        gen.generate_many([(question("q", "Where?"), normans_ctx)])
    assert "401" in str(e.value) and KEY not in str(e.value)


def test_key_never_in_identity_repr_or_answers(monkeypatch, normans_ctx, question):
    gen = _gen(lambda r: httpx.Response(502), monkeypatch, max_retries=0)
    (a,) = gen.generate_many([(question("q", "Where?"), normans_ctx)])
    for text in (gen.cache_identity, repr(gen), repr(a), json.dumps(vars(gen.cfg))):
        assert KEY not in text


def test_missing_key_variable_or_url_is_input_error(monkeypatch):
    monkeypatch.delenv("NOPE_KEY", raising=False)
    with pytest.raises(InputError) as e:
        OpenAIGenerator(GeneratorConfig(name="openai", base_url="http://x/v1", model="m",
                                        api_key_env="NOPE_KEY"), PromptConfig())
    assert e.value.field == "generator.api_key_env" and "NOPE_KEY" in str(e.value)
    with pytest.raises(InputError) as e:
        OpenAIGenerator(GeneratorConfig(name="openai", model="m"), PromptConfig())
    assert e.value.field == "generator.base_url"


def test_concurrency_limit_holds_across_threads(monkeypatch, normans_ctx, question):
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def handler(request):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        user = json.loads(request.content)["messages"][1]["content"]
        return _ok(user.split("Question: ")[1].split("\n")[0])  # echo the question

    gen = _gen(handler, monkeypatch, concurrency=2)
    batches = [[(question(f"{t}-{i}", f"Question {t} {i}?"), normans_ctx) for i in range(4)]
               for t in range(2)]
    results = {}
    threads = [threading.Thread(target=lambda t=t: results.__setitem__(
        t, gen.generate_many(batches[t]))) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert state["max"] <= 2
    for t in range(2):  # order kept within each call
        assert [a.text for a in results[t]] == [f"Question {t} {i}?" for i in range(4)]
