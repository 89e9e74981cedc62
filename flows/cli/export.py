"""`ablate export SWEEP_DIR`: a sweep's rankings and span labels as TREC run and qrels files,
so any standard evaluator (trec_eval, ranx, pytrec_eval) can check ablate's metrics.

Per variant: `<variant>.<stage>.run` per stage and `<variant>.qrels` (graded, exact: see
components/export/export_trec.py) give hit, precision, MRR and linear-gain NDCG at any K;
`<variant>.<stage>.groups.run` and `<variant>.groups.qrels` (one pseudo-query `qid~g` per
evidence group) give recall over groups (mean hit) and full support (all hit). Ids that
are not TREC-safe are percent-encoded; `id_map.tsv` lists them, `export.json` says how the
files were made (threshold, gain, per-question grade scales, questions without evidence,
whose metrics ablate leaves undefined)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

STAGES = {"candidates": "fuse", "reranked": "rerank", "final": "assemble"}


def export_sweep(sweep_dir: Path, out: Path, variants: list[str] | None = None,
                 stages: list[str] | None = None) -> list[Path]:
    """Write the run and qrels files of the module docstring; return the paths."""
    from ablate.components.contract.errors import InputError
    from ablate.components.export.export_trec import (
        relevant_labels,
        write_group_qrels,
        write_group_run,
        write_id_map,
        write_trec_qrels,
        write_trec_run,
    )
    from ablate.components.runtime.sweep_files import SweepFolder
    from ablate.flows.run.store import Store

    man_path = sweep_dir / "manifest.json"
    if not man_path.is_file():
        raise InputError("not a sweep folder (no manifest.json)", path=str(sweep_dir))
    folder = SweepFolder(sweep_dir)
    man = folder.manifest
    records = folder.json("variants.json")
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
    id_map: dict[str, str] = {}
    info: dict = {"label_threshold": man["label_threshold"], "ndcg_gain": man.get("ndcg_gain"),
                  "qrels": "graded: label x per-question scale (integers); below the label "
                           "threshold absent", "group_separator": "~",
                  "undefined": "questions without evidence: no qrels, every retrieval metric "
                               "undefined (NaN) in ablate, excluded from means",
                  "zero": "questions / groups with evidence but no chunk at the threshold: no "
                          "qrels, every retrieval metric 0 in ablate", "variants": {}}
    for rec in records:
        if variants and rec["name"] not in variants:
            continue
        keys = rec["stage_keys"]
        labels = _labels(store.read("label", keys["label"]))
        name = _safe(rec["name"])
        qids: set[str] = set()
        thr = man["label_threshold"]
        for stage in stages or list(STAGES):
            if STAGES[stage] not in keys:  # a sweep of an older ablate (retrieval only)
                if stages:
                    raise InputError(f"variant '{rec['name']}' has no {stage} ranking (its "
                                     f"pipeline has no {STAGES[stage]} stage)", field="--stage")
                continue
            key = keys[STAGES[stage]]
            if not store.has(STAGES[stage], key):
                raise InputError(f"stage result {STAGES[stage]}:{key} is not in the cache "
                                 f"{store.root}; re-run the sweep", path=str(sweep_dir))
            frame = store.read(STAGES[stage], key)
            # Scores rewritten as n - rank: evaluators re-sort by score, and the reranked
            # tail keeps fused scores, so only the rank is a faithful order.
            runs = {q: [(c, float(len(ids) - i)) for i, c in enumerate(ids)]
                    for q, ids in zip(frame["qid"], frame["chunk_ids"])}
            qids.update(runs)
            written.append(write_trec_run(out / f"{name}.{stage}.run", runs, tag=name,
                                          id_map=id_map))
            written.append(write_group_run(out / f"{name}.{stage}.groups.run", runs, labels,
                                           tag=name, id_map=id_map))
        scales: dict = {}
        written.append(write_trec_qrels(out / f"{name}.qrels", labels,
                                        threshold=man["label_threshold"], grades="exact",
                                        id_map=id_map, scales=scales))
        written.append(write_group_qrels(out / f"{name}.groups.qrels", labels,
                                         threshold=man["label_threshold"], id_map=id_map))
        info["variants"][rec["name"]] = {
            "files": name,
            "grade_scale": {q: (None if s is None else str(s)) for q, s in scales.items()
                            if s != 1},
            "undefined": sorted(qids - set(labels)),
            "zero": sorted(q for q, g in labels.items() if not relevant_labels(g, thr)),
            "zero_groups": sorted(f"{q}~{i}" for q, g in labels.items() for i, grp in enumerate(g)
                                  if not any(v >= thr for v in grp.values())),
        }
    written.append(write_id_map(out / "id_map.tsv", id_map))
    (out / "export.json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
    written.append(out / "export.json")
    return written


def _labels(frame) -> dict[str, list[dict[str, float]]]:
    """qid -> per evidence group {chunk_id: label}. The label stage lists chunks with a
    positive label only, so a question without evidence is absent."""
    labels: dict[str, list[dict[str, float]]] = {}
    for qid, group, cid, gain in frame.select("qid", "group", "chunk_id", "gain").iter_rows():
        groups = labels.setdefault(qid, [])
        while len(groups) <= group:
            groups.append({})
        groups[group][cid] = gain
    return labels


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
