"""The pipeline configuration of one variant: a full, frozen, validated record.

Field names are the dotted names that sweeps vary (`fusion.rrf_k`, `chunking.size`) and
that MLflow shows as params. Each stage reads only its own section(s), so its cache key
depends only on what it reads.
"""

from __future__ import annotations

import difflib
import math
from typing import TYPE_CHECKING, Any, Callable, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ablate.components.contract.frozen import Frozen
from ablate.components.contract.retrieval_config import (  # noqa: F401 - the config's sections
    AnnConfig,
    BM25Config,
    GraphConfig,
    RetrievalConfig,
)
from ablate.components.contract.vocab import PERTURBATION_NAMES


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


class ChunkingConfig(Frozen):
    """How documents are cut into chunks (character offsets kept exactly)."""

    method: str = "token_window"
    """Chunker: `token_window` (windows of tokens), `sentence` (whole sentences packed up to
    `size`) or `document` (each document whole, one chunk, no budget: TREC and BEIR
    collections judged per document)."""
    size: int = Field(256, ge=8, le=8192)
    """Maximum tokens per chunk (the experiment tokenizer, MiniLM WordPiece, no special tokens)."""
    overlap: int = Field(32, ge=0)
    """Tokens consecutive chunks may share; must be smaller than `size`."""

    @model_validator(mode="after")
    def _overlap_below_size(self) -> "ChunkingConfig":
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


class FusionConfig(Frozen):
    """How several paths' rankings become one candidate ranking (ignored for one path)."""

    method: str = "rrf"
    """`rrf` (reciprocal rank fusion) or `convex` (weighted sum of normalised scores);
    `passthrough` is what a single path gets whatever this says."""
    rrf_k: int = Field(60, ge=1)
    """RRF constant k in w / (k + rank)."""
    weights: dict[str, float] | None = None
    """Weight per path, e.g. `{bm25: 0.3, dense: 0.7}`; unset: equal weights."""
    normalization: str = "minmax"  # a `score normalization` (fusion.py), checked by preflight
    """Score normalisation of `convex` fusion."""

    @field_validator("weights")
    @classmethod
    def _weights_ok(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        return None if v is None else check_weights(v, "fusion")


class RerankConfig(Frozen):
    """Reranking of the top fused candidates, and how many go on to the context."""

    method: str = "none"
    """`none` keeps the fused order; `composite` reorders by a weighted sum of signals."""
    depth: int = Field(20, ge=1)
    """Top candidates reranked, and the most chunks the context may take from."""
    weights: dict[str, float] = Field(default_factory=lambda: {"fusion": 1.0})
    """`composite`: weight per signal (`semantic`, `lexical`, `fusion`, `source`, `cross_encoder`)."""
    default_credibility: float = Field(0.5, ge=0, le=1)
    """`source` signal: credibility of a document that gives none."""
    cross_encoder: str | None = None
    """`cross_encoder` signal: path to a local sentence-transformers CrossEncoder model."""

    @field_validator("weights")
    @classmethod
    def _weights_ok(cls, v: dict[str, float]) -> dict[str, float]:
        return check_weights(v, "rerank")


class ContextConfig(Frozen):
    """Packing ranked chunks into the prompt under a fixed token budget."""

    budget: int = Field(512, ge=1)
    """Context tokens (experiment tokenizer), the same for every variant unless swept."""
    policy: Literal["skip", "truncate", "stop"] = "skip"
    """The chunk that does not fit: `skip` it and try the next, `truncate` it and stop, or `stop`."""


class SettingError(ValueError):
    """A bad field of a section, named (so the message can point at its YAML line)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


class GeneratorConfig(Frozen):
    """The answer generator: its `name`, the fields every generator shares (`repeats`,
    `cost_per_1k_in`, `cost_per_1k_out`) and the chosen generator's own settings, listed
    under each generator below (its settings model, declared beside it in
    components/generation/). A field the chosen generator does not read is refused,
    except one the baseline holds for another generator the sweep runs (it is ignored
    where unread, and `ablate check` says so)."""

    # each generator's own settings are stored beside these fields, validated by its
    # settings model (_generator_settings); every built-in generator's fields are held
    # with their defaults, so a config dumps (and its id is) what it always was
    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)

    name: str = "extractive"
    """`extractive` (copies the best-supported span, no model), `smollm2` (local
    SmolLM2-135M, see `backend`), `openai` (an OpenAI-compatible endpoint),
    `closed_book` (SmolLM2 without context) or `none` (a retrieval-only study: no answers;
    the context is still assembled under the budget)."""
    repeats: int = Field(1, ge=1, le=50)
    """Stochastic generation (temperature > 0): answers per question, with seeds `seed`,
    `seed`+1, ...; per-question scores are the means over repeats."""
    cost_per_1k_in: float = Field(0.0, ge=0)
    """Price per 1,000 prompt tokens, for the `cost/usd` metric."""
    cost_per_1k_out: float = Field(0.0, ge=0)
    """Price per 1,000 generated tokens, for the `cost/usd` metric."""

    if TYPE_CHECKING:  # a generator's own setting (`cfg.threshold`): read as pydantic's extras
        def __getattr__(self, name: str) -> Any: ...

    @model_validator(mode="after")
    def _generator_settings(self) -> "GeneratorConfig":
        """Fields beside the shared ones belong to a registered generator's settings model
        (the chosen generator's first): validated by it; the defaults of every built-in
        generator's fields and of the chosen generator's own are filled in, so equal
        settings dump (and key) alike; a field no generator declares is refused with the
        nearest known field."""
        extra = self.__pydantic_extra__
        models = _settings_models(self.name)
        if extra is None or (not extra and not models):
            return self
        for key, value in list(extra.items()):
            owner = next((m for _, m, _ in models if key in m.model_fields), None)
            if owner is None:
                known = sorted(set(type(self).model_fields).union(
                    *(m.model_fields for _, m, _ in models)))
                near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
                raise SettingError("unknown field" + (f"; did you mean {near[0]}?" if near else
                                                      f" (known: {', '.join(known)})"), key)
            try:
                extra[key] = getattr(owner.model_validate({key: value}), key)
            except ValidationError as exc:
                raise SettingError(exc.errors()[0]["msg"].removeprefix("Value error, "),
                                   key) from None
        for name, model, builtin in models:
            if builtin or name == self.name:
                for key, info in model.model_fields.items():
                    if key not in extra and key not in type(self).model_fields:
                        extra[key] = info.get_default(call_default_factory=True)
        return self


SettingsModels = Callable[[], list[tuple[str, type[BaseModel], bool]]]
# (generator name, settings model, built in) of the registered generators: set by the
# generator registry (components/generation/base.py), so this bottom layer imports none of it
_SETTINGS_MODELS: list[SettingsModels] = []


def provide_settings_models(lookup: SettingsModels) -> None:
    _SETTINGS_MODELS[:] = [lookup]


def registered_settings_models() -> list[tuple[str, type[BaseModel], bool]]:
    """(generator name, settings model, built in) of the registered generators that
    declare a model of their own."""
    return _SETTINGS_MODELS[0]() if _SETTINGS_MODELS else []


def _settings_models(chosen: str) -> list[tuple[str, type[BaseModel], bool]]:
    """registered_settings_models(), the `chosen` generator's first."""
    return sorted(registered_settings_models(), key=lambda nm: nm[0] != chosen)


DEFAULT_SYSTEM = (
    "You answer questions using only the numbered context passages. "
    "Answer with a short phrase copied from the context. "
    "If the context does not contain the answer, reply exactly: {refusal}"
)
DEFAULT_USER = "Context:\n{context}\n\nQuestion: {question}\nAnswer:"


class PromptConfig(Frozen):
    """The prompt of model generators."""

    version: str = "v1"
    """A label for the prompt; change it to tell prompts apart in tables."""
    system: str = DEFAULT_SYSTEM
    """System message; `{refusal}` is replaced by `refusal`."""
    user: str = DEFAULT_USER
    """User message; `{context}` and `{question}` are filled in."""
    refusal: str = "I don't know."
    """The reply that counts as a refusal."""
    language: Literal["auto", "en", "zh"] = "auto"
    """`zh`: the built-in Chinese prompt for every question; `auto`: for questions with CJK
    characters; `en`: `system` / `user` / `refusal` above for every question."""
    cite: bool = False
    """Ask the generator to cite the numbered context passages it used: a fixed sentence
    is appended to the system message (in Chinese for Chinese questions) asking for the
    passage numbers in square brackets after the answer (`Paris [1]`, `[1][3]`). The
    markers are parsed from the reply (`[n]`, `【n】`, `［n］`, lists such as `[1, 3]`) and
    removed from the answer before it is scored, so EM/F1 and refusal detection never see
    them; the `citation/*` metrics score the passages cited. Part of the generate stage's
    key. The `extractive` generator always cites the passage it copied from, with or
    without it; closed book has nothing to cite."""


class QueryConfig(Frozen):
    """The query as the pipeline sees it (the gold spans and answers never change)."""

    perturbation: Literal[PERTURBATION_NAMES] = "none"  # type: ignore[valid-type]
    """Robustness pairs: the question text as retrieval, reranking, generation and the judge
    read it: `none`, `typo` (two adjacent characters swapped in one word), `casing`,
    `stopword` (one dropped), `punctuation` (removed), `script` (traditional <-> simplified
    Chinese), `fullwidth` (full-width forms); seeded by the question id
    (components/text/perturbation.py)."""


class PipelineConfig(Frozen):
    """A variant's full pipeline. `options` holds free-form settings of plugin components,
    keyed by component name (a plugin declares `reads=("options.<name>",)`)."""

    chunking: ChunkingConfig = ChunkingConfig()
    """Chunking."""
    retrieval: RetrievalConfig = RetrievalConfig()
    """Retrieval paths."""
    fusion: FusionConfig = FusionConfig()
    """Fusion of several paths."""
    rerank: RerankConfig = RerankConfig()
    """Reranking."""
    context: ContextConfig = ContextConfig()
    """Context packing."""
    generator: GeneratorConfig = Field(default_factory=GeneratorConfig)
    """Answer generation."""
    prompt: PromptConfig = PromptConfig()
    """Prompt of model generators."""
    query: QueryConfig = QueryConfig()
    """The query text the pipeline reads (robustness perturbations)."""
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Free-form settings of plugin components, keyed by component name."""
