"""`ablate report SWEEP_DIR`: rebuild report.md, report.html, plots/ and summary.txt (and
optionally report.tex) from the saved results, without re-running anything."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import typer

from ablate.components.runtime.atomic import atomic_write
from ablate.components.runtime.sweep_files import MANIFEST, REPORT_MADE, SweepFolder


def _mark_made(files: SweepFolder) -> None:
    """A folder whose analysis failed part-way lists what it lacks (manifest `incomplete`):
    the report is made now, and the statistics are there when stats.parquet is."""
    man = files.manifest
    if "incomplete" not in man:
        return
    left = [part for part in man["incomplete"] if part != "report"
            and not (part == "stats" and (files.path / "stats.parquet").is_file())]
    if left:
        man["incomplete"] = left
    else:
        del man["incomplete"]
    atomic_write(files.path / MANIFEST, json.dumps(man, indent=2, default=str) + "\n")


def _recorded(files: SweepFolder, written: list[Path]) -> list[str]:
    """Record the files just written in the manifest; remove the damaged ones of an
    earlier report this one did not write (never a damaged file beside a fresh report).
    The removed ones, by name."""
    names = [p.relative_to(files.path).as_posix() for p in written]
    stale = [n for n in files.damaged_files() if n not in names and n.startswith(REPORT_MADE)]
    for name in stale:
        (files.path / name).unlink(missing_ok=True)
    files.rerecord(names + stale)
    return stale


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        sweep_dir: Path = typer.Argument(..., help="A sweep output folder."),
        key_metric: Optional[list[str]] = typer.Option(
            None, "--key-metric", help="Key metric shown first (repeat; default: the experiment's)."),
        latex: bool = typer.Option(False, "--latex", help="Also write report.tex (booktabs table)."),
        plots: bool = typer.Option(True, "--plots/--no-plots", help="Render the PNG plots."),
    ) -> None:
        """Rebuild the ablation report of a finished sweep from its saved results."""
        from ablate.components.contract.errors import InputError
        from ablate.components.report.build import build_report, write_files
        from ablate.components.report.sweep_data import load_sweep
        t0 = time.perf_counter()
        res = load_sweep(sweep_dir)
        keys = [k.strip() for v in key_metric or [] for k in v.split(",") if k.strip()]
        unknown = [k for k in keys if k not in res.metrics]
        if unknown:
            raise InputError(f"unknown metric(s) {', '.join(unknown)}", path=str(sweep_dir),
                             field="--key-metric")
        files = build_report(res, keys or None, latex=latex, plots=plots)
        written = write_files(sweep_dir, files)
        folder = SweepFolder(sweep_dir)
        _mark_made(folder)
        for name in _recorded(folder, written):
            typer.echo(f"removed {sweep_dir / name}: damaged, and not part of this report")
        typer.echo(f"wrote {len(written)} files in {time.perf_counter() - t0:.1f}s: "
                   f"{sweep_dir / 'report.md'}, {sweep_dir / 'report.html'}"
                   f"{', ' + str(sweep_dir / 'report.tex') if latex else ''}")
