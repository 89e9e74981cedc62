"""A truncated or corrupted cache entry is detected and recomputed, never used: damage
stored `score`, `assemble` and dense `retrieve` entries (and, apart, an embedding shard),
rerun, and get the same tables with the damaged entries, and only those, recomputed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from tests.reliability.conftest import Run, sweep


def _truncate(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _copy(clean_run: Run, tmp_path: Path):
    from ablate.flows.run.store import Store
    shutil.copytree(clean_run.cache, tmp_path / "cache")
    variants = {v["name"]: v["stage_keys"] for v in
                json.loads((clean_run.out / "variants.json").read_text())}
    return Store(tmp_path / "cache"), variants["baseline"], variants["fusion.rrf_k=5"]


def _check_rerun(clean_run: Run, tmp_path: Path, damaged: set[str]) -> dict:
    again = sweep(clean_run.spec, tmp_path / "cache", tmp_path / "runs")
    assert again.per_query == clean_run.per_query
    assert again.stats == clean_run.stats
    run = again.manifest["stages"]["run"]
    for stage, c in run.items():  # two variants: a damaged stage is recomputed once, reused once
        want = {"computed": 1, "reused": 1, "damaged": 1} if stage in damaged else \
            {"computed": 0, "damaged": 0}
        assert {k: c[k] for k in want} == want, (stage, run)
    return again.manifest


def test_damaged_stage_entries_are_recomputed(clean_run, tmp_path):
    store, base, other = _copy(clean_run, tmp_path)
    targets = [("score", base["score"], _truncate), ("assemble", other["assemble"], _flip_byte),
               ("retrieve", base["retrieve:dense"], lambda p: _truncate(p, 0.9))]
    for stage, key, damage in targets:
        damage(store.path(stage, key))
        assert not store.has(stage, key)
    manifest = _check_rerun(clean_run, tmp_path, {"score", "assemble", "retrieve"})
    # dense retrieval ran again, but from the (intact) embedding cache
    assert manifest["counters"].get("texts_embedded", 0) == 0
    for stage, key, _ in targets:
        assert store.has(stage, key)


def test_damaged_embedding_shard_is_re_embedded(clean_run, tmp_path):
    store, base, _ = _copy(clean_run, tmp_path)
    shard = max((tmp_path / "cache" / "embeddings").rglob("shard-*.npz"),
                key=lambda p: p.stat().st_size)  # the chunk texts (the other: the questions)
    with np.load(shard) as z:
        n_keys = len(z["keys"])
    _truncate(shard)
    _truncate(store.path("retrieve", base["retrieve:dense"]), 0.9)  # so dense retrieval reruns
    manifest = _check_rerun(clean_run, tmp_path, {"retrieve"})
    assert manifest["counters"]["texts_embedded"] == n_keys  # those texts, and only those
    with np.load(shard) as z:  # the shard was written again, whole
        assert len(z["keys"]) == n_keys
