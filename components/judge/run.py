"""Judge one question of one variant: the verdicts behind the chosen judged metrics
(`judge_item`), or each repeat's answer of it together (`judge_many`).

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

A judged metric that declares `embeds` (answer relevancy) compares texts by the
`judge.embedder` model, which `resources` gives (the flow's: with the on-disk embedding
cache; without: a process-wide encoder without one), loaded only when a text needs
embedding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ablate.components.judge.backends import BaseJudge
from ablate.components.judge.case import Asking, Case, Embed, Item, Judgment
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.prompts import PromptSet, language
from ablate.components.judge.tasks import JudgeCache, Verdict, ask_many
from ablate.components.metrics.judged import judged_metrics
from ablate.components.retrieval.resources import DEFAULT, Resources

# the embedder's runtime: torch, sentence-transformers' vectors (the reference)
EMBED_BACKEND = "torch"

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
    # the judge's tokens over this item's verdicts, cached ones at what they cost when
    # asked (the price of judging it, for cost/judge: components/metrics/cost.py)
    tokens_in: int = 0
    tokens_out: int = 0


def _status(verdicts: list[Verdict]) -> dict[str, Any] | None:
    """The failed / error judgment when one of the verdicts is not usable."""
    errors = [v.error for v in verdicts if v.error is not None]
    if errors:
        return {"status": "error", "error": errors[0]}
    failures = [v.failure for v in verdicts if v.failure is not None]
    if failures:
        return {"status": "failed", "failure": failures[0], "n_failed": len(failures)}
    return None


def _settle(key: tuple[int, str], got: Judgment | Asking, out: dict[str, Judgment],
            pending: dict[tuple[int, str], Asking]) -> None:
    """`key`: (item, metric name); a judgment goes to the item's `out` under the name."""
    if isinstance(got, Asking):
        pending[key] = got
    else:
        out[key[1]] = got


def embeds(cfg: JudgeConfig) -> bool:
    """Whether a chosen judged metric compares texts by the `judge.embedder` model."""
    return any(j.embeds for j in judged_metrics() if j.name in cfg.metrics)


def embedder(cfg: JudgeConfig, resources: Resources | None = None) -> Embed | None:
    """The `judge.embedder` encoder's `encode` when a chosen metric embeds (else None),
    its model loaded on the first text that needs embedding."""
    if not embeds(cfg):
        return None
    res = resources or DEFAULT

    def embed(texts: Sequence[str]) -> Any:
        return res.encoder(cfg.embedder, EMBED_BACKEND).encode(texts)
    return embed


def judge_item(judge: BaseJudge, prompts: PromptSet, cfg: JudgeConfig, item: Item,
               cache: JudgeCache | None = None, resources: Resources | None = None) -> Judged:
    """The judgments of one question (module doc), asking each distinct prompt once."""
    return judge_many(judge, prompts, cfg, [item], cache, resources)[0]


def judge_many(judge: BaseJudge, prompts: PromptSet, cfg: JudgeConfig, items: Sequence[Item],
               cache: JudgeCache | None = None, resources: Resources | None = None) -> list[Judged]:
    """The judgments of several items (the repeats of one question: the same question and
    context, another answer each), asked together round by round: a prompt two items share
    (a context metric's, or two repeats' identical answers) is asked once and counted
    reused for the second. `resources` gives the embedder (module doc)."""
    embed = embedder(cfg, resources)
    cases = [Case(it.question, it.answer, it.generator_context, it.context, cfg,
                  language(cfg.language, it.question.question), embed) for it in items]
    outs: list[dict[str, Judgment]] = [{} for _ in cases]
    pending: dict[tuple[int, str], Asking] = {}
    for n, case in enumerate(cases):
        for judging in judged_metrics():
            if judging.name in cfg.metrics:
                _settle((n, judging.name), judging.asks(case), outs[n], pending)
    verdicts: list[list[Verdict]] = [[] for _ in cases]
    while pending:
        asks = [a for step in pending.values() for a in step.asks]
        got = ask_many(judge, prompts, asks, cfg.max_claims, cfg.max_new_tokens, cache) if asks else []
        steps, pending, start = pending, {}, 0
        for (n, name), step in steps.items():
            mine = got[start:start + len(step.asks)]
            start += len(step.asks)
            verdicts[n] += mine
            bad = _status(mine)
            if bad is not None:
                outs[n][name] = bad | ({"at": step.at} if step.at else {})
            else:
                _settle((n, name), step.then([v.value for v in mine]), outs[n], pending)
    return [_judged(case, out, mine) for case, out, mine in zip(cases, outs, verdicts)]


def _judged(case: Case, out: dict[str, Judgment], verdicts: list[Verdict]) -> Judged:
    judged = Judged({m: out[m] for m in case.cfg.metrics if m in out}, case.lang)
    for v in verdicts:
        judged.reused += v.cached
        judged.asked += not v.cached and v.error is None
        judged.failures += v.failure is not None
        judged.tokens_in += v.tokens_in
        judged.tokens_out += v.tokens_out
        if v.error is not None:
            judged.errors.append(v.error)
    return judged
