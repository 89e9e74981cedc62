"""A finished sweep's saved results, read back from its folder, plus small derived views
(variables and their values, the baseline's value, metric families) that every report
format needs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.dotted import format_value, get_dotted, value_label, variable_parts
from ablate.components.contract.errors import InputError
from ablate.components.contract.vocab import BASELINE
from ablate.components.metrics.attribution import current_buckets
from ablate.components.report.evidence import DOCUMENTS_FILE, Evidence, load_evidence
from ablate.components.runtime.sweep_files import SweepFolder
from ablate.components.stats.compare import STATS_SCHEMA
from ablate.components.stats.slices import SLICES_FILE

REQUIRED = ("manifest.json", "variants.json", "per_query.parquet", "stats.parquet")
FACTORIAL_FILE = "factorial.parquet"  # a factorial design's effects (ablate.components.stats.factorial)
WORTH_FILE = "worth.parquet"  # Shapley values of a two-level design (ablate.components.stats.worth_table)
DEFAULT_KEY = ("final/recall_at_5", "final/ndcg_at_10", "answer/f1", "answer/em")


@dataclass(frozen=True)
class SweepResults:
    manifest: dict[str, Any]
    variants: list[dict[str, Any]]
    per_query: pl.DataFrame
    stats: pl.DataFrame
    timings: pl.DataFrame | None = None
    no_effect: tuple[str, ...] = field(default=())
    factorial: pl.DataFrame | None = None  # a factorial design's effects, when it has one
    evidence: Evidence | None = None  # questions and final contexts kept for the drill-down
    worth: pl.DataFrame | None = None  # its Shapley values, when its factors are two-level
    slices: pl.DataFrame | None = None  # report.slices' comparisons (slices.parquet)
    documents: pl.DataFrame | None = None  # each document's sha256 (documents.parquet)

    @property
    def metrics(self) -> list[str]:
        """The compared metrics; a baseline-only run (nothing compared): its metric columns."""
        if self.stats.height:
            return sorted(self.stats["metric"].unique().to_list())
        from ablate.components.metrics.registry import compared
        return sorted(c for c in self.per_query.columns if "/" in c and compared(c))

    def key_metrics(self, requested: Sequence[str] | None = None) -> list[str]:
        """Requested key metrics (else the experiment's), those present, else the first four."""
        if not requested:
            requested = (self.manifest.get("settings", {}).get("metrics", {}).get("key")
                         or DEFAULT_KEY)
        return present_key(requested, self.metrics)


def gated_default(res: SweepResults) -> list[str]:
    """What `ablate gate` guards without --metric: the sweep's key metrics that are
    per-question columns."""
    return [m for m in res.key_metrics() if m in res.per_query.columns]


def present_key(requested: Sequence[str], metrics: Sequence[str]) -> list[str]:
    """The requested key metrics that are present. A `final/` metric a sweep lacks (a
    retrieval-only sweep written before such studies assembled a context) stands in at the latest
    earlier retrieval stage it has (`reranked/`, then `candidates/`); none present: the
    first four."""
    have = set(metrics)
    out: list[str] = []
    for m in requested:
        stage, _, rest = m.partition("/")
        options = [m] + ([f"reranked/{rest}", f"candidates/{rest}"] if stage == "final" else [])
        found = next((c for c in options if c in have), None)
        if found is not None and found not in out:
            out.append(found)
    return out or list(metrics)[:4]


def load_sweep(sweep_dir: Path) -> SweepResults:
    """Read a sweep folder; InputError naming the folder/file when something is missing,
    and naming a damaged file and the command that writes it again (SweepFolder)."""
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        raise InputError("no such sweep folder", path=str(sweep_dir))
    for name in REQUIRED:
        if not (sweep_dir / name).is_file():
            raise InputError(f"not a sweep folder: {name} is missing", path=str(sweep_dir))
    files = SweepFolder(sweep_dir)
    man = files.manifest
    variants = files.json("variants.json")
    if not isinstance(variants, list) or not all(isinstance(v, dict) for v in variants):
        raise files.damaged("variants.json", "not a list of variant records")
    from ablate.components.metrics.registry import remember_directions
    remember_directions(man.get("metric_directions") or {})  # plugins' metrics
    return SweepResults(manifest=man, variants=variants,
                        # a folder from before issue 54: its wrong answers' old bucket name
                        per_query=current_buckets(files.parquet("per_query.parquet")),
                        stats=files.parquet("stats.parquet"),
                        timings=files.optional_parquet("timings.parquet"),
                        no_effect=tuple(man.get("no_effect") or ()),
                        factorial=files.optional_parquet(FACTORIAL_FILE),
                        evidence=load_evidence(files),
                        worth=files.optional_parquet(WORTH_FILE),
                        slices=files.optional_parquet(SLICES_FILE),
                        documents=files.optional_parquet(DOCUMENTS_FILE))


def base_value(config: dict[str, Any], variable: str) -> object:
    """The baseline's value of a variable; of several fields (a variant that sets several
    at once: dotted.variable_parts), {field: value}."""
    parts = variable_parts(variable)
    if len(parts) == 1:
        return get_dotted(config, variable)
    return {p: get_dotted(config, p) for p in parts}


def variables(variants: list[dict[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """Swept variable -> [(variant, value label)], the baseline first with its own value."""
    base = next((v for v in variants if v["name"] == BASELINE), None)
    out: dict[str, list[tuple[str, str]]] = {}
    for v in variants:
        if v.get("variable"):
            if v["variable"] not in out:
                label = (value_label(v["variable"], base_value(base["config"], v["variable"]))
                         if base else "")
                out[v["variable"]] = [(BASELINE, label)]
            out[v["variable"]].append((v["name"], v.get("value_label") or format_value(v["value"])))
    return out


def report_stats(stats: pl.DataFrame) -> pl.DataFrame:
    """stats.parquet as the report reads it: every column of STATS_SCHEMA (one it lacks,
    e.g. from an older or hand-made table, is null), rows without a metric or variant
    dropped, and `significant` only where Δ is a finite number (an arrow needs a
    direction; a null flag is not significant). Columns it does not know are kept."""
    missing = [pl.lit(None, dtype=t).alias(c) for c, t in STATS_SCHEMA.items() if c not in stats.columns]
    out = stats.with_columns(missing) if missing else stats
    delta = pl.col("delta").cast(pl.Float64)
    return out.filter(pl.col("metric").is_not_null() & pl.col("variant").is_not_null()).with_columns(
        (pl.col("significant").cast(pl.Boolean).fill_null(False)
         & delta.is_finite().fill_null(False)).alias("significant"))


def family_counts(stats: pl.DataFrame) -> dict[str, tuple[str, str]]:
    """Metric family ('final', 'answer', ...) -> (questions used, undefined) as text ranges."""
    if not stats.height:
        return {}
    fam = stats.with_columns(family=pl.col("metric").str.split("/").list.first())
    agg = fam.group_by("family", maintain_order=True).agg(
        pl.col("n_used").min().alias("u0"), pl.col("n_used").max().alias("u1"),
        pl.col("n_undefined").min().alias("d0"), pl.col("n_undefined").max().alias("d1"))

    def rng(a: int | None, b: int | None) -> str:
        if a is None or b is None:
            return "–"
        return str(a) if a == b else f"{a}–{b}"
    return {r["family"]: (rng(r["u0"], r["u1"]), rng(r["d0"], r["d1"]))
            for r in agg.sort("family").iter_rows(named=True)}


def variant_means(per_query: pl.DataFrame, metrics: Sequence[str],
                  stats: pl.DataFrame | None = None) -> dict[tuple[str, str], float]:
    """(variant, metric) -> mean over defined (finite) values; a metric with no per-question
    column (a judge-corrected `ppi/` one) takes the means its stats rows hold."""
    cols = [m for m in metrics if m in per_query.columns]
    agg = per_query.group_by("variant").agg(
        [pl.col(c).fill_nan(None).mean().alias(c) for c in cols])
    out = {(r["variant"], c): (r[c] if r[c] is not None else math.nan)
           for r in agg.iter_rows(named=True) for c in cols}
    if stats is not None and stats.height:
        for r in stats.filter(~pl.col("metric").is_in(cols)
                              & pl.col("metric").is_in(list(metrics))).iter_rows(named=True):
            for name, col in ((r["variant"], "mean_variant"), (r["baseline"], "mean_baseline")):
                value = r.get(col)
                out[name, r["metric"]] = float(value) if value is not None else math.nan
    return out
