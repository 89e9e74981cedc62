"""`ablate gate SWEEP_DIR [--metric M] --max-drop D`: for CI pipelines, exit 0 only when
every variant is shown to be no worse than the baseline by D or more on every gated
metric (non-inferiority: the one-sided corrected bound of the drop is below D), exit 1
when that is not shown (a fail, or inconclusive: this sample cannot rule out a drop of D;
the line says how many questions would), exit 2 on bad input. Without `--metric` the sweep's key metrics (`metrics.key`) are gated.

`--rule worse` is the older, weaker gate: exit 1 only when a variant is *significantly*
worse by more than D (a small sample passes large drops).

With `--reference REF` (a stored sweep folder, or an MLflow run id) the sweep's baseline
(or `--variant`) is compared with the reference on the same questions instead."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ablate.flows.outputs.reference import gate_reference

RULE_HELP = ("non-inferiority (pass only when the drop is shown to be below --max-drop) or "
             "worse (fail only when significantly worse by more than --max-drop).")


def register(app: typer.Typer) -> None:
    @app.command("gate")
    def gate(
        sweep_dir: Path = typer.Argument(..., help="A sweep output folder."),
        metric: Optional[List[str]] = typer.Option(
            None, help="Metric to guard, e.g. final/recall_at_5 (repeat for several; default: "
                       "the sweep's key metrics, metrics.key)."),
        max_drop: Optional[float] = typer.Option(
            None, help="Allowed drop D (absolute, in metric units; a rise for lower-is-better "
                       "metrics). Required, > 0, for non-inferiority; 0 by default for worse."),
        rule: str = typer.Option("non-inferiority", help=RULE_HELP),
        variant: Optional[str] = typer.Option(None, help="Check only this variant."),
        reference: Optional[str] = typer.Option(
            None, help="Compare with a stored reference sweep folder or MLflow run id."),
        tracking_uri: Optional[str] = typer.Option(None, help="MLflow store of a run-id reference."),
    ) -> None:
        """Exit 0 only when no gated variant is shown (non-inferiority) or found (worse)
        to be worse than the baseline (or the sweep than the reference) by D or more;
        exit 1 on a fail or an inconclusive gate."""
        from ablate.components.report.gate import check_rule
        max_drop = check_rule(rule, max_drop)
        if reference is not None:
            from ablate.components.report.reference import overall
            results, markdown = gate_reference(sweep_dir, reference, metric or [], max_drop, variant,
                                               tracking_uri, rule=rule)
            typer.echo(markdown.rstrip())
            if overall(results) != "pass":
                raise typer.Exit(1)
            return
        _local(sweep_dir, metric or [], max_drop, variant, rule)


def _local(sweep_dir: Path, metrics: list[str], max_drop: float, variant: str | None,
           rule: str) -> None:
    from ablate.components.report.gate import bad_word, check_gate, explain, verdict_word
    from ablate.components.report.reference import overall
    from ablate.components.report.sweep_data import gated_default, load_sweep
    res = load_sweep(sweep_dir)
    metrics = metrics or gated_default(res)
    results = check_gate(res.per_query, metrics, max_drop, variant, rule=rule,
                         statistics=res.manifest.get("statistics") or {},
                         seed=int(res.manifest.get("seed", 0)), stats=res.stats)
    for r in results:
        typer.echo(f"{verdict_word(r)} {r.variant}: {r.metric} "
                   f"{explain(r, max_drop, manifest=res.manifest)}")
    if rule == "non-inferiority" and results:
        alpha = (res.manifest.get("statistics") or {}).get("alpha", 0.05)
        typer.echo(f"(one-sided {100 * results[0].confidence:.4g}% bounds: alpha {alpha} over "
                   f"{len(results)} gated comparison(s), Bonferroni)")
    for m in metrics:
        mine = [r for r in results if r.metric == m]
        bad = bad_word(m)
        if overall(mine) == "pass":
            shown = "shown below" if rule == "non-inferiority" else "not significantly above"
            typer.echo(f"gate passed: every variant's {bad} in {m} is {shown} {max_drop}")
            continue
        failed = [r.variant for r in mine if r.verdict == "fail"]
        unsure = [r.variant for r in mine if r.verdict == "inconclusive"]
        if failed:
            how = "not shown below" if rule == "non-inferiority" else "significantly above"
            typer.echo(f"gate FAILED: {len(failed)} variant(s) with a {bad} in {m} {how} "
                       f"{max_drop}: {', '.join(failed)}", err=True)
        if unsure:
            typer.echo(f"gate INCONCLUSIVE: too few questions to show that the {bad} in {m} "
                       f"is below {max_drop} for {', '.join(unsure)}", err=True)
    if overall(results) != "pass":
        raise typer.Exit(1)
