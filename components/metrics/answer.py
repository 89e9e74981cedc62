"""Answer metrics: exact match and token F1 (SQuAD v2, CMRC 2018), correctness, support.

Normalisers (`normalizer`): "squad" is the official SQuAD v2 evaluation script's (lower
case, drop ASCII punctuation, drop the articles a/an/the, collapse white space, bag-of-
tokens F1); "cmrc" is the CMRC 2018 script's for Chinese (see answer_zh); "auto" picks
per question: cmrc when the question holds a CJK character (so a Chinese question with
a number for its answer is scored as CMRC scores it), or when every reference answer
does; else squad (so English data sets score as before, even where an annotator added a
Chinese alternative). Scores are the maximum over the reference answers. Following SQuAD v2, an unanswerable
question scores 1 only when the answer is a refusal, and an answerable question scores
0 when refused.

`lexical_support` is the share of the answer's content tokens that occur in the context
(a CJK character is a token of its own): a cheap *proxy* for grounding, never a
faithfulness measure (a copied wrong span scores 1). It is NaN for a generator that read
no context (closed book: the caller passes None).

A failed generation (`Answer.error` set: timeout, HTTP error, no output after retries)
is not an answer: every answer metric is NaN (undefined, excluded from means and tests,
and counted), never a refusal; `generation_error` is 1 for it and 0 otherwise.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from typing import Sequence

from ablate.components.contract.records import Answer, PackedContext, Question
from ablate.components.contract.vocab import ANSWER_NORMALIZERS as NORMALIZERS
from ablate.components.metrics.answer_zh import cmrc_exact_match, cmrc_f1
from ablate.components.text.cjk import CJK, has_cjk

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
# A token with CJK characters or CJK / full-width punctuation is cut into pieces.
_CJK_TOKEN = re.compile(f"[{CJK}\u3000-\u303f\uff00-\uffef]")
_CJK_PIECES = re.compile(f"[{CJK}]|(?:(?![{CJK}])\\w)+")

# Function words ignored by lexical support (answer "in the 1990s" -> "1990s"), with
# Chinese function and question characters (a CJK character is a token of its own).
STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but is are was were be been being "
    "it its this that these those as which who whom whose what when where why how "
    "he she they them his her their we you i me my our your do does did not no".split()
) | frozenset("的了是在和与與及或之其吗嗎呢吧哪什么麼谁誰怎")


def normalize_answer(s: str) -> str:
    """The official SQuAD v2 normalisation (lower, no punctuation, no articles, single spaces)."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def _tokens(s: str) -> list[str]:
    return normalize_answer(s).split() if s else []


def _gold(references: Sequence[str]) -> list[str]:
    """References that survive normalisation; [''] when none does (as the SQuAD script)."""
    gold = [a for a in references if normalize_answer(a)]
    return gold or [""]


def _em_one(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def _f1_one(prediction: str, gold: str) -> float:
    pred_toks, gold_toks = _tokens(prediction), _tokens(gold)
    if not pred_toks or not gold_toks:
        return float(pred_toks == gold_toks)
    common = Counter(pred_toks) & Counter(gold_toks)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_toks)
    recall = same / len(gold_toks)
    return 2 * precision * recall / (precision + recall)


def resolve_normalizer(normalizer: str, references: Sequence[str], question: str = "") -> str:
    """"squad" or "cmrc": what `normalizer` means for this question (see module doc)."""
    if normalizer not in NORMALIZERS:
        raise ValueError(f"unknown answer normalizer '{normalizer}' "
                         f"(known: {', '.join(NORMALIZERS)})")
    if normalizer == "auto":
        chinese = has_cjk(question) or (bool(references) and all(map(has_cjk, references)))
        return "cmrc" if chinese else "squad"
    return normalizer


def exact_match(prediction: str, references: Sequence[str], normalizer: str = "auto") -> float:
    """Max over references of normalised string equality (1.0 or 0.0). The question is
    not known here: "auto" goes by the references alone."""
    if resolve_normalizer(normalizer, references) == "cmrc":
        return cmrc_exact_match(prediction, references)
    return max(_em_one(prediction, g) for g in _gold(references))


def token_f1(prediction: str, references: Sequence[str], normalizer: str = "auto") -> float:
    """Max over references of the token F1 (SQuAD bag of tokens, or CMRC longest common
    substring)."""
    if resolve_normalizer(normalizer, references) == "cmrc":
        return cmrc_f1(prediction, references)
    return max(_f1_one(prediction, g) for g in _gold(references))


def is_correct(*, answerable: bool, em: float, f1: float, refused: bool,
               f1_threshold: float = 0.5) -> bool:
    """Correct = answerable, not refused and (em == 1 or f1 >= f1_threshold);
    an unanswerable question is correct iff refused."""
    if not answerable:
        return refused
    return (not refused) and (em >= 1.0 or f1 >= f1_threshold)


def context_text(context: PackedContext | None) -> str:
    """All passage texts of a packed context joined by blank lines ('' for None)."""
    if context is None:
        return ""
    return "\n\n".join(p.text for p in context.passages)


def _support_tokens(s: str) -> list[str]:
    """SQuAD tokens, except that a token holding CJK characters or CJK punctuation is cut
    into its CJK characters and its other runs of word characters (punctuation dropped)."""
    out: list[str] = []
    for tok in _tokens(s):
        out.extend(_CJK_PIECES.findall(tok) if _CJK_TOKEN.search(tok) else [tok])
    return out


def lexical_support(answer_text: str, context: PackedContext | None) -> float:
    """Share of the answer's content tokens present in the context (a proxy, not faithfulness).

    NaN when the answer is empty or there is no context (closed book): undefined, not 0.
    Stop words are ignored unless the answer has nothing else.
    """
    toks = _support_tokens(answer_text)
    if not toks or context is None:
        return math.nan
    content = [t for t in toks if t not in STOPWORDS] or toks
    ctx = set(_support_tokens(context_text(context)))
    return sum(t in ctx for t in content) / len(content)


def answer_cost(answer: Answer, cost_per_1k_in: float = 0.0, cost_per_1k_out: float = 0.0) -> float:
    """Money spent on one answer at the configured prices per 1000 tokens in / out."""
    return (answer.tokens_in * cost_per_1k_in + answer.tokens_out * cost_per_1k_out) / 1000.0


def answer_metrics(question: Question, answer: Answer, context: PackedContext | None, *,
                   f1_threshold: float = 0.5, cost_per_1k_in: float = 0.0,
                   cost_per_1k_out: float = 0.0, normalizer: str = "auto") -> dict[str, float]:
    """Per-question answer metrics.

    Keys: em, f1 (under `normalizer`, see module doc; SQuAD v2 rules for refusals:
    unanswerable correct iff refused), correct (see `is_correct`), refused (0/1),
    lexical_support (NaN when refused/empty/no context), generation_error (0/1),
    tokens_in, tokens_out, latency_s, cost. When the generation failed (answer.error) em,
    f1, correct, refused and lexical_support are NaN. An unknown normalizer raises ValueError.
    """
    normalizer = resolve_normalizer(normalizer, question.answers, question.question)
    usage = {
        "tokens_in": float(answer.tokens_in),
        "tokens_out": float(answer.tokens_out),
        "latency_s": float(answer.latency_s),
        "cost": answer_cost(answer, cost_per_1k_in, cost_per_1k_out),
    }
    if answer.error is not None:
        nan = math.nan
        return {"em": nan, "f1": nan, "correct": nan, "refused": nan, "lexical_support": nan,
                "generation_error": 1.0, **usage}
    refused = bool(answer.refused)
    if not question.answerable:
        em = f1 = 1.0 if refused else 0.0
    elif refused:
        em = f1 = 0.0
    else:
        em = exact_match(answer.text, question.answers, normalizer)
        f1 = token_f1(answer.text, question.answers, normalizer)
    correct = is_correct(answerable=question.answerable, em=em, f1=f1, refused=refused,
                         f1_threshold=f1_threshold)
    return {
        "em": em,
        "f1": f1,
        "correct": float(correct),
        "refused": float(refused),
        "lexical_support": math.nan if refused else lexical_support(answer.text, context),
        "generation_error": 0.0,
        **usage,
    }
