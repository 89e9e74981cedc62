"""Calibration: agreement, kappa and confusion on fixed verdicts (checked against
scikit-learn and statsmodels), judge failures counted as disagreements, intervals
(cluster-aware), the per-kind target, the JSONL reader (provenance, duplicates, held-out
questions), and the synthetic set built from data with labels true by construction and
hard negatives from the same article."""

from __future__ import annotations

import json
import math

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.judge.agreement import cohen_kappa, design_effect, shortfalls, summarize, wilson
from ablate.components.judge.calibration import held_out, judge_items, overlap, read_items, render, with_items
from ablate.components.judge.calibset import build, write_jsonl
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.nearmiss import NEAR_MISSES
from ablate.components.judge.prompts import load_prompts
from tests.components.judge.fakes import ScriptedJudge, rule_script
from tests.conftest import FIXTURES


@pytest.mark.parametrize("pairs", [
    [(True, True), (True, False), (False, False), (False, False), (True, True), (False, True)],
    [(True, True)] * 7 + [(False, True)] * 3,
    [(True, False), (False, True), (True, True), (False, False), (True, True)],
    [(True, True), (True, None), (False, False), (False, True), (True, True), (False, None)],
])
def test_kappa_matches_scikit_learn(pairs):
    """A pair without a verdict (None) is a third category no label takes."""
    from sklearn.metrics import cohen_kappa_score
    ours = cohen_kappa(pairs)
    theirs = cohen_kappa_score([str(a) for a, _ in pairs], [str(b) for _, b in pairs])
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_kappa_undefined_when_chance_agreement_is_one():
    assert math.isnan(cohen_kappa([(True, True)] * 4)) and math.isnan(cohen_kappa([]))


def test_wilson_matches_statsmodels():
    from statsmodels.stats.proportion import proportion_confint
    for x, n in [(12, 16), (16, 16), (0, 8), (37, 48)]:
        assert wilson(x, n) == pytest.approx(proportion_confint(x, n, method="wilson"), abs=1e-12)


def _row(kind, label, predicted, failure=None, lang="en", qid=None, synthetic=False, id=None):
    return {"id": id, "kind": kind, "lang": lang, "label": label, "predicted": predicted,
            "failure": failure, "error": None, "qid": qid, "synthetic": synthetic}


def test_failures_count_as_disagreements():
    """8 agreeing verdicts and 40 judge failures: agreement 8/48, not 1.0; reported."""
    rows = ([_row(k, i % 2 == 0, i % 2 == 0) for k in ("support", "relevance") for i in range(4)]
            + [_row(k, True, None, failure="empty reply")
               for k in ("support", "relevance", "usefulness") for _ in range(13)]
            + [_row("usefulness", True, None, failure="empty reply")])
    s = summarize(rows)
    assert s["items"] == 48 and s["judged"] == 8 and s["failures"] == 40
    assert s["agreement"] == pytest.approx(8 / 48) and s["no_verdict_share"] == pytest.approx(40 / 48)
    assert s["kappa"] < 0.2 and not s["meets_target"]
    sup = s["by_kind"]["support"]
    assert sup["agreement"] == pytest.approx(4 / 17) and sup["failures"] == 13
    assert sup["confusion"]["label_true"]["no_verdict"] == 13
    assert s["by_kind"]["usefulness"]["agreement"] == 0.0
    assert shortfalls(s, 0.8) == ["support 0.235", "relevance 0.235", "usefulness 0.000"]
    assert "40 (83%)" in render(s)


def test_summary_counts_per_kind_and_language():
    rows = [_row("support", True, True), _row("support", False, True), _row("support", False, False),
            _row("relevance", True, True), _row("relevance", False, None, failure="empty reply"),
            _row("relevance", False, False, lang="zh")]
    s = summarize(rows)
    assert s["items"] == 6 and s["judged"] == 5 and s["failures"] == 1
    assert s["agreement"] == pytest.approx(4 / 6)
    assert s["confusion"] == {"label_true": {"judge_true": 2, "judge_false": 0, "no_verdict": 0},
                              "label_false": {"judge_true": 1, "judge_false": 2, "no_verdict": 1}}
    assert s["by_kind"]["support"]["agreement"] == pytest.approx(2 / 3)
    assert s["by_kind"]["relevance"]["agreement"] == pytest.approx(2 / 3)
    assert s["by_kind"]["relevance"]["failures"] == 1
    assert s["by_lang"]["zh"]["items"] == 1 and s["by_lang"]["en"]["items"] == 5


def test_target_is_per_kind():
    """Overall 0.83 but support 0.5: the set does not meet the target, support is named."""
    rows = ([_row("support", True, True), _row("support", False, True)] * 4
            + [_row(k, b, b) for k in ("relevance", "usefulness") for b in (True, False)] * 4)
    s = summarize(rows)
    assert s["agreement"] == pytest.approx(20 / 24) and s["agreement"] >= 0.8
    assert not s["meets_target"] and s["below"] == ["support"]
    assert s["by_kind"]["relevance"]["meets_target"] and not s["by_kind"]["support"]["meets_target"]
    assert shortfalls(s, 0.8) == ["support 0.500"]
    assert shortfalls(s, 0.8, kinds=["support", "relevance", "absent"])[-1] == "absent: no items"
    # 8 of 8 relevance items agree: the Wilson lower bound (0.68) is below 0.8
    assert "relevance" in " ".join(shortfalls(s, 0.8, lower=True))
    out = render(s)
    assert "support: agreement 0.500" in out and "is BELOW the 80%" in out
    assert "relevance: agreement 1.000" in out and "meets the 80%" in out


def test_intervals_present_and_cluster_aware():
    # 12 of 16 agree; independent items: the Wilson interval itself
    flat = [_row("support", True, i < 12, id=str(i)) for i in range(16)]
    s = summarize(flat)
    lo, hi = s["agreement_ci"]
    assert (lo, hi) == pytest.approx(wilson(12, 16)) and lo < 0.75 < hi
    assert s["clusters"] == 16 and s["design_effect"] == 1.0
    k_lo, k_hi = s["kappa_ci"]
    assert k_lo <= s["kappa"] <= k_hi or math.isnan(s["kappa"])
    # the same verdicts as 8 questions of 2 items that agree or disagree together: wider
    clustered = [r | {"qid": f"q{i // 2}"} for i, r in enumerate(flat)]
    c = summarize(clustered)
    assert c["clusters"] == 8 and c["design_effect"] > 1.5
    assert c["agreement_ci"][0] < lo and c["agreement_ci"][1] > hi
    assert c["agreement"] == s["agreement"]
    # every item agrees: the worst-case design effect (items of a question together)
    assert design_effect([True] * 4, ["a", "a", "b", "b"]) == 2.0
    assert "intervals" in c and "95%" in c["intervals"] and "clusters" in c["intervals"]


def test_kappa_interval_brackets_kappa_with_mixed_verdicts():
    rows = [_row("support", i % 3 != 0, i % 4 != 0, qid=f"q{i // 2}") for i in range(40)]
    s = summarize(rows)
    lo, hi = s["kappa_ci"]
    assert lo < s["kappa"] < hi and -1 <= lo and hi <= 1


def _line(**kw):
    base = {"kind": "support", "question": "q", "claim": "c", "context": "x", "label": True,
            "synthetic": True}
    return json.dumps({k: v for k, v in (base | kw).items() if v is not None})


def test_reader_rejects_malformed_items(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text(json.dumps({"kind": "support", "question": "q", "claim": "c", "context": ["a", "b"],
                             "label": True, "annotator": "li", "labelled_at": "2025-03-01"}) + "\n\n")
    [item] = read_items(p)
    assert item.id == "1" and item.fields["context"] == ["a", "b"] and not item.synthetic
    assert item.annotator == "li" and item.labelled_at == "2025-03-01" and item.line == 1
    for line, field in [({"kind": "vibes", "label": True}, "kind"),
                        ({"kind": "relevance", "question": "q", "answer": "a", "label": "yes"}, "label"),
                        ({"kind": "relevance", "question": "q", "answer": " ", "label": True}, "answer"),
                        ({"kind": "usefulness", "question": "q", "reference": "r", "passage": "p",
                          "label": True, "lang": "fr", "synthetic": True}, "lang"),
                        # where the label comes from: synthetic, or who and when
                        ({"kind": "relevance", "question": "q", "answer": "a", "label": True}, "annotator"),
                        ({"kind": "relevance", "question": "q", "answer": "a", "label": True,
                          "annotator": "li"}, "labelled_at"),
                        ({"kind": "relevance", "question": "q", "answer": "a", "label": True,
                          "annotator": "li", "labelled_at": "yesterday"}, "labelled_at"),
                        ({"kind": "relevance", "question": "q", "answer": "a", "label": True,
                          "synthetic": True, "annotater": "li"}, "annotater"),
                        ({"kind": "relevance", "question": "q", "answer": "a", "label": True,
                          "synthetic": "yes"}, "synthetic"),
                        ({"id": "a", "kind": "relevance", "question": "q", "answer": "a",
                          "label": True, "synthetic": True}, "id")]:
        p.write_text(_line(id="a") + "\n" + json.dumps(line) + "\n")
        with pytest.raises(InputError) as e:
            read_items(p)
        assert e.value.line == 2 and e.value.field == field, line


def test_overlap_with_the_sweeps_questions_is_refused(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text("\n".join([_line(id="1", qid="q9"), _line(id="2", source="q1"),
                            _line(id="3", qid="q2")]) + "\n")
    items = read_items(p)
    assert [i.qid for i in items] == ["q9", "q1", "q2"]  # `source` (older sets) is the qid
    held_out(items, ["q5", "q7"], p)  # no overlap: nothing said
    with pytest.raises(InputError) as e:
        held_out(items, ["q1", "q2", "q3"], p)
    assert e.value.path == str(p) and e.value.line == 2 and e.value.field == "qid"
    assert "'q1'" in str(e.value) and "2 of 3 items" in str(e.value)
    assert overlap(items, ["q1", "q2"]) == {"items": 2, "questions": 2, "ids": ["2", "3"]}


@pytest.fixture(scope="module")
def built():
    from ablate.components.data import load_dataset
    ds = load_dataset(FIXTURES / "squad_tiny.json", format="squad")
    return ds, build(ds, 3, seed=0)


def test_built_labels_hold_by_construction_with_hard_negatives(built):
    ds, items = built
    assert len(items) == 18 and len({i["id"] for i in items}) == 18
    assert all(i["synthetic"] is True for i in items)
    by = {i["id"]: i for i in items}
    qs = {q.qid: q for q in ds.questions}
    docs = {q.qid: q.evidence[0][0].doc_id for q in ds.questions if q.evidence}
    doc_text = {d.doc_id: d.text for d in ds.documents}
    for n in range(1, 4):
        st, sf = by[f"{n:03d}-support-true"], by[f"{n:03d}-support-false"]
        assert st["claim"] in st["context"] and st["label"] is True
        assert sf["claim"] not in sf["context"] and sf["label"] is False
        assert sf["context"] == st["context"] and sf["claim"] != st["claim"]
        assert sf["negative"] in NEAR_MISSES
        rt, rf = by[f"{n:03d}-relevance-true"], by[f"{n:03d}-relevance-false"]
        assert rt["answer"] == st["claim"] and rf["answer"] != rt["answer"]
        partner = rf["how"].split("(")[1].split(")")[0]
        assert docs[partner] == docs[rt["qid"]]  # the same article, another question
        golds = {a.lower() for a in qs[rt["qid"]].answers}
        assert not any(g in rf["answer"].lower() for g in golds)
        ut, uf = by[f"{n:03d}-usefulness-true"], by[f"{n:03d}-usefulness-false"]
        assert ut["reference"] in ut["passage"] and ut["reference"] in st["claim"]
        assert uf["passage"] != ut["passage"] and uf["passage"] in doc_text[docs[ut["qid"]]]
        assert not any(g in uf["passage"].lower() for g in golds)  # same article, no answer
    assert build(ds, 3, seed=0) == items  # seeded
    assert build(ds, 3, seed=1) != items


def test_built_from_a_pool_uses_only_its_questions(built):
    ds, _ = built
    pool = [q for i, q in enumerate(ds.questions) if i % 2]
    items = build(ds, 3, seed=0, pool=pool)
    allowed = {q.qid for q in pool}
    assert items and {i["qid"] for i in items} <= allowed
    partners = {i["how"].split("(")[1].split(")")[0] for i in items
                if i["kind"] == "relevance" and not i["label"]}
    assert partners <= allowed


def test_calibration_with_the_scripted_judge(built, tmp_path):
    _, items = built
    path = tmp_path / "calib.jsonl"
    write_jsonl(items, path)
    read = read_items(path)
    rows = judge_items(ScriptedJudge(rule_script), load_prompts(), JudgeConfig(), read)
    s = summarize(rows)
    # the rule judge copies the claim test exactly, so it agrees on every support item;
    # usefulness by the reference's text
    assert s["by_kind"]["support"]["agreement"] == 1.0
    assert s["by_kind"]["usefulness"]["agreement"] == 1.0
    by = {r["id"]: r for r in rows}
    assert all(by[i["id"]]["label"] == i["label"] for i in items)
    assert s["judged"] == 18 and s["failures"] == 0 and s["synthetic"] == 18
    assert s["clusters"] == 3  # the items of one question together
    assert "synthetic labels" in render(s)
    # a calibrate stage's stored rows keep only verdicts: the items give qid and synthetic
    bare = [{k: v for k, v in r.items() if k not in ("qid", "synthetic")} for r in rows]
    assert summarize(with_items(bare, read))["clusters"] == 3


def test_the_documented_human_labels_read(tmp_path):
    from tests.conftest import ROOT
    doc = (ROOT / "docs" / "judge-calibration.md").read_text(encoding="utf-8")
    lines = [line for line in doc.splitlines() if line.startswith('{"id": "h-')]
    p = tmp_path / "human.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    items = read_items(p)
    assert [i.kind for i in items] == ["support", "relevance", "usefulness"]
    assert all(i.annotator and i.labelled_at and not i.synthetic for i in items)
    assert items[2].fields["question"].startswith("珠穆朗瑪峰")
