"""Strict parsing, one retry, judge failures, the verdict cache (scripted fake judge)."""

from __future__ import annotations

import json

import pytest

from ablate.components.judge.backends import Completion
from ablate.components.judge.prompts import load_prompts
from ablate.components.judge.tasks import Ask, JudgeCache, ask_many, parse, schema
from tests.components.judge.fakes import ScriptedJudge

PROMPTS = load_prompts("v1")
SUPPORT = Ask("support", "en", {"question": "Where is Paris?", "statement": "Paris is in France.",
                                "context": "[1] Paris is the capital of France."})


@pytest.mark.parametrize("task, reply, value", [
    ("support", '{"verdict": "yes"}', "yes"),
    ("support", ' \n{"verdict":"no"}\n', "no"),
    ("relevance", '{"verdict": "partly"}', "partly"),
    ("claims", '{"claims": [" Paris is in France. ", "It is big."]}', ["Paris is in France.", "It is big."]),
])
def test_parse_accepts_exactly_the_schema(task, reply, value):
    assert parse(task, reply, max_claims=3) == (value, None)


@pytest.mark.parametrize("task, reply, problem", [
    ("support", "", "empty reply"),
    ("support", "yes", "not one JSON object"),
    ("support", 'Sure! {"verdict": "yes"}', "not one JSON object"),
    ("support", '{"verdict": "yes"} thanks', "not one JSON object"),
    ("support", '{"verdict": "yes", "reason": "x"}', "expected exactly the key 'verdict'"),
    ("support", '{"verdict": "yes", "verdict": "no"}', "a key repeats"),
    ("support", '{"verdict": "partly"}', "verdict must be one of yes, no"),
    ("support", '{"verdict": true}', "verdict must be one of"),
    ("relevance", '["yes"]', "expected exactly the key 'verdict', got list"),
    ("claims", '{"claims": []}', "claims must be 1 to 3"),
    ("claims", '{"claims": ["a", "  "]}', "claims must be 1 to 3"),
    ("claims", '{"claims": ["a", "b", "c", "d"]}', "claims must be 1 to 3"),
    ("claims", '{"claims": "a"}', "claims must be a list of strings"),
])
def test_parse_rejects_anything_else(task, reply, problem):
    value, why = parse(task, reply, max_claims=3)
    assert value is None and problem in why


def test_schema_matches_parse():
    s = schema("relevance", 4)
    assert s["properties"]["verdict"]["enum"] == ["yes", "partly", "no"]
    assert s["additionalProperties"] is False and s["required"] == ["verdict"]
    assert schema("claims", 4)["properties"]["claims"]["maxItems"] == 4


def test_unusable_reply_is_asked_again_once_then_a_failure(tmp_path):
    judge = ScriptedJudge(lambda r: "I think it is supported.")
    cache = JudgeCache(tmp_path)
    [v] = ask_many(judge, PROMPTS, [SUPPORT], 3, 40, cache)
    assert not v.ok and v.value is None and v.attempts == 2 and v.error is None
    assert "not one JSON object" in v.failure and "after one retry" in v.failure
    first, second = judge.calls
    assert second.max_tokens == 2 * first.max_tokens == 80
    assert second.messages[:2] == first.messages
    assert second.messages[2] == ("assistant", "I think it is supported.")
    assert second.messages[3][0] == "user" and "could not be used" in second.messages[3][1]
    # greedy decoding repeats a failure: it is cached, so a re-run asks nothing
    again = ask_many(judge, PROMPTS, [SUPPORT], 3, 40, cache)
    assert len(judge.calls) == 2 and again[0].cached and again[0].failure == v.failure
    assert cache.counters == {"asked": 1, "reused": 1}


def test_retry_that_succeeds_is_a_verdict():
    replies = iter(['{"verdict": "maybe"}', '{"verdict": "no"}'])
    judge = ScriptedJudge(lambda r: next(replies))
    [v] = ask_many(judge, PROMPTS, [SUPPORT], 3, 40)
    assert v.ok and v.value == "no" and v.attempts == 2 and v.tokens_in == 20


def test_truncated_reply_is_unusable_even_when_parseable():
    judge = ScriptedJudge(lambda r: Completion('{"verdict": "yes"}', truncated=True))
    [v] = ask_many(judge, PROMPTS, [SUPPORT], 3, 40)
    assert v.failure is not None and "cut off" in v.failure


def test_transport_error_is_neither_verdict_nor_cached(tmp_path):
    judge = ScriptedJudge(lambda r: Completion("", error="HTTP 503 after 4 attempts"))
    cache = JudgeCache(tmp_path)
    [v] = ask_many(judge, PROMPTS, [SUPPORT], 3, 40, cache)
    assert v.error == "HTTP 503 after 4 attempts" and v.failure is None and len(judge.calls) == 1
    assert not list(tmp_path.rglob("*.json"))  # asked again next time
    judge.script = lambda r: '{"verdict": "yes"}'
    [v] = ask_many(judge, PROMPTS, [SUPPORT], 3, 40, cache)
    assert v.ok and not v.cached and len(judge.calls) == 2


def test_identical_prompts_are_asked_once_and_cached(tmp_path):
    judge = ScriptedJudge(lambda r: json.dumps({"verdict": "yes"}))
    cache = JudgeCache(tmp_path)
    other = Ask("support", "en", dict(SUPPORT.values, statement="Paris is in Spain."))
    out = ask_many(judge, PROMPTS, [SUPPORT, other, SUPPORT], 3, 40, cache)
    assert [v.value for v in out] == ["yes"] * 3 and len(judge.calls) == 2
    assert [v.cached for v in out] == [False, False, True]
    out2 = ask_many(judge, PROMPTS, [other, SUPPORT], 3, 40, cache)
    assert all(v.cached for v in out2) and len(judge.calls) == 2
    # another judge identity never sees these verdicts
    other_judge = ScriptedJudge(lambda r: json.dumps({"verdict": "no"}), identity="scripted/2")
    assert ask_many(other_judge, PROMPTS, [SUPPORT], 3, 40, cache)[0].value == "no"


def test_cache_entry_with_an_error_is_a_miss(tmp_path):
    cache = JudgeCache(tmp_path)
    key = JudgeCache.key("x")
    (tmp_path / key[:2]).mkdir()
    (tmp_path / key[:2] / f"{key}.json").write_text(json.dumps({"task": "support", "error": "boom"}))
    assert cache.get(key) is None


def test_claims_must_restate_the_answer():
    ask = Ask("claims", "en", {"question": "When was the Eiffel Tower built?", "answer": "in 1889"})
    copied = json.dumps({"claims": ["The Eiffel Tower is in Paris."]})  # the prompt's example
    judge = ScriptedJudge(lambda r: copied)
    [v] = ask_many(judge, PROMPTS, [ask], 3, 40)
    assert v.failure is not None and "does not restate the answer" in v.failure and v.attempts == 2
    good = json.dumps({"claims": ["The tower was built in 1889.", "The tower was built in 1889."]})
    [v] = ask_many(ScriptedJudge(lambda r: good), PROMPTS, [ask], 3, 40)
    assert v.ok and v.value == ["The tower was built in 1889."]  # repeats merged
    zh = Ask("claims", "zh", {"question": "铁塔何时建成？", "answer": "1889年"})
    [v] = ask_many(ScriptedJudge(lambda r: json.dumps({"claims": ["铁塔建成于1889年"]})), PROMPTS, [zh], 3, 40)
    assert v.ok
