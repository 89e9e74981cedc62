"""Prompt rendering and refusal detection.

The template is versioned in the config (PromptConfig: version, system, user, refusal).
Placeholders: {context} (numbered passages "[1] ...", blank line between), {question},
{refusal}. Values are inserted verbatim (braces inside passages are safe). With no
context (closed book) a fixed closed-book template is used instead, since "answer only
from the context" would make every closed-book answer a refusal.

Citations (`prompt.cite`): CITE_EN (or CITE_ZH for a Chinese question) is appended to
the system message when there is a context, asking for the numbers of the passages used
in square brackets after the answer; ablate.components.generation.citations parses them.

Language (`prompt.language`): a Chinese question (auto: one with a CJK character; zh:
every question) gets the built-in Chinese templates and refusal phrase (ZH_*) instead
of the configured ones; en always uses the configured ones. `is_refusal` recognises
Chinese refusals whatever the configured phrase.
"""

from __future__ import annotations

import re
from typing import Mapping

from ablate.components.contract.config import PromptConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import PackedContext
from ablate.components.metrics.answer import normalize_answer
from ablate.components.text.cjk import has_cjk

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

# The Chinese prompt (simplified characters; the model answers in the context's script).
ZH_SYSTEM = ("你只根据编号的上下文段落回答问题。请用从上下文中原样摘录的简短词语作答。"
             "如果上下文中没有答案，请只回答：{refusal}")
ZH_USER = "上下文：\n{context}\n\n问题：{question}\n答案："
ZH_REFUSAL = "我不知道。"
# `prompt.cite`: appended to the system message (after a space in English).
CITE_EN = ("After the answer, give the numbers of the context passages you used in square "
           "brackets, for example [1] or [1][3].")
CITE_ZH = "在答案后用方括号写出你所依据的上下文段落编号，例如 [1] 或 [1][3]。"
ZH_CLOSED_BOOK_SYSTEM = "请用简短的词语回答问题。如果你不知道答案，请只回答：{refusal}"
ZH_CLOSED_BOOK_USER = "问题：{question}\n答案："
# Chinese refusals, matched on the answer without punctuation and white space: at its
# start, or (the second pattern) anywhere.
_ZH_REFUSAL_START = re.compile(
    r"^(我?(不知道|不清楚|无法回答|無法回答|无法确定|無法確定|不能回答)|"
    r"(没有|沒有|无|無)(答案|相关信息|相關資訊))")
_ZH_REFUSAL_ANYWHERE = re.compile(
    r"无法回答|無法回答|(上下文|段落|文中|资料|資料)中?(没有|沒有|未)(提到|提及|包含|说明|說明)")

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


def prompt_language(prompt: PromptConfig, question: str) -> str:
    """"zh" or "en": the prompt language for this question (module doc)."""
    if prompt.language == "auto":
        return "zh" if has_cjk(question) else "en"
    return prompt.language


def render_prompt(prompt: PromptConfig, question: str,
                  context: PackedContext | None) -> tuple[str, str]:
    """(system, user) messages for one question; context None renders the closed-book form."""
    zh = prompt_language(prompt, question) == "zh"
    values = {"question": question.strip(), "refusal": ZH_REFUSAL if zh else prompt.refusal}
    if context is None:
        values["context"] = ""
        return (_fill(ZH_CLOSED_BOOK_SYSTEM if zh else CLOSED_BOOK_SYSTEM, values, "prompt.system"),
                _fill(ZH_CLOSED_BOOK_USER if zh else CLOSED_BOOK_USER, values, "prompt.user"))
    values["context"] = format_context(context)
    system = _fill(ZH_SYSTEM if zh else prompt.system, values, "prompt.system")
    if prompt.cite:
        system = system + CITE_ZH if zh else f"{system} {CITE_EN}"
    return system, _fill(ZH_USER if zh else prompt.user, values, "prompt.user")


def is_refusal(text: str, refusal_phrase: str) -> bool:
    """True when the answer is empty, starts with the configured refusal phrase or a known
    variant ("unanswerable", "I don't know", "我不知道", "无法回答", ...), or says the
    context lacks the answer."""
    norm = normalize_answer(text)
    if not norm:
        return True
    phrase = normalize_answer(refusal_phrase)
    if has_cjk(norm) and _is_zh_refusal(_bare(norm), _bare(phrase)):
        return True
    starts = (phrase,) + REFUSAL_VARIANTS if phrase else REFUSAL_VARIANTS
    if any(norm == s or norm.startswith(s + " ") for s in starts):
        return True
    return bool(_REFUSAL_ANYWHERE.search(norm))


def _bare(norm: str) -> str:
    """A normalised answer without punctuation, white space and underscores."""
    return re.sub(r"[\W_]+", "", norm)


def _is_zh_refusal(bare: str, bare_phrase: str) -> bool:
    if bare_phrase and bare.startswith(bare_phrase):
        return True
    return bool(_ZH_REFUSAL_START.search(bare) or _ZH_REFUSAL_ANYWHERE.search(bare))


_LEAD_IN = re.compile(
    r"^\s*(?:(?:the\s+)?answer(?:\s+to\s+(?:this|the)\s+question)?(?:\s+is)?\s*[:\-]|"
    r"(?:答案|回答)(?:是)?\s*[:：])\s*", re.IGNORECASE)


_CITE = re.compile(r"^\s*(?:\[\d+\]\s*)+")


def first_answer_line(text: str) -> str:
    """The first non-empty line of a model output, without an "Answer:" / "The answer is:" /
    "答案：" lead-in or leading "[2]" citations (same post-processing for every model
    generator)."""
    for line in text.strip().splitlines():
        line = _LEAD_IN.sub("", line.strip(), count=1)
        line = _CITE.sub("", line).strip()
        if line:
            return line
    return ""
