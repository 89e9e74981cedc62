"""The report's trust flag is per kind: a judged metric is "not to be trusted" when the
calibration kind of its own verdicts is below the 0.8 agreement target (or the set has no
item of that kind), whatever the overall agreement; intervals, failures, synthetic labels
and a calibration set that is not held out from the sweep are shown."""

from __future__ import annotations

import polars as pl

from ablate.components.judge.agreement import summarize
from ablate.components.metrics.judged import judged_metrics
from ablate.components.report.judge import judge_section, judge_warnings, metric_note


def _made_of(kind):
    """The registered judged metrics made of a kind's verdicts, as report columns."""
    return [f"judge/{j.name}" for j in judged_metrics() if j.calibration == kind]


def _row(kind, label, predicted, qid):
    return {"id": None, "kind": kind, "lang": "en", "label": label, "predicted": predicted,
            "failure": None if predicted is not None else "empty reply", "error": None,
            "qid": qid, "synthetic": True}


def _manifest(overlap=None):
    # support 0.5 (one failure among them), relevance and usefulness perfect: overall 0.83
    rows = ([_row("support", True, True, f"q{i}") for i in range(4)]
            + [_row("support", False, True, f"q{i}") for i in range(3)]
            + [_row("support", False, None, "q3")]
            + [_row(k, b, b, f"q{i}") for k in ("relevance", "usefulness")
               for i in range(4) for b in (True, False)])
    cal = summarize(rows) | {"file": "c.jsonl", "overlap": overlap or {"items": 0}}
    counts = {j.name: {"judged": 5, "undefined": 0, "failed": 0, "error": 0}
              for j in judged_metrics()}
    return {"judge": {"backend": "llama_cpp", "config": {}, "calibration": cal,
                      "prompts": {"version": "v1", "fingerprint": "abc"},
                      "counts": {"baseline": counts}, "self_preference": []}}


def test_flag_follows_the_metrics_own_kind():
    man = _manifest()
    cal = man["judge"]["calibration"]
    assert cal["agreement"] >= 0.8  # overall would have passed
    support, relevance = _made_of("support"), _made_of("relevance")
    assert "judge/faithfulness" in support and relevance
    for metric in support:
        note = metric_note(metric, man)
        assert "support verdicts" in note and "not to be trusted" in note
        assert "1 without a verdict (counted as disagreements)" in note
    for metric in relevance:
        note = metric_note(metric, man)
        assert "relevance verdicts" in note and "not to be trusted" not in note
        assert "[" in note and "synthetic labels" in note  # interval, label provenance
    warnings = " ".join(judge_warnings(man))
    assert f"Judge below calibration target for {', '.join(support)}:" in warnings
    assert not any(m in warnings for m in relevance + _made_of("usefulness"))


def test_a_kind_without_items_is_not_trusted():
    man = _manifest()
    del man["judge"]["calibration"]["by_kind"]["usefulness"]
    [note] = [metric_note(m, man) for m in _made_of("usefulness")]
    assert "no usefulness items" in note and "not to be trusted" in note
    assert "the calibration set has no usefulness items" in " ".join(judge_warnings(man))


def test_section_shows_intervals_languages_and_overlap():
    man = _manifest(overlap={"items": 6, "questions": 1, "ids": ["001-support-true"]})
    pq = pl.DataFrame({"variant": ["baseline"]} | {f"judge/{j.name}": [0.5]
                                                   for j in judged_metrics()})
    text = "\n".join(judge_section(man, pq))
    assert "**Calibration by language** en" in text and "95% intervals" in text
    assert "agreement (not kappa), per kind" in text
    assert "| baseline | judge/faithfulness | 0.500 |" in text and "**not to be trusted** |" in text
    assert "Judge calibration not held out: 6 calibration items (1 questions)" in \
        " ".join(judge_warnings(man))


def test_old_manifests_without_intervals_still_render():
    man = _manifest()
    cal = man["judge"]["calibration"]
    for s in [cal, *cal["by_kind"].values()]:
        for k in ("agreement_ci", "kappa_ci", "no_verdict", "synthetic"):
            s.pop(k, None)
    assert metric_note("judge/faithfulness", man)
    assert judge_section(man, pl.DataFrame({"variant": ["baseline"]}))


def test_a_judged_metric_without_a_verdict_kind_says_it_is_not_calibrated():
    man = _manifest()
    note = metric_note("judge/answer_relevancy", man)  # RAGAS: a cosine, no verdict kind
    assert note is not None and "not calibrated" in note
    assert metric_note("answer/f1", man) is None
