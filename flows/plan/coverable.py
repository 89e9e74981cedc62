"""`ablate check`'s warning on evidence spans a swept chunking can never cover to the
label threshold (components/text/span_coverage.py): per distinct chunking of the variants, the
documents holding evidence are chunked (the corpus's other documents do not matter) and
each span's best covered fraction compared with `metrics.label_threshold`."""

from __future__ import annotations

from typing import Any

from ablate.components.text.chunking import chunk_documents
from ablate.components.text.span_coverage import uncoverable_spans


def coverage_lines(ctx: Any) -> list[str]:
    """One warning line per chunking under which some evidence span has no chunk covering
    the label threshold of it; none in document label mode (any chunk of the document is
    relevant there)."""
    if getattr(ctx, "label_mode", "span") != "span":
        return []
    threshold = ctx.spec.metrics.label_threshold
    cited = {s.doc_id for q in ctx.questions for g in q.evidence for s in g}
    docs = [d for d in ctx.dataset.documents if d.doc_id in cited]
    seen: dict[str, Any] = {}
    for v in ctx.variants:
        cfg = v.config.chunking
        seen.setdefault(cfg.model_dump_json(), cfg)
    out = []
    for cfg in seen.values():
        bad, total = uncoverable_spans(chunk_documents(docs, cfg, ctx.tokenizer), ctx.questions,
                                       threshold)
        if bad:
            out.append(f"chunking {cfg.method} size {cfg.size} (overlap {cfg.overlap}): {bad} of "
                       f"{total} evidence spans have no chunk covering {threshold:g} of them "
                       "(metrics.label_threshold), so no retrieval can find them at this "
                       "chunking and their questions' recall there is capped")
    return out
