"""Answer findings: with references much longer than answers the findings read the
length-robust answer/content_f1 (closed book "better" on F1 is not a finding) and warn;
a variant that answers most unanswerable questions gets a finding."""

from __future__ import annotations

import math

import polars as pl

from ablate.components.report.findings import findings


def _row(variant: str, metric: str, delta: float, significant: bool) -> dict:
    return {"variant": variant, "metric": metric, "delta": delta, "ci_low": delta - 0.05,
            "ci_high": delta + 0.05, "p_adjusted": 0.002 if significant else 0.6,
            "significant": significant, "n_used": 300, "mde": 0.05, "wins": 80, "losses": 40,
            "missingness_flag": False}


# closed book "wins" on token F1 (it restates the question), loses on content F1
STATS = pl.DataFrame([_row("closed_book", "answer/f1", 0.113, True),
                      _row("closed_book", "answer/em", 0.0, False),
                      _row("closed_book", "answer/content_f1", -0.09, True)])
KEY = ["answer/f1", "answer/em"]
LONG = {"answer_lengths": {"ratio_threshold": 3.0, "long_references": ["baseline", "closed_book"],
                           "variants": {"baseline": {"answer_median": 4.0, "reference_median": 48.0},
                                        "closed_book": {"answer_median": 12.0,
                                                        "reference_median": 48.0}}}}


def test_long_references_make_the_findings_read_content_f1_and_warn():
    lines = findings(STATS, KEY, manifest=LONG)
    assert not any("raises (better) answer/f1" in x for x in lines)
    assert any(x.startswith("**closed_book** lowers (worse) answer/content_f1") for x in lines)
    (warn,) = [x for x in lines if x.startswith("Long references")]
    assert "baseline (answers 4, references 48)" in warn and "instead of answer/f1, answer/em" in warn


def test_short_references_keep_the_key_metrics():
    short = {"answer_lengths": {"ratio_threshold": 3.0, "long_references": [],
                                "variants": {"baseline": {"answer_median": 3.0,
                                                          "reference_median": 3.0}}}}
    lines = findings(STATS, KEY, manifest=short)
    assert any(x.startswith("**closed_book** raises (better) answer/f1") for x in lines)
    assert not any(x.startswith("Long references") for x in lines)


def _per_query(accepted: int, n: int = 10) -> pl.DataFrame:
    rows = []
    for name, acc in (("baseline", accepted), ("generator.threshold=0.9", 2)):
        for i in range(n):
            rows.append({"variant": name, "qid": f"u{i}", "answerable": False,
                         "refusal/false_acceptance": float(i < acc)})
        rows.append({"variant": name, "qid": "a0", "answerable": True,
                     "refusal/false_acceptance": math.nan})
    return pl.DataFrame(rows)


def test_a_variant_answering_most_unanswerable_questions_gets_a_finding():
    lines = findings(STATS, KEY, per_query=_per_query(9))
    hits = [x for x in lines if "unanswerable questions" in x and "should refuse" in x]
    assert hits == [next(x for x in hits if x.startswith("**baseline** answers 9 of 10 "))]
    assert "generator.threshold" in hits[0]
    assert not any("should refuse" in x for x in findings(STATS, KEY, per_query=_per_query(4)))
