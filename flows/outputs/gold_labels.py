"""`ablate judge gold-labels SWEEP_DIR`: a labels file (`judge.labels`, docs/judge-labels.md)
of gold verdicts from the data's spans (ablate.components.judge.gold) for a random subset
of the sweep's question clusters, every variant's answers labelled.

The subset is drawn by cluster (a share of the clusters, seeded), so the labelled
questions are a random sample of the sweep's questions chosen without looking at any
score: what prediction-powered inference needs to remove the judge's bias.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.data import load_dataset
from ablate.components.data.clusters import question_cluster
from ablate.components.judge.gold import ANNOTATOR, GOLD_METRIC, gold_context_recall
from ablate.components.runtime.sweep_files import SweepFolder
from ablate.flows.run.store import Store


def _sweep(sweep_dir: Path) -> tuple[dict, list[dict]]:
    if not (sweep_dir / "per_query.parquet").is_file():
        raise InputError("not a sweep folder: per_query.parquet is missing", path=str(sweep_dir))
    files = SweepFolder(sweep_dir)
    return files.manifest, files.json("variants.json")


def gold_labels(sweep_dir: Path, out: Path, *, share: float = 0.5, seed: int = 0,
                data: Path | None = None) -> int:
    """Write the labels file; return how many labels it holds. `data`: the sweep's data set
    (default: the manifest's path, relative to the experiment file's folder)."""
    if not 0.0 < share <= 1.0:
        raise InputError(f"--share must be in (0, 1], got {share}", field="--share")
    sweep_dir = Path(sweep_dir)
    man, variants = _sweep(sweep_dir)
    if data is None:
        data = Path(man["dataset"]["path"])
        if not data.is_absolute():
            data = Path(man.get("experiment_file", ".")).parent / data
        if not data.exists():
            raise InputError(f"the sweep's data set {data} is not here (the experiment file's "
                             "path is relative to where it ran): give it with --data",
                             path=str(sweep_dir))
    ds = load_dataset(data, format=man["dataset"]["format"],
                      encoding=man["dataset"].get("encoding", "utf-8"))
    if ds.fingerprint != man["dataset"].get("fingerprint", ds.fingerprint):
        raise InputError("the data set changed since the sweep ran (fingerprint differs)",
                         path=str(data))
    by_qid = {q.qid: q for q in ds.questions}
    asked = SweepFolder(sweep_dir).parquet("per_query.parquet", columns=["variant", "qid"])
    qids = asked["qid"].unique(maintain_order=True).to_list()
    clusters = sorted({question_cluster(by_qid[q]) for q in qids})
    rng = np.random.default_rng(seed)
    chosen = set(rng.choice(clusters, size=max(1, math.ceil(share * len(clusters))),
                            replace=False).tolist())
    store = Store(Path(man["cache_dir"]))
    # the sweep's date, not today's: the same sweep and seed give the same file (its content
    # is part of the sweep id of the experiment that reads it)
    today = str(man.get("created", ""))[:10] or None
    lines = []
    for v in variants:
        key = (v.get("stage_keys") or {}).get("assemble")
        if key is None:
            continue  # a pipeline without a context has nothing to recall
        if not store.has("assemble", key):
            raise InputError(f"stage result assemble:{key} is not in the cache {store.root}; "
                             "re-run the sweep", path=str(sweep_dir))
        mine = set(asked.filter(pl.col("variant") == v["name"])["qid"].to_list())
        frame = store.read("assemble", key)
        for qid, passages in zip(frame["qid"], frame["passages"]):
            q = by_qid.get(qid)
            if qid not in mine or q is None or question_cluster(q) not in chosen:
                continue
            label = gold_context_recall(q, [tuple(p) for p in json.loads(passages)])
            if label is not None:
                lines.append({"qid": qid, "metric": GOLD_METRIC, "variant": v["name"],
                              "label": label, "annotator": ANNOTATOR, "labelled_at": today})
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    tmp.replace(out)
    return len(lines)
