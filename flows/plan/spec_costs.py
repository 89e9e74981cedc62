"""The `costs:` section of an experiment file: a price per unit of every online stage
(docs/metrics.md#cost-per-question). Prices change no stage's output, so they are in no
retrieval, generation or judge stage key; only the score stage, which prices what the run
recorded, reads them (and then only when one is set, so an experiment without prices keeps
its keys)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ablate.flows.plan.spec_base import Section


class CostsSpec(Section):
    """Prices (US dollars) of each online stage of a question, for the `cost/*` metrics:
    `cost/embed`, `cost/search`, `cost/rerank`, `cost/generate` and their sum
    `cost/total` (what serving a question costs), and beside it `cost/judge` (what judging
    it costs), per question and (their means) per variant. Every price is 0 by
    default; a price is never negative."""

    embed_per_1k_tokens: float = Field(0.0, ge=0)
    """Per 1,000 query tokens embedded (each vector path embeds the question once;
    tokens counted with the experiment tokenizer)."""
    vector_search: float = Field(0.0, ge=0)
    """Per vector search (one per vector path of the variant and question)."""
    rerank_call: float = Field(0.0, ge=0)
    """Per candidate reranked (a variant with `rerank.method` other than `none` reranks
    its top `rerank.depth` candidates)."""
    generator_in_per_1k: float = Field(0.0, ge=0)
    """Per 1,000 prompt tokens of the generator; a variant's own
    `generator.cost_per_1k_in`, when not 0, wins (a sweep over generators prices each)."""
    generator_out_per_1k: float = Field(0.0, ge=0)
    """Per 1,000 generated tokens; a variant's own `generator.cost_per_1k_out`, when not 0,
    wins."""
    judge_in_per_1k: float = Field(0.0, ge=0)
    """Per 1,000 prompt tokens of the judge (every verdict behind the question's judged
    metrics, cached or not: the price of judging it, not this run's bill)."""
    judge_out_per_1k: float = Field(0.0, ge=0)
    """Per 1,000 tokens the judge returned."""

    def any(self) -> bool:
        """Whether any price is set (else the section changes nothing, not even a key)."""
        return any(v != 0 for v in self.model_dump().values())

    def prices(self) -> dict[str, Any]:
        return self.model_dump()
