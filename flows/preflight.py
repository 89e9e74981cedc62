"""Checks run before any compute: every component name in every variant is known.

Pydantic validates types and ranges when the spec loads; this adds the registry names
(chunkers, paths, analyzers, fusers, rerankers and signals, generators), so a typo in a
sweep value fails in a second with the YAML line, not an hour into the sweep.
"""

from __future__ import annotations

from typing import Any

from components.chunking import CHUNKERS
from components.errors import InputError
from components.generation import GENERATORS
from components.retrieval.analyzer import ANALYZERS
from components.retrieval.fusion import FUSERS
from components.retrieval.rerank import SIGNALS
from components.retrieval.stages import PATHS, RERANKERS
from flows.spec import LoadedSpec
from flows.variants import Variant


def _names(v: Variant) -> list[tuple[str, Any, Any]]:
    c = v.config
    checks: list[tuple[str, Any, Any]] = [
        ("chunking.method", c.chunking.method, CHUNKERS),
        ("retrieval.analyzer", c.retrieval.analyzer, ANALYZERS),
        ("fusion.method", c.fusion.method, FUSERS),
        ("rerank.method", c.rerank.method, RERANKERS),
        ("generator.name", c.generator.name, GENERATORS),
    ]
    checks += [("retrieval.paths", p, PATHS) for p in c.retrieval.paths]
    if c.rerank.method != "none":
        checks += [("rerank.weights", s, SIGNALS) for s in c.rerank.weights]
    if c.fusion.weights:
        checks += [("fusion.weights", p, _Known(c.retrieval.paths, "retrieval path"))
                   for p in c.fusion.weights]
    return checks


class _Known:
    def __init__(self, names: tuple[str, ...], kind: str) -> None:
        self.names, self.kind = names, kind

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def get(self, name: str) -> None:
        raise InputError(f"{self.kind} '{name}' is not among {', '.join(self.names)}")


def check_variants(loaded: LoadedSpec, variants: list[Variant]) -> None:
    for v in variants:
        for field, name, registry in _names(v):
            if name in registry:
                continue
            try:
                registry.get(name)
            except InputError as exc:
                loc = ("baseline", *field.split(".")) if v.is_baseline else v.loc
                raise loaded.error(f"{exc.message} (variant {v.name})", loc) from None
