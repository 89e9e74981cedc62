"""The experiment file's `costs:` section: typed prices, 0 by default and absent from the
spec's dump (so no sweep id moves); a negative price or an unknown field is one line naming
the file, the line and the field (exit 2); prices enter no stage key but the score stage's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ablate.components.contract.errors import InputError
from ablate.flows.plan.spec_load import load_spec
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[3]
BASE = f"""\
name: t
dataset: {{path: {FIXTURES / 'squad_tiny.json'}, format: squad}}
costs:
  embed_per_1k_tokens: 0.00002
  vector_search: 0.0001
  rerank_call: 0.00002
  generator_in_per_1k: 0.00015
  generator_out_per_1k: 0.0006
  judge_in_per_1k: 0.0025
  judge_out_per_1k: 0.01
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "exp.yaml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def test_prices_load_typed_and_default_to_zero(tmp_path):
    costs = load_spec(write(tmp_path, BASE)).spec.costs
    assert costs.vector_search == 0.0001 and costs.judge_out_per_1k == 0.01
    plain = load_spec(write(tmp_path, BASE.split("costs:")[0])).spec
    assert not plain.costs.any() and plain.costs.embed_per_1k_tokens == 0.0
    assert "costs" not in plain.model_dump(mode="json")


@pytest.mark.parametrize("old, new, line, field, words", [
    ("vector_search: 0.0001", "vector_search: -0.0001", 5, "costs.vector_search",
     "greater than or equal to 0"),
    ("judge_out_per_1k: 0.01", "judge_out_per_1k: -1", 10, "costs.judge_out_per_1k",
     "greater than or equal to 0"),
    ("rerank_call: 0.00002", "rerank_cal: 0.00002", 6, "costs.rerank_cal", "unknown field"),
])
def test_mistakes_name_line_and_field(tmp_path, old, new, line, field, words):
    with pytest.raises(InputError) as info:
        load_spec(write(tmp_path, BASE.replace(old, new)))
    err = info.value
    assert (err.line, err.field) == (line, field), err.one_line()
    assert words in err.message, err.message


def test_check_exits_2_with_one_line(run_cli, capsys, tmp_path):
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    spec = write(tmp_path, BASE.replace("rerank_call: 0.00002", "rerank_call: -2"))
    code = run_cli("check", str(spec))
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.strip().splitlines() == [
        f"ablate: error: {spec}:6: field 'costs.rerank_call': Input should be greater than "
        "or equal to 0"]


def test_prices_move_only_the_score_stage_keys(tmp_path, monkeypatch):
    from ablate.flows.plan.sweep_plan import RunOptions, plan_sweep
    from tests.flows.plan.test_demo_stage_keys import _pin
    _pin(monkeypatch.setattr)
    demo = (ROOT / "experiments" / "demo.yaml").read_text(encoding="utf-8")
    data = ROOT / "experiments" / "data" / "squad2-dev-half" / "dev-v2.0.json"
    demo = demo.replace("path: data/squad2-dev-half/dev-v2.0.json", f"path: {data}")
    (tmp_path / "plain.yaml").write_text(demo, encoding="utf-8")
    priced = demo + "costs: {vector_search: 0.001, generator_in_per_1k: 0.5, judge_in_per_1k: 2}\n"
    (tmp_path / "priced.yaml").write_text(priced, encoding="utf-8")
    a = plan_sweep(tmp_path / "plain.yaml", RunOptions()).plan.by_variant
    b = plan_sweep(tmp_path / "priced.yaml", RunOptions()).plan.by_variant
    assert a.keys() == b.keys()
    for variant in a:
        assert a[variant].keys() == b[variant].keys()
        for label, key in a[variant].items():
            assert (b[variant][label] == key) == (label != "score"), (variant, label)
