"""Costly shared objects that components ask for by name (dense encoders).

The flow hands every stage one Resources whose encoders use the on-disk embedding cache;
a caller with none gets encoders without a disk cache. Tests may fix one encoder.
"""

from __future__ import annotations

from typing import Callable

from components.retrieval.dense import DenseEncoder


class Resources:
    def __init__(self, make_encoder: Callable[[str], DenseEncoder] | None = None) -> None:
        self._make_encoder = make_encoder

    def encoder(self, model: str) -> DenseEncoder:
        """The dense encoder of `retrieval.dense_model` `model`."""
        if self._make_encoder is not None:
            return self._make_encoder(model)
        from components.retrieval import indexes
        return indexes.default_encoder(model)

    @classmethod
    def fixed(cls, encoder: DenseEncoder) -> "Resources":
        """Resources that answer every model with `encoder` (tests, benchmarks)."""
        return cls(lambda model: encoder)


DEFAULT = Resources()
