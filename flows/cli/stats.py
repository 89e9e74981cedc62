"""`ablate stats`: paired tests of every variant against a baseline on any per-question
table (long or wide, parquet or CSV), printed as a table and written as one row per
variant x metric."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import polars as pl
import typer

from ablate.components.contract.errors import InputError
from ablate.components.contract.vocab import CI_METHODS, FAMILIES
from ablate.components.stats.correction import CORRECTIONS
from ablate.components.stats.paired_tests import TESTS

_OPTION_FIELDS = {"test", "correction", "ci_method", "family", "alpha", "resamples"}


def _fmt(x: float, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def _fmt_end(x: float, r: dict) -> str:
    """A CI endpoint: 0 where the bisection bracketed it at 0 and it lies within its
    tolerance of 0 (1e-6 of the row's scale), never 5.00e-11."""
    scale = max((abs(v) for v in (r.get("ci_low"), r.get("ci_high"), r.get("delta"))
                 if isinstance(v, float) and math.isfinite(v)), default=0.0)
    if isinstance(x, float) and math.isfinite(x) and x != 0 and abs(x) <= 1e-6 * scale:
        return "0"
    return _fmt(x, 3)


def format_stats(df: pl.DataFrame) -> str:
    """A readable fixed-width text table of a compare_variants result, plus notes."""
    from ablate.components.stats.bootstrap import FLAG_BCA_UNDEFINED
    from ablate.components.stats.clusters import FEW_CHANGED, FEW_CLUSTERS, FLAG_FEW_CHANGED
    from ablate.components.stats.inference import FLAG_FEW_UNTIED, MIN_UNTIED_FOR_BOOTSTRAP
    from ablate.components.stats.inversion import FLAG_UNBOUNDED
    clustered = df.height > 0 and df["clustered_by"][0] != "none"
    head = ["metric", "variant", "n/G" if clustered else "n", "delta", "CI", "p", "p_adj", "sig", "d_z",
            "W/T/L", "MDE"]
    show_undef = df.height > 0 and bool((df["n_undefined"] + df["n_missing"]).sum() > 0)
    if show_undef:
        head.insert(3, "undef/miss")
    rows = [head]
    for r in df.iter_rows(named=True):
        ci = f"[{_fmt_end(r['ci_low'], r)}, {_fmt_end(r['ci_high'], r)}]"
        n_g = f"{r['n_used']}" + (f"/{r['n_clusters']}" if clustered else "")
        rows.append([r["metric"], r["variant"], n_g, _fmt(r["delta"]), ci,
                     _fmt(r["p_value"], 3), _fmt(r["p_adjusted"], 3),
                     "*" if r["significant"] else "", _fmt(r["d_z"], 3),
                     f"{r['wins']}/{r['ties']}/{r['losses']}", _fmt(r["mde"], 3)])
        if show_undef:
            rows[-1].insert(3, f"{r['n_undefined']}/{r['n_missing']}")
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if df.height:
        r0 = df.row(0, named=True)
        lines.append("")
        level = df["ci_level"].drop_nans().drop_nulls().to_list()
        ci = r0["ci_method"] + (f" at {min(level):.3g}-{max(level):.3g}" if level else "")
        lines.append(f"test: {r0['test']}  correction: {r0['correction']} "
                     f"(family: {r0['family']})  alpha: {r0['alpha']}  seed: {r0['seed']}  "
                     f"CI: {ci}" + (f" ({r0['bootstrap_resamples']} bootstrap resamples)"
                                    if r0["bootstrap_resamples"] else ""))
        if r0["clustered_by"] == "none":
            lines.append("unit: the question (every question independent)")
        else:
            g = max(df["n_clusters"].drop_nulls().to_list(), default=0)
            n = max(df["n_used"].drop_nulls().to_list(), default=0)
            lines.append(f"unit: the cluster ('{r0['clustered_by']}'): {n} questions in {g} clusters")
            if g < FEW_CLUSTERS:
                lines.append(f"warning: only {g} clusters: tests and intervals rest on {g} "
                             "independent units, so only large effects can be decided")
        mc = df.filter(pl.col("resamples") > 0)
        if mc.height:
            lines.append(f"Monte-Carlo sign flips: {mc['resamples'][0]} resamples "
                         f"({mc.height} comparisons; the others are exact)")
    for r in df.iter_rows(named=True):
        if FLAG_FEW_CHANGED in str(r.get("ci_flag") or ""):
            lines.append(f"warning: {r['metric']}/{r['variant']}: changes in only "
                         f"{r['n_changed_clusters']} of {r['n_clusters']} clusters (k < "
                         f"{FEW_CHANGED}): " + ("0/1 interval widened to the Tango score "
                         "interval for changes not seen" if "+tango" in str(r.get("ci_method"))
                         else "the interval may not cover, its coverage is governed by the "
                         "clusters that changed"))
    for r in df.filter(pl.col("missingness_flag")).iter_rows(named=True):
        lines.append(f"warning: {r['metric']}/{r['variant']}: unequal missingness vs "
                     f"baseline (undefined {r['n_undefined_variant']} vs "
                     f"{r['n_undefined_baseline']}, missing rows {r['n_missing']})")
    flags = df["ci_flag"].to_list() if df.height else []
    n_fb = flags.count(FLAG_BCA_UNDEFINED)
    if n_fb:
        lines.append(f"note: BCa undefined for {n_fb} comparison(s); percentile CI used")
    n_few = sum(f.startswith(FLAG_FEW_UNTIED) for f in flags)
    if n_few:
        lines.append(f"note: fewer than {MIN_UNTIED_FOR_BOOTSTRAP} pairs differ in {n_few} "
                     f"comparison(s): the inverted sign-flip interval instead of the bootstrap")
    n_unb = sum(FLAG_UNBOUNDED in f for f in flags)
    if n_unb:
        lines.append(f"note: {n_unb} interval(s) unbounded (too few clusters for the test to "
                     "reject any shift), shown as -")
    return "\n".join(lines)


def _split(values: Optional[list[str]]) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out += [x.strip() for x in v.split(",") if x.strip()]
    return out


def run_stats(path: Path, *, baseline: str, metrics: list[str] | None = None,
              out: Path | None = None, variant_column: str | None = None,
              qid_column: str | None = None, cluster_column: str | None = None,
              **options) -> pl.DataFrame:
    """Load, compare, optionally write; InputErrors name the file. cluster_column: a
    column name, `none`, or `auto` (the `cluster` column when the table has one)."""
    from ablate.components.runtime.sweep_files import recording_folder
    from ablate.components.stats import compare_variants, load_per_query  # scipy.stats: only here
    sweep = recording_folder(path)
    if sweep is not None:  # a sweep's per_query.parquet: damaged, it names its repair
        sweep.check(Path(path).name)
    pq = load_per_query(path, variant_col=variant_column, qid_col=qid_column,
                        cluster_col=cluster_column)
    chosen = metrics or pq.metrics
    if not chosen:
        raise InputError("no numeric metric columns found", path=str(path), field="metrics")
    try:
        result = compare_variants(pq.table, baseline=baseline, metrics=chosen,
                                  variant_col=pq.variant_col, qid_col=pq.qid_col,
                                  cluster_col=pq.cluster_col, **options)
    except InputError as exc:
        if exc.field in _OPTION_FIELDS or exc.path:
            raise
        raise InputError(exc.message, path=str(path), line=exc.line,
                         field=exc.field) from None
    if out is not None:
        suffix = out.suffix.lower()
        if suffix not in (".parquet", ".csv"):
            raise InputError("output must end in .parquet or .csv", path=str(out),
                             field="out")
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        if suffix == ".parquet":
            result.write_parquet(tmp)
        else:
            result.write_csv(tmp)
        tmp.replace(out)
        sweep = recording_folder(out)
        if sweep is not None:  # stats.parquet of a sweep folder: its record follows
            sweep.rerecord([out.name])
    return result


def register(app: typer.Typer) -> None:
    @app.command("stats")
    def stats(
        per_query_file: Path = typer.Argument(..., help="Per-question table (.parquet/.csv), long or wide."),
        baseline: str = typer.Option(..., help="Name of the baseline variant."),
        metrics: Optional[list[str]] = typer.Option(
            None, help="Metrics to test (repeat or comma-separate); default: all numeric columns."),
        test: str = typer.Option("permutation", help=f"{' | '.join(TESTS)}"),
        correction: str = typer.Option("holm", help=f"{' | '.join(CORRECTIONS)}"),
        alpha: float = typer.Option(0.05, help="Significance level (and CI level 1-alpha)."),
        resamples: int = typer.Option(
            10_000, help="Monte-Carlo sign flips (raised if too few for the correction)."),
        bootstrap_resamples: int = typer.Option(10_000, help="Bootstrap resamples for the CI."),
        ci_method: str = typer.Option("inversion", help=f"{' | '.join(CI_METHODS)}"),
        seed: int = typer.Option(0, help="The one seed for every resample."),
        cluster_column: str = typer.Option(
            "auto", help="The column naming each question's cluster (questions sharing a document): "
                         "auto = 'cluster' when the table has one, none = independent questions."),
        family: str = typer.Option("per_metric", help=f"{' | '.join(FAMILIES)}"),
        variant_column: Optional[str] = typer.Option(None, help="Variant column (default: detected)."),
        qid_column: Optional[str] = typer.Option(None, help="Question id column (default: detected)."),
        out: Optional[Path] = typer.Option(None, help="Write the result (.parquet or .csv)."),
    ) -> None:
        """Test every variant against the baseline, per metric, paired on question id."""
        result = run_stats(per_query_file, baseline=baseline, metrics=_split(metrics),
                           out=out, variant_column=variant_column, qid_column=qid_column,
                           cluster_column=cluster_column, test=test, correction=correction,
                           alpha=alpha, resamples=resamples,
                           bootstrap_resamples=bootstrap_resamples, ci_method=ci_method,
                           seed=seed, family=family)
        typer.echo(format_stats(result))
        if out is not None:
            typer.echo(f"wrote {result.height} rows to {out}")
