"""Prompt rendering and refusal detection.

The template is versioned in the config (PromptConfig: version, system, user, refusal).
Placeholders: {context} (numbered passages "[1] ...", blank line between), {question},
{refusal}. Values are inserted verbatim (braces inside passages are safe). With no
context (closed book) a fixed closed-book template is used instead, since "answer only
from the context" would make every closed-book answer a refusal.
"""

from __future__ import annotations

import re
from typing import Mapping

from components.config import PromptConfig
from components.errors import InputError
from components.metrics.answer import normalize_answer
from components.records import PackedContext

PLACEHOLDERS = ("context", "question", "refusal")

CLOSED_BOOK_VERSION = "closed-book-v1"
CLOSED_BOOK_SYSTEM = (
    "Answer the question with a short phrase. "
    "If you do not know the answer, reply exactly: {refusal}"
)
CLOSED_BOOK_USER = "Question: {question}\nAnswer:"

# Refusal variants besides the configured phrase, already normalised (SQuAD rules).
REFUSAL_VARIANTS = (
    "i dont know", "i do not know", "unanswerable", "no answer", "cannot answer",
    "i cannot answer", "i cant answer", "not answerable", "cannot be answered",
)
# Whole-phrase patterns that mark a refusal anywhere in a (normalised) answer.
_REFUSAL_ANYWHERE = re.compile(
    r"\b(i (do not|dont) know|context does not (contain|mention|say|provide)|"
    r"not (mentioned|stated|given|provided) in (context|passages?))\b"
)

_FIELD = re.compile(r"\{([^{}]*)\}")


def _fill(template: str, values: Mapping[str, str], field: str) -> str:
    """Replace {name} placeholders; '{{' and '}}' are literal braces. Unknown name -> InputError."""
    out: list[str] = []
    i = 0
    while i < len(template):
        if template.startswith("{{", i) or template.startswith("}}", i):
            out.append(template[i])
            i += 2
            continue
        m = _FIELD.match(template, i)
        if m:
            name = m.group(1)
            if name not in values:
                raise InputError(f"unknown placeholder '{{{name}}}' in the prompt template "
                                 f"(known: {', '.join(PLACEHOLDERS)})", field=field)
            out.append(values[name])
            i = m.end()
            continue
        out.append(template[i])
        i += 1
    return "".join(out)


def format_context(context: PackedContext) -> str:
    """Numbered passages in prompt order: '[1] text' separated by blank lines."""
    return "\n\n".join(f"[{i}] {p.text.strip()}" for i, p in enumerate(context.passages, 1))


def render_prompt(prompt: PromptConfig, question: str,
                  context: PackedContext | None) -> tuple[str, str]:
    """(system, user) messages for one question; context None renders the closed-book form."""
    values = {"question": question.strip(), "refusal": prompt.refusal}
    if context is None:
        values["context"] = ""
        return (_fill(CLOSED_BOOK_SYSTEM, values, "prompt.system"),
                _fill(CLOSED_BOOK_USER, values, "prompt.user"))
    values["context"] = format_context(context)
    return (_fill(prompt.system, values, "prompt.system"),
            _fill(prompt.user, values, "prompt.user"))


def is_refusal(text: str, refusal_phrase: str) -> bool:
    """True when the answer is empty, starts with the configured refusal phrase or a known
    variant ("unanswerable", "I don't know", ...), or says the context lacks the answer."""
    norm = normalize_answer(text)
    if not norm:
        return True
    phrase = normalize_answer(refusal_phrase)
    starts = (phrase,) + REFUSAL_VARIANTS if phrase else REFUSAL_VARIANTS
    if any(norm == s or norm.startswith(s + " ") for s in starts):
        return True
    return bool(_REFUSAL_ANYWHERE.search(norm))


_LEAD_IN = re.compile(
    r"^\s*(?:the\s+)?answer(?:\s+to\s+(?:this|the)\s+question)?(?:\s+is)?\s*[:\-]\s*",
    re.IGNORECASE)


_CITE = re.compile(r"^\s*(?:\[\d+\]\s*)+")


def first_answer_line(text: str) -> str:
    """The first non-empty line of a model output, without an "Answer:" / "The answer is:"
    lead-in or leading "[2]" citations (same post-processing for every model generator)."""
    for line in text.strip().splitlines():
        line = _LEAD_IN.sub("", line.strip(), count=1)
        line = _CITE.sub("", line).strip()
        if line:
            return line
    return ""
