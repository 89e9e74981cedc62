"""The judge's part of `ablate check`: how many calls judging the plan will make, how many
of their prompts the verdict cache already holds, and their prompt tokens, counted with the
judge model's tokenizer where it is at hand (ablate.components.judge.tokens).

Every judge stage not stored yet is walked question by question and repeat by repeat
with what the store already holds of its inputs: the assembled contexts and the answers
when their stages are stored (then the prompts are known exactly, and looked up in the
verdict cache), marks of estimated size when not (ablate.components.judge.cost says how
each unknown is estimated). The calibration set's items are counted too (known exactly).
What is an estimate is said in the lines.
"""

from __future__ import annotations

import functools
import math
import statistics
from typing import Any

from ablate.components.judge.case import Item
from ablate.components.judge.cost import (
    JudgeCost,
    cached_claims,
    mark,
    placeholder_answer,
    placeholder_context,
)
from ablate.components.judge.tokens import prompt_counter
from ablate.components.text.chunking import chunk_limit
from ablate.flows.run.context import RunContext
from ablate.flows.run.frames import frame_answer_repeats, frame_contexts
from ablate.flows.run.stages import judge_of, judge_prompts_of, questions_of

ASSUMED_CLAIMS = 2.0  # claims per answer when the cache holds no claims verdict yet


def _variant_config(ctx: RunContext, key: str) -> Any:
    """The full config of a variant whose judge stage is `key`."""
    return next(v.config for v in ctx.variants if ctx.plan.by_variant[v.name].get("judge") == key)


def _stored(ctx: RunContext, stage: str, key: str, convert) -> Any:
    """A stored stage result, converted; None when the store does not hold it (looked at
    only: `ablate check` writes nothing)."""
    if not ctx.store.has(stage, key, use=False):
        return None
    return convert(ctx.store.read(stage, key))


def _passages(config: Any) -> tuple[int, int]:
    """(passages, tokens each) a context not assembled yet is estimated at: the budget
    filled with chunks, at most rerank.depth of them."""
    budget = config.context.budget
    size = chunk_limit(config.chunking) or budget  # whole documents: one fills it
    n = max(1, min(config.rerank.depth, math.ceil(budget / size)))
    return n, max(1, budget // n)


def _claims(ctx: RunContext) -> tuple[float, str]:
    """Claims per answer for answers whose claims are not in the cache, and where from."""
    cfg = ctx.spec.judge
    if "faithfulness" not in cfg.metrics or cfg.claims != "judge":
        return ASSUMED_CLAIMS, ""
    found = cached_claims(ctx.store.root / "judgments")
    if found:
        return (statistics.fmean(found),
                f"the mean of {len(found)} claims verdicts in the judge cache")
    return ASSUMED_CLAIMS, ("assumed: no claims verdict in the judge cache yet; at most judge.max_claims "
                            f"{cfg.max_claims}")


def judge_cost_lines(ctx: RunContext) -> list[str]:
    """The lines `ablate check` prints for the judge (none without a `judge:` section)."""
    cfg = ctx.spec.judge
    if cfg is None:
        return []
    nodes = [n for n in ctx.plan.nodes.values() if n.stage == "judge"]
    todo = [n for n in nodes if not ctx.store.has("judge", n.key, use=False)]
    calib = [n for n in ctx.plan.nodes.values() if n.stage == "calibrate"
             and not ctx.store.has("calibrate", n.key, use=False) and ctx.calibration_path]
    stored = len(nodes) - len(todo)
    if not todo and not calib:
        return [f"judge:     nothing to ask ({_n(stored, 'judge stage')} stored)"]
    counter = prompt_counter(cfg)
    per_answer, claims_from = _claims(ctx)
    cost = JudgeCost(judge_prompts_of(ctx), cfg, judge_of(ctx).cache_identity,
                     ctx.store.root / "judgments", counter, per_answer)
    no_answers, no_contexts = set(), set()
    passages_est = set()
    for node in todo:
        config = _variant_config(ctx, node.key)
        asm, gen = node.inputs["assemble"], node.inputs["generate"]
        read = ctx.plan.nodes[gen].resolved.reads_context
        contexts = _stored(ctx, "assemble", asm, functools.partial(frame_contexts, ctx))
        answers = _stored(ctx, "generate", gen, frame_answer_repeats)
        n_pass, each = _passages(config)
        if contexts is None:
            no_contexts.add(asm)
            passages_est.add((n_pass, each))
        if answers is None:
            no_answers.add(gen)
        for q in questions_of(ctx, node):
            if contexts is not None:
                context = contexts.get(q.qid)
            else:
                name = f"context/{asm[:16]}/{q.qid}"
                context = placeholder_context(name, n_pass)
                cost.marks.update({mark(f"{name}/{i}"): each for i in range(n_pass)})
            if answers is not None:
                repeats = answers.get(q.qid) or [None]
            else:
                repeats = []
                for r in range(config.generator.repeats):
                    name = f"answer/{gen[:16]}/{q.qid}/{r}"
                    repeats.append(placeholder_answer(name))
                    cost.marks[mark(name)] = config.generator.max_new_tokens
            for answer in repeats:
                cost.add(Item(q, answer, context if read else None, context))
    n_items = 0
    if calib:
        from ablate.components.judge.calibration import ask_of, read_items
        assert ctx.calibration_path is not None
        items = read_items(ctx.calibration_path)
        n_items = len(items)
        for item in items:
            cost.add_ask(ask_of(item, cfg))
    sentences = "faithfulness" in cfg.metrics and cfg.claims == "sentences"
    ctx.memo["judge_tally"] = cost.tally  # the spend estimate prices it (spend_estimate.py)
    return _lines(cost, counter.name, stored, len(nodes), no_answers, no_contexts, passages_est,
                  per_answer, claims_from, n_items, sentences)


def _n(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _lines(cost: JudgeCost, tokenizer: str, stored: int, stages: int, no_answers: set,
           no_contexts: set, passages: set, per_answer: float, claims_from: str,
           n_items: int, sentences: bool) -> list[str]:
    t = cost.tally
    approx = "~" if t.calls > t.exact else ""
    tasks = ", ".join(f"{task} {n}" for task, n in sorted(t.by_task.items()))
    later = f"~{t.later}" if t.claims_estimated else str(t.later)
    lines = [f"judge:     {approx}{t.calls} calls ({t.cached} prompts cached), {approx}{t.tokens} "
             f"prompt tokens (counted with {tokenizer})",
             f"           first round {t.first} prompts, later rounds {later}; "
             f"calls known exactly {t.exact}" + (f"; calls by task: {tasks}" if tasks else "")]
    if stored:
        lines.append(f"           {stored} of {_n(stages, 'judge stage')} stored: nothing to ask there")
    if n_items:
        lines.append(f"           the calibration set's {n_items} items included")
    if no_answers:
        lines.append(f"           estimated: the answers of {_n(len(no_answers), 'generate stage')} not "
                     f"stored yet, each repeat counted as answered (a refusal asks nothing) "
                     f"at generator.max_new_tokens tokens"
                     + (" and one sentence (judge.claims: sentences)" if sentences else ""))
    if no_contexts:
        shapes = ", ".join(f"{n} passages of {each} tokens" for n, each in sorted(passages))
        lines.append(f"           estimated: the contexts of {_n(len(no_contexts), 'assemble stage')} "
                     f"not stored yet, at the context budget ({shapes})")
    if t.claims_estimated:
        lines.append(f"           estimated: {per_answer:.1f} claims per answer for the "
                     f"{t.claims_estimated} answers whose claims are not cached ({claims_from}), "
                     f"one support verdict each")
    lines.append("           a retry of an unusable reply is one call more, not counted")
    return lines
