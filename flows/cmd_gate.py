"""`ablate gate SWEEP_DIR --metric M [--max-drop D]`: exit 1 when a variant is significantly
worse than the baseline on M by more than D (for CI pipelines); 0 otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from components.report.findings import fmt, fmt_p


def register(app: typer.Typer) -> None:
    @app.command("gate")
    def gate(
        sweep_dir: Path = typer.Argument(..., help="A sweep output folder."),
        metric: str = typer.Option(..., help="Metric to guard, e.g. final/recall_at_5."),
        max_drop: float = typer.Option(0.0, help="Allowed drop (absolute, in metric units)."),
        variant: Optional[str] = typer.Option(None, help="Check only this variant."),
    ) -> None:
        """Fail (exit 1) when any variant is significantly worse than the baseline by more than D."""
        from components.metrics.registry import direction
        from components.report.gate import check_gate
        from components.report.sweep_data import load_sweep
        res = load_sweep(sweep_dir)
        results = check_gate(res.stats, metric, max_drop, variant)
        for r in results:
            status = "FAIL" if r.failed else "ok  "
            typer.echo(f"{status} {r.variant}: {metric} delta {fmt(r.delta)} "
                       f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}], adjusted p {fmt_p(r.p_adjusted)}"
                       f"{' (significant)' if r.significant else ''}")
        failed = [r.variant for r in results if r.failed]
        bad = "rise" if direction(metric) == "lower" else "drop"
        if failed:
            typer.echo(f"gate FAILED: {len(failed)} variant(s) significantly worse on {metric} "
                       f"({bad} > {max_drop}): {', '.join(failed)}", err=True)
            raise typer.Exit(1)
        typer.echo(f"gate passed: no variant significantly worse on {metric} ({bad} > {max_drop})")
