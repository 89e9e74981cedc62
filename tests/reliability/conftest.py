"""A tiny real sweep (squad_tiny, BM25 + MiniLM dense, RRF-k variant) run once from a
fresh cache; the reliability tests compare against its outputs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.specs import experiment, pipeline, vary

FIELDS = {"tier": "smoke", "smoke_size": 16, "seed": 5,
          "metrics": {"ks": [1, 3], "key": ["final/recall_at_3", "answer/f1"]},
          "stats": {"resamples": 500, "bootstrap_resamples": 500},
          "baseline": pipeline(retrieval={"paths": ["bm25", "dense"], "depth": 10},
                               fusion={"rrf_k": 60}, rerank=None),
          "sweeps": [vary("fusion.rrf_k", 5)]}
SPEC = experiment("rel-tiny", **FIELDS)


@dataclass(frozen=True)
class Run:
    spec: Path
    cache: Path
    out: Path  # the sweep folder
    per_query: bytes
    stats: bytes

    @property
    def manifest(self) -> dict:
        return json.loads((self.out / "manifest.json").read_text())


def sweep(spec: Path, cache: Path, out_root: Path) -> Run:
    """run_sweep in this process (Prefect test server, no MLflow), from a fresh context."""
    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import run_sweep
    forget_contexts()
    result = run_sweep(str(spec), out=str(out_root), cache_dir=str(cache), mlflow=False)
    forget_contexts()
    out = Path(result["sweep_dir"])
    return Run(spec, cache, out, (out / "per_query.parquet").read_bytes(),
               (out / "stats.parquet").read_bytes())


@pytest.fixture(scope="session")
def clean_run(prefect_server, tmp_path_factory) -> Run:
    tmp = tmp_path_factory.mktemp("rel-clean")
    spec = tmp / "exp.yaml"
    spec.write_text(SPEC)
    return sweep(spec, tmp / "cache", tmp / "runs")
