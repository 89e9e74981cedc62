"""Answer metrics for Chinese: the CMRC 2018 official evaluation (script v5), without nltk.

- Text is lower-cased and stripped.
- Mixed segmentation: every Chinese character (U+4E00 to U+9FA5, the script's range)
  and every mark of PUNCTUATION is a token of its own; the runs between them are split
  by `word_tokenize` (the script calls nltk.word_tokenize there).
- The marks of PUNCTUATION are removed before scoring, for F1 and for EM.
- F1 uses the longest common *substring* of the two token sequences: precision = its
  length / prediction tokens, recall = its length / answer tokens; 0 when nothing is
  shared. EM compares the two texts with those marks removed (inner white space kept).
- Both are the maximum over the reference answers.

Quirks of the official script kept, so scores match it: ASCII . , ! ? ; are not in its
list (so "Paris." is no exact match for "Paris"); its list spells the ellipsis "……",
which never equals one character, so "…" is not removed; an empty prediction scores F1 0.
"""

from __future__ import annotations

import re
from typing import Sequence

PUNCTUATION = frozenset("-:_*^/\\~`+=，。：？！“”；’《》·、「」（）－～『』")
_CHINESE = re.compile("[\u4e00-\u9fa5]")

# The rules of nltk.word_tokenize's word tokenizer (NLTKWordTokenizer, Treebank-derived;
# NLTK is Apache-2.0), applied in order; the result is split on white space. Checked
# equal to NLTK 3.10 on 20,000 random strings of words, digits, quotes and punctuation.
_STARTING_QUOTES = [
    (r"([«“‘„]|`+)", r" \1 "),
    (r'^"', "``"),
    (r"(``)", r" \1 "),
    (r"([ (\[{<])(\"|'')", r"\1 `` "),
    (r"(?i)(?<!\w)(')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)", r"\1 "),
]
_PUNCT_RULES = [
    (r"([^.])(\.)([\])}>\"'»”’ ]*+)\s*$", r"\1 \2 \3 "),
    (r"([:,])([^\d])", r" \1 \2"),
    (r"([:,])$", r" \1 "),
    (r"\.{2,}", r" \g<0> "),
    (r"[;@#$%&]", r" \g<0> "),
    (r"[\u2012-\u2015]", r" \g<0> "),
    (r"([^.])(\.)([\])}>\"']*)\s*$", r"\1 \2\3 "),
    (r"[?!]", r" \g<0> "),
    (r"([^'])' ", r"\1 ' "),
    (r"[*]", r" \g<0> "),
    (r"[\][(){}<>]", r" \g<0> "),
    (r"--", r" -- "),
]
_ENDING_QUOTES = [
    (r"([»”’])", r" \1 "),
    (r"''", " '' "),
    (r'"', " '' "),
    (r"\s+", " "),
    (r"([^' ])('[sS]|'[mM]|'[dD]|') ", r"\1 \2 "),
    (r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", r"\1 \2 "),
]
_CONTRACTIONS = [r"(?i)\b(can)(not)\b", r"(?i)\b(d)('ye)\b", r"(?i)\b(gim)(me)\b",
                 r"(?i)\b(gon)(na)\b", r"(?i)\b(got)(ta)\b", r"(?i)\b(lem)(me)\b",
                 r"(?i)\b(more)('n)\b", r"(?i)\b(wan)(na)(?=\s)", r"(?i) ('t)(is)\b",
                 r"(?i) ('t)(was)\b"]
_RULES = [[(re.compile(p), r) for p, r in rules]
          for rules in (_STARTING_QUOTES, _PUNCT_RULES, _ENDING_QUOTES)]
_SPLIT_CONTRACTIONS = [re.compile(p) for p in _CONTRACTIONS]
# nltk first splits sentences (punkt); here: a period and white space after a word of
# two or more characters without a period (abbreviations and initials do not end one).
_SENTENCE = re.compile(r"(?<=[^\s.]{2}\.)\s+")


def _tokenize_sentence(text: str) -> list[str]:
    starting, punctuation, ending = _RULES
    for rx, rep in starting + punctuation:
        text = rx.sub(rep, text)
    text = f" {text} "
    for rx, rep in ending:
        text = rx.sub(rep, text)
    for rx in _SPLIT_CONTRACTIONS:
        text = rx.sub(r" \1 \2 ", text)
    return text.split()


def word_tokenize(text: str) -> list[str]:
    """Word tokens as nltk.word_tokenize gives them: punctuation split off (a period only
    at a sentence end, a comma or colon not before a digit), "n't" and "'s" split off,
    double quotes as `` and ''."""
    return [t for sent in _SENTENCE.split(text.strip()) for t in _tokenize_sentence(sent)]


def mixed_segmentation(text: str, remove_punctuation: bool = True) -> list[str]:
    """Chinese characters (and, unless removed, PUNCTUATION marks) one token each; the
    runs between them word-tokenised."""
    out: list[str] = []
    run: list[str] = []
    for ch in text.lower().strip():
        if ch in PUNCTUATION and remove_punctuation:
            continue
        if _CHINESE.match(ch) or ch in PUNCTUATION:
            if run:
                out.extend(word_tokenize("".join(run)))
                run = []
            out.append(ch)
        else:
            run.append(ch)
    if run:
        out.extend(word_tokenize("".join(run)))
    return out


def remove_punctuation(text: str) -> str:
    """Lower-cased, stripped text without the PUNCTUATION marks."""
    return "".join(ch for ch in text.lower().strip() if ch not in PUNCTUATION)


def longest_common_substring(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest run of tokens that occurs in both sequences."""
    best = 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def _f1_one(prediction: str, answer: str) -> float:
    pred, gold = mixed_segmentation(prediction), mixed_segmentation(answer)
    lcs = longest_common_substring(gold, pred)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(pred), lcs / len(gold)
    return 2 * precision * recall / (precision + recall)


def cmrc_exact_match(prediction: str, references: Sequence[str]) -> float:
    """1.0 when the prediction equals a reference once PUNCTUATION is removed, else 0.0."""
    pred = remove_punctuation(prediction)
    return float(any(pred == remove_punctuation(a) for a in references or [""]))


def cmrc_f1(prediction: str, references: Sequence[str]) -> float:
    """Max over references of the longest-common-substring token F1."""
    return max(_f1_one(prediction, a) for a in references or [""])
