"""`ablate export SWEEP_DIR`: a sweep's rankings and span labels as TREC run and qrels files,
so any standard evaluator (trec_eval, ranx, pytrec_eval) can check ablate's metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

STAGES = {"candidates": "fuse", "reranked": "rerank", "final": "assemble"}


def export_sweep(sweep_dir: Path, out: Path, variants: list[str] | None = None,
                 stages: list[str] | None = None) -> list[Path]:
    """Write <variant>.<stage>.run and <variant>.qrels per variant; return the paths."""
    from components.errors import InputError
    from components.export_trec import write_trec_qrels, write_trec_run
    from flows.store import Store

    man_path = sweep_dir / "manifest.json"
    if not man_path.is_file():
        raise InputError("not a sweep folder (no manifest.json)", path=str(sweep_dir))
    man = json.loads(man_path.read_text())
    records = json.loads((sweep_dir / "variants.json").read_text())
    known = [r["name"] for r in records]
    for name in variants or []:
        if name not in known:
            raise InputError(f"unknown variant '{name}' (known: {', '.join(known)})", field="--variant")
    for stage in stages or []:
        if stage not in STAGES:
            raise InputError(f"unknown stage '{stage}' (known: {', '.join(STAGES)})", field="--stage")
    store = Store(Path(man["cache_dir"]))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for rec in records:
        if variants and rec["name"] not in variants:
            continue
        keys = rec["stage_keys"]
        for stage in stages or list(STAGES):
            key = keys[STAGES[stage]]
            if not store.has(STAGES[stage], key):
                raise InputError(f"stage result {STAGES[stage]}:{key} is not in the cache "
                                 f"{store.root}; re-run the sweep", path=str(sweep_dir))
            frame = store.read(STAGES[stage], key)
            # Scores rewritten as n - rank: evaluators re-sort by score, and the reranked
            # tail keeps fused scores, so only the rank is a faithful order.
            runs = {q: [(c, float(len(ids) - i)) for i, c in enumerate(ids)]
                    for q, ids in zip(frame["qid"], frame["chunk_ids"])}
            written.append(write_trec_run(out / f"{_safe(rec['name'])}.{stage}.run", runs,
                                          tag=_safe(rec["name"])))
        labels_frame = store.read("label", keys["label"])
        labels: dict[str, list[dict[str, float]]] = {}
        for qid, group, cid, gain in labels_frame.select("qid", "group", "chunk_id", "gain").iter_rows():
            groups = labels.setdefault(qid, [])
            while len(groups) <= group:
                groups.append({})
            groups[group][cid] = gain
        written.append(write_trec_qrels(out / f"{_safe(rec['name'])}.qrels", labels,
                                        threshold=man["label_threshold"]))
    return written


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._=-+" else "_" for ch in name)


def register(app: typer.Typer) -> None:
    @app.command("export")
    def export(sweep_dir: Path = typer.Argument(..., help="A sweep output folder."),
               out: Path = typer.Option(Path("trec"), help="Folder for the .run/.qrels files."),
               variant: Optional[List[str]] = typer.Option(None, help="Variant(s) to export."),
               stage: Optional[List[str]] = typer.Option(None, help="candidates | reranked | final")) -> None:
        """Export rankings (per stage) and span labels as TREC run and qrels files."""
        paths = export_sweep(sweep_dir, out, variant, stage)
        typer.echo(f"wrote {len(paths)} files to {out}")
