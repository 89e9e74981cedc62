"""RAGAS answer relevancy in the stage graph (issue 29, item 4): the judge stage embeds
with the run's encoder of `judge.embedder` and keeps the cosines in the judgment, so the
score stage needs no model; the embedder's identity is part of the judge stage's key (a
missing one is one line at check time); `ablate check` counts the questions task."""

from __future__ import annotations

import json
import re

import numpy as np
import polars as pl
import pytest

from tests.components.judge.fakes import ScriptedJudge, TableEncoder, rule_script
from tests.specs import judged_pipeline, write_experiment

JUDGE_LINE = 6  # experiment()'s layout: name, dataset, tier, split, seed, judge


def _spec(folder, judge: dict | None = None):
    return write_experiment(folder, "relevancy", tier="full", split="all", seed=1,
                            judge=judge or {"metrics": ["answer_relevancy", "context_recall"]},
                            baseline=judged_pipeline())


def _context(spec, cache):
    from ablate.flows.run.context import RunOptions, build_context
    return build_context(str(spec), RunOptions(cache_dir=str(cache)))


def test_the_judge_stage_embeds_with_the_runs_encoder(tmp_path):
    from ablate.flows.run.stages import run_stage
    ctx = _context(_spec(tmp_path), tmp_path / "cache")
    judge = ScriptedJudge(rule_script, ctx.spec.judge)
    enc = TableEncoder()
    ctx.memo["judge"] = judge
    ctx.memo["encoder:all-MiniLM-L6-v2:torch"] = enc  # the run's encoder of judge.embedder
    for node in ctx.plan.nodes.values():
        run_stage(ctx, node)
    keys = ctx.plan.by_variant["baseline"]
    frame = ctx.store.read("judge", keys["judge"])
    scored = ctx.store.read("score", keys["score"]).sort("qid")
    answers = ctx.store.read("generate", keys["generate"])
    refused = dict(zip(answers["qid"], answers["refused"]))
    questions = {q.qid: q.question.strip() for q in ctx.questions}
    asked = 0
    for qid, raw in zip(frame["qid"], frame["judgments"]):
        got = json.loads(raw)
        rel, recall = got["answer_relevancy"], got["context_recall"]
        value = scored.filter(pl.col("qid") == qid)["judge/answer_relevancy"][0]
        if refused[qid]:  # noncommittal by definition: 0, nothing asked or embedded
            assert rel["noncommittal"] is True and "cosines" not in rel and value == 0.0
            continue
        asked += 1
        a, *gen = [enc.vector(t) for t in [questions[qid], *rel["verdicts"]]]
        want = [float(np.dot(a, g) / np.linalg.norm(a) / np.linalg.norm(g)) for g in gen]
        assert rel["cosines"] == pytest.approx(want, abs=1e-6) and len(want) == 3
        assert value == pytest.approx(np.mean(want), abs=1e-6)
        assert recall["status"] != "ok" or recall["reference_form"] == "span"  # SQuAD spans
    # asked once per distinct answer: the prompt holds the answer alone, not the question
    distinct = answers.filter(~pl.col("refused"))["text"].str.strip_chars().n_unique()
    assert asked > distinct > 0 and sum(r.name == "questions" for r in judge.calls) == distinct
    assert all(call[0] in questions.values() for call in enc.calls)


def test_the_judge_key_follows_the_embedder_and_a_missing_one_is_one_line(tmp_path):
    from ablate.components.contract.errors import InputError
    from ablate.components.runtime.models import minilm_path

    def key(folder, judge):
        return _context(_spec(tmp_path / folder, judge), tmp_path / "cache").plan.by_variant["baseline"]
    only = {"metrics": ["answer_relevancy"]}
    base = key("a", only)
    assert key("b", only | {"embedder": "all-MiniLM-L6-v2"}) == base
    mine = tmp_path / "minilm-copy"
    mine.mkdir()
    for f in minilm_path().iterdir():  # the same model in another folder: linked, not copied
        (mine / f.name).symlink_to(f)
    other = key("c", only | {"embedder": str(mine)})
    assert other["judge"] != base["judge"] and other["generate"] == base["generate"]
    assert key("d", only | {"relevancy_questions": 5})["judge"] != base["judge"]
    missing = tmp_path / "no-such-model"
    with pytest.raises(InputError) as e:
        key("e", only | {"embedder": str(missing)})
    line = str(e.value)
    assert "\n" not in line and e.value.field == "judge.embedder" and f"exp.yaml:{JUDGE_LINE}:" in line, line
    # a judge without answer relevancy does not read the embedder
    assert key("f", {"metrics": ["faithfulness"], "embedder": str(missing)})["judge"] == \
        key("g", {"metrics": ["faithfulness"]})["judge"]


def test_check_counts_the_questions_task(run_cli, capsys, tmp_path, monkeypatch):
    from tests.flows.cli.test_check_judge_cost import _check, _judge_line, _questions
    from tests.specs import TINY_SQUAD, data_set, pipeline, write_experiment
    monkeypatch.chdir(tmp_path)
    spec = write_experiment(tmp_path, "judge-cost", dataset=data_set(TINY_SQUAD), tier="full",
                            split="all", judge={"metrics": ["answer_relevancy"]},
                            baseline=pipeline(generator={"name": "smollm2", "repeats": 2,
                                                         "temperature": 0.7}))
    out = _check(run_cli, capsys, spec, tmp_path / "cache")
    n = 2 * len(_questions())  # every question x 2 repeats, answers not generated yet
    calls, cached, _, _ = _judge_line(out)
    assert (calls, cached) == (n, 0)
    assert re.search(rf"calls by task: questions {n}\b", out), out
