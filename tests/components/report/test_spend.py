"""The report's spend table (components/report/spend.py): per variant, what serving a
question costs stage by stage and, beside it, what judging it costs, and the run's sums;
nothing when nothing was priced."""

from __future__ import annotations

import math

import polars as pl

from ablate.components.report.spend import spend_lines, spend_section, spend_table

NAN = math.nan


def _pq(judge=True):
    cols = {"variant": ["baseline", "baseline", "b"], "qid": ["1", "2", "1"],
            "cost/embed": [0.001, 0.001, 0.0], "cost/search": [0.01, 0.01, 0.0],
            "cost/rerank": [0.0, 0.0, 0.0], "cost/generate": [0.1, 0.3, 0.2],
            "cost/total": [0.111, 0.311, 0.2]}
    if judge:
        cols["cost/judge"] = [1.0, 3.0, NAN]
    return pl.DataFrame(cols)


def test_means_per_question_and_sums_per_run_judge_beside_serving():
    t = spend_table(_pq(), ["baseline", "b"])
    assert t["baseline"]["cost/total"] == (0.211, 0.422)  # (mean per question, run sum)
    assert t["baseline"]["cost/judge"] == (2.0, 4.0)
    assert math.isnan(t["b"]["cost/judge"][0])  # not judged: unknown, not free
    md = "\n".join(spend_section(_pq(), ["baseline", "b"]))
    assert "| variant |" in md and "judge" in md and "0.211" in md
    text = spend_lines(_pq(), ["baseline", "b"])
    line = next(x for x in text if x.startswith("baseline"))
    assert "serving 0.211/question" in line and "judge 2/question" in line


def test_nothing_priced_says_nothing():
    zero = _pq().with_columns([pl.lit(0.0).alias(c) for c in _pq().columns if c.startswith("cost/")])
    assert spend_section(zero, ["baseline", "b"]) == [] and spend_lines(zero, ["b"]) == []
    assert spend_section(_pq().drop([c for c in _pq().columns if c.startswith("cost/")]), ["b"]) == []


def test_without_a_judge_no_judge_column():
    md = "\n".join(spend_section(_pq(judge=False), ["baseline", "b"]))
    assert "judge" not in md.split("\n\n")[-1].splitlines()[0]
