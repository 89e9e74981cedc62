"""`ablate gate SWEEP_DIR --metric M [--max-drop D]`: exit 1 when a variant is significantly
worse than the baseline on M by more than D (for CI pipelines); 0 otherwise.

With `--reference REF` (a stored sweep folder, or an MLflow run id) the sweep's baseline
(or `--variant`) is compared with the reference on the same questions instead: exit 1
when a gated metric fell significantly by more than D."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from components.report.findings import fmt, fmt_p


def load_reference(ref: str, tracking_uri: str | None):  # type: ignore[no-untyped-def]
    """A folder path, else an MLflow run id (a variant's run, or a sweep's parent run
    whose baseline child is taken)."""
    from components.errors import InputError
    from components.report.reference import reference_from_folder
    if Path(ref).is_dir():
        return reference_from_folder(Path(ref))
    if len(ref) == 32 and all(c in "0123456789abcdef" for c in ref):
        from flows import env
        from flows.tracking import fetch_reference
        return fetch_reference(ref, env.tracking_uri(tracking_uri, Path.cwd()))
    raise InputError("neither a sweep folder nor an MLflow run id", path=ref, field="--reference")


def gate_reference(sweep_dir: Path, ref: str, metrics: list[str], max_drop: float,
                   variant: str | None, tracking_uri: str | None = None):  # type: ignore[no-untyped-def]
    """(results, markdown) of gating a sweep folder against a reference."""
    from components.report.reference import compare_to_reference, reference_markdown
    from components.report.sweep_data import load_sweep
    res = load_sweep(sweep_dir)
    man = res.manifest
    reference = load_reference(ref, tracking_uri)
    results = compare_to_reference(res.per_query, man["dataset"]["fingerprint"], reference,
                                   metrics, man.get("statistics", {}), seed=man.get("seed", 0),
                                   max_drop=max_drop, variant=variant)
    return results, reference_markdown(results, reference.label, man.get("sweep_id", ""), max_drop)


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
        from components.metrics.registry import direction
        from components.report.gate import check_gate
        from components.report.sweep_data import load_sweep
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
