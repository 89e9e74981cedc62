"""The experiment tokenizer: the bundled MiniLM WordPiece tokenizer, fixed for every variant.

It counts tokens for chunk sizes and the context budget, whatever the generator is, and
gives character offsets so chunks keep exact boundaries.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from tokenizers import Tokenizer as _HFTokenizer

from ablate.components.models import minilm_path

TOKENIZER_NAME = "all-MiniLM-L6-v2-wordpiece"


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
        encs = self._hf.encode_batch(list(texts), add_special_tokens=False)
        return [list(e.offsets) for e in encs]


@lru_cache(maxsize=1)
def get_tokenizer() -> Tokenizer:
    """The one experiment tokenizer (loaded once per process)."""
    return Tokenizer(_HFTokenizer.from_file(str(minilm_path() / "tokenizer.json")))
