"""The experiment file's `alerts:` section: its four kinds of rule load as typed rules,
and every mistake is one line naming the file, the line and the field (exit 2)."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import pytest

from ablate.components.contract.errors import InputError
from ablate.flows.plan.spec_load import load_spec
from tests.conftest import FIXTURES

BASE = f"""\
name: t
dataset: {{path: {FIXTURES / 'squad_tiny.json'}, format: squad}}
alerts:
  - {{metric: answer/f1, below: 0.8}}
  - {{metric: answer/f1, declines: 3}}
  - {{gate: true}}
  - {{metric: final/recall_at_5, drop: 0.02, anytime: true, alpha: 0.05}}
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "exp.yaml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def error_of(tmp_path: Path, text: str) -> InputError:
    with pytest.raises(InputError) as info:
        load_spec(write(tmp_path, text))
    return info.value


def test_the_four_kinds_load_as_typed_rules(tmp_path):
    rules = load_spec(write(tmp_path, BASE)).spec.alerts
    assert [r.kind for r in rules] == ["below", "declines", "gate", "drop"]
    assert rules[0].below == 0.8 and rules[0].metric == "answer/f1"
    assert rules[1].declines == 3
    assert rules[3].drop == 0.02 and rules[3].anytime and rules[3].questions == "shared"
    assert rules[3].reference is None


def test_no_alerts_leaves_the_spec_dump_as_it_was(tmp_path):
    text = BASE.split("alerts:")[0]
    spec = load_spec(write(tmp_path, text)).spec
    assert spec.alerts == [] and "alerts" not in spec.model_dump(mode="json")


@pytest.mark.parametrize("old, new, line, field, words", [
    ("{metric: answer/f1, below: 0.8}", "{metric: answer/f1, below: 0.8, declines: 2}",
     4, "alerts.0", "one of below, declines, gate, drop"),
    ("{metric: answer/f1, declines: 3}", "{metric: answer/f1}", 5, "alerts.1",
     "one of below, declines, gate, drop"),
    ("{metric: answer/f1, declines: 3}", "{metric: answer/f11, declines: 3}", 5,
     "alerts.1.metric", "unknown metric 'answer/f11'"),
    ("{metric: answer/f1, declines: 3}", "{declines: 3}", 5, "alerts.1.metric",
     "needs a metric"),
    ("{metric: answer/f1, declines: 3}", "{metric: answer/f1, declines: 0}", 5,
     "alerts.1.declines", "greater than or equal to 1"),
    ("{gate: true}", "{gate: false}", 6, "alerts.2.gate", "`gate: true`"),
    ("{gate: true}", "{gate: true, metric: answer/f1}", 6, "alerts.2.metric",
     "a gate rule reads the gate's verdict"),
    ("alpha: 0.05}", "alpha: 1.5}", 7, "alerts.3.alpha", "less than 1"),
    ("drop: 0.02,", "drop: -0.02,", 7, "alerts.3.drop", "greater than or equal to 0"),
    ("{metric: answer/f1, below: 0.8}", "{metric: answer/f1, below: 0.8, questions: fresh}",
     4, "alerts.0.questions", "only a drop rule"),
    ("{metric: answer/f1, below: 0.8}", "{metric: answer/f1, below: 0.8, anytime: true}",
     4, "alerts.0.anytime", "only a drop rule"),
    ("anytime: true,", "anytime: true, questions: fersh,", 7, "alerts.3.questions", "fresh"),
    ("{gate: true}", "{gate: true, treshold: 1}", 6, "alerts.2.treshold", "unknown field"),
])
def test_mistakes_name_line_and_field(tmp_path, old, new, line, field, words):
    assert old in BASE
    err = error_of(tmp_path, BASE.replace(old, new))
    assert (err.line, err.field) == (line, field), err.one_line()
    assert words in err.message, err.message


def test_the_same_rule_twice_is_an_error(tmp_path):
    err = error_of(tmp_path, BASE + "  - {metric: answer/f1, below: 0.8}\n")
    assert (err.line, err.field) == (8, "alerts.4") and "same rule as alerts.0" in err.message


def test_chinese_metric_name_in_an_error_is_kept(tmp_path):
    err = error_of(tmp_path, BASE.replace("answer/f1, below", "忠实度, below"))
    assert err.field == "alerts.0.metric" and "忠实度" in err.message


def test_check_exits_2_with_one_line(run_cli, capsys, tmp_path):
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    spec = write(tmp_path, BASE.replace("alpha: 0.05}", "alpha: 0}"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = run_cli("check", str(spec))
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.strip().splitlines() == [
        f"ablate: error: {spec}:7: field 'alerts.3.alpha': Input should be greater than 0"]


def test_alert_rules_change_no_sweep_id(tmp_path):
    from types import SimpleNamespace

    from ablate.flows.outputs.write import sweep_id

    def sid(text: str) -> str:
        spec = load_spec(write(tmp_path, text)).spec
        return sweep_id(SimpleNamespace(labels_path=None, spec=spec, tier="smoke", split="dev",
                                        dataset=SimpleNamespace(fingerprint="fp"),
                                        questions_fp="q"))  # type: ignore[arg-type]
    plain = sid(BASE.split("alerts:")[0])
    assert sid(BASE) == plain
    assert sid(BASE.replace("below: 0.8", "below: 0.7")) == plain
