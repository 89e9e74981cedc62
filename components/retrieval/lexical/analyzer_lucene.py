"""`lucene_english`: the analyzer Lucene's EnglishAnalyzer and Anserini's default English
analyzer run (StandardTokenizer, EnglishPossessiveFilter, LowerCaseFilter, StopFilter
with Lucene's 33 English stop words, PorterStemFilter), so BM25 over it indexes the
terms Elasticsearch, OpenSearch, Solr and Anserini would.

The tokenizer follows the Unicode word-break rules (UAX #29) that StandardTokenizer
implements, for the characters text collections hold: runs of letters, digits and
connectors (`_`) are words; a letter-letter pair may be joined across one MidLetter
(`:` `·` ...) or MidNumLet (`.` `'` `’` ...), a digit-digit pair across one MidNum
(`,` `;` ...) or MidNumLet; letters and digits join (`abc123`); everything else
separates words and is dropped. Han ideographs and Hiragana are one token each, as
StandardTokenizer emits them. Not covered (see docs/bm25-variants.md): the 255-character
token limit, emoji sequences, Hebrew quote rules, Katakana/ALetter boundaries.
"""

from __future__ import annotations

import re
from typing import Callable

from ablate.components.retrieval.lexical import porter_lucene
from ablate.components.retrieval.lexical.analyzer import ANALYZERS, ENGLISH_STOP_WORDS, Analyzer

_MID_LETTER = ":\u00b7\u0387\u05f4\u2027\ufe13\ufe55\uff1a"
_MID_NUM_LET = ".'\u2018\u2019\u2024\ufe52\uff07\uff0e"
_MID_NUM = ",;\u037e\u0589\u060c\u060d\u066c\u07f8\u2044\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b"
_IDEO = "\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_LETTER = rf"[^\W\d_{_IDEO}]"
# combining marks and format characters (Extend, Format, ZWJ) stay inside a word
_EXTEND = ("\u00ad\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u1ab0-\u1aff\u1dc0-\u1dff\u200c\u200d"
           "\u2060\u20d0-\u20ff\ufe00-\ufe0f\ufe20-\ufe2f\ufeff")
_WORD_CHAR = rf"(?:[^\W{_IDEO}]|[{_EXTEND}])"  # letters, digits, connectors (\w), marks
_TOKEN_RE = re.compile(
    rf"[{_IDEO}]"
    rf"|{_WORD_CHAR}+(?:(?<={_LETTER})[{re.escape(_MID_LETTER + _MID_NUM_LET)}](?={_LETTER}){_WORD_CHAR}+"
    rf"|(?<=\d)[{re.escape(_MID_NUM + _MID_NUM_LET)}](?=\d){_WORD_CHAR}+)*")
_POSSESSIVE = ("'s", "'S", "\u2019s", "\u2019S", "\uff07s", "\uff07S")


def standard_tokens(text: str) -> list[str]:
    """The tokens StandardTokenizer gives for `text` (case kept)."""
    return _TOKEN_RE.findall(text)


def strip_possessive(token: str) -> str:
    """EnglishPossessiveFilter: a trailing 's (or ’s, ＇s; s in either case) removed."""
    return token[:-2] if token.endswith(_POSSESSIVE) else token


def _split(text: str) -> list[str]:
    return [strip_possessive(t) for t in standard_tokens(text)]


def _lucene_porter() -> Callable[[str], str]:
    memo: dict[str, str] = {}

    def stem(word: str) -> str:
        out = memo.get(word)
        if out is None:
            out = memo[word] = porter_lucene.stem(word)
        return out

    return stem


class _LuceneEnglish(Analyzer):
    """Possessives are stripped before lower-casing (Lucene's order, and 'S counts)."""

    def __call__(self, text: str) -> list[str]:
        toks = [t.lower() for t in _split(text)]
        stop = self.stop_words
        stem = self.stemmer
        assert stem is not None
        return [stem(t) for t in toks if t not in stop]


@ANALYZERS.register("lucene_english")
def _lucene_english() -> Analyzer:
    """Lucene's English analysis (Anserini's default): StandardTokenizer, possessive
    filter, lower case, Lucene's English stop words, Lucene's Porter stemmer."""
    return _LuceneEnglish("lucene_english", stop_words=ENGLISH_STOP_WORDS,
                          stemmer=_lucene_porter())
