"""A failed generation is never reused: the stage holding it (and every stage computed
from it) is stored incomplete, and the next run retries only the failed questions
(the per-prompt cache serves the rest)."""

from __future__ import annotations

import pytest

from ablate.components.contract.records import Answer
from tests.specs import write_experiment

CALLS: list[str] = []
FAIL_ONCE: set[str] = set()


@pytest.fixture(scope="module")
def flaky():
    from ablate.components.generation import GENERATORS, BaseGenerator
    from tests.conftest import registries_restored
    with registries_restored():
        yield from _register(GENERATORS, BaseGenerator)


def _register(GENERATORS, BaseGenerator):
    if "flaky_for_tests" not in GENERATORS:
        @GENERATORS.register("flaky_for_tests", reads=("prompt",), reads_context=True)
        class Flaky(BaseGenerator):
            @property
            def cache_identity(self) -> str:
                return "flaky/v1"

            def _generate_one(self, question, context, system, user) -> Answer:
                CALLS.append(question.qid)
                if question.qid in FAIL_ONCE:
                    FAIL_ONCE.discard(question.qid)
                    return Answer("", False, error="HTTP 503 after 4 attempts")
                return Answer("Paris", False, 3, 1)
    yield "flaky_for_tests"


def _run(spec, cache):
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.run.stages import run_stage
    ctx = build_context(spec, RunOptions(cache_dir=str(cache)))
    computed = {node.key: run_stage(ctx, node) for node in ctx.plan.nodes.values()}
    return ctx, computed


def test_failed_questions_are_retried_and_nothing_else(flaky, tmp_path):
    spec = write_experiment(tmp_path, "retry", file="e.yaml", tier="full", split="all",
                            baseline={"chunking": {"size": 64, "overlap": 8},
                                      "retrieval": {"paths": ["bm25"], "depth": 5},
                                      "generator": {"name": "flaky_for_tests"}})
    CALLS.clear()
    ctx, computed = _run(spec, tmp_path / "cache")
    qids = [q.qid for q in ctx.questions]
    failing = qids[1]
    # first run: every question generated once; now make one of them fail, in a new cache
    assert sorted(CALLS) == sorted(qids)
    CALLS.clear()
    FAIL_ONCE.add(failing)
    ctx, computed = _run(spec, tmp_path / "cache2")
    keys = ctx.plan.by_variant["baseline"]
    gen = ctx.store.read("generate", keys["generate"])
    assert gen.filter(gen["qid"] == failing)["error"][0] is not None
    assert not ctx.store.has("generate", keys["generate"])
    assert not ctx.store.has("score", keys["score"])  # computed from an incomplete input
    assert ctx.store.has("assemble", keys["assemble"])
    score = ctx.store.read("score", keys["score"])
    row = score.filter(score["qid"] == failing)
    assert row["answer/generation_error"][0] == 1.0 and row["bucket"][0] == "generation_error"
    CALLS.clear()
    ctx, computed = _run(spec, tmp_path / "cache2")
    assert CALLS == [failing]  # only the failed question is generated again
    assert computed[keys["generate"]] and computed[keys["score"]]
    assert not computed[keys["chunk"]] and not computed[keys["assemble"]]
    assert ctx.store.has("generate", keys["generate"]) and ctx.store.has("score", keys["score"])
    score = ctx.store.read("score", keys["score"])
    assert score.filter(score["qid"] == failing)["answer/generation_error"][0] == 0.0
