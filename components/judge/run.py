"""Judge one question of one variant: the verdicts behind the four judged metrics.

What is asked (RAGAS definitions; the scores themselves are computed from the verdicts
by `ablate.components.metrics.judged`):
- faithfulness: the answer is split into claims (by the judge, or by sentence with
  `judge.claims: sentences`), each claim judged supported or not by the context the
  generator read. Undefined (not asked) for a failed generation, a refusal or an empty
  answer, and for a generator that read no context (closed book). An empty context
  supports no claim: every claim is unsupported, by definition, without asking.
- answer_relevancy: does the answer address the question (yes / partly / no). Undefined
  for a failed generation, a refusal or an empty answer.
- context_precision: each of the first `judge.max_passages` passages of the assembled
  context, in prompt order, judged useful or not for the reference answer (the question's
  first gold answer). Undefined without a reference answer (unanswerable questions) or
  without passages.
- context_recall: the reference answer's sentences (one for a short answer) each judged
  supported or not by the assembled context, with the question beside them. Undefined
  without a reference answer; an empty context supports nothing, by definition.

Each judgment is {"status": ok | undefined | failed | error, ...}: `failed` when a verdict
it needs is a judge failure (counted, excluded, never a score), `error` when a transport
failure left it unjudged (the stage result is then incomplete and judged again next run).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ablate.components.generation.prompt import format_context
from ablate.components.judge.backends import BaseJudge
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.prompts import PromptSet, language
from ablate.components.judge.tasks import Ask, JudgeCache, Verdict, ask_many
from ablate.components.records import Answer, PackedContext, Question
from ablate.components.sentences import sentence_spans


@dataclass(frozen=True)
class Item:
    """One question of one variant as the judge sees it."""

    question: Question
    answer: Answer | None  # None: no answer to judge (only the context metrics)
    generator_context: PackedContext | None  # what the generator read (None: closed book)
    context: PackedContext | None  # the assembled context


@dataclass
class Judged:
    judgments: dict[str, dict[str, Any]]
    lang: str
    asked: int = 0  # verdicts asked of the model now (cache misses)
    reused: int = 0  # verdicts served from the cache
    failures: int = 0  # judge failures among this question's verdicts
    errors: list[str] = field(default_factory=list)  # transport failures


def sentences(text: str) -> list[str]:
    """The sentences of a text (Latin and Chinese sentence ends), at least the text itself."""
    out = [text[s:e] for s, e in sentence_spans(text.strip())]
    return out or ([text.strip()] if text.strip() else [])


def _answer_state(item: Item) -> str | None:
    """Why the answer cannot be judged (None when it can)."""
    a = item.answer
    if a is None:
        return "no answer"
    if a.error is not None:
        return "generation failed"
    if a.refused or not a.text.strip():
        return "refusal or empty answer"
    return None


def _status(verdicts: list[Verdict]) -> dict[str, Any] | None:
    """The failed / error judgment when one of the verdicts is not usable."""
    errors = [v.error for v in verdicts if v.error is not None]
    if errors:
        return {"status": "error", "error": errors[0]}
    failures = [v.failure for v in verdicts if v.failure is not None]
    if failures:
        return {"status": "failed", "failure": failures[0], "n_failed": len(failures)}
    return None


def judge_item(judge: BaseJudge, prompts: PromptSet, cfg: JudgeConfig, item: Item,
               cache: JudgeCache | None = None) -> Judged:
    """The judgments of one question (module doc), asking each distinct prompt once."""
    q = item.question
    lang = language(cfg.language, q.question)
    want = set(cfg.metrics)
    out: dict[str, dict[str, Any]] = {}
    asks: list[Ask] = []
    slots: dict[str, slice] = {}

    def add(name: str, new: list[Ask]) -> None:
        slots[name] = slice(len(asks), len(asks) + len(new))
        asks.extend(new)

    why = _answer_state(item)
    gctx = item.generator_context
    base = {"question": q.question.strip()}
    reference = q.answers[0].strip() if q.answers else ""
    claims: list[str] | None = None
    if "faithfulness" in want:
        if why is not None:
            out["faithfulness"] = {"status": "undefined", "reason": why}
        elif gctx is None:
            out["faithfulness"] = {"status": "undefined", "reason": "closed book: no context read"}
        elif cfg.claims == "sentences":
            claims = sentences(item.answer.text)[:cfg.max_claims]
        else:
            add("claims", [Ask("claims", lang, base | {"answer": item.answer.text.strip()})])
    if "answer_relevancy" in want:
        if why is not None:
            out["answer_relevancy"] = {"status": "undefined", "reason": why}
        else:
            add("answer_relevancy", [Ask("relevance", lang,
                                         base | {"answer": item.answer.text.strip()})])
    ctx = item.context
    passages = list(ctx.passages) if ctx is not None else []
    if "context_precision" in want:
        if not reference:
            out["context_precision"] = {"status": "undefined", "reason": "no reference answer"}
        elif not passages:
            out["context_precision"] = {"status": "undefined", "reason": "no passages"}
        else:
            add("context_precision", [Ask("usefulness", lang, base | {
                "passage": p.text.strip(), "reference": reference})
                for p in passages[:cfg.max_passages]])
    recall_claims = sentences(reference)[:cfg.max_claims] if reference else []
    if "context_recall" in want:
        if not reference:
            out["context_recall"] = {"status": "undefined", "reason": "no reference answer"}
        elif not passages:
            out["context_recall"] = {"status": "ok", "claims": recall_claims,
                                     "verdicts": ["no"] * len(recall_claims),
                                     "reason": "empty context: nothing is supported"}
        else:
            add("context_recall", [Ask("support", lang, base | {
                "statement": c, "context": format_context(ctx)}) for c in recall_claims])
    if claims is not None:
        _faithfulness_asks(claims, gctx, lang, base, add, out)
    first = ask_many(judge, prompts, asks, cfg.max_claims, cfg.max_new_tokens, cache) if asks else []
    verdicts = list(first)
    if "claims" in slots:
        v = first[slots["claims"]][0]
        bad = _status([v])
        if bad is not None:
            out["faithfulness"] = bad | {"at": "claims"}
        else:
            start = len(asks)
            _faithfulness_asks(v.value, gctx, lang, base, add, out)
            if "faithfulness" in slots:
                more = ask_many(judge, prompts, asks[start:], cfg.max_claims, cfg.max_new_tokens, cache)
                verdicts += more
    for name, sl in slots.items():
        if name == "claims" or name in out:
            continue
        got = verdicts[sl]
        bad = _status(got)
        if bad is not None:
            out[name] = bad
            continue
        entry: dict[str, Any] = {"status": "ok", "verdicts": [v.value for v in got]}
        if name == "faithfulness":
            entry["claims"] = [a.values["statement"] for a in asks[sl]]
        elif name == "context_recall":
            entry["claims"] = recall_claims
        out[name] = entry
    judged = Judged({m: out[m] for m in cfg.metrics if m in out}, lang)
    for v in verdicts:
        judged.reused += v.cached
        judged.asked += not v.cached and v.error is None
        judged.failures += v.failure is not None
        if v.error is not None:
            judged.errors.append(v.error)
    return judged


def _faithfulness_asks(claims: list[str], gctx: PackedContext, lang: str, base: dict[str, str],
                       add: Any, out: dict[str, dict[str, Any]]) -> None:
    """Support questions for the answer's claims (none when the context is empty)."""
    if not gctx.passages:
        out["faithfulness"] = {"status": "ok", "claims": claims, "verdicts": ["no"] * len(claims),
                               "reason": "empty context: nothing is supported"}
        return
    text = format_context(gctx)
    add("faithfulness", [Ask("support", lang, base | {"statement": c, "context": text})
                         for c in claims])
