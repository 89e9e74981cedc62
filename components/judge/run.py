"""Judge one question of one variant: the verdicts behind the chosen judged metrics.

What is asked is what each judged metric declares (ablate.components.metrics.judged; the
built-in RAGAS ones are in ablate.components.judge.ragas): its `asks` gives a judgment
without asking (undefined, or defined by rule) or an Asking. The Askings of every metric
are asked together, each distinct prompt once (ablate.components.judge.tasks.ask_many);
a metric whose verdicts are all usable gets them back and gives its judgment or a
follow-up Asking, asked in the next round (faithfulness: the answer's claims, then
whether each is supported). Nothing here knows a metric by name.

Each judgment is {"status": ok | undefined | failed | error, ...}: `failed` when a verdict
it needs is a judge failure (counted, excluded, never a score), `error` when a transport
failure left it unjudged (the stage result is then incomplete and judged again next run).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ablate.components.judge.backends import BaseJudge
from ablate.components.judge.case import Asking, Case, Item, Judgment
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.prompts import PromptSet, language
from ablate.components.judge.tasks import JudgeCache, Verdict, ask_many
from ablate.components.metrics.judged import judged_metrics

# the judge fields every ask reads (the prompt language, the claims cap in the prompts and
# schemas, the verdicts' token cap): part of the judge stage's key (ablate.components.judge.keys)
READS = ("judge.language", "judge.max_claims", "judge.max_new_tokens")


@dataclass
class Judged:
    judgments: dict[str, dict[str, Any]]
    lang: str
    asked: int = 0  # verdicts asked of the model now (cache misses)
    reused: int = 0  # verdicts served from the cache
    failures: int = 0  # judge failures among this question's verdicts
    errors: list[str] = field(default_factory=list)  # transport failures


def _status(verdicts: list[Verdict]) -> dict[str, Any] | None:
    """The failed / error judgment when one of the verdicts is not usable."""
    errors = [v.error for v in verdicts if v.error is not None]
    if errors:
        return {"status": "error", "error": errors[0]}
    failures = [v.failure for v in verdicts if v.failure is not None]
    if failures:
        return {"status": "failed", "failure": failures[0], "n_failed": len(failures)}
    return None


def _settle(name: str, got: Judgment | Asking, out: dict[str, Judgment],
            pending: dict[str, Asking]) -> None:
    if isinstance(got, Asking):
        pending[name] = got
    else:
        out[name] = got


def judge_item(judge: BaseJudge, prompts: PromptSet, cfg: JudgeConfig, item: Item,
               cache: JudgeCache | None = None) -> Judged:
    """The judgments of one question (module doc), asking each distinct prompt once."""
    q = item.question
    case = Case(q, item.answer, item.generator_context, item.context, cfg,
                language(cfg.language, q.question))
    out: dict[str, Judgment] = {}
    pending: dict[str, Asking] = {}
    for judging in judged_metrics():
        if judging.name in cfg.metrics:
            _settle(judging.name, judging.asks(case), out, pending)
    verdicts: list[Verdict] = []
    while pending:
        asks = [a for step in pending.values() for a in step.asks]
        got = ask_many(judge, prompts, asks, cfg.max_claims, cfg.max_new_tokens, cache) if asks else []
        verdicts += got
        steps, pending, start = pending, {}, 0
        for name, step in steps.items():
            mine = got[start:start + len(step.asks)]
            start += len(step.asks)
            bad = _status(mine)
            if bad is not None:
                out[name] = bad | ({"at": step.at} if step.at else {})
            else:
                _settle(name, step.then([v.value for v in mine]), out, pending)
    judged = Judged({m: out[m] for m in cfg.metrics if m in out}, case.lang)
    for v in verdicts:
        judged.reused += v.cached
        judged.asked += not v.cached and v.error is None
        judged.failures += v.failure is not None
        if v.error is not None:
            judged.errors.append(v.error)
    return judged
