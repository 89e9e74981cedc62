"""Findings name the stage their metric measures; a final/ finding says whether the
context token budget binds for the variant, and when it does, the same metric's change
before the budget (reranked/), so a chunk-size change on final/ is not read as retrieval."""

from __future__ import annotations

import polars as pl

from ablate.components.report.budget_use import budget_use, stage_text
from ablate.components.report.findings import findings, significant


def _config(size: int, depth: int = 20, budget: int = 512) -> dict:
    return {"chunking": {"size": size, "overlap": 0}, "rerank": {"depth": depth},
            "context": {"budget": budget, "policy": "skip"}}


VARIANTS = [{"name": "baseline", "config": _config(100)},
            {"name": "chunking.size=400", "config": _config(400)},
            {"name": "rerank.depth=3", "config": _config(100, depth=3)}]


def _per_query() -> pl.DataFrame:
    # contexts hold more chunks than budget / chunking.size (chunks shorter than the size,
    # e.g. paragraphs): the baseline's 475 tokens are 6.5 chunks, not 475 / 100 = 4.8
    rows = []
    for name, tokens, cut, held in (("baseline", 480.0, 1, 6.0), ("chunking.size=400", 470.0, 6, 2.0),
                                    ("rerank.depth=3", 300.0, 0, 3.0)):
        for i in range(20):
            rows.append({"variant": name, "qid": f"q{i}", "answerable": i < 18,
                         "bucket": "budget_cut" if i < cut else "ok",
                         "final/context_tokens": tokens - (i % 2) * 10,
                         "final/context_chunks": held + (i % 2)})
    return pl.DataFrame(rows)


def _row(variant: str, metric: str, delta: float, significant: bool = True) -> dict:
    return {"variant": variant, "metric": metric, "delta": delta, "ci_low": delta - 0.02,
            "ci_high": delta + 0.02, "p_adjusted": 0.001 if significant else 0.7,
            "significant": significant, "n_used": 18, "mde": 0.05, "wins": 3, "losses": 9,
            "missingness_flag": False}


STATS = pl.DataFrame([_row("chunking.size=400", "final/recall_at_5", -0.2),
                      _row("chunking.size=400", "reranked/recall_at_5", 0.01, significant=False),
                      _row("chunking.size=400", "answer/f1", -0.1),
                      _row("rerank.depth=3", "final/recall_at_5", -0.05)])
KEY = ["final/recall_at_5", "answer/f1"]


def _sentence(variant: str, metric: str, **kw) -> str:
    lines = significant(STATS, KEY, **kw)
    (line,) = [x for x in lines if x.startswith(f"**{variant}**") and f" {metric} " in x]
    return line


def test_a_final_finding_says_what_changed_before_the_budget_and_refers_to_one_budget_note():
    line = _sentence("chunking.size=400", "final/recall_at_5", variants=VARIANTS,
                     per_query=_per_query())
    assert line.startswith("**chunking.size=400** lowers (worse) final/recall_at_5 by 0.200")
    assert ", measured on the final context; before the budget, reranked/recall_at_5 changes by " \
           "+0.010 [-0.010, 0.030], adjusted p 0.7" in line
    assert line.endswith("(see Budget below).") and line.count(". ") == 0  # one sentence
    lines = significant(STATS, KEY, variants=VARIANTS, per_query=_per_query())
    (note,) = [x for x in lines if x.startswith("Budget: ")]
    assert lines[-1] == note
    assert "the reranked top packed into the 512-token context budget" in note
    assert "chunking.size=400 binds (100% of contexts have no room for another chunk), 2.5 " \
           "chunks (≤ 400 tokens each) in 465 tokens on average, gold evidence cut for 33% of " \
           "answerable questions" in note
    assert "baseline binds (100% of contexts have no room for another chunk), 6.5 chunks " \
           "(≤ 100 tokens each) in 475 tokens on average, gold evidence cut for 6% of " \
           "answerable questions" in note
    # stated once, not in every final/ finding
    assert sum("tokens each" in x for x in lines) == 1
    assert sum("binds" in x for x in lines) == 1


def test_the_chunk_count_is_the_contexts_own_never_budget_over_chunk_size():
    """Issue 37: '≈2.5 chunks of 200' was printed (budget / chunk size) where the contexts
    held 5.8 paragraph chunks; the count is the mean of final/context_chunks, and a folder
    without that column states no count rather than the arithmetic."""
    note = significant(STATS, KEY, variants=VARIANTS, per_query=_per_query())[-1]
    assert "4.8 chunks" not in note and "1.2 chunks" not in note
    old = _per_query().drop("final/context_chunks")
    note = significant(STATS, KEY, variants=VARIANTS, per_query=old)[-1]
    assert "chunks (" not in note and "chunks of 100 in" not in note
    assert "baseline binds (100% of contexts have no room for another chunk), 475 tokens on " \
           "average" in note


def test_a_budget_that_cannot_bind_is_said_not_to():
    lines = significant(STATS, KEY, variants=VARIANTS, per_query=_per_query())
    assert "rerank.depth=3 cannot bind (the reranked top 3 chunks of ≤ 100 tokens all fit)" in lines[-1]


def test_other_stages_are_named_and_carry_no_budget():
    line = _sentence("chunking.size=400", "answer/f1", variants=VARIANTS, per_query=_per_query())
    assert line.endswith(", measured on the generated answer.") and "budget" not in line
    assert stage_text("candidates/hit_at_5").startswith("the fused retrieval candidates")
    assert stage_text("reranked/mrr_at_10").startswith("the reranked top")


def test_without_configs_the_budget_is_said_to_be_unknown():
    text = " ".join(findings(STATS, KEY))
    assert "final/recall_at_5 by 0.200" in text and "Budget:" not in text
    assert "measured on the final context" in text and "whether the budget binds is not known" in text


def test_budget_use_numbers():
    use = budget_use("chunking.size=400", VARIANTS, _per_query())
    assert use is not None and use.binds and use.full == 1.0 and use.held == 2.5
    assert budget_use("rerank.depth=3", VARIANTS, _per_query()).can_bind is False
    assert budget_use("baseline", VARIANTS, None) is None
    assert budget_use("nobody", VARIANTS, _per_query()) is None


def test_a_chunker_that_reads_no_size_gives_no_chunk_bound():
    # `document` chunks are whole documents: chunking.size (left in the dumped config at
    # its default) bounds nothing, so whether the budget binds is not known
    whole = {**_config(100), "chunking": {"method": "document", "size": 100, "overlap": 0}}
    variants = [{"name": "baseline", "config": whole}]
    assert budget_use("baseline", variants, _per_query()) is None
