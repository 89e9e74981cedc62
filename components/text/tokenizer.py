"""The experiment tokenizer: the bundled MiniLM WordPiece tokenizer, fixed for every variant.

It counts tokens for chunk sizes and the context budget, whatever the generator is, and
gives character offsets so chunks keep exact boundaries.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator, NamedTuple, Sequence

from tokenizers import Tokenizer as _HFTokenizer

from ablate.components.runtime.models import minilm_path

TOKENIZER_NAME = "all-MiniLM-L6-v2-wordpiece"
Offsets = list[tuple[int, int]]


class Extent(NamedTuple):
    """A text's token count and the character range its tokens cover."""

    n_tokens: int
    start: int
    end: int


class Tokenizer:
    """Thin wrapper: token offsets and counts without special tokens, truncation or padding."""

    name = TOKENIZER_NAME

    def __init__(self, hf: _HFTokenizer) -> None:
        hf.no_truncation()
        hf.no_padding()
        self._hf = hf

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """(start, end) character offsets of each token of `text`."""
        return list(self._hf.encode(text, add_special_tokens=False).offsets)

    def count(self, text: str) -> int:
        return len(self._hf.encode(text, add_special_tokens=False).ids)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        encs = self._hf.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encs]

    def offsets_batch(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        with parallel_encoding():
            encs = self._hf.encode_batch(list(texts), add_special_tokens=False)
        return [list(e.offsets) for e in encs]

    def offsets_beyond(self, texts: Sequence[str], size: int) -> list[Offsets | Extent]:
        """Per text: its token offsets when it has more than `size` tokens, else only
        (token count, start of the first token, end of the last): what a text within one
        window needs, without building a tuple per token (a million short documents)."""
        out: list[Offsets | Extent] = []
        with parallel_encoding():
            encs = self._hf.encode_batch(list(texts), add_special_tokens=False)
        for e in encs:
            n = len(e)
            if n > size:
                out.append(list(e.offsets))
            elif n:
                first, last = e.token_to_chars(0), e.token_to_chars(n - 1)
                assert first is not None and last is not None  # one sequence: always found
                out.append(Extent(n, first[0], last[1]))
            else:
                out.append([])
        return out


_PARALLEL = threading.Lock()
_users = 0
_saved: str | None = None


@contextmanager
def parallel_encoding() -> Iterator[None]:
    """Let the tokenizer encode a batch on every core. The sweep sets
    TOKENIZERS_PARALLELISM=false for the process (flows/env.py: no warnings in forked
    children, no threads competing with torch's), which made chunking single-threaded;
    the tokenizer reads the variable at each call, so chunking's batches switch it on for
    their duration (nested and concurrent uses restore it once, when the last ends)."""
    global _users, _saved
    with _PARALLEL:
        if _users == 0:
            _saved = os.environ.get("TOKENIZERS_PARALLELISM")
            os.environ["TOKENIZERS_PARALLELISM"] = "true"
        _users += 1
    try:
        yield
    finally:
        with _PARALLEL:
            _users -= 1
            if _users == 0:
                if _saved is None:
                    os.environ.pop("TOKENIZERS_PARALLELISM", None)
                else:
                    os.environ["TOKENIZERS_PARALLELISM"] = _saved


@lru_cache(maxsize=1)
def get_tokenizer() -> Tokenizer:
    """The one experiment tokenizer (loaded once per process)."""
    return Tokenizer(_HFTokenizer.from_file(str(minilm_path() / "tokenizer.json")))
