"""What a judged metric's `asks` function works with (ablate.components.metrics.judged):
one question of one variant as the judge sees it (`Case`), and what it returns: a
judgment (`undefined(...)`, `ok(...)`) or an `Asking` (the judge's tasks to ask, and what
to make of their verdicts).

A judgment is {"status": ok | undefined | failed | error, ...}; `ok` holds the verdicts
(and, where a metric keeps them, what they are about: claims, or answer relevancy's
generated questions with their cosines to the question). `failed` (a verdict it needs
is a judge failure) and `error` (a transport failure) are made by the judge
(ablate.components.judge.run), never by a metric.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence, Union

import numpy as np

from ablate.components.contract.records import Answer, PackedContext, Passage, Question
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.tasks import Ask
from ablate.components.text.cjk import CJK
from ablate.components.text.sentences import sentence_spans

Judgment = dict[str, Any]


@dataclass(frozen=True)
class Item:
    """One question of one variant as the judge sees it."""

    question: Question
    answer: Answer | None  # None: no answer to judge (only the context metrics)
    generator_context: PackedContext | None  # what the generator read (None: closed book)
    context: PackedContext | None  # the assembled context


# texts -> one vector per text, in order (the `judge.embedder` encoder's `encode`)
Embed = Callable[[Sequence[str]], Any]


@dataclass(frozen=True)
class Case(Item):
    """One question of one variant, for a judged metric's `asks`: the Item, the judge's
    config, the prompts' language and the embedder of a metric that declares `embeds`
    (None where nothing is scored: counting before the run, ablate.components.judge.cost)."""

    cfg: JudgeConfig
    lang: str  # the prompts' language for this question
    embed: Embed | None = None

    def cosines(self, text: str, others: Sequence[str]) -> list[float] | None:
        """The cosine similarity of each of `others` with `text`, by the embedder (None
        without one); a zero vector has cosine 0."""
        if self.embed is None:
            return None
        v = np.asarray(self.embed([text, *others]), dtype=np.float64)
        norms = np.linalg.norm(v, axis=1)
        norms[norms == 0] = 1.0
        unit = v / norms[:, None]
        return [float(c) for c in unit[1:] @ unit[0]]

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


# a reference of one sentence is a short span (SQuAD-style: no sentence structure) when
# it does not end a sentence or has fewer than SPAN_WORDS words (a CJK character a word)
SPAN_WORDS = 4
_SENTENCE_END = tuple(".!?。！？…")
_WORD = re.compile(f"[{CJK}]|(?:(?![{CJK}])[^\\W_])+")


def reference_form(reference: str) -> str:
    """`span` for a short-span reference (SQuAD-style), else `sentences` (context recall)."""
    parts = sentences(reference)
    if len(parts) > 1:
        return "sentences"
    text = reference.strip()
    words = len(_WORD.findall(text))
    return "span" if not text.endswith(_SENTENCE_END) or words < SPAN_WORDS else "sentences"
