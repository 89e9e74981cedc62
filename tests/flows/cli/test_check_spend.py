"""`ablate check` prints the estimated spend before any call (issue 53.5): per variant the
generator's (its questions x repeats, a prompt of the context budget plus the question's
tokens, at most generator.max_new_tokens out), and the judge's for the run (the prompt
tokens the judge line counts, at most judge.max_new_tokens out per call), at the
experiment's prices; nothing said when nothing is priced."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from tests.specs import TINY_SQUAD, data_set, pipeline, write_experiment

SMOLLM2 = {"name": "smollm2", "temperature": 0.7, "repeats": 2, "max_new_tokens": 16}
COSTS = {"generator_in_per_1k": 1.0, "generator_out_per_1k": 2.0, "judge_in_per_1k": 3.0,
         "judge_out_per_1k": 4.0}


def _check(run_cli, capsys, spec: Path, cache: Path) -> str:
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = run_cli("check", str(spec), "--cache-dir", str(cache))
    out, err = capsys.readouterr()
    assert code == 0 and err == "", err
    return out


def _spec(tmp_path: Path, **fields) -> Path:
    return write_experiment(tmp_path, "spend", dataset=data_set(TINY_SQUAD), tier="full",
                            split="all", baseline=pipeline(generator=SMOLLM2),
                            sweeps=[{"variable": "context.budget", "values": [48]}], **fields)


def _questions():
    from ablate.components.data import load_dataset
    return load_dataset(TINY_SQUAD, format="squad").questions


def _money(out: str, pattern: str) -> float:
    m = re.search(pattern, out, re.M)
    assert m, out
    return float(m.group(1))


def test_generator_and_judge_spend_per_variant(run_cli, capsys, tmp_path, monkeypatch):
    from ablate.components.text.tokenizer import get_tokenizer
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, costs=COSTS, judge={"metrics": ["addresses_question"],
                                               "max_new_tokens": 64})
    out = _check(run_cli, capsys, spec, tmp_path / "cache")
    tok = get_tokenizer()
    qs = _questions()
    for variant, budget in (("baseline", 96), ("context.budget=48", 48)):
        prompt = sum(2 * (budget + tok.count(q.question)) for q in qs)
        expected = (prompt * 1.0 + 2 * len(qs) * 16 * 2.0) / 1000
        got = _money(out, rf"^  {re.escape(variant)}: generator ~([\d.e-]+) ")
        assert got == pytest.approx(expected, rel=1e-3), out
    m = re.search(r"^judge: +~?(\d+) calls \(\d+ prompts cached\), ~?(\d+) prompt tokens", out, re.M)
    assert m, out
    calls, tokens = int(m.group(1)), int(m.group(2))
    judge = _money(out, r"^  judge \(the run\): ~([\d.e-]+) ")
    assert judge == pytest.approx((tokens * 3.0 + calls * 64 * 4.0) / 1000, rel=1e-3), out


def test_nothing_priced_no_spend_lines(run_cli, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = _check(run_cli, capsys, _spec(tmp_path), tmp_path / "cache")
    assert "spend:" not in out


def test_a_generators_own_price_is_priced_too(run_cli, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = write_experiment(tmp_path, "spend", dataset=data_set(TINY_SQUAD), tier="full",
                            split="all", baseline=pipeline(generator=SMOLLM2 | {"cost_per_1k_out": 1.0}))
    out = _check(run_cli, capsys, spec, tmp_path / "cache")
    got = _money(out, r"^  baseline: generator ~([\d.e-]+) ")
    assert got == pytest.approx(2 * len(_questions()) * 16 / 1000, rel=1e-3)
    assert "judge (the run)" not in out
