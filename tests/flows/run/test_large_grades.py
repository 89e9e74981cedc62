"""Issue 58.6 through the stages: native data with a span grade of 2000 and
`metrics.gain: exponential` passed `validate` and `check`, then every score stage failed
with OverflowError (2.0 ** 2000). Now the sweep finishes, and the NDCG it writes is that of
the gains' ratio (components/metrics/retrieval.py scales them)."""

from __future__ import annotations

import json
import math
import shutil

import polars as pl

from tests.conftest import FIXTURES
from tests.flows.direct import run_direct
from tests.specs import data_set, experiment, pipeline


def test_a_grade_of_2000_with_exponential_gain_scores(tmp_path):
    data = tmp_path / "native"
    shutil.copytree(FIXTURES / "data" / "native", data)
    rows = [json.loads(x) for x in (data / "questions.jsonl").read_text().splitlines() if x.strip()]
    for q in rows:
        for group in q["evidence"]:
            for span in group:
                span["grade"] = 2000.0
    (data / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in rows))
    spec = experiment("big-grades", dataset=data_set(data, "jsonl"), tier="full", split="all",
                      metrics={"gain": "exponential", "ks": [1, 5]},
                      baseline=pipeline(rerank=None, context=None, generator={"name": "none"}))
    ctx, folder, _ = run_direct(tmp_path, spec)
    per_query = pl.read_parquet(folder / "per_query.parquet")
    ndcg = [c for c in per_query.columns if c.endswith("ndcg_at_5")]
    assert ndcg
    values = [v for c in ndcg for v in per_query[c].to_list() if v is not None and not math.isnan(v)]
    assert values and all(0.0 <= v <= 1.0 for v in values)
