"""GenerationCache and the cached batch loop of BaseGenerator (with a counting fake)."""

import json

import pytest

from ablate.components.contract.config import GeneratorConfig, PromptConfig
from ablate.components.contract.records import Answer
from ablate.components.generation.base import BaseGenerator
from ablate.components.generation.cache import GenerationCache, cache_key


class CountingGen(BaseGenerator):
    """A fake generator that echoes the question and counts real calls."""

    def __init__(self, cfg=GeneratorConfig(), prompt=PromptConfig(), tag="a", fail=()):
        super().__init__(cfg, prompt)
        self.tag, self.calls, self.fail = tag, [], set(fail)

    @property
    def cache_identity(self):
        return f"fake/{self.tag}"

    def _generate_one(self, q, context, system, user):
        self.calls.append(q.qid)
        if q.qid in self.fail:
            return Answer("", refused=True, error="boom")
        return Answer(f"ans {q.question}", refused=False, tokens_in=len(user), tokens_out=2)


def test_key_depends_on_identity_and_both_messages():
    k = cache_key("id", "sys", "user")
    assert len({k, cache_key("id2", "sys", "user"), cache_key("id", "sys2", "user"),
                cache_key("id", "sys", "user2"), cache_key("ids", "ys", "user")}) == 5
    assert k == cache_key("id", "sys", "user")


def test_roundtrip_atomic_and_counters(tmp_path):
    c = GenerationCache(tmp_path)
    assert c.get("ab" * 32) is None
    a = Answer("Paris", refused=False, tokens_in=3, tokens_out=1, latency_s=0.5)
    c.put("ab" * 32, a)
    got = c.get("ab" * 32)
    assert got == Answer("Paris", refused=False, tokens_in=3, tokens_out=1, latency_s=0.5,
                         cached=True)
    assert c.counters == {"generated": 1, "reused": 1}
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert [p.name for p in files] == ["ab" * 32 + ".json"]  # no temp files left behind
    assert json.loads(files[0].read_text())["text"] == "Paris"


def test_corrupt_entry_is_a_miss(tmp_path):
    c = GenerationCache(tmp_path)
    p = tmp_path / "cd" / ("cd" * 32 + ".json")
    p.parent.mkdir()
    p.write_text("{not json")
    assert c.get("cd" * 32) is None


def test_errors_are_not_cached(tmp_path):
    c = GenerationCache(tmp_path)
    c.put("ef" * 32, Answer("", refused=True, error="timeout"))
    assert c.get("ef" * 32) is None


def test_generate_many_reuses_across_calls_and_instances(tmp_path, normans_ctx, question):
    items = [(question("q1", "one?"), normans_ctx), (question("q2", "two?"), normans_ctx)]
    cache = GenerationCache(tmp_path)
    g1 = CountingGen()
    first = g1.generate_many(items, cache)
    assert g1.calls == ["q1", "q2"] and not any(a.cached for a in first)
    g2 = CountingGen()  # a resumed sweep: new process, same identity
    second = g2.generate_many(list(reversed(items)) + [(question("q3", "three?"), normans_ctx)],
                              GenerationCache(tmp_path))
    assert g2.calls == ["q3"]
    assert [a.text for a in second] == ["ans two?", "ans one?", "ans three?"]
    assert [a.cached for a in second] == [True, True, False]
    assert cache.counters == {"generated": 2, "reused": 0}


def test_other_identity_or_prompt_is_a_miss(tmp_path, normans_ctx, question):
    items = [(question("q1", "one?"), normans_ctx)]
    CountingGen(tag="a").generate_many(items, GenerationCache(tmp_path))
    other = CountingGen(tag="b")
    other.generate_many(items, GenerationCache(tmp_path))
    assert other.calls == ["q1"]
    reworded = CountingGen(tag="a", prompt=PromptConfig(version="v2", refusal="Unknown."))
    reworded.generate_many(items, GenerationCache(tmp_path))
    assert reworded.calls == ["q1"]


def test_identical_prompts_generated_once_order_kept(normans_ctx, question):
    g = CountingGen()
    q = question("q1", "same?")
    out = g.generate_many([(q, normans_ctx), (question("q2", "other?"), normans_ctx),
                           (question("q1b", "same?"), normans_ctx)])
    assert g.calls == ["q1", "q2"]
    assert [a.text for a in out] == ["ans same?", "ans other?", "ans same?"]
    assert [a.cached for a in out] == [False, False, True]


def test_failed_answers_retried_next_time(tmp_path, normans_ctx, question):
    items = [(question("q1", "one?"), normans_ctx), (question("q2", "two?"), normans_ctx)]
    bad = CountingGen(fail={"q2"})
    out = bad.generate_many(items, GenerationCache(tmp_path))
    assert out[1].error == "boom"
    good = CountingGen()
    good.generate_many(items, GenerationCache(tmp_path))
    assert good.calls == ["q2"]


def test_latency_is_measured(normans_ctx, question):
    (a,) = CountingGen().generate_many([(question("q1", "one?"), normans_ctx)])
    assert a.latency_s > 0


def test_empty_input():
    assert CountingGen().generate_many([]) == []


@pytest.mark.parametrize("uses_context", [True, False])
def test_closed_book_generators_never_see_context(normans_ctx, uses_context, question):
    seen = []

    class Spy(CountingGen):
        def _generate_one(self, q, context, system, user):
            seen.append((context, user))
            return super()._generate_one(q, context, system, user)

    Spy.uses_context = uses_context
    Spy().generate_many([(question("q1", "one?"), normans_ctx)])
    ctx, user = seen[0]
    assert (ctx is normans_ctx) is uses_context
    assert ("Normans" in user) is uses_context


def test_an_error_entry_on_disk_is_a_miss(tmp_path):
    """An entry holding an error (by hand, or from an older version) is never served."""
    c = GenerationCache(tmp_path)
    key = "ab" * 32
    path = tmp_path / key[:2] / f"{key}.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"text": "", "refused": True, "error": "timeout"}))
    assert c.get(key) is None
    assert c.counters["reused"] == 0


class _SpyCache(GenerationCache):
    """A cache that serves a stored failure for q1 and records every put."""

    def __init__(self, root):
        super().__init__(root)
        self.puts = []

    def get(self, key):
        if key == self.failed_key:
            return Answer("", refused=True, error="HTTP 503", cached=True)
        return super().get(key)

    def put(self, key, answer):
        self.puts.append(answer)
        super().put(key, answer)


def test_batch_loop_never_serves_or_stores_a_failure(tmp_path, normans_ctx, question):
    from ablate.components.generation.prompt import render_prompt
    items = [(question("q1", "one?"), normans_ctx), (question("q2", "two?"), normans_ctx)]
    cache = _SpyCache(tmp_path)
    gen = CountingGen(fail={"q2"})
    cache.failed_key = cache.key(gen.cache_identity,
                                 *render_prompt(gen.prompt, "one?", normans_ctx))
    out = gen.generate_many(items, cache)
    assert gen.calls == ["q1", "q2"]  # the stored failure of q1 was retried
    assert out[0].error is None and out[0].text == "ans one?"
    assert out[1].error == "boom"
    assert [a.error for a in cache.puts] == [None]  # only the success was handed to the cache
