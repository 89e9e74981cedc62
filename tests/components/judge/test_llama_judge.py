"""The `llama_cpp` judge backend on the bundled SmolLM2 GGUF, in this process: the JSON
schema is enforced by a grammar (every reply parses), decoding is greedy (the same prompt
gives the same reply), and a prompt too long for the window is an unusable reply."""

from __future__ import annotations

import pytest

from ablate.components.judge.backends import LlamaJudge
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.prompts import load_prompts
from ablate.components.judge.tasks import Ask, ask_many, parse

pytestmark = pytest.mark.slow

CONTEXT = ("[1] The Normans were the people who in the 10th and 11th centuries gave their "
           "name to Normandy, a region in France.")
ASKS = [Ask("claims", "en", {"question": "Where is Normandy?", "answer": "Normandy is in France"}),
        Ask("support", "en", {"question": "Where is Normandy?", "statement": "Normandy is in France.",
                              "context": CONTEXT}),
        Ask("relevance", "zh", {"question": "诺曼底在哪里？", "answer": "法国"}),
        Ask("usefulness", "en", {"question": "Where is Normandy?", "reference": "France",
                                 "passage": CONTEXT[4:]})]


def test_grammar_constrained_replies_parse_and_repeat():
    judge = LlamaJudge(JudgeConfig(max_claims=2))
    prompts = load_prompts()
    first = ask_many(judge, prompts, ASKS, 2, 96)
    assert all(v.ok for v in first[1:]), [v.failure for v in first]
    assert all(v.attempts == 1 for v in first[1:])  # the grammar gives JSON the first time
    assert first[1].value in ("yes", "no") and first[2].value in ("yes", "partly", "no")
    assert first[3].value in ("yes", "no")
    # claims: always valid JSON, but SmolLM2 tends to copy the prompt's example claim;
    # then the reply fails the restatement check (a judge failure), never the parser
    claims = first[0]
    assert (claims.ok and 1 <= len(claims.value) <= 2) or (
        "does not restate the answer" in claims.failure and "JSON" not in claims.failure)
    again = ask_many(judge, prompts, ASKS, 2, 96)  # no cache: asked again, same replies
    assert [(v.value, v.failure) for v in again] == [(v.value, v.failure) for v in first]


def test_prompt_longer_than_the_window_is_a_judge_failure():
    judge = LlamaJudge(JudgeConfig())
    huge = Ask("support", "en", {"question": "q", "statement": "s",
                                 "context": "[1] " + "word " * 6000})
    [v] = ask_many(judge, load_prompts(), [huge], 2, 16)
    assert v.failure is not None and "window" in v.failure and v.error is None
    assert parse("support", "", 2)[1] == "empty reply"
