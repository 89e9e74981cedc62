"""Calibration: agreement, kappa and confusion on fixed verdicts (checked against
scikit-learn), the JSONL reader, and the set built from data with labels true by
construction."""

from __future__ import annotations

import json
import math

import pytest

from ablate.components.errors import InputError
from ablate.components.judge.calibration import cohen_kappa, judge_items, read_items, render, summarize
from ablate.components.judge.calibset import build, write_jsonl
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.prompts import load_prompts
from tests.components.judge.fakes import ScriptedJudge, rule_script
from tests.conftest import FIXTURES


@pytest.mark.parametrize("pairs", [
    [(True, True), (True, False), (False, False), (False, False), (True, True), (False, True)],
    [(True, True)] * 7 + [(False, True)] * 3,
    [(True, False), (False, True), (True, True), (False, False), (True, True)],
])
def test_kappa_matches_scikit_learn(pairs):
    from sklearn.metrics import cohen_kappa_score
    ours = cohen_kappa(pairs)
    theirs = cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs])
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_kappa_undefined_when_chance_agreement_is_one():
    assert math.isnan(cohen_kappa([(True, True)] * 4)) and math.isnan(cohen_kappa([]))


def _row(kind, label, predicted, failure=None, lang="en"):
    return {"kind": kind, "lang": lang, "label": label, "predicted": predicted,
            "failure": failure, "error": None}


def test_summary_counts_and_excludes_failures():
    rows = [_row("support", True, True), _row("support", False, True), _row("support", False, False),
            _row("relevance", True, True), _row("relevance", False, None, failure="empty reply"),
            _row("relevance", False, False, lang="zh")]
    s = summarize(rows)
    assert s["items"] == 6 and s["judged"] == 5 and s["failures"] == 1
    assert s["agreement"] == pytest.approx(4 / 5)
    assert s["confusion"] == {"label_true": {"judge_true": 2, "judge_false": 0},
                              "label_false": {"judge_true": 1, "judge_false": 2}}
    assert s["by_kind"]["support"]["agreement"] == pytest.approx(2 / 3)
    assert s["by_kind"]["relevance"]["judged"] == 2 and s["by_kind"]["relevance"]["failures"] == 1
    assert s["by_lang"]["zh"]["judged"] == 1
    assert s["meets_target"] is True  # 0.8 is the target itself
    assert "meets the 80%" in render(s)
    low = summarize(rows + [_row("support", True, False)])
    assert not low["meets_target"] and "is BELOW the 80%" in render(low)


def test_reader_rejects_malformed_items(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text(json.dumps({"kind": "support", "question": "q", "claim": "c", "context": ["a", "b"],
                             "label": True}) + "\n\n")
    [item] = read_items(p)
    assert item.id == "1" and item.fields["context"] == ["a", "b"]
    for line, field in [({"kind": "vibes", "label": True}, "kind"),
                        ({"kind": "relevance", "question": "q", "answer": "a", "label": "yes"}, "label"),
                        ({"kind": "relevance", "question": "q", "answer": " ", "label": True}, "answer"),
                        ({"kind": "usefulness", "question": "q", "reference": "r", "passage": "p",
                          "label": True, "lang": "fr"}, "lang")]:
        p.write_text(json.dumps({"kind": "support", "question": "q", "claim": "c", "context": "x",
                                 "label": True}) + "\n" + json.dumps(line) + "\n")
        with pytest.raises(InputError) as e:
            read_items(p)
        assert e.value.line == 2 and e.value.field == field, line


@pytest.fixture(scope="module")
def built():
    from ablate.components.data import load_dataset
    ds = load_dataset(FIXTURES / "squad_tiny.json", format="squad")
    return ds, build(ds, 3, seed=0)


def test_built_labels_hold_by_construction(built):
    ds, items = built
    assert len(items) == 18 and len({i["id"] for i in items}) == 18
    by = {i["id"]: i for i in items}
    docs = {q.qid: q.evidence[0][0].doc_id for q in ds.questions if q.evidence}
    for n in range(1, 4):
        st, sf = by[f"{n:03d}-support-true"], by[f"{n:03d}-support-false"]
        assert st["claim"] in st["context"] and st["label"] is True
        assert sf["claim"] not in sf["context"] and sf["label"] is False
        assert sf["context"] == st["context"] and sf["claim"] != st["claim"]
        rt, rf = by[f"{n:03d}-relevance-true"], by[f"{n:03d}-relevance-false"]
        assert rt["answer"] == st["claim"] and rf["answer"] != rt["answer"]
        partner = rf["how"].split("(")[1].split(")")[0]
        assert docs[partner] != docs[rt["source"]]  # another article
        ut, uf = by[f"{n:03d}-usefulness-true"], by[f"{n:03d}-usefulness-false"]
        assert ut["reference"] in ut["passage"] and ut["reference"] in st["claim"]
        assert ut["reference"].lower() not in uf["passage"].lower()
    assert build(ds, 3, seed=0) == items  # seeded
    assert build(ds, 3, seed=1) != items


def test_calibration_with_the_scripted_judge(built, tmp_path):
    _, items = built
    path = tmp_path / "calib.jsonl"
    write_jsonl(items, path)
    rows = judge_items(ScriptedJudge(rule_script), load_prompts(), JudgeConfig(), read_items(path))
    s = summarize(rows)
    # the rule judge copies the claim test exactly, so it agrees on every support item;
    # relevance by word overlap and usefulness by the reference's text are checked below
    assert s["by_kind"]["support"]["agreement"] == 1.0
    assert s["by_kind"]["usefulness"]["agreement"] == 1.0
    by = {r["id"]: r for r in rows}
    assert all(by[i["id"]]["label"] == i["label"] for i in items)
    assert s["judged"] == 18 and s["failures"] == 0
