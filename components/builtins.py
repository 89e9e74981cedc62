"""Importing this module registers every built-in component in its registry."""

from components import chunking  # noqa: F401
from components.generation import extractive, llama_local, none, openai_http  # noqa: F401
from components.judge import backends  # noqa: F401
from components.metrics import builtin, consistency, judged  # noqa: F401
from components.retrieval import analyzer, dense_backends, fusion, rerank, stages  # noqa: F401
from components.stats import correction, paired_tests  # noqa: F401
