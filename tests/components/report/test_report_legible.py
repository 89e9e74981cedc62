"""Wording and plots a reader can resolve (issue 28, item 4, and the report side of item 1):
the intervals' level and whether they match the corrected significance, stated from the
stats table's own ci_method / ci_level; degenerate and unbounded intervals named with
their count of differing questions; "more questions" on a full-tier run; variable plots
whose axis holds zero difference and the CIs; no reranked tables that repeat the
candidates ones when rerank is none; no answer normalisation in a run without answers;
candidates/reranked @k named as not comparable across chunk sizes."""

from __future__ import annotations

import json
import math
from typing import Any

import polars as pl

from ablate.components.contract.config import PipelineConfig
from ablate.components.report.findings import findings, warnings
from ablate.components.report.markdown import header_lines, render_markdown
from ablate.components.report.sweep_data import report_stats
from ablate.components.stats.compare import OUTPUT_SCHEMA

N = 20
STATS_CFG = {"test": "permutation", "correction": "holm", "alpha": 0.05, "family": "per_metric",
             "ci_method": "percentile", "bootstrap_resamples": 500}


def _variant(name: str, variable: str | None = None, value: Any = None, **dotted: Any) -> dict:
    cfg = PipelineConfig().model_dump(mode="json")
    for key, v in dotted.items():
        section, field = key.split("__")
        cfg[section][field] = v
    return {"name": name, "variable": variable, "value": value,
            "value_label": "" if value is None else str(value), "config": cfg}


def _row(variant: str, metric: str, delta: float, lo: float, hi: float, **kw: Any) -> dict:
    row = {"metric": metric, "variant": variant, "baseline": "baseline", "n_used": N,
           "n_clusters": N, "n_undefined": 0, "mean_variant": 0.5 + delta, "mean_baseline": 0.5,
           "delta": delta, "ci_low": lo, "ci_high": hi, "ci_level": 0.95,
           "ci_method": "percentile", "p_value": 0.5, "p_adjusted": 0.5, "significant": False,
           "d_z": 0.1, "wins": 5, "ties": 10, "losses": 5, "mde": 0.01, "ci_flag": "",
           "clustered_by": "none", "missingness_flag": False}
    row.update(kw)
    return row


def _stats(rows: list[dict]) -> pl.DataFrame:
    cols = list(rows[0])
    return report_stats(pl.DataFrame(rows, schema={c: OUTPUT_SCHEMA[c] for c in cols},
                                     orient="row"))


def _per_query(variants: list[dict], metrics: dict[str, list[float]] | None = None) -> pl.DataFrame:
    """Every variant scores like the baseline unless `metrics` gives (variant/metric) values."""
    frames = []
    base = [0.5 + 0.02 * (i % 5) for i in range(N)]
    for v in variants:
        cols: dict[str, Any] = {"variant": v["name"], "qid": [f"q{i:02d}" for i in range(N)],
                                "answerable": [True] * N, "bucket": ["ok"] * N}
        for m in ("final/recall_at_5", "answer/f1", "candidates/recall_at_5",
                  "reranked/recall_at_5"):
            cols[m] = (metrics or {}).get(f"{v['name']}/{m}", base)
        frames.append(pl.DataFrame(cols))
    return pl.concat(frames)


def _manifest(**kw: Any) -> dict:
    return {"experiment": "legible", "statistics": dict(STATS_CFG), "questions": {},
            "dataset": {}, "tier": "smoke", **kw}


def _render(variants, stats, per_query=None, key=("final/recall_at_5", "answer/f1"), **man) -> str:
    return render_markdown(_manifest(**man), json.loads(json.dumps(variants)), stats,
                           _per_query(variants) if per_query is None else per_query, list(key))


def _line(md: str, start: str) -> str:
    return next(line for line in md.splitlines() if line.startswith(start))


def _table_row(md: str, metric: str, variant: str) -> str:
    """The row of `variant` in the first variable table of `metric`."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| variant | value | ")
                 and line.split(" | ")[2] == metric)
    return next(line for line in lines[start:] if line.startswith(f"| {variant} |"))


SIZE = [_variant("baseline"), _variant("chunking.size=64", "chunking.size", 64, chunking__size=64)]


# a. intervals and significance on one stated level

def test_a_per_comparison_interval_beside_corrected_significance_is_stated_and_marked():
    stats = _stats([_row("chunking.size=64", "final/recall_at_5", 0.03, 0.01, 0.05,
                         p_value=0.03, p_adjusted=0.09),
                    _row("chunking.size=64", "answer/f1", 0.01, -0.02, 0.04)])
    md = _render(SIZE, stats)
    ci = _line(md, "- **Statistics**").split("CI: ", 1)[1]
    assert "at 95%" in ci and "not corrected for multiple comparisons" in ci
    assert "exactly when" not in ci
    # the row whose per-comparison CI excludes 0 beside 'not significant' is marked
    assert "| [0.010, 0.050]† |" in _table_row(md, "final/recall_at_5", "chunking.size=64")
    assert "| [-0.020, 0.040] |" in _table_row(md, "answer/f1", "chunking.size=64")
    glossary_ci = _line(md, "| CI | ")
    assert "not corrected for multiple comparisons" in glossary_ci and "exactly when" not in glossary_ci
    assert _line(md, "| † | ")


def test_a_inverted_intervals_state_their_levels_from_the_table():
    stats = _stats([_row("chunking.size=64", "final/recall_at_5", 0.03, 0.01, 0.05,
                         ci_method="signflip-inversion", ci_level=0.9875, p_value=0.01,
                         p_adjusted=0.04, significant=True),
                    _row("chunking.size=64", "answer/f1", 0.01, -0.02, 0.04,
                         ci_method="signflip-inversion", ci_level=0.95)])
    md = _render(SIZE, stats, statistics={**STATS_CFG, "ci_method": "inversion"})
    for text in (_line(md, "- **Statistics**").split("CI: ", 1)[1], _line(md, "| CI | ")):
        assert "95%–98.8%" in text and "excludes 0 exactly when" in text
        assert "not corrected" not in text
    assert "†" not in md


def test_a_bootstrap_with_inverted_fallback_names_both_with_counts():
    stats = _stats([_row("chunking.size=64", "final/recall_at_5", 0.03, -0.01, 0.05),
                    _row("chunking.size=64", "answer/f1", 0.01, -0.02, 0.04,
                         ci_method="signflip-inversion",
                         ci_flag="few_untied_pairs_inversion")])
    ci = _line(_render(SIZE, stats), "- **Statistics**").split("CI: ", 1)[1]
    assert "cluster bootstrap (percentile, 500 resamples) at 95% (1 comparison)" in ci
    assert "the inverted sign-flip test at 95%, where fewer than 10 pairs differ (1 comparison)" in ci
    assert "not corrected for multiple comparisons" in ci


# b. degenerate and unbounded intervals, with their count of differing questions

def test_b_degenerate_and_unbounded_intervals_are_named_with_differing_questions():
    stats = _stats([
        _row("chunking.size=64", "answer/f1", 0.0, 0.0, 0.0, wins=0, ties=N, losses=0),
        _row("chunking.size=64", "final/recall_at_5", 0.1, math.nan, 0.4, wins=2, ties=N - 2,
             losses=0, n_clusters=4, clustered_by="cluster",
             ci_flag="too_few_clusters_unbounded")])
    md = _render(SIZE, stats)
    assert "| [0.000, 0.000] no question differs |" in _table_row(md, "answer/f1", "chunking.size=64")
    row = _table_row(md, "final/recall_at_5", "chunking.size=64")
    assert "| [–, 0.400] unbounded: 2 of 20 questions differ (4 clusters) |" in row
    over = _line(md, "| chunking.size | 64 |")
    assert "[0.000, 0.000] no question differs" in over and "unbounded: 2 of 20" in over


def test_b_differing_questions_counted_from_per_query_when_the_table_lacks_them():
    variants = SIZE + [_variant("fusion.rrf_k=10", "fusion.rrf_k", 10, fusion__rrf_k=10)]
    per_query = _per_query(variants, {
        "fusion.rrf_k=10/final/recall_at_5": [0.9, 0.9, 0.9] + [0.5 + 0.02 * (i % 5)
                                                               for i in range(3, N)]})
    stats = _stats([
        _row("chunking.size=64", "final/recall_at_5", 0.0, 0.0, 0.0, wins=None, ties=None,
             losses=None),
        _row("fusion.rrf_k=10", "final/recall_at_5", 0.02, -math.inf, 0.3, wins=None,
             ties=None, losses=None)])
    md = _render(variants, stats, per_query=per_query, key=("final/recall_at_5",))
    assert "[0.000, 0.000] no question differs" in _table_row(md, "final/recall_at_5",
                                                              "chunking.size=64")
    assert "unbounded: 3 of 20 questions differ" in _line(md, "| fusion.rrf_k | 10 |")


# c. "more questions", not "a larger tier", when the tier is already full

def test_c_underpowered_on_the_full_tier_asks_for_more_questions():
    stats = _stats([_row("chunking.size=64", "final/recall_at_5", 0.01, -0.02, 0.04, mde=0.05)])
    full = " ".join(warnings(stats, ["final/recall_at_5"], [], {"tier": "full"}))
    assert "Underpowered" in full and "larger tier" not in full
    assert "more questions are needed to tell" in full
    smoke = " ".join(warnings(stats, ["final/recall_at_5"], [], {"tier": "smoke"}))
    assert "a larger tier (more questions) is needed to tell" in smoke


# d. variable plots: zero difference and the CIs on the axis

def test_d_variable_plot_axis_holds_zero_difference_and_every_ci():
    from ablate.components.report.plots import variable_figure
    metric = "final/recall_at_5"
    points = [("baseline", "256"), ("v128", "128"), ("v512", "512")]
    means = {("baseline", metric): 0.955, ("v128", metric): 0.945, ("v512", metric): 0.960}
    rows = {("v128", metric): _row("v128", metric, -0.015, -0.04, 0.01, mean_baseline=0.955,
                                   mean_variant=0.94),
            ("v512", metric): _row("v512", metric, 0.005, -0.01, 0.02, mean_baseline=0.955,
                                   mean_variant=0.96)}
    fig = variable_figure("chunking.size", points, [metric], means, rows)
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    assert lo <= -0.04 and hi >= 0.02 and lo < 0 < hi  # Δ scale: 0 and both CIs on the axis
    assert "0.955" in ax.get_title()                     # the baseline's mean is stated
    # only significant drops far from 0: the axis still reaches 0
    rows = {("v128", metric): _row("v128", metric, -0.015, -0.02, -0.01, significant=True)}
    ax = variable_figure("chunking.size", points[:2], [metric], means, rows).axes[0]
    assert ax.get_ylim()[0] <= -0.02 and ax.get_ylim()[1] >= 0


def test_d_forest_axis_holds_zero():
    from ablate.components.report.overview import forest_figure
    metric = "final/recall_at_5"
    rows = {("v128", metric): _row("v128", metric, -0.015, -0.02, -0.01, significant=True)}
    ax = forest_figure({"chunking.size": [("baseline", "256"), ("v128", "128")]}, [metric],
                       rows).axes[0]
    assert ax.get_xlim()[0] <= -0.02 and ax.get_xlim()[1] >= 0


# e. no reranked tables that repeat the candidates ones

def _retrieval_stats(names: list[str]) -> pl.DataFrame:
    return _stats([_row(n, m, 0.01, -0.02, 0.04) for n in names
                   for m in ("final/recall_at_5", "candidates/recall_at_5", "reranked/recall_at_5")])


def _appendix(variants, stats, key) -> list[str]:
    """The metrics whose tables the appendix holds (report-appendix.md)."""
    from ablate.components.report.markdown import other_metrics
    return other_metrics(json.loads(json.dumps(variants)), stats, _per_query(variants), list(key))


def test_e_rerank_none_everywhere_leaves_out_reranked_tables_once_said():
    stats = _retrieval_stats(["chunking.size=64"])
    md = _render(SIZE, stats, key=("final/recall_at_5",))
    rest = _appendix(SIZE, stats, ("final/recall_at_5",))
    assert "candidates/recall_at_5" in rest and "reranked/recall_at_5" not in rest
    assert md.count("reranked = candidates: rerank is none in every variant") == 1


def test_e_a_reranking_variant_keeps_the_reranked_tables():
    variants = SIZE + [_variant("rerank.method=composite", "rerank.method", "composite",
                                rerank__method="composite")]
    stats = _retrieval_stats(["chunking.size=64", "rerank.method=composite"])
    md = _render(variants, stats, key=("final/recall_at_5",))
    assert "reranked/recall_at_5" in _appendix(variants, stats, ("final/recall_at_5",))
    assert "reranked = candidates" not in md


def test_e_a_reranked_key_metric_is_not_repeated_by_its_candidates_table():
    stats = _stats([_row("chunking.size=64", m, 0.01, -0.02, 0.04)
                    for m in ("candidates/recall_at_5", "reranked/recall_at_5")])
    md = _render(SIZE, stats, key=("reranked/recall_at_5",))
    assert "candidates/recall_at_5" not in _appendix(SIZE, stats, ("reranked/recall_at_5",))
    assert "reranked = candidates" in md


# f. a header that describes only what ran

def test_f_no_answer_normalisation_in_a_run_without_answers():
    norm = {"setting": "auto", "questions": {"squad": 20}}
    retrieval = _stats([_row("chunking.size=64", "final/recall_at_5", 0.01, -0.02, 0.04)])
    text = _line("\n".join(header_lines(_manifest(answer_normalizer=norm), retrieval)),
                 "- **Text analysis**")
    assert "normaliser" not in text and "answer" not in text
    answers = _stats([_row("chunking.size=64", "answer/f1", 0.01, -0.02, 0.04)])
    text = _line("\n".join(header_lines(_manifest(answer_normalizer=norm), answers)),
                 "- **Text analysis**")
    assert "answer EM/F1 normaliser auto (questions scored: squad 20)" in text


# g. candidates/reranked @k across chunk sizes

def _chunk_findings(variants: list[dict], metrics: tuple[str, ...]) -> str:
    names = [v["name"] for v in variants[1:]]
    stats = _stats([_row(n, m, 0.01, -0.02, 0.04) for n in names for m in metrics])
    return " ".join(findings(stats, ["final/recall_at_5"], (), _manifest(), variants,
                             _per_query(variants)))


def test_g_chunk_size_sweep_says_at_k_is_not_comparable_and_points_to_final():
    text = _chunk_findings(SIZE, ("final/recall_at_5", "candidates/recall_at_5",
                                  "reranked/recall_at_5"))
    assert "Not comparable across chunk sizes" in text
    assert "candidates/*@k and reranked/*@k" in text and "chunking.size=64" in text
    assert "final/* (the context under one token budget" in text


def test_g_without_final_metrics_says_nothing_here_compares_on_one_budget():
    text = _chunk_findings(SIZE, ("candidates/recall_at_5",))
    assert "Not comparable across chunk sizes" in text and "no final/* metrics" in text


def test_g_a_variant_that_changes_the_budget_too_is_not_called_one_budget():
    big = _variant("big", "chunking.size+context.budget", "64+1024", chunking__size=64,
                   context__budget=1024)
    text = _chunk_findings([SIZE[0], big], ("final/recall_at_5", "candidates/recall_at_5"))
    assert "Not comparable across chunk sizes" in text and "one token budget" not in text
    assert "change the token budget too (context.budget 512, 1024)" in text


def test_g_same_chunking_everywhere_says_nothing():
    variants = [_variant("baseline"), _variant("fusion.rrf_k=10", "fusion.rrf_k", 10,
                                               fusion__rrf_k=10)]
    text = _chunk_findings(variants, ("final/recall_at_5", "candidates/recall_at_5"))
    assert "Not comparable" not in text


def test_g_chunking_section_notes_at_k_tables():
    md = _render(SIZE, _retrieval_stats(["chunking.size=64"]),
                 key=("candidates/recall_at_5",))
    start = md.index("\n## chunking.size\n")
    section = md[start:md.find("\n## ", start + 5)]
    assert "not comparable across these chunk sizes" in section


def test_a_finding_whose_per_comparison_ci_holds_0_beside_significance_is_marked():
    stats = _stats([_row("chunking.size=64", "final/recall_at_5", 0.03, -0.01, 0.07,
                         p_value=0.001, p_adjusted=0.002, significant=True)])
    (line,) = [x for x in findings(stats, ["final/recall_at_5"]) if x.startswith("**")]
    assert "by 0.030 [-0.010, 0.070]†, adjusted p 0.002" in line
