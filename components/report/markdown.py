"""The Markdown ablation report and the one-screen terminal summary.

Inputs are plain data (manifest dict, variant dicts, stats and per-query frames), so the
report can be rebuilt from a sweep folder at any time.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.vocab import BASELINE
from ablate.components.report.comparability import chunk_units_note, repeated, rerank_changes_nothing
from ablate.components.report.factorial import factorial_section
from ablate.components.report.findings import findings, judge
from ablate.components.report.intervals import ci_cell, ci_text, disagrees
from ablate.components.report.judge import judge_section, metric_note
from ablate.components.report.judge_corrected import corrected_lines
from ablate.components.report.latency import E2E, latency_table, with_end_to_end
from ablate.components.report.numbers import fmt, fmt_n, fmt_p, fmt_signed, is_significant
from ablate.components.report.overview import FOREST, glossary_lines, head, overview_table
from ablate.components.report.plots import BUCKETS, COST, plot_name
from ablate.components.report.reference_summary import reference_section
from ablate.components.report.relevance import latency_stages, section_metrics, unaffected, unused
from ablate.components.report.risk_coverage import risk_coverage_section
from ablate.components.report.stats_caveats import error_rates_text, self_test_text
from ablate.components.report.sweep_data import family_counts, present_key, variables, variant_means
from ablate.components.report.tails import tails_section
from ablate.components.report.worth import worth_section

__all__ = ["fmt", "fmt_p", "mark", "findings", "render_markdown", "terminal_summary",
           "variant_means", "header_lines", "E2E", "with_end_to_end"]


APPENDIX_MD = "report-appendix.md"  # the other metrics' tables (ablate.components.report.appendix)
APPENDIX_HTML = "report-appendix.html"


def appendix_link(rest: Sequence[str]) -> list[str]:
    """The report's section pointing to the appendix (report.html's link is rewritten to
    the html page by build.py)."""
    return ["## All other metrics", "",
            f"Every other metric ({len(rest)}), every variant, with the same columns as the "
            f"tables above: [{APPENDIX_MD}]({APPENDIX_MD}).", ""]

def mark(row: dict[str, Any]) -> str:
    """▲/▼ for a significant rise/fall, with 'better'/'worse' from the metric's direction
    (nothing when Δ is not a finite number)."""
    if not is_significant(row):
        return ""
    arrow = "▲" if row["delta"] > 0 else "▼"
    verdict = judge(row["metric"], row["delta"]) if "metric" in row else ""
    return f"{arrow} {verdict}".strip()


def _variable_table(metric: str, points: Sequence[tuple[str, str]],
                    means: dict[tuple[str, str], float], stats_rows: dict[tuple[str, str], dict],
                    per_query: pl.DataFrame | None = None) -> list[str]:
    """One metric's table of the variants `points`; `per_query` counts the differing
    questions of a degenerate or unbounded interval whose row lacks wins/losses."""
    out = [f"| variant | value | {metric} | {head(PAIRED)} | {head('Δ')} vs baseline | "
           f"{head('CI')} | {head('p')} | "
           f"{head('p adj')} | {head('sig.')} | {head('d_z')} | {head('W/T/L')} | {head('n')} |",
           "|---|---|---:|---:|---:|---|---:|---:|---|---:|---|---:|"]
    for name, value in points:
        m = means.get((name, metric), math.nan)
        r = stats_rows.get((name, metric))
        if r is None:  # the baseline: its mean over all its questions
            out.append(f"| {name} | {value} | {fmt(m)} | | | | | | | | | |")
            continue
        out.append(f"| {name} | {value} | {fmt(m)} | {fmt(r.get('mean_baseline'))} | "
                   f"{fmt(r.get('delta'))} | "
                   f"{ci_cell(r, per_query)} | "
                   f"{fmt_p(r.get('p_value'))} | {fmt_p(r.get('p_adjusted'))} | {mark(r)} | "
                   f"{fmt(r.get('d_z'), 2)} | {wtl(r)} | {fmt_n(r)} |")
    return out


# The column of the baseline's mean on exactly a comparison's own questions (stats.parquet's
# mean_baseline): a variant on a nested sample is compared with this, not the baseline row.
PAIRED = "baseline, same questions"


def wtl(row: dict[str, Any]) -> str:
    """'wins/ties/losses' of a comparison ('–' for a count it lacks)."""
    return "/".join(fmt(row.get(k)) for k in ("wins", "ties", "losses"))


# The answer metrics the answer normalisation scores (metrics.answer_normalizer).
NORMALISED = ("answer/em", "answer/f1", "answer/correct")


def analysis_text(manifest: dict[str, Any], metrics: Sequence[str] | None = None) -> str:
    """Which BM25 analyzer `auto` chose (and why) and, when the run scored answers (an
    EM/F1 metric among `metrics`; None: assume it did), which answer normalisation scored."""
    chosen = manifest.get("analyzer")
    lexical = (f"BM25 analyzer `auto` chose **{chosen['analyzer']}** ({chosen['reason']})"
               if chosen else "BM25 analyzers as configured per variant")
    if metrics is not None and not set(NORMALISED) & set(metrics):
        return lexical
    norm = manifest.get("answer_normalizer") or {}
    counts = ", ".join(f"{k} {v}" for k, v in (norm.get("questions") or {}).items())
    return (f"{lexical}; answer EM/F1 normaliser {norm.get('setting', 'auto')}"
            f"{f' (questions scored: {counts})' if counts else ''}")


def _own_samples(per_variant: dict[str, int] | None) -> str:
    """The header's note on sweeps run on their own sample (the `n` column of each table
    is the questions a comparison used)."""
    if not per_variant:
        return ""
    return ("; the baseline runs on the union of every comparison's questions, and these "
            "variants on their own nested samples: "
            + ", ".join(f"{name} {n}" for name, n in per_variant.items())
            + f" (each row's '{PAIRED}' column is the baseline's mean on that comparison's "
            "own questions, the mean its Δ is taken from; the baseline row is its mean over all)")


def _sequential_lines(record: dict[str, Any] | None) -> list[str]:
    """The header line of a sequential run: the method, and where each variant stopped."""
    if not record:
        return []
    stops = ", ".join(f"{v} {n}/{record['full'][v]}" for v, n in record["sizes"].items())
    return [f"- **Sequential stopping** {record['method']}; looks every {record['batch']} "
            f"questions; alpha {record['alpha']} split over the key comparisons "
            f"({record['alpha_per_comparison']:.3g} each, Bonferroni); ▲/▼ on key metrics "
            f"is the sequential decision (the p-values shown are fixed-sample ones and do not "
            f"decide); questions used / planned: {stops}"]


def header_lines(manifest: dict[str, Any], stats: pl.DataFrame,
                 same_stage: str = "") -> list[str]:
    """The report header: what was run, on what, and how it was tested; `same_stage`:
    why reranked/* equals candidates/* (comparability.rerank_changes_nothing), if it does."""
    metrics = stats["metric"].unique().to_list() if stats.height else []
    reranked = same_stage and any(str(m).startswith("reranked/") for m in metrics)
    st = manifest.get("statistics", {})
    ds = manifest.get("dataset", {})
    n_q = manifest.get("questions", {})
    fam = family_counts(stats)
    family_text = "; ".join(f"{f} {u} used / {d} undefined" for f, (u, d) in fam.items())
    family_def = ("all variants vs baseline, per metric" if st.get("family") == "per_metric"
                  else "every comparison of every metric together")
    return [
        f"# Ablation report: {manifest.get('experiment')}",
        "",
        f"- **Experiment** `{manifest.get('experiment_file')}`, sweep `{manifest.get('sweep_id')}`, "
        f"created {manifest.get('created')}, git `{str(manifest.get('git_sha', ''))[:12]}`",
        f"- **Data set** `{ds.get('path')}` ({ds.get('format')}, fingerprint "
        f"`{ds.get('fingerprint')}`), split **{manifest.get('split')}**, tier "
        f"**{manifest.get('tier')}**",
        f"- **Questions** {n_q.get('total')} ({n_q.get('answerable')} answerable, "
        f"{n_q.get('without_evidence')} without evidence: retrieval metrics undefined for those "
        f"and excluded, never scored 0 or 1)" + _own_samples(n_q.get("per_variant")),
        f"- **n per metric family** (used / undefined): {family_text or '–'}",
        f"- **Statistics** seed {manifest.get('seed')}; test {st.get('test')} (paired on question "
        f"id); correction {st.get('correction')} at alpha {st.get('alpha')}; family: "
        f"{family_def}; CI: {ci_text(st, stats)}",
        f"- **Error rates** {error_rates_text(st, stats)}",
        *([f"- **Self-test** {text}"] if (text := self_test_text(manifest.get("self_test")))
          else []),
        f"- **Unit of analysis** {unit_text(st, stats)}",
        f"- **Labels** a chunk is relevant when it covers ≥ {manifest.get('label_threshold')} of "
        f"a gold span; NDCG gain {manifest.get('ndcg_gain')}; tokenizer {manifest.get('tokenizer')}",
        f"- **Text analysis** {analysis_text(manifest, metrics)}",
        *([f"- **Stages** reranked = candidates: {same_stage}, so the reranked rankings are "
           "the fused candidates unchanged and the report leaves out reranked/* tables that "
           "repeat candidates/* ones"] if reranked else []),
        *_sequential_lines(manifest.get("sequential")),
        f"- **Versions** {', '.join(f'{k} {v}' for k, v in manifest.get('versions', {}).items())}",
    ]


def unit_text(st: dict[str, Any], stats: pl.DataFrame) -> str:
    """'the cluster (...): n questions in G clusters' or 'the question'."""
    if st.get("cluster") == "none" or "n_clusters" not in stats.columns:
        return "the question (stats.cluster: none: every question independent)"
    how = ("questions sharing a document" if st.get("cluster", "auto") == "auto"
           else f"questions sharing a '{st.get('cluster')}'")
    g = stats["n_clusters"].drop_nulls()
    n = stats["n_used"].drop_nulls()
    counts = (f": up to {int(n.max())} questions in {int(g.max())} "  # type: ignore[arg-type]
              "clusters per comparison "
              "(the n column: questions / clusters)" if g.len() and n.len() else "")
    return f"the cluster ({how} count as one unit; stats.cluster {st.get('cluster', 'auto')}){counts}"


def other_metrics(variants: list[dict[str, Any]], stats: pl.DataFrame, per_query: pl.DataFrame,
                  key_metrics: Sequence[str]) -> list[str]:
    """The metrics the report's sections do not show: neither key metrics nor reranked/*
    ones that repeat candidates/* (the appendix's tables)."""
    metrics = sorted(stats["metric"].unique().to_list()) if stats.height else []
    key = present_key(key_metrics, metrics)
    repeats = repeated(metrics, key) if rerank_changes_nothing(variants, per_query) else set()
    return [m for m in metrics if m not in key and m not in repeats]


def render_markdown(manifest: dict[str, Any], variants: list[dict[str, Any]], stats: pl.DataFrame,
                    per_query: pl.DataFrame, key_metrics: Sequence[str],
                    no_effect: Sequence[str] = (), plot_files: Sequence[str] = (),
                    timings: pl.DataFrame | None = None,
                    factorial: pl.DataFrame | None = None,
                    drilldown: Sequence[str] = (),
                    worth: pl.DataFrame | None = None,
                    more_findings: Sequence[str] = (),
                    tradeoff: Sequence[str] = ()) -> str:
    """The report; `plot_files` are names under plots/ to show (see plots.all_plots);
    `factorial`: a factorial design's effects (factorial.parquet); `drilldown`: the
    questions behind the verdicts (drilldown.drilldown_section), before the buckets;
    `worth`: its factors' Shapley values (worth.parquet); `more_findings`: findings made
    elsewhere (significant slice comparisons: slices.slice_findings), after the others;
    `tradeoff`: the trade-off section (tradeoff_report.tradeoff_section), after the
    overview."""
    metrics = sorted(stats["metric"].unique().to_list()) if stats.height else []
    key = present_key(key_metrics, metrics)
    same_stage = rerank_changes_nothing(variants, per_query)
    repeats = repeated(metrics, key) if same_stage else set()
    rest = [m for m in metrics if m not in key and m not in repeats]
    means = variant_means(per_query, metrics, stats)
    srows = {(r["variant"], r["metric"]): r for r in stats.iter_rows(named=True)}
    by_var = variables(variants)
    records = {v["name"]: v for v in variants}
    head_lines = header_lines(manifest, stats, same_stage)  # the title, then its provenance
    lines = [*head_lines[:2], '<details markdown="1">', "<summary>About this run: experiment, "
             "data, statistics, self-test, versions</summary>", "", *head_lines[2:], "",
             "</details>", "", "## Overview", ""]
    alone = all(v["name"] == BASELINE for v in variants)
    if alone:  # a gate reference: nothing compared, so no plot, table or verdict of Δ
        lines += reference_section(per_query, key_metrics, manifest)
    else:
        if FOREST in plot_files:
            lines += [f"![overview: every variant's Δ vs baseline with its CI](plots/{FOREST})", ""]
        lines += ['<div class="scroll" markdown="1">', ""]
        lines += overview_table(by_var, key, means, srows, unaffected(variants, key, BASELINE),
                                per_query, unused(variants, key))
        lines += ["", "</div>"]
    if tradeoff:
        lines += ["", *tradeoff]
    lines += ["", "## Findings", ""]
    lines += [f"- {x}" for x in [*findings(stats, key, no_effect, manifest, variants, per_query),
                                 *more_findings]]
    lines += ["", *tails_section(per_query, key, [v["name"] for v in variants],
                                 unused(variants, key))]
    judged = judge_section(manifest, per_query)
    if judged:
        lines += [""] + judged
    corrected = corrected_lines(stats)
    if corrected:
        lines += [""] + corrected
    design = factorial_section(manifest, variants, factorial, key, plot_files)
    if design:
        lines += [""] + design
    worth_lines = worth_section(worth, key, plot_files)
    if worth_lines:
        lines += [""] + worth_lines
    for variable, points in by_var.items():
        lines += ["", f"## {variable}", ""]
        if plot_name(variable) in plot_files:
            lines += [f"![{variable}: Δ of the key metrics vs baseline with CIs against the swept "
                      f"value](plots/{plot_name(variable)})", ""]
        names = [n for n, _ in points[1:]]
        shown, not_affected = section_metrics(names, records, key, metrics, BASELINE)
        shown = [m for m in shown if m in key or _varies(per_query, [BASELINE] + names, m)]
        units = chunk_units_note(names, variants, shown, metrics, BASELINE)
        if units:
            lines += [units, ""]
        if not_affected:
            lines += [f"Not affected by {variable} (its variants compute the same stage outputs "
                      f"as the baseline there, so Δ is 0 by construction): "
                      + ", ".join(not_affected) + ".", ""]
        hidden = unused(variants, shown)  # retrieval rows of a variant that reads no context
        for metric in shown:
            note = metric_note(metric, manifest)
            rows = [p for p in points if (p[0], metric) not in hidden]
            lines += (([note, ""] if note else [])
                      + _variable_table(metric, rows, means, srows, per_query) + [""])
        if timings is not None and timings.height:
            lat = [c for c in timings.columns if c.startswith("latency/")]
            stages = latency_stages(names, records, lat, BASELINE)
            if stages:
                lines += [f"Latency of the stages {variable} changes, ms per question:", "",
                          latency_table(timings, [n for n, _ in points], stages), ""]
    if rest:  # their tables are in the appendix file (appendix.appendix_markdown)
        lines += appendix_link(rest)
    lines += [*drilldown, "## Failure buckets", ""]
    if BUCKETS in plot_files:
        lines += [f"![failure buckets per variant](plots/{BUCKETS})", ""]
    lines += [_buckets_table(per_query), ""] + risk_coverage_section(per_query, plot_files)
    if COST in plot_files or timings is not None:
        lines += ["## Latency and tokens", ""]
    if COST in plot_files:
        lines += [f"![latency and tokens per variant](plots/{COST})", ""]
    if timings is not None and timings.height:
        lines += [latency_table(timings), ""]
    lines += glossary_lines(ci_text(manifest.get("statistics", {}), stats),
                            any(disagrees(r) for r in srows.values())) + [""]
    if "answer/lexical_support" in metrics or "answer/lexical_support" in per_query.columns:
        lines += ["Lexical support is a proxy (answer tokens found in the context), not "
                  "faithfulness.", ""]
    return "\n".join(lines)


def _varies(per_query: pl.DataFrame, variants: Sequence[str], metric: str) -> bool:
    """Whether `metric` takes more than one value over these variants' questions (a cost
    at zero prices, or the tokens of a generator without a model, tells nothing)."""
    if metric not in per_query.columns:
        return False
    col = per_query.filter(pl.col("variant").is_in(list(variants)))[metric]
    return col.cast(pl.Float64).fill_nan(None).drop_nulls().n_unique() > 1


def _buckets_table(per_query: pl.DataFrame) -> str:
    counts = per_query.group_by("variant", "bucket").len().sort("variant", "bucket")
    buckets = sorted(counts["bucket"].unique().to_list())
    order = per_query["variant"].unique(maintain_order=True).to_list()
    table = {(r["variant"], r["bucket"]): r["len"] for r in counts.iter_rows(named=True)}
    out = ["| variant | " + " | ".join(buckets) + " |", "|---|" + "---:|" * len(buckets)]
    for name in order:
        out.append(f"| {name} | " + " | ".join(str(table.get((name, b), 0)) for b in buckets) + " |")
    return "\n".join(out)


SUMMARY_CELL = 36  # 'mean (Δ vs paired baseline mean ▲ better)'


def terminal_summary(variants: list[dict[str, Any]], stats: pl.DataFrame, per_query: pl.DataFrame,
                     key_metrics: Sequence[str]) -> str:
    """One screen: each variant's key-metric means with deltas and marks."""
    metrics = [m for m in key_metrics if m in per_query.columns][:4]
    means = variant_means(per_query, metrics)
    hidden = unused(variants, metrics)  # retrieval of a variant that reads no context
    srows = {(r["variant"], r["metric"]): r for r in stats.iter_rows(named=True)}
    width = max(len(v["name"]) for v in variants) + 2
    head = "variant".ljust(width) + "".join(m.rjust(SUMMARY_CELL) for m in metrics)
    lines = [head, "-" * len(head)]
    for v in variants:
        cells = []
        for m in metrics:
            if (v["name"], m) in hidden:
                cells.append("–".rjust(SUMMARY_CELL))
                continue
            mean = means.get((v["name"], m), math.nan)
            r = srows.get((v["name"], m))
            cell = fmt(mean)
            if r is not None:
                cell += (f" ({fmt_signed(r.get('delta'))} vs {fmt(r.get('mean_baseline'))}"
                         f"{' ' + mark(r) if mark(r) else ''})")
            cells.append(cell.rjust(SUMMARY_CELL))
        lines.append(v["name"].ljust(width) + "".join(cells))
    lines.append("(delta vs the baseline's mean on the same questions, shown after 'vs'; "
                 "▲/▼ significant after correction)")
    return "\n".join(lines)
