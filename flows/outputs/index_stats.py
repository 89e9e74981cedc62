"""The lexical index statistics of a TREC collection for the manifest: per analyzer the
bm25 path uses, the documents, unique terms and total terms (tokens after analysis) of
the whole collection, the figures Anserini's regressions publish for an index, so a
reviewer can compare the two (docs/bm25-variants.md)."""

from __future__ import annotations

from typing import Any

from ablate.components.export.regression import index_stats
from ablate.components.retrieval.lexical.analyzer import get_analyzer
from ablate.flows.run.context import RunContext


def trec_index_stats(ctx: RunContext) -> dict[str, Any] | None:
    """{analyzer: {documents, unique_terms, total_terms}} for a TREC data set, else None."""
    if not ctx.dataset.source.startswith("trec:"):
        return None
    seen: dict[str, dict[str, str]] = {}
    for v in ctx.variants:
        r = v.config.retrieval
        if "bm25" in r.paths and r.analyzer != "auto":
            seen.setdefault(r.analyzer, dict(r.analyzer_options))
    out: dict[str, Any] = {}
    for name, options in sorted(seen.items()):
        analyzer = get_analyzer(name, options)
        out[name] = index_stats([analyzer(d.text) for d in ctx.dataset.documents])
    return out
