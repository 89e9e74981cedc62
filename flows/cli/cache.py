"""`ablate cache info|prune`: what the result cache holds, and removing part of it.

The cache is the stage store (one folder per stage) plus the embedding, generation and
judge-verdict caches and the ONNX exports of the dense model beside it. A stage entry's
age is its last use (the store refreshes the checksum file's time on every reuse);
embedding shards, generations, verdicts and exports age from when they were written.
Deleting never leaves a half entry: the checksum goes first, and data without a checksum
is treated as missing (recomputed) by every run.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Optional

import typer

from ablate.flows.run.store import SIDE_FOLDERS, CacheFile, cache_files, is_stale, remove_file

DEFAULT_CACHE = ".ablate/cache"  # the spec default, under the folder ablate runs from


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def ago(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h ago"
    return f"{seconds / 86400:.1f} days ago"


def summarise(items: list[CacheFile]) -> dict[str, dict[str, float]]:
    """Per area: complete entries, their bytes, incomplete/temporary files, newest use."""
    out: dict[str, dict[str, float]] = defaultdict(
        lambda: {"entries": 0, "bytes": 0, "incomplete": 0, "newest": 0.0})
    for it in items:
        row = out[it.area]
        row["bytes"] += it.bytes
        if it.kind == "entry":
            row["entries"] += 1
            row["newest"] = max(row["newest"], it.used)
        else:
            row["incomplete"] += 1
    return dict(out)


def select(root: Path, older_than: float | None, stages: list[str], everything: bool,
           now: float) -> tuple[list[CacheFile], int]:
    """What `prune` removes, and how many temporary/incomplete files it spared (fresh ones
    may belong to a run writing right now)."""
    from ablate.components.contract.errors import InputError
    if older_than is None and not stages and not everything:
        raise InputError("say what to prune: --older-than DAYS, --stage S or --all",
                         field="cache prune")
    areas = set(stages) if stages else None
    known = {p.name for p in root.iterdir() if p.is_dir()} if root.is_dir() else set()
    for s in stages:
        if s not in known:
            raise InputError(f"no stage '{s}' in {root} (there are: "
                             f"{', '.join(sorted(known)) or 'none'})", field="--stage")
    chosen, spared = [], 0
    cutoff = None if older_than is None else now - older_than * 86400
    for it in cache_files(root, areas):
        if it.kind != "entry":
            if is_stale(it, now):
                chosen.append(it)
            else:
                spared += 1
        elif cutoff is None or it.used < cutoff:
            chosen.append(it)
    return chosen, spared


def _print_table(rows: dict[str, dict[str, float]], now: float) -> None:
    typer.echo(f"{'area':<12} {'entries':>8} {'size':>10} {'incomplete':>10}  last used")
    order = [a for a in rows if a not in SIDE_FOLDERS] + [a for a in SIDE_FOLDERS if a in rows]
    for area in order:
        r = rows[area]
        age = ago(now - r["newest"]) if r["newest"] else "-"
        typer.echo(f"{area:<12} {int(r['entries']):>8} {human(r['bytes']):>10} "
                   f"{int(r['incomplete']):>10}  {age}")
    total = sum(r["bytes"] for r in rows.values())
    typer.echo(f"{'total':<12} {sum(int(r['entries']) for r in rows.values()):>8} "
               f"{human(total):>10}")


def register(app: typer.Typer) -> None:
    cache = typer.Typer(no_args_is_help=True, help="Inspect and prune the result cache.")
    app.add_typer(cache, name="cache")

    @cache.command("info")
    def info(
        cache_dir: Path = typer.Option(Path(DEFAULT_CACHE), help="Cache folder."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    ) -> None:
        """Entries and bytes per stage, and in the embedding and generation caches."""
        now = time.time()
        rows = summarise(list(cache_files(cache_dir)))
        if as_json:
            typer.echo(json.dumps({"cache_dir": str(cache_dir.resolve()), "areas": rows},
                                  indent=2, sort_keys=True))
            return
        typer.echo(f"cache: {cache_dir.resolve()}")
        if not rows:
            typer.echo("empty")
            return
        _print_table(rows, now)

    @cache.command("prune")
    def prune(
        cache_dir: Path = typer.Option(Path(DEFAULT_CACHE), help="Cache folder."),
        older_than: Optional[float] = typer.Option(
            None, min=0, help="Only entries not used for this many days."),
        stage: list[str] = typer.Option(
            [], help="Only this stage (repeatable); also 'embeddings', 'generations', "
                     "'judgments' or 'onnx'."),
        everything: bool = typer.Option(False, "--all", help="Every stage and side cache."),
        dry_run: bool = typer.Option(False, "--dry-run", help="List, delete nothing."),
    ) -> None:
        """Delete cache entries; later runs recompute whatever they need."""
        now = time.time()
        chosen, spared = select(cache_dir, older_than, stage, everything, now)
        verb = "would remove" if dry_run else "removed"
        if dry_run:
            for it in chosen:
                typer.echo(f"  {it.area}: {it.path.name} ({human(it.bytes)})")
        else:
            for it in chosen:
                remove_file(it)
        by_area = summarise(chosen)
        for area, r in by_area.items():
            typer.echo(f"{verb} {area}: {int(r['entries'])} entries, "
                       f"{int(r['incomplete'])} temporary/incomplete, {human(r['bytes'])}")
        typer.echo(f"{verb} {len(chosen)} files, {human(sum(it.bytes for it in chosen))} "
                   f"from {cache_dir.resolve()}")
        if spared:
            typer.echo(f"kept {spared} recent temporary/incomplete files (a run may be writing)")
