"""Near-miss claims: a sentence S its paragraph states, changed in one place so that the
paragraph no longer supports it (the synthetic sets' hard support negatives, calibset.py).

- `swap`: the gold answer A replaced by the gold answer of another question of the same
  article, of the same kind (digits for digits, a capitalised name for a name; absent from S),
  only when A is at most half of S;
- `number`: one number of S (the one in A when A holds one) changed, a year by a few years
  (a decade, 1960年代, by ten or twenty), a count or a day by one to three; or (English) a month name changed; a number or month
  next to a word that makes a bound ("before", "at least", "over", 約, 以上, 多 ...) is left
  alone, since moving a bound can keep the claim true;
- `negation`: English: "not" after the first copula or modal (is, was, can, will, has been,
  ...) of a sentence with no negation yet; Chinese: 不 before the first copula 是 that is not
  part of a conjunction or adverb (但是, 於是, 還是, 只是, 是否 ...), in a sentence with no
  negation yet (不, 沒, 未, 非, 無 ...).
Each returns the changed sentence, or None when it does not apply. The label is "not
supported" by construction: S is stated by the paragraph and the change contradicts it; the
residual risk (the paragraph also states the changed sentence elsewhere) is written in each
item's `how`.
"""

from __future__ import annotations

import random
import re
from typing import Any

from ablate.components.text.cjk import has_cjk

MONTHS = ("January", "February", "March", "April", "June", "July", "August", "September",
          "October", "November", "December")  # May: also a modal verb
_NUM = re.compile(r"(?<![0-9A-Za-z.,\-/])\d{1,4}(?![0-9A-Za-z%/]|[.,]\d)")
_MONTH = re.compile(r"(?<!^)\b(" + "|".join(MONTHS) + r")\b")
_BOUND_EN = re.compile(
    r"\b(less|fewer|more|greater|under|below|over|above|least|most|up to|nearly|about|"
    r"approximately|almost|around|roughly|some|before|after|until|till|since|by|within|than|"
    r"circa|exceeding|between|only|from|to|and|or|late|early|mid)[\s-]*(the\s+)?$", re.I)
_AFTER_EN = re.compile(r"^\s*(\+|or (more|less|so|fewer|earlier|later)|plus)", re.I)
_BOUND_ZH_BEFORE = set("約约近逾超過过少至到從从自")
_BOUND_ZH_AFTER = set("多餘余以前後后左來来許许內内外上下強强弱")
_NEGATED_EN = re.compile(r"\b(not|never|no|none|nor|neither|without|cannot)\b|n't", re.I)
_AUX = re.compile(r"(?<=\s)((is|are|was|were|can|could|will|would|should|must|might)\b"
                  r"|(has|have|had)(?=\s+(been\b|\w+ed\b|\w+en\b)))"
                  r"(?!\s+(only|just|merely|simply|even)\b)")  # "not only": still true
_NEGATED_ZH = set("不沒没未非無无否別别莫勿")
_NOT_COPULA_BEFORE = set("但於于可或只凡要若別别其倒硬老真算便總总還还正像自乃實实特尤")
_NOT_COPULA_AFTER = set("否以非")


def kind_of_text(text: str) -> str:
    if any(ch.isdigit() for ch in text):
        return "number"
    if has_cjk(text):
        return "cjk"
    return "name" if text[:1].isupper() else "phrase"


def swap(a: dict[str, Any], others: list[dict[str, Any]], rng: random.Random) -> str | None:
    """The sentence with its answer replaced by another answer of the article (same kind)."""
    sent, (s, e) = a["sentence"], a["a"]
    kind = kind_of_text(a["answer"])
    norm = a["answer"].strip().lower()
    pool = sorted({o["answer"].strip() for o in others
                   if kind_of_text(o["answer"]) == kind and o["answer"].strip().lower() != norm
                   and o["answer"].strip().lower() not in sent.lower()
                   and norm not in o["answer"].strip().lower()
                   and len(o["answer"].split()) <= 8})
    if not pool:
        return None
    return sent[:s] + rng.choice(pool) + sent[e:]


def _bounded(sent: str, s: int, e: int) -> bool:
    before, after = sent[max(0, s - 30):s], sent[e:e + 16]
    if has_cjk(sent):
        near_after = after.lstrip(" 年月日號号個个位名人次歲岁")[:2]
        return bool(set(sent[max(0, s - 2):s]) & _BOUND_ZH_BEFORE
                    or set(near_after) & _BOUND_ZH_AFTER or set(after[:1]) & _BOUND_ZH_AFTER)
    return bool(_BOUND_EN.search(before) or _AFTER_EN.search(after))


def number(a: dict[str, Any], rng: random.Random) -> str | None:
    """One number (or English month name) of the sentence changed (module doc)."""
    sent, (s0, e0) = a["sentence"], a["a"]
    spots = [m for m in _NUM.finditer(sent) if not _bounded(sent, m.start(), m.end())]
    spots.sort(key=lambda m: not (s0 <= m.start() and m.end() <= e0))  # the answer's first
    if spots:
        m = spots[0]
        v = int(m.group())
        if 1000 <= v <= 2099:  # a year, or a decade (1960年代): a decade moves by ten
            step = 10 if sent[m.end():m.end() + 2] == "年代" else 1
            new = v + step * rng.choice([-5, -3, -2, 2, 3, 5] if step == 1 else [-2, -1, 1, 2])
        else:
            new = v + rng.choice([1, 2, 3])
        return sent[:m.start()] + str(new) + sent[m.end():]
    months = [m for m in _MONTH.finditer(sent) if not _bounded(sent, m.start(), m.end())]
    if months:
        m = months[0]
        i = MONTHS.index(m.group())
        return sent[:m.start()] + MONTHS[(i + rng.choice([1, 2, 3])) % len(MONTHS)] + sent[m.end():]
    return None


def negation(a: dict[str, Any]) -> str | None:
    """The sentence negated once (module doc)."""
    sent = a["sentence"]
    if has_cjk(sent):
        if set(sent) & _NEGATED_ZH:
            return None
        for i in range(1, len(sent) - 1):
            if (sent[i] == "是" and has_cjk(sent[i - 1]) and sent[i - 1] not in _NOT_COPULA_BEFORE
                    and sent[i + 1] not in _NOT_COPULA_AFTER):
                return sent[:i] + "不" + sent[i:]
        return None
    if _NEGATED_EN.search(sent):
        return None
    m = _AUX.search(sent)
    return None if m is None else sent[:m.end()] + " not" + sent[m.end():]


NEAR_MISSES = {"entity swap": "the gold sentence with its answer swapped for another answer "
                              "of the same article",
               "number changed": "the gold sentence with one number (a date, a count) or "
                                 "month changed",
               "negation": "the gold sentence negated"}


def near_miss(a: dict[str, Any], others: list[dict[str, Any]], rng: random.Random,
              turn: int) -> tuple[str, str] | None:
    """(changed sentence, construction) for the `turn`-th question: the construction the
    turn names first (they rotate, so a set holds all three), then the others, the entity
    swap (the easiest to spot) last; None when none applies."""
    first = list(NEAR_MISSES)[turn % 3]
    for name in [first] + [x for x in ("number changed", "negation", "entity swap") if x != first]:
        if name == "entity swap" and len(a["answer"]) > len(a["sentence"]) / 2:
            continue  # the answer is most of the sentence: a swap would replace the claim
        out = (swap(a, others, rng) if name == "entity swap"
               else number(a, rng) if name == "number changed" else negation(a))
        if out is not None and out != a["sentence"] and out not in a["paragraph"]:
            return out, name
    return None
