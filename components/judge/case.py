"""What a judged metric's `asks` function works with (ablate.components.metrics.judged):
one question of one variant as the judge sees it (`Case`), and what it returns: a
judgment (`undefined(...)`, `ok(...)`) or an `Asking` (the judge's tasks to ask, and what
to make of their verdicts).

A judgment is {"status": ok | undefined | failed | error, ...}; `ok` holds the verdicts
(and, where a metric keeps them, the claims they are about). `failed` (a verdict it needs
is a judge failure) and `error` (a transport failure) are made by the judge
(ablate.components.judge.run), never by a metric.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence, Union

from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.tasks import Ask
from ablate.components.records import Answer, PackedContext, Passage, Question
from ablate.components.sentences import sentence_spans

Judgment = dict[str, Any]


@dataclass(frozen=True)
class Item:
    """One question of one variant as the judge sees it."""

    question: Question
    answer: Answer | None  # None: no answer to judge (only the context metrics)
    generator_context: PackedContext | None  # what the generator read (None: closed book)
    context: PackedContext | None  # the assembled context


@dataclass(frozen=True)
class Case(Item):
    """One question of one variant, for a judged metric's `asks`: the Item, the judge's
    config and the prompts' language."""

    cfg: JudgeConfig
    lang: str  # the prompts' language for this question

    @property
    def reference(self) -> str:
        """The reference answer: the question's first gold answer ("" when unanswerable)."""
        q = self.question
        return q.answers[0].strip() if q.answers else ""

    @property
    def passages(self) -> list[Passage]:
        """The assembled context's passages, in prompt order."""
        return list(self.context.passages) if self.context is not None else []

    @property
    def answer_problem(self) -> str | None:
        """Why the answer cannot be judged (None when it can)."""
        a = self.answer
        if a is None:
            return "no answer"
        if a.error is not None:
            return "generation failed"
        if a.refused or not a.text.strip():
            return "refusal or empty answer"
        return None

    def ask(self, task: str, **values: Any) -> Ask:
        """One question to the judge: a task with the question and `values` filled in."""
        return Ask(task, self.lang, {"question": self.question.question.strip()} | values)


def ok(verdicts: Sequence[Any], **extra: Any) -> Judgment:
    """A defined judgment: the verdicts, and what a metric keeps beside them (claims)."""
    return {"status": "ok", "verdicts": list(verdicts)} | extra


def undefined(reason: str) -> Judgment:
    """Not asked, by definition: the metric is NaN for this question (counted, never 0)."""
    return {"status": "undefined", "reason": reason}


@dataclass(frozen=True)
class Asking:
    """Tasks to ask the judge and what their verdicts (values, in ask order) make: a
    judgment, or a follow-up Asking. `at` names the step in a judgment it fails (the
    claims step of faithfulness)."""

    asks: tuple[Ask, ...]
    then: Callable[[list[Any]], Union[Judgment, "Asking"]] = ok
    at: str | None = None


def sentences(text: str) -> list[str]:
    """The sentences of a text (Latin and Chinese sentence ends), at least the text itself."""
    out = [text[s:e] for s, e in sentence_spans(text.strip())]
    return out or ([text.strip()] if text.strip() else [])
