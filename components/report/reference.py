"""Gating against a stored reference: is tonight's pipeline worse than the one signed off?

A sweep's baseline (or a named variant) is compared with a reference's per-question
scores on the same questions (same data fingerprint and question ids, else InputError),
paired on the question, over the clusters the sweep's statistics settings name, one
comparison per gated metric in one family. Rules (ablate.components.report.gate):

- `non-inferiority` (default): a metric passes only when the one-sided bound (Bonferroni
  over the gated metrics) shows its drop is below the allowed drop; each result says the
  smallest drop this reference can rule out at its n, and is `inconclusive` (with the
  questions needed) when that is larger than the allowed drop;
- `worse`: a metric fails only when its change in the bad direction (from the metric
  registry) is significant (the sweep's test, CI and correction) and larger than the
  allowed drop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.metrics.registry import direction
from ablate.components.report.gate import (
    NONINF,
    WORSE,
    GateResult,
    check_rule,
    explain,
    gated_direction,
    noninferiority_results,
    worse_result,
)
from ablate.components.report.numbers import fmt, fmt_p
from ablate.components.stats import compare_variants
from ablate.components.stats.clusters import cluster_column
from ablate.components.stats.noninferiority import FAIL, INCONCLUSIVE, PASS

REFERENCE, CURRENT = "reference", "current"


@dataclass(frozen=True)
class Reference:
    """Per-question scores of the reference pipeline and where they come from."""

    per_query: pl.DataFrame  # one variant's rows: qid + metric columns
    fingerprint: str
    label: str  # a folder or an MLflow run id, for messages


@dataclass(frozen=True)
class ReferenceResult(GateResult):
    """A gated metric against the reference (`variant` is the sweep's compared variant)."""

    mean_reference: float = math.nan
    mean_current: float = math.nan
    worst: tuple[tuple[str, float], ...] = ()  # (qid, change) of the questions that fell most

    @property
    def n_used(self) -> int:
        return self.n


def _rows(per_query: pl.DataFrame, variant: str | None, where: str) -> tuple[pl.DataFrame, str]:
    if "variant" not in per_query.columns:
        return per_query, variant or CURRENT
    names = per_query["variant"].unique().to_list()
    want = variant or ("baseline" if "baseline" in names else (names[0] if len(names) == 1 else None))
    if want is None or want not in names:
        raise InputError(f"no variant '{variant or 'baseline'}' in {where} "
                         f"(variants: {', '.join(sorted(names))})", field="--variant")
    return per_query.filter(pl.col("variant") == want), str(want)


def _worse(table: pl.DataFrame, metrics: Sequence[str], stats: dict[str, Any], seed: int,
           cluster: str | None, max_drop: float) -> list[GateResult]:
    out = compare_variants(table, baseline=REFERENCE, metrics=list(metrics),
                           test=stats.get("test", "permutation"),
                           correction=stats.get("correction", "holm"),
                           alpha=stats.get("alpha", 0.05), resamples=stats.get("resamples", 10_000),
                           bootstrap_resamples=stats.get("bootstrap_resamples", 10_000),
                           ci_method=stats.get("ci_method", "inversion"), seed=seed,
                           family="all", cluster_col=cluster)
    return [worse_result(r, CURRENT, max_drop) for r in out.iter_rows(named=True)]


def compare_to_reference(current: pl.DataFrame, current_fingerprint: str, ref: Reference,
                         metrics: Sequence[str], stats: dict[str, Any], seed: int = 0,
                         max_drop: float | None = None, variant: str | None = None,
                         worst: int = 5, rule: str = NONINF) -> list[ReferenceResult]:
    """One result per metric, in the order given; see the module docstring. stats: the
    sweep's statistics settings (test, correction, alpha, resamples, ci_method, cluster)."""
    max_drop = check_rule(rule, max_drop)
    if current_fingerprint != ref.fingerprint:
        raise InputError(f"the reference {ref.label} was run on another data set (fingerprint "
                         f"{ref.fingerprint} vs {current_fingerprint})", field="--reference")
    cur, name = _rows(current, variant, "the sweep")
    base, _ = _rows(ref.per_query, None, f"the reference {ref.label}")
    cq, rq = set(cur["qid"].to_list()), set(base["qid"].to_list())
    if cq != rq:
        raise InputError(f"the reference {ref.label} has other questions ({len(rq - cq)} only "
                         f"there, {len(cq - rq)} only in the sweep): run both on the same tier "
                         "and split", field="--reference")
    metrics = list(dict.fromkeys(metrics))
    for m in metrics:
        if m not in cur.columns or m not in base.columns:
            raise InputError(f"metric '{m}' is not in both the sweep and the reference",
                             field="--metric")
        gated_direction(m)
    cluster = cluster_column(stats.get("cluster"), cur.columns)
    cols = ["qid", *metrics]
    extra = [cluster] if cluster else []
    if cluster and cluster not in cur.columns:
        raise InputError(f"no cluster column '{cluster}' in the sweep's per-question table",
                         field="stats.cluster")
    # the sweep's clusters for both sides: the reference may predate the cluster column
    base_t = base.select(cols).join(cur.select(["qid", *extra]), on="qid")
    table = pl.concat([base_t.with_columns(variant=pl.lit(REFERENCE)),
                       cur.select(cols + extra).with_columns(variant=pl.lit(CURRENT))],
                      how="diagonal_relaxed")
    if rule == WORSE:
        gates = _worse(table, metrics, stats, seed, cluster, max_drop)
        gates = sorted(gates, key=lambda g: metrics.index(g.metric))
    else:
        gates = noninferiority_results(table, REFERENCE, [(m, CURRENT) for m in metrics],
                                       max_drop, stats, seed)
    joined = base.select(cols).join(cur.select(cols), on="qid", suffix="_current")
    results = []
    for g in gates:
        m = g.metric
        both = joined.select("qid", pl.col(m).cast(pl.Float64).alias("r"),
                             pl.col(f"{m}_current").cast(pl.Float64).alias("c"))
        both = both.filter(pl.col("r").is_finite() & pl.col("c").is_finite())
        change = both.select("qid", (pl.col("c") - pl.col("r")).alias("d"))
        change = change.sort("d", "qid", descending=[direction(m) == "lower", False])
        fell = tuple((q, float(d)) for q, d in change.head(worst).iter_rows()
                     if (d > 0 if direction(m) == "lower" else d < 0))
        fields = {k: getattr(g, k) for k in GateResult.__dataclass_fields__}
        fields["variant"] = name
        results.append(ReferenceResult(**fields, mean_reference=_mean(both["r"]),
                                       mean_current=_mean(both["c"]), worst=fell))
    return results


def _mean(s: pl.Series) -> float:
    return float(s.mean()) if s.len() else math.nan  # type: ignore[arg-type]


def overall(results: Sequence[GateResult]) -> str:
    """pass when every result passed; fail when any failed; else inconclusive."""
    verdicts = {r.verdict for r in results}
    return FAIL if FAIL in verdicts else INCONCLUSIVE if INCONCLUSIVE in verdicts else PASS


def reference_markdown(results: Sequence[ReferenceResult], ref_label: str, sweep: str,
                       max_drop: float, manifest: dict[str, Any] | None = None) -> str:
    """The gate's verdict as Markdown (the Prefect artifact and the CLI's long form);
    `manifest`: the sweep's (an inconclusive line says when its data set is too small)."""
    verdict = overall(results)
    head = {PASS: "## Gate passed against", FAIL: "## Gate FAILED against",
            INCONCLUSIVE: "## Gate INCONCLUSIVE against"}[verdict] + f" {ref_label}"
    rule = results[0].rule if results else NONINF
    if rule == WORSE:
        lines = [head, "", f"Sweep `{sweep}`; rule `worse`: fails only when significantly worse "
                 f"by more than {max_drop}; paired test on the same questions, correction over "
                 "the gated metrics.", "",
                 "| metric | reference | now | Δ | CI | p adj | questions (clusters) | verdict |",
                 "|---|---:|---:|---:|---|---:|---:|---|"]
        for r in results:
            word = "**fell**" if r.failed else ("changed, within the allowance" if r.significant
                                                else "no significant change")
            lines.append(f"| {r.metric} | {fmt(r.mean_reference)} | {fmt(r.mean_current)} | "
                         f"{r.delta:+.3f} | [{fmt(r.ci_low)}, {fmt(r.ci_high)}] | "
                         f"{fmt_p(r.p_adjusted)} | {r.n} ({r.n_clusters}) | {word} |")
    else:
        level = f"{100 * results[0].confidence:.4g}%" if results else ""
        lines = [head, "", f"Sweep `{sweep}`; rule `non-inferiority`: a metric passes only when "
                 f"the one-sided {level} bound (Bonferroni over the gated metrics; sign-flip "
                 "test over clusters of questions) shows its drop (a rise for lower-is-better "
                 f"metrics) is below {max_drop}.", "",
                 "| metric | reference | now | Δ | worst plausible drop | rules out drops ≥ "
                 "| questions (clusters) | verdict |",
                 "|---|---:|---:|---:|---:|---:|---:|---|"]
        for r in results:
            word = {PASS: "pass", FAIL: "**FAIL**", INCONCLUSIVE: "**inconclusive**"}[r.verdict]
            lines.append(f"| {r.metric} | {fmt(r.mean_reference)} | {fmt(r.mean_current)} | "
                         f"{r.delta:+.3f} | {fmt(round(-r.lower, 9) + 0.0)} | {fmt(r.margin_n)} | "
                         f"{r.n} ({r.n_clusters}) | {word} |")
    for r in results:
        if r.failed:
            lines += ["", one_line(r, max_drop, manifest)]
            if r.worst:
                qs = ", ".join(f"{q} ({d:+.3f})" for q, d in r.worst)
                lines.append(f"The questions whose {r.metric} {_moved(r.metric)} most: {qs}")
    return "\n".join(lines) + "\n"


def one_line(r: ReferenceResult, max_drop: float, manifest: dict[str, Any] | None = None) -> str:
    """A gated metric's verdict and why, in one line (the artifact, a failed flow's message)."""
    return f"{r.metric}: {verdict_text(r)}; {explain(r, max_drop, delta=False, manifest=manifest)}"


def _moved(metric: str) -> str:
    return "rose" if direction(metric) == "lower" else "fell"


def verdict_text(r: ReferenceResult) -> str:
    """The verdict, then `fell by X` (`rose by X` for a lower-is-better metric: it moved
    in the bad direction), `improved by X` or `unchanged`."""
    worse = (r.delta > 0) == (direction(r.metric) == "lower")
    how = (f"{_moved(r.metric) if worse else 'improved'} by {abs(r.delta):.3f}" if r.delta
           else "unchanged")
    return {FAIL: f"FAIL, {how}", INCONCLUSIVE: f"INCONCLUSIVE, {how}"}.get(r.verdict, how)


def reference_from_folder(folder) -> Reference:  # type: ignore[no-untyped-def]
    """A reference stored as a sweep folder (its per_query.parquet and manifest.json)."""
    from pathlib import Path

    from ablate.components.report.sweep_data import load_sweep
    res = load_sweep(Path(folder))
    return Reference(res.per_query, res.manifest["dataset"]["fingerprint"], str(folder))
