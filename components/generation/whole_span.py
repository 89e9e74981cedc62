"""Whole answers for the extractive generator: a span of a sentence grown to whole words
and to the end of its clause, never a fragment (issue 54.2: `s`, `n't`, `ve`, `O`, `0`
from tokenised text; Chinese spans that began inside a word).

- A clause ends at break punctuation (, ; : ( ) [ ] quotes and their Chinese forms), but
  not at a comma or period between two digits ("5,000,000", "7.1").
- English words are the generator's word tokens (whole already; a clitic split off its
  word, "Denver 's", takes the word before it); a Chinese span is grown
  to the word boundaries of jieba's segmentation of its sentence (jieba's default
  dictionary, HMM on; a library of the generator's identity), since the generator's
  words there are single characters.
- An answer is whole when it holds two or more CJK characters, or a word of two or more
  letters or digits that is neither a clitic ('s, n't, 've) nor a stop word. Otherwise the
  whole clause is taken, else the whole sentence.
"""

from __future__ import annotations

import functools
import re
from typing import Sequence

from ablate.components.metrics.answer import STOPWORDS
from ablate.components.text.cjk import CJK

BREAK = re.compile(r"[,;:()\[\]\"“”，、；：（）「」『』《》]")
_NUMBER_GAP = re.compile(r"[,.]")
_CJK_CHAR = re.compile(f"[{CJK}]")
_LONG_WORD = re.compile(r"[^\W_]{2,}(?:['’][^\W_]+)*|[^\W_]*n['’]t")
_CLITICS = frozenset({"s", "t", "ve", "ll", "re", "d", "m", "n't", "nt"})

Words = Sequence[tuple[int, int, str]]  # (start, end, stem) of each word of a sentence


def is_break(text: str, words: Words, k: int) -> bool:
    """Whether the text between word k-1 and word k ends a clause."""
    gap = text[words[k - 1][1]:words[k][0]]
    if _NUMBER_GAP.fullmatch(gap) and text[words[k][0]].isdigit() and text[words[k - 1][1] - 1].isdigit():
        return False
    return BREAK.search(gap) is not None


def is_whole(text: str) -> bool:
    """Whether an answer is more than a fragment (module doc)."""
    if len(_CJK_CHAR.findall(text)) >= 2:
        return True
    found = (w.lower().replace("’", "'") for w in _LONG_WORD.findall(text))
    return any(w not in _CLITICS and w not in STOPWORDS for w in found)


def _clause(text: str, words: Words, i: int, j: int) -> tuple[int, int]:
    """The word range of the clause that holds words [i, j)."""
    while i > 0 and not is_break(text, words, i):
        i -= 1
    while j < len(words) and not is_break(text, words, j):
        j += 1
    return i, j


@functools.lru_cache(maxsize=1)
def _jieba():
    import logging

    import jieba
    logging.getLogger("jieba").setLevel(logging.WARNING)
    tk = jieba.Tokenizer()
    tk.initialize()
    return tk


def _word_edges(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) grown to jieba's word boundaries in `text` (CJK text only)."""
    if not _CJK_CHAR.search(text[start:end]):
        return start, end
    a, b = start, end
    for _, s, e in _jieba().tokenize(text):
        if s < start < e:
            a = s
        if s < end < e:
            b = e
    return a, b


def _clitic(text: str, words: Words, k: int) -> bool:
    """Whether word k is a clitic split off its word (tokenised text: "Denver 's")."""
    start, end, _ = words[k]
    word = text[start:end].lower().replace("’", "'")
    return word in _CLITICS and (word == "n't" or text[start - 1:start] in ("'", "’"))


def _trim_stop(words: Words, i: int, j: int) -> int:
    while j > i + 1 and words[j - 1][2] in STOPWORDS:
        j -= 1
    return j


def whole_answer(text: str, words: Words, i: int, j: int, max_words: int) -> str:
    """The answer for the best span, words [i, j) of the sentence `text`: from its first
    word to the end of its clause (trailing stop words dropped, at most `max_words`
    words, never shorter than the span), in whole words; the clause, else the sentence,
    when that is a fragment."""
    while i > 0 and _clitic(text, words, i):  # 's, 've, n't belong to the word before
        i -= 1
    _, end = _clause(text, words, i, j)
    end = max(_trim_stop(words, i, min(end, i + max_words)), j)
    a, b = _word_edges(text, words[i][0], words[end - 1][1])
    answer = text[a:b].strip()
    if is_whole(answer):
        return answer
    c, d = _clause(text, words, i, j)
    clause = text[words[c][0]:words[d - 1][1]].strip()
    return clause if is_whole(clause) else text.strip()
