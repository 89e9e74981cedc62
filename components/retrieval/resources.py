"""Costly shared objects that components ask for by name (dense encoders, BM25 indexes).

The flow hands every stage one Resources for its run (`Resources.for_run`): encoders that
use the on-disk embedding cache, memoised in the run's memo, and BM25 indexes kept in the
cache folder; a caller with none gets encoders without a disk cache. Tests may fix one
encoder. What each family keeps, and how it is released, lives beside the family
(lexical/resources.py, dense/resources.py; the release hooks: runtime/resources.py).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ablate.components.runtime.resources import Memo

if TYPE_CHECKING:
    from ablate.components.retrieval.dense.encoder import DenseEncoder


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
        from ablate.components.retrieval.dense.resources import default_encoder
        return default_encoder(model, backend)

    @classmethod
    def fixed(cls, encoder: DenseEncoder) -> "Resources":
        """Resources that answer every model and backend with `encoder` (tests, benchmarks)."""
        def make(model: str, backend: str = "torch") -> DenseEncoder:
            return encoder
        return cls(make)

    @classmethod
    def for_run(cls, root: Path, memo: Memo) -> "Resources":
        """A run's: encoders with the embedding cache under the cache folder `root`, built
        once per run in its `memo`; BM25 indexes kept in `root`/indexes."""
        from ablate.components.retrieval.dense.resources import run_encoder
        return cls(functools.partial(run_encoder, Path(root), memo), Path(root) / "indexes")


DEFAULT = Resources()
