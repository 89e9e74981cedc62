"""The judge's configuration: the experiment file's `judge:` section (experiment-level,
never a swept pipeline field, so every variant is judged by the same judge).

`backend` names a registered judge backend (`llama_cpp`: a local GGUF file run in-process
by llama-cpp-python, the bundled SmolLM2 by default; `openai`: any OpenAI-compatible
endpoint: vLLM, Ollama, llama.cpp's server, a hosted API); the spec checks the name
against the `judge` registry (flows/plan/spec.py). `metrics` names registered judged
metrics (ablate.components.metrics.judged). Decoding is greedy (temperature 0) with a
fixed seed, so the same inputs give the same verdicts. What the judge's stage keys record
of this section comes from declarations (ablate.components.judge.keys): the fields the
backend and the chosen judged metrics read, never its settings; the prompts enter the
keys by the hash of their files.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ablate.components.metrics.judged import judged_names
from ablate.components.runtime.env_refs import refuse_env_refs
from ablate.components.runtime.models import MINILM_NAME

JSON_MODES = ("json_schema", "json_object_schema", "json_object")


class JudgeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    backend: str = "llama_cpp"
    """A registered judge backend: `llama_cpp` (a local GGUF file in-process), `torch` (the
    same file decoded by PyTorch in batches) or `openai` (any OpenAI-compatible endpoint)."""
    model: str | None = None
    """`llama_cpp`, `torch`: a GGUF path (default: the bundled SmolLM2); `openai`: the model name."""
    base_url: str | None = None
    """`openai`: the endpoint, e.g. `http://127.0.0.1:8000/v1`."""
    api_key_env: str | None = None
    """`openai`: the NAME of the environment variable holding the key (never logged)."""
    json_mode: Literal[JSON_MODES] = "json_schema"  # type: ignore[valid-type]
    """`openai`: how structured output is asked for: `json_schema` (response_format
    json_schema: OpenAI, vLLM, Ollama, llama.cpp's server), `json_object_schema`
    (llama-cpp-python's server), `json_object` (plain JSON mode, schema in the prompt).
    Verdicts are always parsed strictly."""
    prompts: str = "v1"
    """A bundled prompt version, or a folder holding `en.yaml` / `zh.yaml`."""
    language: Literal["auto", "en", "zh"] = "auto"
    """Prompt language: `auto` uses the Chinese prompts for Chinese questions."""
    metrics: tuple[str, ...] = Field(default_factory=judged_names)
    """The judged metrics to compute."""
    claims: Literal["judge", "sentences"] = "judge"
    """Who splits an answer into claims: the judge, or a sentence splitter."""
    max_claims: int = Field(6, ge=1, le=32)
    """Most claims judged per answer."""
    max_passages: int = Field(10, ge=1, le=100)
    """Context precision: the top passages judged."""
    relevancy_questions: int = Field(3, ge=1, le=10)
    """Answer relevancy (RAGAS): questions the judge generates from each answer (RAGAS's
    `strictness`, 3 by default)."""
    embedder: str = MINILM_NAME
    """Answer relevancy (RAGAS): the sentence-transformers model whose cosine compares the
    generated questions with the question, named as `retrieval.dense_model` is (the
    bundled `all-MiniLM-L6-v2`, retrieval's default, a local model folder or an installed
    model package); one for the experiment, so every variant is measured by the same
    embedder. English-only by default: give a multilingual model for Chinese questions."""
    max_new_tokens: int = Field(160, ge=8, le=4096)
    """Most tokens of one verdict."""
    temperature: float = Field(0.0, ge=0.0, le=0.0)
    """Always 0 (greedy): the same inputs give the same verdicts."""
    seed: int = 0
    """The judge's sampling seed."""
    calibration: str | None = None
    """A labelled calibration file (JSONL, relative to the experiment file): the report
    shows the judge's agreement with it next to every judged metric."""
    labels: str | None = None
    """Human or gold verdicts on some questions' answers (JSONL, relative to the experiment
    file; docs/judge-labels.md): every judged metric they label also gets judge-corrected
    estimates (prediction-powered inference), rows `ppi/<metric>` in stats.parquet. The
    labelled questions should be a random subset of the sweep's questions."""
    timeout_s: float = Field(120.0, gt=0)
    """`openai`: seconds per request."""
    max_retries: int = Field(3, ge=0)
    """`openai`: retries of a failed request."""
    concurrency: int = Field(1, ge=1)
    """`openai`: requests in flight."""
    batch_size: int = Field(8, ge=1, le=256)
    """`torch`: verdicts decoded together (a speed setting: the verdicts are the same at any
    batch size)."""

    @field_validator("calibration", "labels")
    @classmethod
    def _no_env_in_paths(cls, v: str | None) -> str | None:
        """`$VAR` and `${VAR}` are not expanded: refused (components/runtime/env_refs.py)."""
        return refuse_env_refs(v)

    @field_validator("metrics")
    @classmethod
    def _metrics_ok(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        known = judged_names()
        unknown = [m for m in v if m not in known]
        if unknown:
            raise ValueError(f"unknown judged metric '{unknown[0]}' (known: {', '.join(known)})")
        if not v:
            raise ValueError("at least one judged metric is needed")
        return tuple(m for m in known if m in v)
