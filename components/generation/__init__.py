"""Generators: `extractive` (no model), `smollm2` / `closed_book` (local GGUF via
llama-cpp-python), `openai` (any OpenAI-compatible HTTP endpoint).

Importing this package registers all of them; heavy engines load lazily on first use.
"""

from components.generation import extractive, llama_local, openai_http  # noqa: F401  (register)
from components.generation.base import GENERATORS, BaseGenerator, Generator, make_generator
from components.generation.cache import GenerationCache
from components.generation.prompt import is_refusal, render_prompt

__all__ = ["GENERATORS", "BaseGenerator", "Generator", "GenerationCache", "is_refusal",
           "make_generator", "reads_context", "render_prompt"]


def reads_context(name: str) -> bool:
    """Whether the generator registered as `name` reads the assembled context (its class's
    `uses_context`; False for closed book), so scoring knows what the answer could see."""
    return bool(getattr(GENERATORS.get(name), "uses_context", True))
