"""lucene_english: StandardTokenizer's word breaks (cases from Lucene's TestStandardAnalyzer),
the possessive filter, Lucene's stop set and Lucene's Porter stemmer."""

from __future__ import annotations

import pytest

from ablate.components.retrieval.lexical import porter_lucene
from ablate.components.retrieval.lexical.analyzer import get_analyzer
from ablate.components.retrieval.lexical.analyzer_lucene import standard_tokens


@pytest.mark.parametrize("text,tokens", [
    ("David has 5000 bones", ["David", "has", "5000", "bones"]),
    ("R2D2 C3PO", ["R2D2", "C3PO"]),
    ("216.239.63.104", ["216.239.63.104"]),
    ("21.35", ["21.35"]),
    ("1,000,000 and 1.5", ["1,000,000", "and", "1.5"]),
    ("O'Reilly you're she's Jim's don't", ["O'Reilly", "you're", "she's", "Jim's", "don't"]),
    ("U.S.A. is big.", ["U.S.A", "is", "big"]),
    ("test@example.com", ["test", "example.com"]),
    ("wi-fi foo/bar (baz)", ["wi", "fi", "foo", "bar", "baz"]),
    ("\"QUOTED\" word", ["QUOTED", "word"]),
    ("a.1 1.a 2:57 name:value", ["a", "1", "1", "a", "2", "57", "name:value"]),
    ("foo_bar B2B 2B", ["foo_bar", "B2B", "2B"]),
    ("trailing, comma; and end.", ["trailing", "comma", "and", "end"]),
    ("mo\u0364chte", ["mo\u0364chte"]),  # a combining mark stays in the word
    ("안녕하세요 한글입니다", ["안녕하세요", "한글입니다"]),
    ("我是中国人", ["我", "是", "中", "国", "人"]),  # one token per ideograph
    ("computers' O\u2019Neil\u2019s", ["computers", "O\u2019Neil\u2019s"]),
])
def test_standard_tokenizer_word_breaks(text, tokens):
    assert standard_tokens(text) == tokens


@pytest.mark.parametrize("word,stem", [
    ("caresses", "caress"), ("ponies", "poni"), ("ties", "ti"), ("cats", "cat"),
    ("feed", "feed"), ("agreed", "agre"), ("disabled", "disabl"), ("matting", "mat"),
    ("mating", "mate"), ("meeting", "meet"), ("milling", "mill"), ("happy", "happi"),
    ("relational", "relat"), ("generalization", "gener"), ("electrical", "electr"),
    ("adjustment", "adjust"), ("adoption", "adopt"), ("controll", "control"),
    ("as", "as"), ("is", "is"),
    # Martin Porter's departures that Lucene keeps (Snowball's porter does not):
    ("archaeology", "archaeolog"), ("conformabli", "conform"), ("probabli", "probabl"),
])
def test_porter_as_lucene(word, stem):
    assert porter_lucene.stem(word) == stem


def test_lucene_english_pipeline():
    a = get_analyzer("lucene_english")
    # possessive before lower case ('S too), stop words after lower case, then Porter
    assert a("The JOHN'S computers are Generating THE Networks") == [
        "john", "comput", "gener", "network"]
    assert a("an AND or") == []
