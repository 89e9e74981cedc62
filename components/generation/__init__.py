"""Generators: `none` (retrieval only: no generate stage), `extractive` (no model),
`smollm2` / `closed_book` (local GGUF via llama-cpp-python, the `ablate[local-llm]`
extra), `openai` (any OpenAI-compatible HTTP endpoint).

Importing this package registers all of them; heavy engines load lazily on first use.
"""

from components.generation import extractive, llama_local, none, openai_http  # noqa: F401  (register)
from components.generation.base import GENERATORS, BaseGenerator, Generator, make_generator
from components.generation.cache import GenerationCache
from components.generation.prompt import is_refusal, render_prompt

__all__ = ["GENERATORS", "BaseGenerator", "Generator", "GenerationCache", "is_refusal",
           "make_generator", "render_prompt"]

