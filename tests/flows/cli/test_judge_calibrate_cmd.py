"""`ablate judge calibrate` and `make-calibration` through the real entry point, the judge
scripted (tests/components/judge/fakes.py):

- judge failures count as disagreements: a judge that answers 6 items and fails the rest
  does not pass `--require 0.8`;
- `--require` is per kind: overall agreement above 0.8 with one kind below exits 1 and
  names that kind; `--require-lower` uses the 95% lower bound; the JSON holds intervals;
- calibration items about the experiment's selected questions are refused (exit 2, one
  line naming the file and line);
- `make-calibration --held-out-from EXP.yaml` draws only from the questions the
  experiment's split never selects, and refuses an experiment that runs on every question.
"""

from __future__ import annotations

import itertools
import json

import pytest

from ablate.components.judge.backends import Request
from tests.components.judge.fakes import ScriptedJudge, block, field
from tests.conftest import FIXTURES
from tests.specs import judged_pipeline, write_experiment

DATA = FIXTURES / "squad_tiny.json"
_RUNS = itertools.count()


@pytest.fixture()
def exp(tmp_path):
    def write(split: str = "dev"):
        return write_experiment(tmp_path, "calibrated", file=f"exp-{split}.yaml", tier="smoke",
                                smoke_size=6, split=split, seed=1, judge={},
                                baseline=judged_pipeline())
    return write


@pytest.fixture(autouse=True)
def _fresh_contexts():
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    yield
    forget_contexts()


def _oracle(calib, override=None):
    """A judge that knows every label (by the item's text), except where `override`
    (request name, count so far) returns a reply of its own."""
    truth = {}
    for line in calib.read_text().splitlines():
        item = json.loads(line)
        text = item.get("claim") or item.get("answer") or item["passage"]
        truth[(item["kind"], text.strip())] = item["label"]
    seen = {"n": 0}

    def script(request: Request) -> str:
        seen["n"] += 1
        if override is not None and (reply := override(request, seen["n"])) is not None:
            return reply
        user = request.messages[1][1]
        text = {"support": lambda: field(user, "Statement (an answer to the question):"),
                "relevance": lambda: field(user, "Answer:"),
                "usefulness": lambda: block(user, "Passage:\n", "\n\nQuestion:")}[request.name]()
        return json.dumps({"verdict": "yes" if truth[(request.name, text.strip())] else "no"})
    return script


def _calibrate(run_cli, monkeypatch, tmp_path, spec, calib, script, *extra):
    import ablate.flows.run.stages as stages
    judge = ScriptedJudge(script)
    monkeypatch.setattr(stages, "judge_of", lambda ctx: judge)
    out = tmp_path / "cal.json"
    out.unlink(missing_ok=True)
    cache = tmp_path / f"cache{next(_RUNS)}"  # a new verdict cache: each script is judged
    code = run_cli("judge", "calibrate", str(calib), "--experiment", str(spec), "--quiet",
                   "--cache-dir", str(cache), "--json", str(out), *extra)
    return code, (json.loads(out.read_text())["summary"] if out.exists() else None)


@pytest.fixture()
def calib(run_cli, exp, tmp_path):
    """A held-out synthetic set made by the command itself."""
    path = tmp_path / "calib.jsonl"
    assert run_cli("judge", "make-calibration", str(DATA), "--out", str(path), "--n", "2",
                   "--held-out-from", str(exp())) == 0
    return path


def test_make_calibration_holds_out_the_experiments_split(run_cli, exp, calib, capsys):
    from ablate.components.data import load_dataset
    from ablate.components.data.tiers import split_pool
    items = [json.loads(line) for line in calib.read_text().splitlines()]
    assert len(items) == 12 and all(i["synthetic"] is True for i in items)
    questions = load_dataset(DATA, format="squad").questions
    dev = {q.qid for q in split_pool(questions, split="dev", seed=1, test_fraction=0.2)}
    assert not {i["qid"] for i in items} & dev  # never a question the dev split can select
    again = calib.with_name("again.jsonl")
    assert run_cli("judge", "make-calibration", str(DATA), "--out", str(again), "--n", "2",
                   "--held-out-from", str(exp())) == 0
    assert again.read_text() == calib.read_text()  # seeded
    assert "of the test split (seed 1, split_share 0.2)" in capsys.readouterr().out
    assert run_cli("judge", "make-calibration", str(DATA), "--out", str(calib), "--n", "2",
                   "--held-out-from", str(exp("all"))) == 2
    assert "split: all" in capsys.readouterr().err


def test_failures_count_against_the_judge(run_cli, monkeypatch, tmp_path, exp, calib):
    def fail_after_six(request, n):
        return None if n <= 6 else "I think so."  # not JSON: retried once, then a failure
    code, s = _calibrate(run_cli, monkeypatch, tmp_path, exp(), calib,
                         _oracle(calib, fail_after_six), "--require", "0.8")
    assert code == 1
    assert s["judged"] == 6 and s["failures"] == 6 and s["agreement"] == pytest.approx(0.5)


def test_require_is_per_kind(run_cli, monkeypatch, tmp_path, exp, calib, capsys):
    def support_always_yes(request, n):
        return json.dumps({"verdict": "yes"}) if request.name == "support" else None
    code, s = _calibrate(run_cli, monkeypatch, tmp_path, exp(), calib,
                         _oracle(calib, support_always_yes), "--require", "0.8")
    assert s["agreement"] == pytest.approx(10 / 12) and s["agreement"] >= 0.8
    assert code == 1
    err = capsys.readouterr().err
    assert "agreement below the required 0.8: support 0.500" in err
    assert "relevance" not in err and "usefulness" not in err
    lo, hi = s["by_kind"]["relevance"]["agreement_ci"]
    assert lo < 1.0 == hi and s["by_kind"]["support"]["kappa_ci"]
    # a perfect judge passes the point estimate; 4 items a kind cannot show 0.8 at 95%
    code, _ = _calibrate(run_cli, monkeypatch, tmp_path, exp(), calib, _oracle(calib),
                         "--require", "0.8")
    assert code == 0
    code, _ = _calibrate(run_cli, monkeypatch, tmp_path, exp(), calib, _oracle(calib),
                         "--require-lower", "0.8")
    assert code == 1
    assert "95% lower bound of agreement below the required 0.8: support" in capsys.readouterr().err


def test_items_about_the_sweeps_questions_are_refused(run_cli, monkeypatch, tmp_path, exp,
                                                      capsys):
    from ablate.components.data import load_dataset
    from ablate.components.judge.calibset import build, write_jsonl
    path = tmp_path / "overlapping.jsonl"
    write_jsonl(build(load_dataset(DATA, format="squad"), 3, seed=0), path)
    code, s = _calibrate(run_cli, monkeypatch, tmp_path, exp("all"), path, _oracle(path))
    assert code == 2 and s is None
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}:" in err[0] and "field 'qid'" in err[0]
    assert "held out from the sweep" in err[0]
