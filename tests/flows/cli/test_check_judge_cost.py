"""`ablate check` counts the judge's calls and prompt tokens before the run (issue 29,
item 6): first-round prompts per question x repeat x judged metric, prompts shared by
repeats counted once, the verdict cache looked up for prompts already known (answers and
contexts stored), tokens counted with the judge GGUF's own tokenizer (or the experiment
tokenizer, said), Chinese counted by tokens, not by whitespace words. Writes nothing."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

from tests.specs import TINY_SQUAD, data_set, experiment, judged_pipeline, pipeline, write_experiment

SMOLLM2 = {"name": "smollm2", "temperature": 0.7, "repeats": 2, "max_new_tokens": 16}


def _check(run_cli, capsys, spec: Path, cache: Path) -> str:
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = run_cli("check", str(spec), "--cache-dir", str(cache))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    return out


def _judge_line(out: str) -> tuple[int, int, int, str]:
    """(calls, cached, tokens, tokenizer) of the judge line."""
    m = re.search(r"^judge: +(~?)(\d+) calls \((\d+) prompts cached\), ~?(\d+) prompt tokens "
                  r"\(counted with (.*)\)$", out, re.M)
    assert m, out
    return int(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(5)


def _spec(tmp_path: Path, judge: dict, generator: dict = SMOLLM2, data: Path = TINY_SQUAD) -> Path:
    return write_experiment(tmp_path, "judge-cost", dataset=data_set(data), tier="full", split="all",
                            judge=judge, baseline=pipeline(generator=generator))


def _questions():
    from ablate.components.data import load_dataset
    return load_dataset(TINY_SQUAD, format="squad").questions


def test_first_round_prompts_per_question_repeat_and_metric(run_cli, capsys, tmp_path, monkeypatch):
    from ablate.components.judge.case import sentences
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, {"metrics": ["addresses_question", "context_recall"]})
    before = sorted(tmp_path.rglob("*"))
    out = _check(run_cli, capsys, spec, tmp_path / "cache")
    qs = _questions()
    relevance = len(qs) * 2  # every question x 2 repeats (answers not generated yet)
    # the reference's sentences against the context: the same for both repeats, asked once
    recall = sum(len(sentences(q.answers[0])[:6]) for q in qs if q.answers)
    calls, cached, tokens, tokenizer = _judge_line(out)
    assert (calls, cached) == (relevance + recall, 0)
    assert f"first round {relevance + recall} prompts, later rounds 0" in out
    assert f"calls by task: relevance {relevance}, support {recall}" in out
    assert "SmolLM2-135M-Instruct.Q4_1.gguf's tokenizer and chat template" in tokenizer
    assert tokens > calls * 50  # a prompt holds the instructions, the question and more
    assert "estimated: the answers of 1 generate stage not stored yet" in out
    assert "estimated: the contexts of 1 assemble stage not stored yet" in out
    assert sorted(tmp_path.rglob("*")) == before  # nothing written, not even the cache folder


def test_faithfulness_counts_claims_then_a_support_verdict_per_claim(run_cli, capsys, tmp_path,
                                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, {"metrics": ["faithfulness"]},
                 generator={"name": "extractive"})
    out = _check(run_cli, capsys, spec, tmp_path / "cache")
    n = len(_questions())
    calls, cached, _, _ = _judge_line(out)
    assert f"first round {n} prompts, later rounds ~{2 * n}" in out  # 2 claims assumed
    assert calls == 3 * n and cached == 0
    assert f"estimated: 2.0 claims per answer for the {n} answers whose claims are not cached (assumed" in out


def test_openai_judge_counts_with_the_experiment_tokenizer(run_cli, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, {"backend": "openai", "base_url": "http://127.0.0.1:9/v1",
                            "model": "served", "metrics": ["addresses_question"]})
    out = _check(run_cli, capsys, spec, tmp_path / "cache")
    calls, _, _, tokenizer = _judge_line(out)
    assert calls == 2 * len(_questions())
    assert tokenizer.startswith("the experiment tokenizer all-MiniLM-L6-v2-wordpiece")


ZH_QUESTION = "諾曼第公國在十世紀與十一世紀時位於今天的哪一個國家的北部沿海地區之中呢？"


def _zh_data(folder: Path, question: str) -> Path:
    context = "諾曼人是十世紀和十一世紀時在法國諾曼第定居的民族。他們的公國位於法國北部。"
    data = {"version": "1.1", "data": [{"title": "諾曼人", "paragraphs": [{
        "context": context,
        "qas": [{"id": "zh1", "question": question, "is_impossible": False,
                 "answers": [{"text": "法國", "answer_start": context.index("法國")}]}]}]}]}
    folder.mkdir()
    path = folder / "zh.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("judge", [{}, {"backend": "openai", "base_url": "http://127.0.0.1:9/v1",
                                        "model": "served"}], ids=["gguf", "experiment-tokenizer"])
def test_chinese_is_counted_by_tokens(run_cli, capsys, tmp_path, monkeypatch, judge):
    """The same experiment with a long Chinese question and with a one-character one: the
    difference in prompt tokens is more than a token per 4 characters (a whitespace word
    count would see one word)."""
    monkeypatch.chdir(tmp_path)
    tokens = {}
    for name, question in (("long", ZH_QUESTION), ("short", "哪？")):
        folder = tmp_path / name
        spec = _spec(_mkdir(folder), judge | {"metrics": ["addresses_question"], "language": "zh"},
                     generator={"name": "extractive"}, data=_zh_data(folder / "data", question))
        calls, _, tokens[name], _ = _judge_line(_check(run_cli, capsys, spec, folder / "cache"))
        assert calls == 1
    assert len(ZH_QUESTION.split()) == 1
    assert tokens["long"] - tokens["short"] > (len(ZH_QUESTION) - 2) / 4


def _mkdir(path: Path) -> Path:
    path.mkdir(exist_ok=True)
    return path


def test_prompt_counters_count_chinese_by_tokens():
    from ablate.components import catalogue
    from ablate.components.judge.config import JudgeConfig
    from ablate.components.judge.tokens import experiment_counter, prompt_counter
    catalogue.load()
    for counter in (prompt_counter(JudgeConfig()), experiment_counter("test")):
        plain = counter.count([("user", "")])
        assert counter.count([("user", ZH_QUESTION)]) - plain > len(ZH_QUESTION) / 4, counter.name


# ---- after a run: what the cache holds is found ------------------------------------------

def _judged_spec(metrics: list[str]) -> str:
    from tests.flows.run.test_judge_repeats import REPEATS
    return experiment("judged-cost", tier="full", split="all", seed=1,
                      judge={"metrics": metrics}, baseline=judged_pipeline(generator=REPEATS))


def test_prompts_the_cache_holds_are_found(run_cli, capsys, tmp_path):
    """A sweep judged faithfulness (answers, contexts, claims and support verdicts now
    stored or cached); checking it with the addresses-question rating added knows every prompt: the
    faithfulness ones all cached (claims read from the cache, then their support
    verdicts), the relevance ones calls, one per distinct answer."""
    from tests.components.judge.fakes import rule_script
    from tests.flows.direct import run_judged
    from tests.flows.run.test_judge_repeats import _fake_model
    spec = tmp_path / "exp.yaml"
    spec.write_text(_judged_spec(["faithfulness"]))
    ctx, judge = run_judged(spec, tmp_path / "cache", rule_script, _fake_model)
    asked = len(judge.calls)
    assert asked > 0 and any(r.name == "support" for r in judge.calls)
    out = _check(run_cli, capsys, spec, tmp_path / "cache")
    assert re.search(r"^judge: +nothing to ask \(1 judge stage stored\)$", out, re.M), out

    spec.write_text(_judged_spec(["faithfulness", "addresses_question"]))
    with pytest.MonkeyPatch.context() as mp:  # the scripted judge's identity, not SmolLM2's
        mp.setattr("ablate.flows.run.judge_cost.judge_of", lambda ctx: judge)
        out = _check(run_cli, capsys, spec, tmp_path / "cache")
    answers = ctx.store.read("generate", ctx.plan.by_variant["baseline"]["generate"])
    distinct = answers.filter(~answers["refused"]).select("qid", "text").unique().height
    calls, cached, _, _ = _judge_line(out)
    assert (calls, cached) == (distinct, asked)
    assert re.search(r"^judge: +\d+ calls", out, re.M)  # known exactly: no ~
    assert "estimated:" not in out
