"""Gating against a stored reference: is tonight's pipeline worse than the one signed off?

A sweep's baseline (or a named variant) is compared with a reference's per-question
scores on the same questions (same data fingerprint and question ids, else InputError),
with the same paired test, CI and correction as within a sweep (the current sweep's
statistics settings), one comparison per gated metric in one correction family. A
metric fails when its change in the bad direction (from the metric registry) is
significant and larger than the allowed drop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl

from ablate.components.errors import InputError
from ablate.components.metrics.registry import direction
from ablate.components.stats import compare_variants

REFERENCE, CURRENT = "reference", "current"


@dataclass(frozen=True)
class Reference:
    """Per-question scores of the reference pipeline and where they come from."""

    per_query: pl.DataFrame  # one variant's rows: qid + metric columns
    fingerprint: str
    label: str  # a folder or an MLflow run id, for messages


@dataclass(frozen=True)
class ReferenceResult:
    metric: str
    mean_reference: float
    mean_current: float
    delta: float
    ci_low: float
    ci_high: float
    p_adjusted: float
    significant: bool
    failed: bool
    n_used: int
    worst: tuple[tuple[str, float], ...]  # (qid, change) of the questions that fell most


def _rows(per_query: pl.DataFrame, variant: str | None, where: str) -> pl.DataFrame:
    if "variant" not in per_query.columns:
        return per_query
    names = per_query["variant"].unique().to_list()
    want = variant or ("baseline" if "baseline" in names else (names[0] if len(names) == 1 else None))
    if want not in names:
        raise InputError(f"no variant '{variant or 'baseline'}' in {where} "
                         f"(variants: {', '.join(sorted(names))})", field="--variant")
    return per_query.filter(pl.col("variant") == want)


def compare_to_reference(current: pl.DataFrame, current_fingerprint: str, ref: Reference,
                         metrics: Sequence[str], stats: dict[str, Any], seed: int = 0,
                         max_drop: float = 0.0, variant: str | None = None,
                         worst: int = 5) -> list[ReferenceResult]:
    """One result per metric; see the module docstring."""
    if max_drop < 0:
        raise InputError("must be >= 0", field="--max-drop")
    if current_fingerprint != ref.fingerprint:
        raise InputError(f"the reference {ref.label} was run on another data set (fingerprint "
                         f"{ref.fingerprint} vs {current_fingerprint})", field="--reference")
    cur = _rows(current, variant, "the sweep")
    base = _rows(ref.per_query, None, f"the reference {ref.label}")
    cq, rq = set(cur["qid"].to_list()), set(base["qid"].to_list())
    if cq != rq:
        raise InputError(f"the reference {ref.label} has other questions ({len(rq - cq)} only "
                         f"there, {len(cq - rq)} only in the sweep): run both on the same tier "
                         "and split", field="--reference")
    for m in metrics:
        if m not in cur.columns or m not in base.columns:
            raise InputError(f"metric '{m}' is not in both the sweep and the reference",
                             field="--metric")
        if direction(m) == "none":
            raise InputError(f"metric '{m}' has no better direction, so it cannot be gated",
                             field="--metric")
    cols = ["qid", *metrics]
    table = pl.concat([base.select(cols).with_columns(variant=pl.lit(REFERENCE)),
                       cur.select(cols).with_columns(variant=pl.lit(CURRENT))])
    out = compare_variants(table, baseline=REFERENCE, metrics=list(metrics),
                           test=stats.get("test", "permutation"),
                           correction=stats.get("correction", "holm"),
                           alpha=stats.get("alpha", 0.05), resamples=stats.get("resamples", 10_000),
                           bootstrap_resamples=stats.get("bootstrap_resamples", 10_000),
                           ci_method=stats.get("ci_method", "bca"), seed=seed, family="all")
    joined = base.select(cols).join(cur.select(cols), on="qid", suffix="_current")
    results = []
    for r in out.iter_rows(named=True):
        m = r["metric"]
        bad = r["delta"] if direction(m) == "lower" else -r["delta"]
        change = (joined.select("qid", (pl.col(f"{m}_current") - pl.col(m)).alias("d"))
                  .filter(pl.col("d").is_not_nan()))
        change = change.sort("d", "qid", descending=[direction(m) == "lower", False])
        results.append(ReferenceResult(
            m, r["mean_baseline"], r["mean_variant"], r["delta"], r["ci_low"], r["ci_high"],
            r["p_adjusted"], bool(r["significant"]), bool(r["significant"]) and bad > max_drop,
            int(r["n_used"]),
            tuple((q, float(d)) for q, d in change.head(worst).iter_rows()
                  if (d > 0 if direction(m) == "lower" else d < 0))))
    return results


def reference_markdown(results: Sequence[ReferenceResult], ref_label: str, sweep: str,
                       max_drop: float) -> str:
    """The gate's verdict as Markdown (the Prefect artifact and the CLI's long form)."""
    failed = [r for r in results if r.failed]
    head = (f"## Gate FAILED against {ref_label}" if failed
            else f"## Gate passed against {ref_label}")
    lines = [head, "", f"Sweep `{sweep}`; allowed drop {max_drop}; paired test on the same "
             "questions, correction over the gated metrics.", "",
             "| metric | reference | now | Δ | 95% CI | p adj | verdict |",
             "|---|---:|---:|---:|---|---:|---|"]
    for r in results:
        verdict = "**fell**" if r.failed else ("changed, within the allowance" if r.significant
                                              else "no significant change")
        lines.append(f"| {r.metric} | {r.mean_reference:.3f} | {r.mean_current:.3f} | "
                     f"{r.delta:+.3f} | [{r.ci_low:.3f}, {r.ci_high:.3f}] | {r.p_adjusted:.3g} | "
                     f"{verdict} |")
    for r in failed:
        qs = ", ".join(f"{q} ({d:+.3f})" for q, d in r.worst)
        lines += ["", f"{r.metric} fell by {abs(r.delta):.3f} on {r.n_used} questions; the "
                      f"questions that fell most: {qs or '–'}"]
    return "\n".join(lines) + "\n"


def reference_from_folder(folder) -> Reference:  # type: ignore[no-untyped-def]
    """A reference stored as a sweep folder (its per_query.parquet and manifest.json)."""
    from pathlib import Path

    from ablate.components.report.sweep_data import load_sweep
    res = load_sweep(Path(folder))
    return Reference(res.per_query, res.manifest["dataset"]["fingerprint"], str(folder))
