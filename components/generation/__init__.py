"""Generators: `none` (retrieval only: no generate stage), `extractive` (no model),
`smollm2` / `closed_book` (a local GGUF file, on torch by default or on llama-cpp-python,
the `ablate[local-llm]` extra), `openai` (any OpenAI-compatible HTTP endpoint).

Each registers on import (ablate.components.catalogue.load() imports them all); heavy
engines load lazily on first use.
"""

from ablate.components.generation.base import GENERATORS, BaseGenerator, Generator, make_generator
from ablate.components.generation.cache import GenerationCache
from ablate.components.generation.prompt import is_refusal, render_prompt

__all__ = ["GENERATORS", "BaseGenerator", "Generator", "GenerationCache", "is_refusal",
           "make_generator", "render_prompt"]

