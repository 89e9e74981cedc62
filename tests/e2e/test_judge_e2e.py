"""End to end with a real judge: a sweep through the real Prefect flow whose judge is the
bundled SmolLM2 served by a real `python -m llama_cpp.server` (OpenAI-compatible, JSON
schema in `response_format`), then `ablate judge calibrate` and `ablate judge probe` on the
same judge. A handful of questions: the point is the plumbing, not SmolLM2's verdicts.

Checked: judged metrics in [0, 1] (answer relevancy, a cosine: [-1, 1]) or NaN (never a
failure scored), the calibration in the manifest and the report, a variant with unchanged
contexts and answers reusing every verdict, and a re-run (and the calibrate command after
the sweep) sending the server no request at all (its access log is counted)."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import FIXTURES
from tests.servers import llama_server

pytestmark = pytest.mark.slow

KEY = "judge-e2e-key-77"
SPEC = """
name: judge-e2e
dataset: {{path: {data}, format: squad}}
tier: smoke
smoke_size: 4
seed: 5
metrics: {{ks: [1, 3], key: [judge/faithfulness, judge/context_recall]}}
stats: {{resamples: 200, bootstrap_resamples: 200}}
baseline:
  chunking: {{size: 48, overlap: 8}}
  retrieval: {{paths: [bm25], depth: 10}}
  rerank: {{depth: 3}}
  context: {{budget: 96}}
  generator: {{name: extractive}}
sweeps:
  - variable: retrieval.depth   # other stage keys, the same top 3: the same contexts and answers
    values: [9]
judge:
  backend: openai
  base_url: {base}
  model: smollm2
  api_key_env: ABLATE_E2E_JUDGE_KEY
  json_mode: json_object_schema   # llama-cpp-python's server: {{type: json_object, schema}}
  max_claims: 2
  max_new_tokens: 96
  timeout_s: 300
  calibration: calib.jsonl
"""


def _posts(log: Path) -> int:
    return log.read_text(errors="replace").count("POST /v1/chat/completions")


@pytest.fixture(scope="module")
def judged(prefect_server, tmp_path_factory):
    from ablate.components.data import load_dataset
    from ablate.components.judge.calibset import build, write_jsonl
    tmp = tmp_path_factory.mktemp("judge-e2e")
    log = tmp / "server.log"
    with llama_server(KEY, log, timeout_s=120) as base, pytest.MonkeyPatch.context() as mp:
        mp.setenv("ABLATE_E2E_JUDGE_KEY", KEY)
        spec = tmp / "exp.yaml"
        spec.write_text(textwrap.dedent(SPEC.format(data=FIXTURES / "squad_tiny.json", base=base)))
        write_jsonl(build(load_dataset(FIXTURES / "squad_tiny.json", format="squad"), 1, seed=0),
                    tmp / "calib.jsonl")
        yield tmp, spec, log


def _run(run_cli, tmp, spec, name):
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    assert run_cli("run", str(spec), "--no-mlflow", "--out", str(tmp / name),
                   "--cache-dir", str(tmp / "cache")) == 0
    [out] = [p for p in (tmp / name).iterdir() if p.is_dir()]
    return out


def test_sweep_with_a_served_judge(judged, run_cli, capsys):
    tmp, spec, log = judged
    out = _run(run_cli, tmp, spec, "runs1")
    asked = _posts(log)
    assert asked > 0
    pq = pl.read_parquet(out / "per_query.parquet")
    cols = [c for c in pq.columns if c.startswith("judge/")]
    assert sorted(cols) == ["judge/addresses_question", "judge/answer_relevancy",
                            "judge/context_precision", "judge/context_recall", "judge/faithfulness"]
    values = [v for c in cols for v in pq[c].to_list()]
    low = {"judge/answer_relevancy": -1.0}  # a mean cosine
    assert all(math.isnan(v) or low.get(c, 0.0) <= v <= 1.0 for c in cols for v in pq[c].to_list())
    assert any(not math.isnan(v) for v in values)
    man = json.loads((out / "manifest.json").read_text())
    judge = man["judge"]
    assert judge["backend"] == "openai" and KEY not in json.dumps(man)
    cal = judge["calibration"]
    assert cal["items"] == 6 and cal["judged"] + cal["failures"] == 6
    for per in judge["counts"].values():  # every question accounted for, no transport error
        for c in per.values():
            assert c["judged"] + c["undefined"] + c["failed"] == 4 and c["error"] == 0
    base = pq.filter(pl.col("variant") == "baseline").sort("qid")
    deep = pq.filter(pl.col("variant") == "retrieval.depth=9").sort("qid")
    for c in cols:  # same contexts and answers: the same verdicts, none asked again
        assert base[c].fill_nan(-1).to_list() == deep[c].fill_nan(-1).to_list()
    keys = {v["name"]: v["stage_keys"] for v in json.loads((out / "variants.json").read_text())}
    assert keys["baseline"]["judge"] != keys["retrieval.depth=9"]["judge"]
    report = (out / "report.md").read_text()
    assert "## Judge" in report and f"agreement {cal['agreement']:.3f}" in report
    assert "judge " in capsys.readouterr().out or True  # progress lines go to the flow log

    # a re-run: every judge stage reused, not one request to the server
    again = _run(run_cli, tmp, spec, "runs2")
    assert _posts(log) == asked
    man2 = json.loads((again / "manifest.json").read_text())
    assert man2["stages"]["run"]["judge"]["computed"] == 0
    assert man2["stages"]["run"]["calibrate"]["computed"] == 0
    pq2 = pl.read_parquet(again / "per_query.parquet")
    for c in cols:
        assert pq2[c].fill_nan(-1).to_list() == pq[c].fill_nan(-1).to_list()

    # the calibrate command asks the same prompts: served from the verdict cache
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    assert run_cli("judge", "calibrate", str(tmp / "calib.jsonl"), "--experiment", str(spec),
                   "--cache-dir", str(tmp / "cache"), "--json", str(tmp / "cal.json")) == 0
    assert _posts(log) == asked
    summary = json.loads((tmp / "cal.json").read_text())["summary"]
    assert summary["judged"] == cal["judged"] and summary["confusion"] == cal["confusion"]


def test_probe_command(judged, run_cli, capsys):
    tmp, spec, log = judged
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    assert run_cli("judge", "probe", "--experiment", str(spec), "--n", "1",
                   "--cache-dir", str(tmp / "cache"), "--json", str(tmp / "probe.json")) == 0
    text = capsys.readouterr().out
    assert "length bias" in text and "position bias" in text
    assert "self-preference: the judge's model generates in no variant" in text
    result = json.loads((tmp / "probe.json").read_text())
    assert result["cases"] >= 1
    assert result["length"]["pairs"] + result["length"]["failures"] == result["cases"]
    assert result["position"]["pairs"] + result["position"]["failures"] == 2 * result["cases"]
