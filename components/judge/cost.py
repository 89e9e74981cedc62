"""What judging will ask, counted before it runs (`ablate check`): the judge's calls, how
many of their prompts the verdict cache already holds, and their prompt tokens.

The chosen judged metrics' own `asks` say what is asked, round by round as the judge
stage asks it (ablate.components.judge.run), so a plugin's judged metric is counted like
the built-in ones. What is not known before the run stands in the prompts as a *mark*, a
placeholder with an estimated token count:

- an answer not generated yet: one mark per question and repeat (`answer_tokens`), as if
  answered (a refusal or a failed generation asks nothing: an upper bound there);
- a context not assembled yet: `passages` passage marks of `passage_tokens` each;
- a claims verdict not in the cache: `claims_per_answer` claim marks (the estimate, kept
  exact in total over answers), each a share of its answer's tokens; any other verdict
  not in the cache: its first value ("yes"; answer relevancy's questions: committal),
  which decides no further asking for the built-in metrics.

A prompt without a mark is known exactly: it is looked up under the judge's own cache key
(a cached verdict asks nothing, and its value leads the next round), and counted once
however many variants or repeats ask it. A prompt with a mark is a call estimated; marks
are named after what they stand for (the assemble stage and question of a context, the
generate stage, question and repeat of an answer), so prompts the run would share (one
context judged for two generators) are counted once here too. Retries of unusable
replies are not counted.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ablate.components.contract.records import Answer, PackedContext, Passage
from ablate.components.judge.case import Asking, Case, Item
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.prompts import PromptSet, language
from ablate.components.judge.tasks import Ask, JudgeCache, request_key, request_of
from ablate.components.judge.tokens import PromptCounter
from ablate.components.metrics.judged import judged_metrics

_MARK = re.compile("\x00[^\x00]*\x00")
_FAILED = object()  # a cached judge failure: the metric asks nothing more


def mark(name: str) -> str:
    """A placeholder for a text not known yet (module doc)."""
    return f"\x00{name}\x00"


@dataclass
class Tally:
    """Distinct prompts of a plan's judging (module doc)."""

    calls: int = 0  # prompts to ask: not in the cache (known ones) or not known yet
    exact: int = 0  # of the calls: prompts known exactly
    cached: int = 0  # known prompts whose verdict the cache holds
    tokens: int = 0  # prompt tokens of the calls (estimated where a mark stands in)
    first: int = 0  # prompts of the first round (calls and cached)
    later: int = 0  # prompts of later rounds (faithfulness: one per claim)
    by_task: dict[str, int] = field(default_factory=dict)  # calls per task
    claims_estimated: int = 0  # answers whose claims stand in as estimated marks


def placeholder_answer(name: str) -> Answer:
    return Answer(mark(name), refused=False)


def placeholder_context(name: str, passages: int) -> PackedContext:
    marks = tuple(Passage(name, 0, 0, mark(f"{name}/{i}")) for i in range(passages))
    return PackedContext(tuple(f"{name}/{i}" for i in range(passages)), marks, 0, 0)


class JudgeCost:
    """Counts what judging asks, item by item (`add`), into `tally` (module doc).

    `marks`: the token estimate of each mark used (`add`'s callers set those of answers
    and passages); `claims_per_answer`: the claims estimate for an answer whose claims
    verdict is not cached."""

    def __init__(self, prompts: PromptSet, cfg: JudgeConfig, identity: str, cache_root: Path | None,
                 counter: PromptCounter, claims_per_answer: float) -> None:
        self.prompts, self.cfg, self.identity = prompts, cfg, identity
        self.cache = JudgeCache(cache_root) if cache_root is not None else None
        self.counter = counter
        self.claims_per_answer = claims_per_answer
        self.marks: dict[str, int] = {}
        self.tally = Tally()
        self._seen: dict[str, Any] = {}  # prompt key -> the value it stands for
        self._carry = 0.0

    def add(self, item: Item) -> None:
        """Count what judging one item asks: every round of every chosen judged metric."""
        case = Case(item.question, item.answer, item.generator_context, item.context, self.cfg,
                    language(self.cfg.language, item.question.question))
        pending = [got for j in judged_metrics() if j.name in self.cfg.metrics
                   for got in [j.asks(case)] if isinstance(got, Asking)]
        first = True
        while pending:
            steps, pending = pending, []
            for step in steps:
                values = [self._ask(a, first) for a in step.asks]
                if any(v is _FAILED for v in values):
                    continue
                got = step.then(values)
                if isinstance(got, Asking):
                    pending.append(got)
            first = False

    def tokens_of(self, text: str) -> int:
        """The estimated tokens the marks in `text` stand for."""
        return sum(self.marks.get(m.group(0), 0) for m in _MARK.finditer(text))

    def add_ask(self, ask: Ask) -> None:
        """Count one ask on its own (a calibration item's)."""
        self._ask(ask, True)

    def _ask(self, ask: Ask, first: bool) -> Any:
        request = request_of(self.prompts, ask, self.cfg.max_claims, self.cfg.max_new_tokens)
        text = "\n".join(f"{role}: {content}" for role, content in request.messages)
        marked = _MARK.search(text) is not None
        key = (hashlib.sha256(f"{request.name}\n{request.max_tokens}\n{text}".encode()).hexdigest()
               if marked else request_key(self.identity, request))
        if key in self._seen:
            return self._seen[key]
        t = self.tally
        t.first += first
        t.later += not first
        hit = None if marked or self.cache is None else self.cache.get(key)
        if hit is not None:
            t.cached += 1
            value = hit.value if hit.ok else _FAILED
        else:
            t.calls += 1
            t.exact += not marked
            t.by_task[ask.task] = t.by_task.get(ask.task, 0) + 1
            messages = [(role, _MARK.sub("", content)) for role, content in request.messages]
            t.tokens += self.counter.count(messages) + self.tokens_of(text)
            value = self._stand_in(ask, key)
        self._seen[key] = value
        return value

    def _stand_in(self, ask: Ask, key: str) -> Any:
        """The value an unknown verdict stands in as (module doc)."""
        if ask.task != "claims":
            return ask.stand_in()
        self.tally.claims_estimated += 1
        self._carry += self.claims_per_answer
        n = int(self._carry)
        self._carry -= n
        answer = str(ask.values.get("answer", ""))
        plain = _MARK.sub("", answer)
        answer_tokens = self.tokens_of(answer) + (self.counter.count([("user", plain)]) if plain else 0)
        each = max(1, round(answer_tokens / max(n, 1)))
        claims = [mark(f"claim/{key[:16]}/{i}") for i in range(n)]
        self.marks.update({c: each for c in claims})
        return claims


def cached_claims(cache_root: Path, limit: int = 2000) -> list[int]:
    """Claims per answer in the claims verdicts the cache holds (at most `limit` files read)."""
    found: list[int] = []
    if not cache_root.is_dir():
        return found
    read = 0
    for sub in sorted(cache_root.iterdir()):
        if not sub.is_dir():
            continue
        for path in sub.glob("*.json"):
            if read >= limit:
                return found
            read += 1
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(raw, dict) and raw.get("task") == "claims" and isinstance(raw.get("value"), list):
                found.append(len(raw["value"]))
    return found
