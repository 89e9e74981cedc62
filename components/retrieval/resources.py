"""Costly shared objects that components ask for by name (dense encoders, BM25 indexes).

The flow hands every stage one Resources whose encoders use the on-disk embedding cache
and whose BM25 indexes are kept in the cache folder;
a caller with none gets encoders without a disk cache. Tests may fix one encoder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ablate.components.retrieval.dense import DenseEncoder


class Resources:
    def __init__(self, make_encoder: Callable[[str, str], DenseEncoder] | None = None,
                 index_dir: Path | None = None) -> None:
        self._make_encoder = make_encoder
        self.index_dir = index_dir  # where BM25 indexes are kept on disk (None: memory only)

    def encoder(self, model: str, backend: str = "torch") -> DenseEncoder:
        """The dense encoder of `retrieval.dense_model` `model` on `retrieval.dense_backend`
        `backend`."""
        if self._make_encoder is not None:
            return self._make_encoder(model, backend)
        from ablate.components.retrieval import indexes
        return indexes.default_encoder(model, backend)

    @classmethod
    def fixed(cls, encoder: DenseEncoder) -> "Resources":
        """Resources that answer every model and backend with `encoder` (tests, benchmarks)."""
        def make(model: str, backend: str = "torch") -> DenseEncoder:
            return encoder
        return cls(make)


DEFAULT = Resources()
