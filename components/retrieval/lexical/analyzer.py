"""The text analyzer of the lexical path: lower-casing, tokenization, stop words, stemming.

One analyzer is named in the config (`retrieval.analyzer`, with `retrieval.analyzer_options`)
and shared by every variant and every use (BM25 retrieval and the `lexical` rerank
signal), so lexical scores are comparable across a sweep. Analyzers are registered by
name in ANALYZERS; a factory's keyword arguments are the options it accepts. The
Chinese analyzers (`zh`, `cjk_bigram`, `auto`) live in analyzers_zh.
"""

from __future__ import annotations

import inspect
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ablate.components.contract.errors import InputError
from ablate.components.contract.registry import Registry

# A small English stop list (the classic Lucene/Elasticsearch English set).
ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the "
    "their then there these they this to was will with".split()
)

_TOKEN_RE = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Analyzer:
    """Turns text into index terms. Deterministic; stemming results are memoised.

    `split` turns the (lower-cased) text into tokens; None means runs of word characters.
    """

    name: str
    lowercase: bool = True
    stop_words: frozenset[str] = frozenset()
    stemmer: Callable[[str], str] | None = field(default=None, compare=False)
    split: Callable[[str], list[str]] | None = field(default=None, compare=False)

    def __call__(self, text: str) -> list[str]:
        if self.lowercase:
            text = text.lower()
        toks = _TOKEN_RE.findall(text) if self.split is None else self.split(text)
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


ANALYZERS: Registry[Callable[..., Analyzer]] = Registry("analyzer", config_field="retrieval.analyzer")


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


_CACHE: dict[tuple[str, tuple[tuple[str, Any], ...]], Analyzer] = {}
_LOCK = threading.Lock()


def get_analyzer(name: str, options: Mapping[str, Any] | None = None) -> Analyzer:
    """The analyzer registered as `name`, built with `options` (the factory's keyword
    arguments); one instance per (name, options) per process, built under a lock."""
    opts = dict(options or {})
    key = (name, tuple(sorted(opts.items())))
    with _LOCK:
        if key not in _CACHE:
            if name not in ANALYZERS:
                known = ", ".join(ANALYZERS.names())
                raise InputError(f"unknown analyzer '{name}' (known: {known})",
                                 field="retrieval.analyzer")
            factory = ANALYZERS.get(name)
            params = inspect.signature(factory).parameters
            unknown = sorted(set(opts) - set(params))
            if unknown:
                accepted = ", ".join(params) or "none"
                raise InputError(f"analyzer '{name}' has no option {', '.join(unknown)} "
                                 f"(accepted: {accepted})", field="retrieval.analyzer_options")
            _CACHE[key] = factory(**opts)
        return _CACHE[key]
