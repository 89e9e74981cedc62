"""The drill-down (components/report/drilldown.py): it lists exactly the questions whose
per-question values differ between the baseline and a variant (none missing, none
invented, ties by rounding and undefined values left out), balances lost and won and
spreads over clusters when there are many, marks the gold span in both contexts, and renders
Chinese as well as English, in report.md and (folded) report.html."""

from __future__ import annotations

import re

import polars as pl

from ablate.components.report.changed_questions import changes, select
from ablate.components.report.drilldown import REPORT_LIMIT, drilldown_section, explain_text
from ablate.components.report.evidence import Evidence, GoldQuestion, Passage
from ablate.components.report.html import render_html

METRIC = "final/recall_at_5"


def _frame(base: dict[str, float], var: dict[str, float], clusters: dict[str, str]) -> pl.DataFrame:
    rows = []
    for name, values in (("baseline", base), ("v=1", var)):
        for qid, x in values.items():
            rows.append({"variant": name, "qid": qid, "cluster": clusters[qid], "bucket": "ok",
                         "answer": f"{name} answer {qid}",
                         "candidates/recall_at_10": 1.0, "reranked/recall_at_5": 1.0,
                         METRIC: x, "answer/f1": 0.5})
    return pl.DataFrame(rows)


def _stats(significant: bool = True) -> pl.DataFrame:
    return pl.DataFrame([{"metric": METRIC, "variant": "v=1", "baseline": "baseline", "n_used": 8,
                          "mean_baseline": 0.5, "mean_variant": 0.4, "delta": -0.1,
                          "significant": significant}])


VARIANTS = [{"name": "baseline", "stage_keys": {"assemble": "kb"}},
            {"name": "v=1", "stage_keys": {"assemble": "kv"}}]


def _summaries(lines: list[str]) -> list[str]:
    return re.findall(r"<summary>\w+ · <code>([^<]+)</code>", "\n".join(lines))


def test_lists_exactly_the_questions_whose_values_differ():
    base = {f"q{i}": 0.5 for i in range(8)}
    var = dict(base)
    var["q1"] = 0.0        # lost
    var["q3"] = 1.0        # won
    var["q5"] = 0.25       # lost
    var["q2"] = 0.5 + 1e-15  # a tie by rounding: not a change
    var["q4"] = float("nan")  # undefined in the variant: not compared
    clusters = {q: f"c{i % 3}" for i, q in enumerate(base)}
    pq = _frame(base, var, clusters)
    found = changes(pq, "v=1", METRIC)
    assert [(c.qid, c.won) for c in found] == [("q1", False), ("q3", True), ("q5", False)]
    lines = drilldown_section(pq, _stats(), VARIANTS, [METRIC], None)
    assert sorted(_summaries(lines)) == ["q1", "q3", "q5"]
    assert any(line.startswith(f"- **{METRIC}**") and "lost 2, won 1 (in 3 clusters); shown 3" in line
               for line in lines), lines
    # a comparison that is not significant is not opened in the report
    assert _summaries(drilldown_section(pq, _stats(False), VARIANTS, [METRIC], None)) == []


def test_many_changes_are_balanced_spread_over_clusters_and_counted():
    qids = [f"q{i:02d}" for i in range(60)]
    base = {q: 0.5 for q in qids}
    # 30 lost (by 0.01 .. 0.30), 10 won, 20 ties; 6 clusters
    var = {q: 0.5 - 0.01 * (i + 1) if i < 30 else (0.9 if i < 40 else 0.5) for i, q in enumerate(qids)}
    clusters = {q: f"c{i % 6}" for i, q in enumerate(qids)}
    pq = _frame(base, var, clusters)
    found = changes(pq, "v=1", METRIC)
    differing = {q for q in qids if var[q] != base[q]}
    assert {c.qid for c in found} == differing
    picked = select(found, REPORT_LIMIT)
    assert len(picked) == REPORT_LIMIT
    assert sum(not c.won for c in picked) == 3 and sum(c.won for c in picked) == 3
    lost = [c for c in picked if not c.won]
    assert len({c.cluster for c in lost}) == 3  # three clusters, not three of one
    assert lost[0].qid == "q29"  # the largest loss first
    lines = drilldown_section(pq, _stats(), VARIANTS, [METRIC], None)
    assert set(_summaries(lines)) == {c.qid for c in picked}
    assert any("lost 30, won 10 (in 6 clusters); shown 6, 34 more in `ablate explain`" in line
               for line in lines), lines
    # explain: one side only, and all of it with a large enough limit
    text = explain_text(pq, _stats(), VARIANTS, "v=1", [METRIC], None, side="lost", limit=100)
    assert sorted(re.findall(r"^LOST (\S+)", text, re.M)) == sorted(c.qid for c in found if not c.won)
    assert "WON " not in text


def _evidence(question: str, doc_text: str, gold: tuple[int, int]) -> Evidence:
    span = Passage("d1", gold[0], gold[1], doc_text[gold[0]:gold[1]])
    q = GoldQuestion("q0", question, (span.text,), ((span,),))
    whole = Passage("d1", 0, len(doc_text), doc_text)
    other = Passage("d2", 0, 6, "别的文字内容")
    return Evidence({"q0": q}, {("kb", "q0"): [whole], ("kv", "q0"): [other]},
                    frozenset({"kb", "kv"}))


def test_chinese_question_renders_with_the_gold_span_marked_in_md_and_folded_html():
    doc = "中国的首都是北京，北京有很多历史建筑。"
    start = doc.index("北京")
    ev = _evidence("中国的首都是哪里？", doc, (start, start + 2))
    pq = _frame({"q0": 1.0}, {"q0": 0.0}, {"q0": "c0"})
    pq = pq.with_columns(pl.when(pl.col("variant") == "v=1").then(0.0).otherwise(1.0)
                         .alias("reranked/recall_at_5"))
    lines = drilldown_section(pq, _stats(), VARIANTS, [METRIC], ev)
    md = "\n".join(lines)
    assert "中国的首都是哪里？" in md
    assert "中国的首都是**北京**，北京有很多历史建筑。" in md  # the gold span, not the other 北京
    assert "diverges at reranked" in md  # candidates equal, reranked differ
    assert "(no gold span) [1] `d1` 别的文字内容" in md.replace("`d2`", "`d1`")
    page = render_html(md, "t")
    assert "<details>" in page and "<summary>lost · <code>q0</code>" in page
    assert "中国的首都是<strong>北京</strong>，北京有很多历史建筑。" in page
    text = explain_text(pq, _stats(), VARIANTS, "v=1", [METRIC], ev)
    assert "中国的首都是[[北京]]，北京有很多历史建筑。" in text and "question: 中国的首都是哪里？" in text


def test_markup_in_texts_stays_text():
    doc = "a *star* and <b>tag</b> and [link](x) with the answer"
    start = doc.index("answer")
    ev = _evidence("what is *this*?", doc, (start, start + 6))
    pq = _frame({"q0": 1.0}, {"q0": 0.0}, {"q0": "c0"})
    page = render_html("\n".join(drilldown_section(pq, _stats(), VARIANTS, [METRIC], ev)), "t")
    assert "<b>tag</b>" not in page and "&lt;b&gt;tag&lt;/b&gt;" in page
    assert "<em>" not in page and 'href="x"' not in page
    assert "<strong>answer</strong>" in page
