"""The Markdown ablation report and the one-screen terminal summary.

Inputs are plain data (manifest dict, variant dicts, stats and per-query frames), so the
report can be rebuilt from a sweep folder at any time.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import polars as pl


def fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float):
        if x != 0 and abs(x) < 10 ** -digits:
            return f"{x:.1e}"
        return f"{x:.{digits}f}"
    return str(x)


def fmt_p(p: Any) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def mark(row: dict[str, Any]) -> str:
    if not row.get("significant"):
        return ""
    return "▲" if row["delta"] > 0 else "▼"


def findings(stats: pl.DataFrame, key_metrics: Sequence[str], no_effect: Sequence[str]) -> list[str]:
    """Sentences written from the numbers: significant changes on key metrics, then warnings."""
    lines = []
    rows = stats.filter(pl.col("metric").is_in(list(key_metrics)) & pl.col("significant"))
    rows = rows.sort(pl.col("delta").abs(), descending=True)
    for r in rows.iter_rows(named=True):
        verb = "raises" if r["delta"] > 0 else "lowers"
        lines.append(f"**{r['variant']}** {verb} {r['metric']} by {abs(r['delta']):.3f} "
                     f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}], adjusted p {fmt_p(r['p_adjusted'])}.")
    if not lines:
        lines.append("No variant differs significantly from the baseline on the key metrics "
                     f"({', '.join(key_metrics)}).")
    under = stats.filter(pl.col("metric").is_in(list(key_metrics)) & ~pl.col("significant")
                         & (pl.col("mde") > pl.col("delta").abs()))
    if under.height:
        names = sorted(set(under["variant"].to_list()))
        lines.append(f"Underpowered: for {len(names)} variant(s) the minimum detectable effect "
                     f"exceeds the observed difference on some key metric ({', '.join(names[:6])}"
                     f"{', …' if len(names) > 6 else ''}); a larger tier is needed to tell.")
    for name in no_effect:
        lines.append(f"{name}: final contexts and answers are identical to the baseline's; "
                     "the setting had no effect on this data.")
    return lines


def _variable_table(metric: str, names: Sequence[str], values: dict[str, str],
                    means: dict[tuple[str, str], float], stats_rows: dict[tuple[str, str], dict]) -> list[str]:
    out = [f"| variant | value | {metric} | Δ vs baseline | 95% CI | p | p adj | | d_z | W/T/L | n |",
           "|---|---|---:|---:|---|---:|---:|---|---:|---|---:|"]
    for name in names:
        m = means.get((name, metric), math.nan)
        r = stats_rows.get((name, metric))
        if r is None:  # the baseline
            out.append(f"| {name} | {values.get(name, '')} | {fmt(m)} | | | | | | | | |")
            continue
        out.append(f"| {name} | {values.get(name, '')} | {fmt(m)} | {fmt(r['delta'])} | "
                   f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}] | {fmt_p(r['p_value'])} | "
                   f"{fmt_p(r['p_adjusted'])} | {mark(r)} | {fmt(r['d_z'], 2)} | "
                   f"{r['wins']}/{r['ties']}/{r['losses']} | {r['n_used']} |")
    return out


def variant_means(per_query: pl.DataFrame, metrics: Sequence[str]) -> dict[tuple[str, str], float]:
    cols = [m for m in metrics if m in per_query.columns]
    agg = per_query.group_by("variant").agg(
        [pl.col(c).fill_nan(None).mean().alias(c) for c in cols])
    return {(r["variant"], c): (r[c] if r[c] is not None else math.nan)
            for r in agg.iter_rows(named=True) for c in cols}


def render_markdown(manifest: dict[str, Any], variants: list[dict[str, Any]], stats: pl.DataFrame,
                    per_query: pl.DataFrame, key_metrics: Sequence[str],
                    no_effect: Sequence[str] = ()) -> str:
    metrics = sorted(stats["metric"].unique().to_list()) if stats.height else []
    key = [m for m in key_metrics if m in metrics] or metrics[:4]
    rest = [m for m in metrics if m not in key]
    means = variant_means(per_query, metrics)
    srows = {(r["variant"], r["metric"]): r for r in stats.iter_rows(named=True)}
    st = manifest.get("statistics", {})
    ds = manifest.get("dataset", {})
    n_q = manifest.get("questions", {})
    lines = [
        f"# Ablation report: {manifest.get('experiment')}",
        "",
        f"- Sweep `{manifest.get('sweep_id')}`, data set `{ds.get('path')}` "
        f"(fingerprint `{ds.get('fingerprint')}`), tier **{manifest.get('tier')}**, split "
        f"**{manifest.get('split')}**",
        f"- Questions: {n_q.get('total')} ({n_q.get('answerable')} answerable; retrieval "
        f"metrics undefined and excluded for {n_q.get('without_evidence')} without evidence)",
        f"- Seed {manifest.get('seed')}; test: {st.get('test')}, correction: {st.get('correction')}"
        f", alpha {st.get('alpha')}, family: {st.get('family')}; CI: paired bootstrap "
        f"({st.get('ci_method')}), resamples {st.get('resamples')}",
        f"- Retrieval labels: chunk relevant when it covers ≥ {manifest.get('label_threshold')} "
        f"of a gold span; NDCG gain {manifest.get('ndcg_gain')}",
        f"- Versions: {', '.join(f'{k} {v}' for k, v in manifest.get('versions', {}).items())}",
        "",
        "## Findings",
        "",
    ]
    lines += [f"- {x}" for x in findings(stats, key, no_effect)]
    values = {v["name"]: v.get("value_label", "") for v in variants}
    by_var: dict[str, list[str]] = {}
    for v in variants:
        if v["variable"]:
            by_var.setdefault(v["variable"], []).append(v["name"])
    for variable, names in by_var.items():
        lines += ["", f"## {variable}", ""]
        for metric in key:
            lines += _variable_table(metric, ["baseline", *names], values, means, srows) + [""]
    if rest:
        lines += ["## All other metrics", "", "<details><summary>Every metric, every variant</summary>", ""]
        for metric in rest:
            lines += [f"### {metric}", ""]
            lines += _variable_table(metric, [v["name"] for v in variants], values, means, srows) + [""]
        lines += ["</details>", ""]
    lines += ["## Failure buckets", "", _buckets_table(per_query), "",
              "▲/▼: significant after correction (better/worse numerically). "
              "Lexical support is a proxy (answer tokens found in the context), not faithfulness.", ""]
    return "\n".join(lines)


def _buckets_table(per_query: pl.DataFrame) -> str:
    counts = per_query.group_by("variant", "bucket").len().sort("variant", "bucket")
    buckets = sorted(counts["bucket"].unique().to_list())
    order = per_query["variant"].unique(maintain_order=True).to_list()
    table = {(r["variant"], r["bucket"]): r["len"] for r in counts.iter_rows(named=True)}
    out = ["| variant | " + " | ".join(buckets) + " |", "|---|" + "---:|" * len(buckets)]
    for name in order:
        out.append(f"| {name} | " + " | ".join(str(table.get((name, b), 0)) for b in buckets) + " |")
    return "\n".join(out)


def terminal_summary(variants: list[dict[str, Any]], stats: pl.DataFrame, per_query: pl.DataFrame,
                     key_metrics: Sequence[str]) -> str:
    """One screen: each variant's key-metric means with deltas and marks."""
    metrics = [m for m in key_metrics if m in per_query.columns][:4]
    means = variant_means(per_query, metrics)
    srows = {(r["variant"], r["metric"]): r for r in stats.iter_rows(named=True)}
    width = max(len(v["name"]) for v in variants) + 2
    head = "variant".ljust(width) + "".join(m.rjust(26) for m in metrics)
    lines = [head, "-" * len(head)]
    for v in variants:
        cells = []
        for m in metrics:
            mean = means.get((v["name"], m), math.nan)
            r = srows.get((v["name"], m))
            cell = fmt(mean)
            if r is not None:
                cell += f" ({r['delta']:+.3f}{mark(r) or ' '})"
            cells.append(cell.rjust(26))
        lines.append(v["name"].ljust(width) + "".join(cells))
    lines.append("(delta vs baseline; ▲/▼ significant after correction)")
    return "\n".join(lines)
