"""`ablate gate SWEEP_DIR --metric M [--max-drop D]`: exit 1 when a variant is significantly
worse than the baseline on M by more than D (for CI pipelines); 0 otherwise.

With `--reference REF` (a stored sweep folder, or an MLflow run id) the sweep's baseline
(or `--variant`) is compared with the reference on the same questions instead: exit 1
when a gated metric fell significantly by more than D."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ablate.components.report.numbers import fmt, fmt_p
from ablate.flows.outputs.reference import gate_reference


def register(app: typer.Typer) -> None:
    @app.command("gate")
    def gate(
        sweep_dir: Path = typer.Argument(..., help="A sweep output folder."),
        metric: List[str] = typer.Option(..., help="Metric to guard, e.g. final/recall_at_5 "
                                                   "(repeat for several)."),
        max_drop: float = typer.Option(0.0, help="Allowed drop (absolute, in metric units)."),
        variant: Optional[str] = typer.Option(None, help="Check only this variant."),
        reference: Optional[str] = typer.Option(
            None, help="Compare with a stored reference sweep folder or MLflow run id."),
        tracking_uri: Optional[str] = typer.Option(None, help="MLflow store of a run-id reference."),
    ) -> None:
        """Fail (exit 1) when a variant is significantly worse than the baseline (or the
        sweep than the reference) by more than D."""
        if reference is not None:
            results, markdown = gate_reference(sweep_dir, reference, metric, max_drop, variant,
                                               tracking_uri)
            typer.echo(markdown.rstrip())
            if any(r.failed for r in results):
                raise typer.Exit(1)
            return
        from ablate.components.metrics.registry import direction
        from ablate.components.report.gate import check_gate
        from ablate.components.report.sweep_data import load_sweep
        res = load_sweep(sweep_dir)
        failed_any = False
        for m in metric:
            results = check_gate(res.stats, m, max_drop, variant)
            for r in results:
                status = "FAIL" if r.failed else "ok  "
                typer.echo(f"{status} {r.variant}: {m} delta {fmt(r.delta)} "
                           f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}], adjusted p {fmt_p(r.p_adjusted)}"
                           f"{' (significant)' if r.significant else ''}")
            failed = [r.variant for r in results if r.failed]
            bad = "rise" if direction(m) == "lower" else "drop"
            if failed:
                failed_any = True
                typer.echo(f"gate FAILED: {len(failed)} variant(s) significantly worse on {m} "
                           f"({bad} > {max_drop}): {', '.join(failed)}", err=True)
            else:
                typer.echo(f"gate passed: no variant significantly worse on {m} ({bad} > {max_drop})")
        if failed_any:
            raise typer.Exit(1)
