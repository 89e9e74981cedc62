"""The text analyzer of the lexical path: lower-casing, tokenization, stop words, stemming.

One analyzer is named in the config (`retrieval.analyzer`) and shared by every variant
and every use (BM25 retrieval and the `lexical` rerank signal), so lexical scores are
comparable across a sweep. Analyzers are registered by name in ANALYZERS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from components.errors import InputError
from components.registry import Registry

# A small English stop list (the classic Lucene/Elasticsearch English set).
ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the "
    "their then there these they this to was will with".split()
)

_TOKEN_RE = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Analyzer:
    """Turns text into index terms. Deterministic; stemming results are memoised."""

    name: str
    lowercase: bool = True
    stop_words: frozenset[str] = frozenset()
    stemmer: Callable[[str], str] | None = field(default=None, compare=False)

    def __call__(self, text: str) -> list[str]:
        if self.lowercase:
            text = text.lower()
        toks = _TOKEN_RE.findall(text)
        if self.stop_words:
            toks = [t for t in toks if t not in self.stop_words]
        if self.stemmer is not None:
            stem = self.stemmer
            toks = [stem(t) for t in toks]
        return toks

    def batch(self, texts: Sequence[str]) -> list[list[str]]:
        return [self(t) for t in texts]


def _snowball_english() -> Callable[[str], str]:
    """An English Snowball (Porter 2) stemmer with a per-process memo (words repeat a lot)."""
    try:
        import snowballstemmer
    except ImportError:  # pragma: no cover - install problem
        raise InputError("analyzer needs the package snowballstemmer (pip install snowballstemmer)",
                         field="retrieval.analyzer") from None
    stemmer = snowballstemmer.stemmer("english")
    memo: dict[str, str] = {}

    def stem(word: str) -> str:
        out = memo.get(word)
        if out is None:
            out = memo[word] = stemmer.stemWord(word)
        return out

    return stem


ANALYZERS: Registry[Callable[[], Analyzer]] = Registry("analyzer", config_field="retrieval.analyzer")


@ANALYZERS.register("default")
def _default() -> Analyzer:
    """Lower-cased word characters; no stop words, no stemming."""
    return Analyzer("default")


@ANALYZERS.register("english")
def _english() -> Analyzer:
    """Lower-cased words without English stop words."""
    return Analyzer("english", stop_words=ENGLISH_STOP_WORDS)


@ANALYZERS.register("english_stem")
def _english_stem() -> Analyzer:
    """Lower-cased words without English stop words, Snowball-stemmed."""
    return Analyzer("english_stem", stop_words=ENGLISH_STOP_WORDS, stemmer=_snowball_english())


_CACHE: dict[str, Analyzer] = {}


def get_analyzer(name: str) -> Analyzer:
    """The analyzer registered as `name` (one instance per process)."""
    if name not in _CACHE:
        if name not in ANALYZERS:
            known = ", ".join(ANALYZERS.names())
            raise InputError(f"unknown analyzer '{name}' (known: {known})", field="retrieval.analyzer")
        _CACHE[name] = ANALYZERS.get(name)()
    return _CACHE[name]
