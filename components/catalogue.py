"""The one registration loader: `load()` registers every built-in component in its
registry. It sits above every component module (it imports them; none imports it), so
the registries below it never import what registers into them.

Whatever looks components up by name (the CLI, the sweep flow, a spec being read, a test
session, a script using ablate as a library) calls `load()` first; it is idempotent.
Looking a name up before it raises an error that says to call it, never a silent miss.
"""

from __future__ import annotations

from ablate.components.contract import registry


def load() -> None:
    """Import the modules that register the built-in components (once per process)."""
    if registry.builtins_loaded():
        return
    from ablate.components.generation import extractive, llama_local, none, openai_http  # noqa: F401
    from ablate.components.judge import (
        backends,  # noqa: F401
        ragas,  # noqa: F401
        torch_judge,  # noqa: F401
    )
    from ablate.components.metrics import builtin, citation, consistency, index, trec  # noqa: F401
    from ablate.components.retrieval import fusion, rerank, stages  # noqa: F401
    from ablate.components.retrieval.dense import ann as dense_ann  # noqa: F401
    from ablate.components.retrieval.dense import backends as dense_backends  # noqa: F401
    from ablate.components.retrieval.dense import path as dense_path  # noqa: F401
    from ablate.components.retrieval.dense import signal as dense_signal  # noqa: F401
    from ablate.components.retrieval.graph import path as graph_path  # noqa: F401
    from ablate.components.retrieval.lexical import analyzer, analyzer_lucene, analyzers_zh  # noqa: F401
    from ablate.components.retrieval.lexical import path as lexical_path  # noqa: F401
    from ablate.components.retrieval.lexical import signal as lexical_signal  # noqa: F401
    from ablate.components.stats import correction, paired_tests  # noqa: F401
    from ablate.components.text import chunking  # noqa: F401
    registry.mark_builtins_loaded()
