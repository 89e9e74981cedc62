"""The judge in the stage graph, on real stage outputs of a small sweep run directly (no
Prefect, no MLflow), the judge itself scripted (tests/components/judge/fakes.py):

- judge and calibrate stages exist only with a `judge:` section; their keys follow the
  judge config and prompts, not its settings;
- judged metrics land in per_query, NaN where undefined or failed, counted in the
  manifest; the report shows the calibration of each metric's kind beside it and warns
  per kind, and when the calibration set is about the sweep's own questions;
- a re-run judges nothing; a variant whose contexts and answers did not change reuses
  every verdict; self-preference is flagged.
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
import textwrap

import polars as pl
import pytest

from tests.components.judge.fakes import ScriptedJudge, rule_script
from tests.conftest import FIXTURES

SPEC = """
name: judged
dataset: {{path: {data}, format: squad}}
tier: full
split: all
seed: 1
stats: {{resamples: 200, bootstrap_resamples: 200}}
baseline:
  chunking: {{size: 48, overlap: 16}}
  retrieval: {{paths: [bm25], depth: 10}}
  rerank: {{depth: 4}}
  context: {{budget: 120}}
  generator: {{name: extractive}}
sweeps:
  - variable: retrieval.depth     # other stage keys, the same top 4: the same contexts
    values: [9]
  - variable: generator.name      # the model is faked here (see _fake_model)
    values: [closed_book]
{judge}
"""
JUDGE = "judge: {calibration: calib.jsonl, max_claims: 3}"
FAILING_QID = None  # set per test: the question whose relevance verdict is unusable


def _fake_model(self, question, context, system, user):
    """Stands in for SmolLM2: knows every other answer, refuses the rest."""
    from ablate.components.contract.records import Answer
    if question.answers and sum(map(ord, question.qid)) % 2:
        return Answer(question.answers[0], refused=False, tokens_in=len(user))
    return Answer("I don't know.", refused=True, tokens_in=len(user))


def _script(bad_question: str | None):
    def script(request):
        user = request.messages[1][1]
        if bad_question and request.name == "relevance" and bad_question in user:
            return "The answer is relevant."  # not JSON: retried once, then a failure
        return rule_script(request)
    return script


def _write(tmp, judge=JUDGE):
    from ablate.components.data import load_dataset
    from ablate.components.judge.calibset import build, write_jsonl
    spec = tmp / "exp.yaml"
    spec.write_text(textwrap.dedent(SPEC.format(data=FIXTURES / "squad_tiny.json", judge=judge)))
    write_jsonl(build(load_dataset(FIXTURES / "squad_tiny.json", format="squad"), 2, seed=0),
                tmp / "calib.jsonl")
    return spec


def _run(spec, cache, bad_question=None, script=None):
    """Build a context, put the scripted judge in, run every stage; (ctx, judge, computed)."""
    from ablate.components.generation.base import BaseGenerator
    from ablate.components.generation.llama_local import LlamaLocalGenerator
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.run.stages import run_stage
    ctx = build_context(str(spec), RunOptions(cache_dir=str(cache)))
    model = LlamaLocalGenerator(ctx.variants[-1].config.generator, ctx.variants[-1].config.prompt)
    judge = ScriptedJudge(script or _script(bad_question), ctx.spec.judge, model=model.model_key())
    ctx.memo["judge"] = judge
    computed = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LlamaLocalGenerator, "_generate_one", _fake_model)
        # one question at a time through the fake (the torch backend batches otherwise)
        mp.setattr(LlamaLocalGenerator, "_generate_batch", BaseGenerator._generate_batch)
        for key, node in ctx.plan.nodes.items():
            computed[key] = run_stage(ctx, node)
    return ctx, judge, computed


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    from ablate.components.data import load_dataset
    from ablate.flows.outputs.write import write_outputs
    tmp = tmp_path_factory.mktemp("judged")
    spec = _write(tmp)
    ds = load_dataset(FIXTURES / "squad_tiny.json", format="squad")
    bad = next(q for q in ds.questions if q.answerable)
    ctx, judge, computed = _run(spec, tmp / "cache", bad_question=bad.question)
    out = write_outputs(ctx, tmp / "runs", ctx.started, dict(ctx.counters))
    return tmp, spec, ctx, judge, computed, out, bad


def test_graph_has_judge_stages_only_with_a_judge(sweep, tmp_path):
    from ablate.flows.run.context import RunOptions, build_context
    tmp, spec, ctx, *_ = sweep
    count = ctx.plan.count()
    assert count["judge"] == 3 and count["calibrate"] == 1  # depth=9 shares no assemble key
    keys = ctx.plan.by_variant
    for v in ctx.variants:
        node = ctx.plan.nodes[keys[v.name]["score"]]
        assert node.inputs["judge"] == keys[v.name]["judge"]
        assert ctx.plan.nodes[keys[v.name]["judge"]].model_bound  # llama_cpp judge: one at a time
    assert len({k["calibrate"] for k in keys.values()}) == 1
    plain = _write(tmp_path, judge="")
    other = build_context(str(plain), RunOptions(cache_dir=str(tmp_path / "c")))
    assert "judge" not in other.plan.count() and "calibrate" not in other.plan.count()
    assert all("judge" not in n.inputs for n in other.plan.nodes.values())


_N = itertools.count()


def _judge_keys(tmp_path, judge: str) -> set[str]:
    from ablate.flows.run.context import RunOptions, build_context
    folder = tmp_path / f"spec{next(_N)}"
    folder.mkdir()
    ctx = build_context(str(_write(folder, judge)), RunOptions(cache_dir=str(tmp_path / "c")))
    return {ctx.plan.by_variant[v.name]["judge"] for v in ctx.variants}


def test_judge_keys_follow_config_and_prompts_not_settings(tmp_path):
    base = _judge_keys(tmp_path, "judge: {seed: 0}")
    assert _judge_keys(tmp_path, "judge: {seed: 0, timeout_s: 5, max_retries: 0}") == base
    assert _judge_keys(tmp_path, "judge: {seed: 0, calibration: calib.jsonl}") == base
    assert _judge_keys(tmp_path, "judge: {seed: 1}").isdisjoint(base)
    assert _judge_keys(tmp_path, "judge: {seed: 0, max_claims: 2}").isdisjoint(base)
    from ablate.components.judge.prompts import BUNDLED
    mine = tmp_path / "prompts"
    shutil.copytree(BUNDLED / "v1", mine)
    assert _judge_keys(tmp_path, f"judge: {{seed: 0, prompts: {mine}}}") == base  # same bytes
    (mine / "zh.yaml").write_text((mine / "zh.yaml").read_text() + "\n# edited\n")
    assert _judge_keys(tmp_path, f"judge: {{seed: 0, prompts: {mine}}}").isdisjoint(base)


def test_judged_metrics_in_per_query(sweep):
    tmp, spec, ctx, judge, computed, out, bad = sweep
    pq = pl.read_parquet(out / "per_query.parquet")
    cols = ["judge/faithfulness", "judge/answer_relevancy", "judge/addresses_question",
            "judge/context_precision", "judge/context_recall"]
    assert set(cols) <= set(pq.columns)
    base = pq.filter(pl.col("variant") == "baseline")
    for row in base.iter_rows(named=True):
        for c in cols:
            v = row[c]
            assert math.isnan(v) or (-1.0 if c == "judge/answer_relevancy" else 0.0) <= v <= 1.0
        if row["answer/refused"] == 1.0:  # refusals are undefined, never 0 ...
            assert math.isnan(row["judge/faithfulness"]) and math.isnan(row["judge/addresses_question"])
            assert row["judge/answer_relevancy"] == 0.0  # ... but noncommittal for RAGAS relevancy
        if not row["answerable"]:
            assert math.isnan(row["judge/context_precision"]) and math.isnan(row["judge/context_recall"])
    closed = pq.filter(pl.col("variant") == "generator.name=closed_book")
    assert closed["judge/faithfulness"].is_nan().all()  # closed book read no context
    # the scripted failure: NaN, counted as failed in the manifest
    bad_row = base.filter(pl.col("qid") == bad.qid)
    assert math.isnan(bad_row["judge/addresses_question"][0]) or bad_row["answer/refused"][0] == 1.0
    man = json.loads((out / "manifest.json").read_text())["judge"]
    n = len(ctx.questions)
    for variant, per in man["counts"].items():
        for metric, c in per.items():
            assert c["judged"] + c["undefined"] + c["failed"] + c["error"] == n, (variant, metric)
            col = pq.filter(pl.col("variant") == variant)[f"judge/{metric}"]
            assert c["judged"] == (~col.is_nan()).sum()
    failed = {v: per["addresses_question"]["failed"] for v, per in man["counts"].items()}
    assert sum(failed.values()) >= 1


def test_manifest_and_report_show_calibration_and_flags(sweep):
    tmp, spec, ctx, judge, computed, out, bad = sweep
    man = json.loads((out / "manifest.json").read_text())["judge"]
    cal = man["calibration"]
    assert cal["items"] == 12 and cal["judged"] + cal["failures"] == 12
    assert man["self_preference"] == ["generator.name=closed_book"]
    assert man["prompts"]["version"] == "v1" and man["config"]["max_claims"] == 3
    report = (out / "report.md").read_text()
    assert "## Judge" in report and f"agreement {cal['agreement']:.3f}" in report
    assert "Self-preference: the judge's model also generates in generator.name=closed_book" in report
    assert "Judge failures (unusable verdicts after one retry" in report
    # beside judge/faithfulness's own table, in the appendix (not a key metric)
    appendix = (out / "report-appendix.md").read_text()
    assert "_Judge calibration: support verdicts (behind judge/faithfulness)" in appendix
    assert "synthetic labels" in report and cal["synthetic"] == 12
    assert cal["by_kind"]["support"]["agreement_ci"][0] <= cal["by_kind"]["support"]["agreement"]
    # the flag is per kind: any kind of the sweep's judged metrics below 0.8 warns
    below = [k for k, s in cal["by_kind"].items() if s["agreement"] < 0.8]
    assert ("Judge below calibration target" in report) == bool(below)
    # split: all runs on every question, the calibration set's ones too: not held out
    assert cal["overlap"]["items"] == 12
    assert "Judge calibration not held out: 12 calibration items (2 questions)" in report


def test_rerun_judges_nothing_and_unchanged_variant_reuses_verdicts(sweep):
    tmp, spec, ctx, judge, computed, out, bad = sweep
    keys = ctx.plan.by_variant
    base, deep = keys["baseline"]["judge"], keys["retrieval.depth=9"]["judge"]
    assert base != deep and computed[deep]
    frame = ctx.store.read("judge", deep)
    assert frame["asked"].sum() == 0 and frame["reused"].sum() > 0  # same contexts, answers
    # verdicts from the cache cost a lookup, not judging: their latency is marked reused
    reused = frame.filter(pl.col("reused") > 0)["latency_reused"]
    assert reused.len() and reused.all()
    timings = pl.read_parquet(out / "timings.parquet")
    assert timings.filter(pl.col("variant") == "retrieval.depth=9")["reused/judge"].any()
    ctx2, judge2, computed2 = _run(spec, tmp / "cache", bad_question=bad.question)
    assert not any(computed2.values()) and judge2.calls == []


def test_transport_errors_leave_the_judge_stage_incomplete(tmp_path):
    from ablate.components.judge.backends import Completion
    from ablate.flows.run.stages import run_stage
    spec = _write(tmp_path, "judge: {metrics: [answer_relevancy]}")

    def timeout(request):
        return Completion("", error="ReadTimeout")
    ctx, judge, computed = _run(spec, tmp_path / "cache", script=timeout)
    keys = ctx.plan.by_variant["baseline"]
    assert not ctx.store.has("judge", keys["judge"])  # stored incomplete: judged again
    assert not ctx.store.has("score", keys["score"])  # so is what was scored from it
    frame = ctx.store.read("judge", keys["judge"])
    assert frame["error"].drop_nulls().to_list()[0] == "ReadTimeout"
    pq = ctx.store.read("score", keys["score"])
    assert pq.filter(pl.col("answer/refused") == 0.0)["judge/answer_relevancy"].is_nan().all()
    judge.script = rule_script
    ctx.memo.clear()
    ctx.memo["judge"] = judge
    for stage in ("judge", "score"):
        assert run_stage(ctx, ctx.plan.nodes[keys[stage]]) and ctx.store.has(stage, keys[stage])
