"""The questions behind each verdict: for a comparison (variant vs baseline on one metric)
the questions the variant won and lost, each with its text, gold answer and evidence,
the first stage where the two runs diverge, both final contexts with the gold span marked
and both answers. The report shows it for every significant comparison on a key metric
(Markdown that folds each question, so report.html does too); `ablate explain` shows it in
a terminal. Everything comes from the sweep folder: per_query.parquet (values, buckets,
answers, clusters) and the questions and contexts it keeps (report.evidence). Which
questions changed, and which comparisons open, is report.changed_questions; this module
renders them.

Won and lost follow the metric's direction (won: better); a question is changed when both
runs define the metric and the values differ beyond rounding (the statistics' own tie
rule, stats.compare.pair_matrices), so the counts here are the W/L of the tables read by
direction."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import polars as pl

from ablate.components.contract.vocab import BASELINE
from ablate.components.report.changed_questions import (
    Change,
    Comparison,
    changes,
    comparisons,
    divergence,
    finite,
    rows_of,
    select,
)
from ablate.components.report.evidence import Evidence, Passage, context_key
from ablate.components.report.numbers import fmt, fmt_signed, is_significant

REPORT_LIMIT = 6  # questions shown per comparison in the report (ablate explain: --limit)
SECTION = "Questions behind the verdicts"



def marked(passage: Passage, gold: Iterable[Passage], open_: str, close: str,
           escape=lambda s: s) -> str:
    """A passage's text with every gold span it overlaps wrapped in open_/close."""
    cuts = sorted((max(g.start, passage.start) - passage.start, min(g.end, passage.end) - passage.start)
                  for g in gold if g.doc_id == passage.doc_id and g.start < passage.end
                  and g.end > passage.start)
    merged: list[list[int]] = []
    for s, e in cuts:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    out, pos, text = [], 0, passage.text
    for s, e in merged:
        out += [escape(text[pos:s]), open_, escape(text[s:e]), close]
        pos = e
    out.append(escape(text[pos:]))
    return "".join(out).replace("\n", " ")


def md_escape(text: str) -> str:
    """Text safe inside Markdown (and the HTML it becomes): no emphasis, links or tags."""
    text = html.escape(text.replace("\\", "\\\\"), quote=False)
    for ch in "`*_[]":
        text = text.replace(ch, "\\" + ch)
    return text.replace("\n", " ")


def _context_md(passages: list[Passage] | None, gold: list[Passage]) -> str:
    if passages is None:
        return "none (this run reads no assembled context, or it was not kept)"
    if not passages:
        return "empty"
    has = any(g.doc_id == p.doc_id and g.start < p.end and g.end > p.start
              for p in passages for g in gold)
    parts = [f"[{i + 1}] `{p.doc_id}` {marked(p, gold, '**', '**', md_escape)}"
             for i, p in enumerate(passages)]
    return ("" if has or not gold else "(no gold span) ") + " ¶ ".join(parts)


def _answer(row: dict[str, Any] | None) -> str:
    text = (row or {}).get("answer")
    return "–" if text is None or str(text).strip() == "" else str(text)


def _value_text(metric: str, c: Change) -> str:
    return f"{metric} {fmt(c.base)} → {fmt(c.value)}"


@dataclass(frozen=True)
class Views:
    """What rendering one variant's questions needs."""

    base_rows: dict[str, dict[str, Any]]
    var_rows: dict[str, dict[str, Any]]
    evidence: Evidence | None
    base_key: str | None
    var_key: str | None


def _views(per_query: pl.DataFrame, variants: Sequence[dict[str, Any]], variant: str,
           evidence: Evidence | None) -> Views:
    records = {v["name"]: v for v in variants}
    return Views(rows_of(per_query, BASELINE), rows_of(per_query, variant), evidence,
                 context_key(records.get(BASELINE, {})), context_key(records.get(variant, {})))


def _question_md(qid: str, lines_of: list[tuple[str, Change]], views: Views) -> list[str]:
    b, v = views.base_rows.get(qid), views.var_rows.get(qid)
    q = views.evidence.questions.get(qid) if views.evidence else None
    gold = q.spans() if q else []
    verdict = "lost" if any(not c.won for _, c in lines_of) else "won"
    stage = divergence(b, v)
    summary = " · ".join([verdict, f"<code>{html.escape(qid)}</code>",
                          *(html.escape(_value_text(m, c)) for m, c in lines_of),
                          f"diverges at {stage}" if stage else "no stage metric differs",
                          html.escape(q.question) if q else ""]).rstrip(" ·")
    out = [f'<details markdown="1"><summary>{summary}</summary>', ""]
    if q is None:
        out += ["(the question's text and contexts are not kept in this sweep folder: "
                "run the sweep again to add them)", ""]
    else:
        spans = "; ".join(f"`{s.doc_id}` [{s.start}, {s.end}) «{md_escape(s.text)}»" for s in gold)
        out += [f"- **question** {md_escape(q.question)} (cluster `{(b or {}).get('cluster')}`)",
                f"- **gold answer** {md_escape(' | '.join(q.answers)) or '– (unanswerable)'}",
                f"- **gold evidence** {spans or '–'}"]
    out += [f"- **diverges at** {stage or '–'}; bucket {(b or {}).get('bucket', '–')} → "
            f"{(v or {}).get('bucket', '–')}",
            f"- **baseline answer** «{md_escape(_answer(b))}»",
            f"- **variant answer** «{md_escape(_answer(v))}»"]
    if q is not None and views.evidence is not None:
        out += [f"- **baseline context** {_context_md(views.evidence.context(views.base_key, qid), gold)}",
                f"- **variant context** {_context_md(views.evidence.context(views.var_key, qid), gold)}"]
    return out + ["", "</details>", ""]


def _count_line(c: Comparison, shown: int, more: str = "in `ablate explain`") -> str:
    r = c.row
    rest = len(c.found) - shown
    return (f"- **{c.metric}** {fmt(r.get('mean_baseline'))} → {fmt(r.get('mean_variant'))} "
            f"(Δ {fmt_signed(r.get('delta'))}, on {fmt(r.get('n_used'))} questions): "
            f"lost {c.lost}, won {c.won} (in {c.clusters()} clusters); shown {shown}"
            + (f", {rest} more {more}" if rest > 0 else ""))


def drilldown_section(per_query: pl.DataFrame, stats: pl.DataFrame, variants: Sequence[dict[str, Any]],
                      key: Sequence[str], evidence: Evidence | None,
                      limit: int = REPORT_LIMIT) -> list[str]:
    """The report's drill-down: per variant with a significant key comparison, the count
    line of each such comparison and its questions, each folded (one block per question,
    listing every metric it changed among those comparisons)."""
    found = comparisons(per_query, stats, key)
    lines = [f"## {SECTION}", "",
             "For each significant comparison on a key metric, the questions the variant won and "
             "lost (by the metric's direction; ties left out): all of them when few, else the "
             "largest changes, balanced between lost and won and spread over clusters. Each "
             "question opens to its gold answer and evidence, the first stage where the runs "
             "diverge (candidates → reranked → final context → answer), both final contexts "
             "(gold span in **bold**, passages separated by ¶) and both answers. "
             "`ablate explain SWEEP_DIR --variant NAME` shows any variant's questions.", ""]
    if not found:
        return lines + ["No comparison on a key metric is significant.", ""]
    if evidence is None:
        lines += ["This sweep folder keeps no questions.parquet (written before the drill-down "
                  "existed): the questions are listed by id; run the sweep again (every stage is "
                  "reused) to see their texts and contexts.", ""]
    by_variant: dict[str, list[Comparison]] = {}
    position = {v["name"]: i for i, v in enumerate(variants)}
    for c in sorted(found, key=lambda c: position.get(c.variant, len(position))):
        by_variant.setdefault(c.variant, []).append(c)
    for variant, comps in by_variant.items():
        views = _views(per_query, variants, variant, evidence)
        lines += [f"### {variant}", ""]
        shown: dict[str, list[tuple[str, Change]]] = {}
        for c in comps:
            picked = select(c.found, limit)
            lines.append(_count_line(c, len(picked)))
            for ch in picked:
                shown.setdefault(ch.qid, []).append((c.metric, ch))
        lines.append("")
        for c in comps:  # every changed question of these comparisons that is shown
            for ch in c.found:
                if ch.qid in shown and all(m != c.metric for m, _ in shown[ch.qid]):
                    shown[ch.qid].append((c.metric, ch))
        for qid, items in shown.items():
            lines += _question_md(qid, items, views)
    return lines


# ---------------------------------------------------------------------- terminal


def explain_text(per_query: pl.DataFrame, stats: pl.DataFrame, variants: Sequence[dict[str, Any]],
                 variant: str, metrics: Sequence[str], evidence: Evidence | None,
                 side: str | None = None, limit: int = 10) -> str:
    """`ablate explain`: per metric, the count line and the shown questions as plain text
    (the gold span marked [[ ]])."""
    views = _views(per_query, variants, variant, evidence)
    srows = {(r["variant"], r["metric"]): r for r in stats.iter_rows(named=True)}
    out: list[str] = []
    for metric in metrics:
        found = tuple(changes(per_query, variant, metric))
        c = Comparison(variant, metric, found, srows.get((variant, metric), {}))
        picked = select(found, limit, side)
        sig = " (significant after correction)" if is_significant(c.row) else ""
        line = _count_line(c, len(picked), "(--limit, --lost, --won)")
        out += [f"{variant} vs baseline{sig}: {line.removeprefix('- ').replace('**', '')}", ""]
        if not found:
            out += ["  no question differs", ""]
        for ch in picked:
            out += _question_text(ch, metric, views)
    return "\n".join(out).rstrip() + "\n"


def _context_text(passages: list[Passage] | None, gold: list[Passage]) -> list[str]:
    if passages is None:
        return ["    none (this run reads no assembled context, or it was not kept)"]
    return [f"    [{i + 1}] {p.doc_id}: {marked(p, gold, '[[', ']]')}" for i, p in enumerate(passages)]


def _question_text(ch: Change, metric: str, views: Views) -> list[str]:
    b, v = views.base_rows.get(ch.qid), views.var_rows.get(ch.qid)
    q = views.evidence.questions.get(ch.qid) if views.evidence else None
    gold = q.spans() if q else []
    stage = divergence(b, v)
    out = [f"{'LOST' if not ch.won else 'WON '} {ch.qid} (cluster {ch.cluster}): "
           f"{_value_text(metric, ch)}; diverges at {stage or '–'}; bucket "
           f"{(b or {}).get('bucket', '–')} → {(v or {}).get('bucket', '–')}"]
    if q is not None:
        out += [f"  question: {q.question}",
                f"  gold answer: {' | '.join(q.answers) or '– (unanswerable)'}",
                "  gold evidence: " + ("; ".join(f"{s.doc_id} [{s.start}, {s.end}) {s.text!r}"
                                                 for s in gold) or "–")]
    out += [f"  baseline answer: {_answer(b)!r}", f"  variant answer:  {_answer(v)!r}"]
    if q is not None and views.evidence is not None:
        out += ["  baseline context:", *_context_text(views.evidence.context(views.base_key, ch.qid), gold),
                "  variant context:", *_context_text(views.evidence.context(views.var_key, ch.qid), gold)]
    return out + [""]


# ---------------------------------------------------------------------- MLflow table


def question_table(per_query: pl.DataFrame, variant: str, key: Sequence[str],
                   baseline: str = BASELINE) -> pl.DataFrame:
    """A variant's per-question table for its MLflow child (mlflow.log_table): question
    id, cluster, per key metric the baseline's and the variant's value (NaN where
    undefined), the stage where the two runs first diverge, both buckets; the baseline's
    own table has its values and bucket only. Rows in qid order."""
    metrics = [m for m in key if m in per_query.columns]
    own = rows_of(per_query, variant)
    base = {} if variant == baseline else rows_of(per_query, baseline)

    def value(row: dict[str, Any] | None, m: str) -> float:
        x = (row or {}).get(m)
        return float(x) if finite(x) else math.nan
    rows = []
    for qid in sorted(own):
        v, b = own[qid], base.get(qid)
        row: dict[str, Any] = {"qid": qid, "cluster": str(v.get("cluster"))}
        for m in metrics:
            if variant != baseline:
                row[f"{m} baseline"] = value(b, m)
            row[m if variant == baseline else f"{m} variant"] = value(v, m)
        if variant != baseline:
            row["diverges at"] = divergence(b, v) or "none"
            row["bucket baseline"] = str((b or {}).get("bucket", ""))
        row["bucket" if variant == baseline else "bucket variant"] = str(v.get("bucket", ""))
        rows.append(row)
    return pl.DataFrame(rows)
