"""The report never crashes on any numbers: random stats tables with the stats.parquet
schema (NaN, ±inf and nulls in every number, CIs that exclude their own estimate or are
reversed, empty tables, a lone baseline, hundreds of variants, optional columns absent,
columns added by later versions present) render every report output: report.md,
report.html, the plots, summary.txt, report.tex, the Prefect summary and a factorial
section. Non-finite numbers print as "–", never as nan or inf.

Property-style over a seeded numpy generator (hypothesis is not a test dependency): each
case is reproducible from its seed, named in the test id."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import polars as pl
import pytest

from ablate.components.contract.config import PipelineConfig
from ablate.components.report.build import build_report
from ablate.components.report.plots import variable_plot
from ablate.components.report.summary import summary_markdown, summary_rows
from ablate.components.report.sweep_data import SweepResults
from ablate.components.stats.compare import EXTRA_SCHEMA, OUTPUT_SCHEMA
from ablate.components.stats.factorial import FACTORIAL_SCHEMA

SVG = b"<?xml"
VARIABLES = ("chunking.size", "fusion.rrf_k", "context.budget", "generator.temperature",
             "rerank.depth")
METRICS = ("final/recall_at_5", "answer/f1", "answer/em", "final/ndcg_at_10", "tokens/in")
ODD = (math.nan, math.inf, -math.inf, None)
# columns later versions add (the report may show them, never needs them)
LATER = {"n_clusters": pl.Int64(), "ci_level": pl.Float64(), "clustered_by": pl.String()}
# stats.parquet columns a hand-made or older table may lack (the report shows "–")
OPTIONAL = ("p_ttest", "d_z", "wins", "ties", "losses", "mde", "ci_method", "resamples",
            "family_size", "n_undefined", "mean_variant", "mean_baseline")
RAW = re.compile(r"(?<![\w.])[+-]?(nan|inf|None)(?![\w])", re.IGNORECASE)
BASE_CONFIG = PipelineConfig().model_dump(mode="json")


def _num(rng: np.random.Generator, odd: float = 0.25, lo: float = -1.0, hi: float = 1.0) -> Any:
    if rng.random() < odd:
        return ODD[rng.integers(len(ODD))]
    return float(rng.uniform(lo, hi))


def _finite(x: Any) -> bool:
    return x is not None and math.isfinite(x)


def _ci(rng: np.random.Generator, delta: Any) -> tuple[Any, Any]:
    """A CI around `delta` of one of the shapes statistics can produce, sane or not."""
    d = delta if _finite(delta) else float(rng.uniform(-1, 1))
    w1, w2 = float(rng.uniform(0, 0.5)), float(rng.uniform(0, 0.5))
    shape = rng.integers(7)
    if shape == 0:
        return d - w1, d + w2                      # contains the estimate
    if shape == 1:
        return d + w1 + 1e-3, d + w1 + w2 + 2e-3   # entirely above it
    if shape == 2:
        return d - w1 - w2 - 2e-3, d - w1 - 1e-3   # entirely below it
    if shape == 3:
        return d + w1 + 1e-3, d - w2 - 1e-3        # reversed
    if shape == 4:
        return ODD[rng.integers(len(ODD))], d + w2  # one bound odd
    if shape == 5:
        return d - w1, ODD[rng.integers(len(ODD))]
    return ODD[rng.integers(len(ODD))], ODD[rng.integers(len(ODD))]


def _int(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 400))


def stats_row(rng: np.random.Generator, variant: str, metric: str) -> dict[str, Any]:
    delta = _num(rng)
    lo, hi = _ci(rng, delta)
    p = _num(rng, lo=0.0, hi=1.0)
    row: dict[str, Any] = {
        "metric": metric, "variant": variant, "baseline": "baseline", "n_used": _int(rng),
        "n_undefined": _int(rng), "mean_variant": _num(rng), "mean_baseline": _num(rng),
        "delta": delta, "ci_low": lo, "ci_high": hi,
        "ci_method": ["bca", "percentile", "exact-signflip", None][rng.integers(4)],
        "p_value": p, "p_ttest": _num(rng, lo=0, hi=1),
        "p_adjusted": p if rng.random() < 0.5 else _num(rng, lo=0, hi=1),
        "significant": [True, False, None][rng.integers(3)], "d_z": _num(rng, lo=-5, hi=5),
        "wins": _int(rng), "ties": _int(rng), "losses": _int(rng),
        "mde": _num(rng, lo=0, hi=1), "test": "permutation", "resamples": _int(rng),
        "correction": "holm", "family_size": _int(rng),
        "n_missing": _int(rng), "n_undefined_variant": _int(rng), "n_undefined_baseline": _int(rng),
        "missingness_flag": [True, False, None][rng.integers(3)], "relative_change": _num(rng),
        "t_stat": _num(rng, lo=-9, hi=9), "t_ci_low": lo, "t_ci_high": hi,
        "p_wilcoxon": _num(rng, lo=0, hi=1), "p_method": "monte-carlo",
        "ci_flag": None if rng.random() < 0.7 else "few_untied_pairs_exact_signflip",
        "bootstrap_resamples": _int(rng), "alpha": 0.05, "seed": 0, "family": "per_metric",
        "n_clusters": _int(rng), "ci_level": _num(rng, lo=0.8, hi=0.99),
        "clustered_by": None if rng.random() < 0.5 else "cluster",
    }
    return {**dict.fromkeys(OUTPUT_SCHEMA), **row}  # a column added later: null here


def stats_table(rng: np.random.Generator, variants: list[str], metrics: list[str],
                optional_dropped: bool, later: bool) -> pl.DataFrame:
    rows = [stats_row(rng, v, m) for v in variants if v != "baseline" for m in metrics
            if rng.random() > 0.05]  # a few comparisons missing
    if rows and rng.random() < 0.3:  # a row for a variant variants.json does not list
        rows.append(stats_row(rng, "ghost=1", metrics[0]))
    schema = {**OUTPUT_SCHEMA, **LATER}
    table = (pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema))
    if optional_dropped:  # an older or hand-made table
        table = table.drop([c for c in EXTRA_SCHEMA if rng.random() < 0.6]
                           + [c for c in OPTIONAL if rng.random() < 0.3])
    if not later:
        table = table.drop([c for c in LATER if c not in OUTPUT_SCHEMA])
    return table


def per_query_table(rng: np.random.Generator, variants: list[str], metrics: list[str],
                    n: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    rows, times = [], []
    buckets = ("ok", "retrieval_miss", "budget_cut", "correct_refusal", "something_new")
    for v in variants:
        for i in range(n):
            rows.append({"variant": v, "qid": f"q{i:03d}", "answerable": bool(rng.random() < 0.8),
                         "cluster": f"doc{i // 3}", "type": None,
                         "bucket": buckets[rng.integers(len(buckets))], "answer": "x",
                         **{m: _num(rng, odd=0.15, lo=0, hi=1) for m in metrics},
                         "tokens/out": _num(rng, odd=0.1, lo=0, hi=50)})
            times.append({"variant": v, "qid": f"q{i:03d}",
                          "latency/generate": _num(rng, odd=0.2, lo=0, hi=2),
                          "latency/retrieve_bm25": _num(rng, odd=0.5, lo=0, hi=0.1)})
    schema = {"variant": pl.String, "qid": pl.String, "answerable": pl.Boolean,
              "cluster": pl.String, "type": pl.String, "bucket": pl.String, "answer": pl.String,
              **{m: pl.Float64 for m in metrics}, "tokens/out": pl.Float64}
    tschema = {"variant": pl.String, "qid": pl.String, "latency/generate": pl.Float64,
               "latency/retrieve_bm25": pl.Float64}
    return (pl.DataFrame(rows, schema=schema, orient="row"),
            pl.DataFrame(times, schema=tschema, orient="row"))


def variant_records(rng: np.random.Generator, n_variants: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"name": "baseline", "variable": None, "value": None,
                                  "value_label": "", "config_id": "c0", "config": BASE_CONFIG,
                                  "stage_keys": {"chunk": "k0", "generate": "g0"}}]
    for i in range(n_variants):
        var = VARIABLES[rng.integers(len(VARIABLES))]
        value = int(rng.integers(1, 2000)) if rng.random() < 0.8 else f"label {i} " * 3
        out.append({"name": f"{var}={value}#{i}", "variable": var, "value": value,
                    "value_label": str(value), "config_id": f"c{i + 1}",
                    "config": BASE_CONFIG,
                    "stage_keys": {"chunk": f"k{i}", "generate": "g0"} if rng.random() < 0.5
                    else {"chunk": "k0", "generate": f"g{i}"}})
    return out


def manifest(rng: np.random.Generator, key: list[str], names: list[str]) -> dict[str, Any]:
    return {"sweep_id": "random-0123456789", "experiment": "random", "experiment_file": "e.yaml",
            "git_sha": "abc", "created": "2026-01-01T00:00:00Z", "seed": 0, "tier": "smoke",
            "split": "dev", "dataset": {"path": "d.json", "format": "squad", "fingerprint": "f"},
            "questions": {"total": 6, "answerable": 5, "without_evidence": 1},
            "label_threshold": 0.5, "ndcg_gain": "linear", "tokenizer": "wordpiece",
            "versions": {"ablate": "0.1.0"},
            "statistics": {"test": "permutation", "correction": "holm", "alpha": 0.05,
                           "family": "per_metric", "ci_method": "bca", "bootstrap_resamples": 100},
            "settings": {"metrics": {"key": key}},
            "no_effect": [n for n in names[1:] if rng.random() < 0.1]}


def random_sweep(seed: int, n_variants: int | None = None, n_questions: int | None = None,
                 empty_stats: bool = False) -> SweepResults:
    rng = np.random.default_rng(seed)
    if n_variants is None:
        n_variants = int(rng.choice([0, 1, 2, 3, 5, 8]))
    n = int(rng.integers(0, 7)) if n_questions is None else n_questions
    variants = variant_records(rng, n_variants)
    names = [v["name"] for v in variants]
    metrics = [m for m in METRICS if rng.random() < 0.7] or [METRICS[0]]
    stats = (pl.DataFrame(schema=OUTPUT_SCHEMA) if empty_stats else
             stats_table(rng, names, metrics, rng.random() < 0.4, rng.random() < 0.5))
    per_query, timings = per_query_table(rng, names, metrics, n)
    key = [m for m in METRICS if rng.random() < 0.5] + (["judge/made_up"] if rng.random() < 0.2 else [])
    man = manifest(rng, key, names)
    return SweepResults(man, variants, per_query, stats, timings if rng.random() < 0.7 else None,
                        tuple(man["no_effect"]), None)


def factorial_sweep(seed: int) -> SweepResults:
    """A 2 x 2 factorial design with random effects (factorial.parquet's schema)."""
    rng = np.random.default_rng(seed)
    cells = {(0, 0): "baseline", (1, 0): "chunking.size=64", (0, 1): "fusion.rrf_k=10",
             (1, 1): "chunking.size=64 × fusion.rrf_k=10"}
    variables = {"chunking.size": ["256", "64"], "fusion.rrf_k": ["60", "10"]}
    variants = []
    for (a, b), name in cells.items():
        var = ("chunking.size+fusion.rrf_k" if a and b else "chunking.size" if a
               else "fusion.rrf_k" if b else None)
        variants.append({"name": name, "variable": var, "value": name, "value_label": name,
                         "config": BASE_CONFIG, "factors": {"chunking.size": "256 64".split()[a],
                                                             "fusion.rrf_k": "60 10".split()[b]}})
    names = list(cells.values())
    metrics = ["final/recall_at_5", "answer/f1"]
    per_query, timings = per_query_table(rng, names, metrics, int(rng.integers(0, 6)))
    effects = []
    for m in metrics:
        for effect, kind, fa, fb in (("chunking.size=64", "main", "chunking.size", None),
                                     ("fusion.rrf_k=10", "main", "fusion.rrf_k", None),
                                     ("chunking.size × fusion.rrf_k", "interaction",
                                      "chunking.size", "fusion.rrf_k")):
            est = _num(rng)
            lo, hi = _ci(rng, est)
            effects.append({"effect": effect, "kind": kind, "factor_a": fa, "level_a": "64",
                            "factor_b": fb, "level_b": "10" if fb else None,
                            "aliases": None if rng.random() < 0.8 else "x × y", "metric": m,
                            "estimate": est, "ci_low": lo, "ci_high": hi, "ci_method": "bca",
                            "p_value": _num(rng, lo=0, hi=1), "p_adjusted": _num(rng, lo=0, hi=1),
                            "significant": [True, False, None][rng.integers(3)], "n": _int(rng),
                            "n_excluded": _int(rng), "p_method": "exact", "test": "permutation",
                            "correction": "holm", "family_size": 3})
    man = manifest(rng, metrics, names)
    man["design"] = {"kind": "factorial", "fraction": "full", "variables": variables}
    return SweepResults(man, variants, per_query, stats_table(rng, names, metrics, False, False),
                        timings, (), pl.DataFrame(effects, schema=FACTORIAL_SCHEMA, orient="row"))


def render_everything(res: SweepResults, plots: bool = True) -> dict[str, str | bytes]:
    files = build_report(res, latex=True, plots=plots)
    files["prefect-summary.md"] = summary_markdown(res)
    files["prefect-rows.txt"] = repr(summary_rows(res))
    return files


def check(files: dict[str, str | bytes]) -> None:
    assert {"report.md", "report.html", "summary.txt", "report.tex"} <= set(files)
    for name, content in files.items():
        if isinstance(content, bytes):
            assert content.startswith(SVG) and b"<svg" in content[:400], name
        elif name != "prefect-rows.txt":
            raw = RAW.search(content)
            assert raw is None, f"{name} prints a raw {raw.group(0)!r}: …{content[max(0, raw.start() - 80):raw.end() + 40]}…"


@pytest.mark.parametrize("seed", range(8))
def test_random_stats_render_every_output(seed):
    check(render_everything(random_sweep(seed)))


@pytest.mark.parametrize("seed", range(100, 180))
def test_random_stats_render_every_text_output(seed):
    """Many more cases without the plots (the text is where most numbers are printed)."""
    check(render_everything(random_sweep(seed), plots=False))


def test_empty_stats_table():
    check(render_everything(random_sweep(1, n_variants=3, empty_stats=True)))


def test_baseline_alone_and_no_questions():
    check(render_everything(random_sweep(2, n_variants=0, n_questions=0)))
    check(render_everything(random_sweep(3, n_variants=0, empty_stats=True)))


def test_one_variant():
    for seed in range(4):
        check(render_everything(random_sweep(10 + seed, n_variants=1)))


def test_hundreds_of_variants():
    check(render_everything(random_sweep(7, n_variants=200, n_questions=2)))


@pytest.mark.parametrize("seed", range(4))
def test_factorial_section_with_any_numbers(seed):
    files = render_everything(factorial_sweep(seed))
    check(files)
    assert "## Factorial: interactions" in files["report.md"]


def _row(delta: float, lo: float, hi: float, significant: bool = True) -> dict[str, Any]:
    return {"metric": "answer/f1", "variant": "v", "delta": delta, "ci_low": lo, "ci_high": hi,
            "mean_baseline": 0.5, "mean_variant": 0.5 + delta, "significant": significant}


@pytest.mark.parametrize("lo, hi", [(0.10, 0.20), (-0.20, -0.10), (0.10, -0.10),
                                    (math.inf, 0.2), (-math.inf, math.inf), (math.nan, 0.1)])
def test_error_bars_of_a_ci_that_excludes_its_estimate(lo, hi):
    """The 300-question Chinese sweep: a CI excluding its own estimate made matplotlib
    refuse the error bar ('yerr' must not contain negative values) and lost the report."""
    svg = variable_plot("chunking.size", [("baseline", "256"), ("v", "64")], ["answer/f1"],
                        {("baseline", "answer/f1"): 0.5, ("v", "answer/f1"): 0.5},
                        {("v", "answer/f1"): _row(0.0, lo, hi)})
    assert svg.startswith(SVG)


def test_sweep_whose_ci_excludes_its_estimate_gets_its_report(tmp_path):
    """The Chinese sweep's case end to end from a sweep folder: every output is written, the
    row's interval is marked ‡ (explained in the glossary) and the plots say so."""
    from ablate.components.report.sweep_data import load_sweep
    from tests.components.report.synthetic import make_sweep
    folder = make_sweep(tmp_path / "sweep")
    stats = pl.read_parquet(folder / "stats.parquet")
    odd = (pl.col("variant") == "chunking.size=64") & (pl.col("metric") == "final/recall_at_5")
    delta = stats.filter(odd)["delta"][0]
    stats.with_columns(ci_low=pl.when(odd).then(delta + 0.1).otherwise(pl.col("ci_low")),
                       ci_high=pl.when(odd).then(delta + 0.2).otherwise(pl.col("ci_high"))
                       ).write_parquet(folder / "stats.parquet")
    files = build_report(load_sweep(folder), latex=True)
    check(files)
    row = f"[{delta + 0.1:.3f}, {delta + 0.2:.3f}]‡"
    assert row in files["report.md"]
    assert "| ‡ | the CI does not contain its own Δ" in files["report.md"]
    assert f"{delta + 0.2:.3f}]$^\\ddagger$" in files["report.tex"]
