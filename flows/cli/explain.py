"""`ablate explain SWEEP_DIR --variant NAME [--slice COLUMN=VALUE]`: the questions a variant won and lost against
the baseline, each with its gold answer and evidence, where the two runs diverge, both
final contexts (gold span marked [[ ]]) and both answers; from the saved sweep folder only
(components/report/drilldown.py, the same view as the report's drill-down)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Optional

import typer


def _hint(word: str, known: list[str]) -> str:
    near = difflib.get_close_matches(word, known, n=1, cutoff=0.5)
    return f"; did you mean {near[0]}?" if near else ""


def register(app: typer.Typer) -> None:
    @app.command("explain")
    def explain(
        sweep_dir: Path = typer.Argument(..., help="A sweep output folder."),
        variant: str = typer.Option(..., "--variant", help="The variant to explain (a variant name)."),
        metric: Optional[list[str]] = typer.Option(
            None, "--metric", help="Metric (repeat or comma-separate; default: the key metrics)."),
        lost: bool = typer.Option(False, "--lost", help="Only the questions the variant lost."),
        won: bool = typer.Option(False, "--won", help="Only the questions the variant won."),
        slice_: Optional[str] = typer.Option(
            None, "--slice", help="Only the questions of one slice, COLUMN=VALUE "
                                  "(report.slices; the verdicts are the slice's)."),
        limit: int = typer.Option(10, "--limit", min=1,
                                  help="Questions shown per metric (the largest changes, "
                                       "balanced between lost and won, spread over clusters)."),
    ) -> None:
        """Show the questions behind a variant's verdicts, from the saved results."""
        from ablate.components.contract.errors import InputError
        from ablate.components.contract.vocab import BASELINE
        from ablate.components.report.drilldown import explain_text
        from ablate.components.report.sweep_data import load_sweep
        if lost and won:
            raise InputError("--lost and --won exclude each other (neither: both)", field="--lost")
        res = load_sweep(sweep_dir)
        names = [v["name"] for v in res.variants if v["name"] != BASELINE]
        if variant not in names:
            raise InputError(f"unknown variant '{variant}'{_hint(variant, names)} "
                             f"(variants: {', '.join(names) or 'none'})",
                             path=str(sweep_dir), field="--variant")
        metrics = [m.strip() for v in metric or [] for m in v.split(",") if m.strip()]
        known = [c for c in res.per_query.columns if "/" in c]
        for m in metrics:
            if m not in known:
                raise InputError(f"unknown metric '{m}'{_hint(m, known)}", path=str(sweep_dir),
                                 field="--metric")
        metrics = metrics or [m for m in res.key_metrics() if m in known]
        per_query, stats = res.per_query, res.stats
        if slice_ is not None:
            from ablate.components.report.slices import slice_view
            try:
                per_query, stats = slice_view(per_query, res.slices, slice_)
            except InputError as e:
                raise InputError(e.message, path=str(sweep_dir), field="--slice") from None
            typer.echo(f"slice {slice_}: {per_query['qid'].n_unique()} questions; verdicts "
                       "within the slice's own correction family\n")
        typer.echo(explain_text(per_query, stats, res.variants, variant, metrics,
                                res.evidence, side="lost" if lost else "won" if won else None,
                                limit=limit), nl=False)
