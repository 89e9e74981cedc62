"""An MLflow child's duration is its variant's own compute: the union of the intervals of
the stages computed for it, not the sweep's wall time from its first stage to its last
(which holds other variants' stages)."""

from __future__ import annotations

import json

from ablate.components.report.sweep_data import load_sweep
from ablate.flows.track.run_data import run_times
from tests.components.report.synthetic import make_sweep


def test_child_duration_is_the_union_of_its_own_stages(tmp_path):
    folder = make_sweep(tmp_path / "s")
    man = json.loads((folder / "manifest.json").read_text())
    # baseline: chunk 0-1 s, generate 100-102.5 s (other variants ran in between);
    # chunking.size=64: its chunking 1-3.25 s overlaps nothing of its own but generate
    t0 = 1767323038.0
    man["wall_seconds"] = 110.0
    man["created"] = "2026-01-02T03:05:48Z"  # t0 + 110 s
    man["stages"]["times"] = {"k-chunk": [t0, t0 + 1.0], "k-gen": [t0 + 100.0, t0 + 102.5],
                              "k-chunk64": [t0 + 100.5, t0 + 101.0]}
    (folder / "manifest.json").write_text(json.dumps(man))
    _, spans = run_times(load_sweep(folder))
    start, end = spans["baseline"]
    assert start == int(t0 * 1000) and end - start == 3500  # 1 + 2.5 s, not 102.5 s
    start, end = spans["chunking.size=64"]
    assert start == int((t0 + 100.0) * 1000) and end - start == 2500  # inside generate: counted once
    assert spans["fusion.rrf_k=10"][0] == spans["fusion.rrf_k=10"][1]  # nothing computed for it
