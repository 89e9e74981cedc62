"""Tables that repeat or mislead across a sweep's variants, decided from the variants'
configs (variants.json):

- with `rerank.method: none` in every variant the reranked rankings are the fused
  candidates unchanged, so every reranked/* table repeats its candidates/* table: the
  report shows one of the two and says why once;
- candidates/*@k and reranked/*@k count k chunks: when variants chunk differently
  (chunking.size or chunking.method), k chunks of 128 tokens and k of 512 hold different
  amounts of text, and those metrics do not compare the chunkings; final/* (the context
  packed into one token budget) does.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.dotted import get_dotted
from ablate.components.contract.vocab import BASELINE
from ablate.components.text.chunking import chunk_token_limit

AT_K = re.compile(r"^(candidates|reranked)/.+_at_\d+$")
CHUNK_FIELDS = ("chunking.size", "chunking.method")
MAX_NAMED = 4


def rerank_changes_nothing(variants: Sequence[dict[str, Any]],
                           per_query: pl.DataFrame | None = None) -> str:
    """Why reranked/* equals candidates/* for every variant ('rerank is none in every
    variant'; without configs: equal on every question), or '' when it may not."""
    configs = [c for v in variants if isinstance(c := v.get("config"), dict)]
    if variants and len(configs) == len(variants):
        methods = {get_dotted(c, "rerank.method", None) for c in configs}
        return "rerank is none in every variant" if methods == {"none"} else ""
    if per_query is None:
        return ""
    pairs = [(c, "candidates/" + c.partition("/")[2]) for c in per_query.columns
             if c.startswith("reranked/")]
    pairs = [(r, c) for r, c in pairs if c in per_query.columns]
    if not pairs or not per_query.height:
        return ""
    for r, c in pairs:
        a, b = (per_query[x].cast(pl.Float64, strict=False).fill_nan(None) for x in (r, c))
        if not a.equals(b, null_equal=True):  # type: ignore[call-arg]
            return ""
    return "reranked/* equals candidates/* on every question of every variant"


def repeated(metrics: Sequence[str], key: Sequence[str]) -> set[str]:
    """The tables left out as repeats when reranked = candidates: reranked/X when
    candidates/X is shown, candidates/X when reranked/X is a key metric and candidates/X
    is not."""
    have = set(metrics)
    out = set()
    for m in metrics:
        stage, _, rest = m.partition("/")
        other = ("candidates/" if stage == "reranked" else "reranked/") + rest
        if stage not in ("reranked", "candidates") or other not in have:
            continue
        if stage == "reranked" and m not in key:
            out.add(m)
        elif stage == "candidates" and other in key and m not in key:
            out.add(m)
    return out


def chunked_differently(variants: Sequence[dict[str, Any]], names: Sequence[str] | None = None,
                        baseline: str = BASELINE) -> list[str]:
    """The variants (of `names`, else all) whose chunking size or method differs from the
    baseline's (by their configs; none when a config is missing)."""
    base = next((v.get("config") for v in variants if v.get("name") == baseline), None)
    if not isinstance(base, dict):
        return []
    out = []
    for v in variants:
        cfg = v.get("config")
        if v.get("name") == baseline or not isinstance(cfg, dict) or (
                names is not None and v.get("name") not in names):
            continue
        if any(get_dotted(cfg, f, None) != get_dotted(base, f, None) for f in CHUNK_FIELDS):
            out.append(str(v.get("name")))
    return out


def at_k(metrics: Sequence[str]) -> list[str]:
    """The candidates/*@k and reranked/*@k metrics among `metrics`."""
    return [m for m in metrics if AT_K.match(m)]


def chunk_units_finding(metrics: Sequence[str], variants: Sequence[dict[str, Any]],
                        baseline: str = BASELINE) -> list[str]:
    """A finding when variants chunk differently and candidates/reranked @k metrics are
    compared: they are not comparable across chunk sizes; final/* is."""
    differ = chunked_differently(variants, baseline=baseline)
    if not differ or not at_k(metrics):
        return []
    base = next((v.get("config") for v in variants if v.get("name") == baseline), None) or {}
    named = ", ".join(differ[:MAX_NAMED]) + (f", … ({len(differ) - MAX_NAMED} more)"
                                             if len(differ) > MAX_NAMED else "")
    size = chunk_token_limit(base)
    text = ("Not comparable across chunk sizes: candidates/*@k and reranked/*@k count k "
            f"chunks, and {named} {'chunks' if len(differ) == 1 else 'chunk'} differently "
            "from the baseline"
            + (f" ({size}-token chunks)" if size is not None else "")
            + ", so k chunks hold different amounts of text there")
    budget = get_dotted(base, "context.budget", None)
    values = {get_dotted(v.get("config") or {}, "context.budget", budget)
              for v in variants if v.get("name") in differ} | {budget}
    budgets = [str(b) for b in sorted(values, key=lambda b: (not isinstance(b, (int, float)),
                                                             b if isinstance(b, (int, float))
                                                             else 0, str(b)))]
    if any(m.startswith("final/") for m in metrics) and len(budgets) > 1:
        text += ("; final/* does not compare them on equal text either: these variants "
                 f"change the token budget too (context.budget {', '.join(budgets)}).")
    elif any(m.startswith("final/") for m in metrics):
        text += ("; final/* (the context under one token budget"
                 + (f", {budget} tokens" if budget is not None else "")
                 + ") is the comparable view.")
    else:
        text += ("; this sweep has no final/* metrics (no context under one token budget), "
                 "so none of its metrics compares these chunkings on equal text.")
    return [text]


def chunk_units_note(names: Sequence[str], variants: Sequence[dict[str, Any]],
                     shown: Sequence[str], metrics: Sequence[str],
                     baseline: str = BASELINE) -> str:
    """A variable section's note above its tables when its variants chunk differently
    and it shows candidates/reranked @k metrics ('' otherwise); `metrics`: every compared
    metric (whether final/* ones exist to point to)."""
    if not at_k(shown) or not chunked_differently(variants, names, baseline):
        return ""
    final = any(m.startswith("final/") for m in metrics)
    return (f"{', '.join(at_k(shown))}: k chunks of different sizes, not comparable across "
            "these chunk sizes (they hold different amounts of text); "
            + ("final/* metrics compare the chunkings under one token budget." if final else
               "no final/* metric here compares them under one token budget."))


def not_comparable(stats: pl.DataFrame, variants: Sequence[dict[str, Any]],
                   baseline: str = BASELINE) -> pl.DataFrame:
    """`stats` with `significant` false where the report calls a comparison not comparable
    (a candidates/*@k or reranked/*@k metric of a variant that chunks differently from the
    baseline), so the overview, its plot, the findings and the drill-down never colour it
    better or worse; `not_comparable` marks those rows."""
    differ = chunked_differently(variants, baseline=baseline)
    if not stats.height or "metric" not in stats.columns:
        return stats
    flag = pl.col("variant").is_in(differ) & pl.col("metric").str.contains(AT_K.pattern)
    out = stats.with_columns(flag.alias("not_comparable"))
    if "significant" in out.columns:
        out = out.with_columns((pl.col("significant") & ~pl.col("not_comparable")).alias("significant"))
    return out
