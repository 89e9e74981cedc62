"""The pipeline configuration of one variant: a full, frozen, validated record.

Field names are the dotted names that sweeps vary (`fusion.rrf_k`, `chunking.size`) and
that MLflow shows as params. Each stage reads only its own section(s), so its cache key
depends only on what it reads.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


def check_weights(weights: dict[str, float], kind: str) -> dict[str, float]:
    """The one weight rule (fusion and rerank): finite, non-negative, not all zero. What
    depends on a variant (which paths it fuses, which signals exist) is checked where
    that is known (fusion.path_weights, rerank.check_weights)."""
    for k, w in weights.items():
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"{kind} weight '{k}' must be a non-negative number, got {w}")
    if weights and not any(w > 0 for w in weights.values()):
        raise ValueError(f"{kind} weights are all zero")
    return weights


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChunkingConfig(_Frozen):
    method: str = "token_window"  # registry name: token_window | sentence
    size: int = Field(256, ge=8, le=8192)  # max tokens of the experiment tokenizer
    overlap: int = Field(32, ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> "ChunkingConfig":
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


class BM25Config(_Frozen):
    k1: float = Field(1.5, ge=0)
    b: float = Field(0.75, ge=0, le=1)
    epsilon: float = Field(0.25, ge=0)


class RetrievalConfig(_Frozen):
    paths: tuple[str, ...] = ("bm25", "dense")
    depth: int = Field(50, ge=1, le=10000)  # candidates per path, fixed across variants
    analyzer: str = "auto"  # a registered analyzer; auto: zh for a mostly-CJK corpus, else default  # registry name; "auto" needs choose_analyzer(corpus) first
    analyzer_options: dict[str, str] = Field(default_factory=dict)  # e.g. {user_dict: path}
    bm25: BM25Config = BM25Config()
    dense_model: str = "all-MiniLM-L6-v2"

    @field_validator("paths")
    @classmethod
    def _paths_ok(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v:
            raise ValueError("at least one retrieval path is needed")
        if len(set(v)) != len(v):
            raise ValueError("retrieval paths repeat")
        return tuple(sorted(v))


class FusionConfig(_Frozen):
    method: str = "rrf"  # rrf | convex
    rrf_k: int = Field(60, ge=1)
    weights: dict[str, float] | None = None  # per-path weights; None = equal
    normalization: Literal["minmax", "zscore"] = "minmax"

    @field_validator("weights")
    @classmethod
    def _weights_ok(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        return None if v is None else check_weights(v, "fusion")


class RerankConfig(_Frozen):
    method: str = "none"  # none | composite
    depth: int = Field(20, ge=1)
    weights: dict[str, float] = Field(default_factory=lambda: {"fusion": 1.0})
    default_credibility: float = Field(0.5, ge=0, le=1)
    cross_encoder: str | None = None  # path to a local CrossEncoder model

    @field_validator("weights")
    @classmethod
    def _weights_ok(cls, v: dict[str, float]) -> dict[str, float]:
        return check_weights(v, "rerank")


class ContextConfig(_Frozen):
    budget: int = Field(512, ge=1)  # tokens of the experiment tokenizer
    policy: Literal["skip", "truncate", "stop"] = "skip"  # for the chunk that does not fit


class GeneratorConfig(_Frozen):
    name: str = "extractive"  # registry name: extractive | smollm2 | openai | closed_book
    threshold: float = Field(0.3, ge=0, le=1)  # extractive: refuse below this support
    max_new_tokens: int = Field(48, ge=1, le=4096)
    temperature: float = Field(0.0, ge=0)
    seed: int = 0
    # stochastic generation (temperature > 0): answers per question, with seeds seed,
    # seed+1, ...; per-question scores are the means over repeats
    repeats: int = Field(1, ge=1, le=50)
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0)
    concurrency: int = Field(2, ge=1)
    cost_per_1k_in: float = Field(0.0, ge=0)
    cost_per_1k_out: float = Field(0.0, ge=0)


DEFAULT_SYSTEM = (
    "You answer questions using only the numbered context passages. "
    "Answer with a short phrase copied from the context. "
    "If the context does not contain the answer, reply exactly: {refusal}"
)
DEFAULT_USER = "Context:\n{context}\n\nQuestion: {question}\nAnswer:"


class PromptConfig(_Frozen):
    version: str = "v1"
    system: str = DEFAULT_SYSTEM
    user: str = DEFAULT_USER
    refusal: str = "I don't know."
    # zh: the built-in Chinese prompt for every question; auto: for questions with CJK
    # characters; en: system / user / refusal above for every question.
    language: Literal["auto", "en", "zh"] = "auto"


class PipelineConfig(_Frozen):
    """A variant's full pipeline. `options` holds free-form settings of plugin components,
    keyed by component name (a plugin declares `reads=("options.<name>",)`)."""

    chunking: ChunkingConfig = ChunkingConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    fusion: FusionConfig = FusionConfig()
    rerank: RerankConfig = RerankConfig()
    context: ContextConfig = ContextConfig()
    generator: GeneratorConfig = GeneratorConfig()
    prompt: PromptConfig = PromptConfig()
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)


_MISSING = object()


def get_dotted(data: dict, dotted: str, default: object = None) -> object:
    """The value at a dotted path (`fusion.rrf_k`) of a nested dict, else `default`."""
    node: object = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def has_dotted(data: dict, dotted: str) -> bool:
    return get_dotted(data, dotted, _MISSING) is not _MISSING


def format_value(value: object) -> str:
    """A config value as a short label (variant names, report columns): lists joined by
    '+', dicts as k:v pairs, whole floats as ints."""
    if isinstance(value, (list, tuple)):
        return "+".join(format_value(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}:{format_value(v)}" for k, v in sorted(value.items()))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def flatten(obj: object, prefix: str = "") -> dict[str, object]:
    """Flat dotted dict of a (nested) config: {'fusion.rrf_k': 60, ...}."""
    data = obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
    out: dict[str, object] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict) and v:
                out.update(flatten(v, key))
            else:
                out[key] = v
    else:
        out[prefix] = data
    return out
