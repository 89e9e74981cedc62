"""Length-robust answer scores: token precision, recall and F1 on *content* tokens, the
words of the answer and of the reference that are not in the question (and not stop words).

Why. Token F1 against a long reference (a whole sentence, ~50 words) rewards an answer
that restates the question: the question's words are in the reference too, so "The
author of the 1998 report on rail safety was John Smith" scores F1 ~0.6 against a
reference that names someone else. Removing the question's own words from both sides
leaves what the answer adds: an invented name or a restatement adds nothing the
reference holds and scores 0.

Tokens are those of the answer normalisation in force for the question
(`metrics.answer_normalizer`, resolved per question as for EM/F1): SQuAD tokens for
English; for Chinese (`cmrc`) the CMRC 2018 mixed segmentation, every Chinese character
a token, punctuation removed. Scores are bags of tokens (the content tokens are no longer
contiguous, so CMRC's longest common substring does not apply). Each is the maximum over
the reference answers.

- content_precision: share of the answer's content tokens found in the reference;
- content_recall: share of the reference's content tokens found in the answer;
- content_f1: their harmonic mean.

Undefined (NaN) when no reference has a content token (the reference only repeats the
question: nothing is left to match). An answer with no content token scores 0. SQuAD v2
rules for refusals as for EM/F1: an unanswerable question scores 1 when refused, else 0;
an answerable one 0 when refused.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Sequence

from ablate.components.metrics.answer import STOPWORDS, normalize_answer, resolve_normalizer
from ablate.components.metrics.answer_zh import mixed_segmentation

KEYS = ("content_precision", "content_recall", "content_f1")
LONG_RATIO = 3.0  # references this many times longer than answers (medians) are "long"


def tokens(text: str, normalizer: str) -> list[str]:
    """Tokens of `text` under a resolved normalizer ("squad" or "cmrc")."""
    if normalizer == "cmrc":
        return mixed_segmentation(text)
    return normalize_answer(text).split()


def content_tokens(text: str, question: str, normalizer: str) -> list[str]:
    """`text`'s tokens that are neither in the question nor stop words."""
    asked = set(tokens(question, normalizer)) | STOPWORDS
    return [t for t in tokens(text, normalizer) if t not in asked]


def content_scores(prediction: str, references: Sequence[str], question: str,
                   normalizer: str) -> dict[str, float]:
    """{content_precision, content_recall, content_f1} of `prediction`, each the maximum
    over `references` (see the module doc); NaN when no reference has a content token."""
    pred = Counter(content_tokens(prediction, question, normalizer))
    golds = [Counter(content_tokens(r, question, normalizer)) for r in references]
    golds = [g for g in golds if g]
    if not golds:
        return dict.fromkeys(KEYS, math.nan)
    best = dict.fromkeys(KEYS, 0.0)
    n_pred = sum(pred.values())
    for gold in golds:
        same = sum((pred & gold).values())
        if not same:
            continue
        p, r = same / n_pred, same / sum(gold.values())
        for k, v in zip(KEYS, (p, r, 2 * p * r / (p + r))):
            best[k] = max(best[k], v)
    return best


def content_metrics(prediction: str, references: Sequence[str], question: str,
                    normalizer: str, *, answerable: bool, refused: bool) -> dict[str, float]:
    """content_scores with the SQuAD v2 rules for refusals and unanswerable questions."""
    if not answerable:
        return dict.fromkeys(KEYS, 1.0 if refused else 0.0)
    if refused:
        return dict.fromkeys(KEYS, 0.0)
    return content_scores(prediction, references, question, normalizer)


def longer_reference(prediction: str, references: Sequence[str], normalizer: str) -> bool:
    """Whether every reference has more tokens than the answer (references that normalise
    to nothing not counted): there token F1's recall penalises a short right answer and
    rewards restating the question, so `metrics.correct_by: auto` reads content precision."""
    lengths = [n for n in (len(tokens(r, normalizer)) for r in references) if n]
    return bool(lengths) and min(lengths) > len(tokens(prediction, normalizer))


def median_lengths(pairs: Sequence[tuple[str, Sequence[str], str]], normalizer: str = "auto"
                   ) -> tuple[float, float]:
    """(median answer tokens, median reference tokens) over (answer, references, question)
    triples; a question's reference length is its shortest reference's (the one F1's
    maximum is most likely to pick). NaN when there is none."""
    answers, refs = [], []
    for answer, references, question in pairs:
        norm = resolve_normalizer(normalizer, references, question)
        lengths = [len(tokens(r, norm)) for r in references if tokens(r, norm)]
        if not lengths:
            continue
        answers.append(len(tokens(answer, norm)))
        refs.append(min(lengths))
    if not answers:
        return math.nan, math.nan
    return _median(answers), _median(refs)


def _median(values: Sequence[int]) -> float:
    s = sorted(values)
    n = len(s)
    return float(s[n // 2]) if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2



def length_check(rows: Sequence[tuple[str, str, Sequence[str], str]], normalizer: str = "auto"
                 ) -> dict[str, Any]:
    """The manifest's `answer_lengths`: per variant, the median tokens of its answers and of
    the references of the questions it answered ((variant, answer, references, question)
    rows of answered, answerable questions), and the variants whose references are more
    than LONG_RATIO times longer than their answers (`long_references`): there token F1
    rewards restating the question, and the findings read answer/content_f1 instead."""
    by: dict[str, list[tuple[str, Sequence[str], str]]] = {}
    for variant, answer, refs, question in rows:
        by.setdefault(variant, []).append((answer, refs, question))
    variants: dict[str, dict[str, float]] = {}
    for name, pairs in by.items():
        a, r = median_lengths(pairs, normalizer)
        if not math.isnan(a):
            variants[name] = {"answer_median": a, "reference_median": r}
    long = [n for n, v in variants.items()
            if v["reference_median"] > LONG_RATIO * max(v["answer_median"], 1.0)]
    return {"ratio_threshold": LONG_RATIO, "variants": variants, "long_references": long}
