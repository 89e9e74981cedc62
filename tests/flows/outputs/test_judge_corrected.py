"""Judge-corrected estimates in a sweep (`judge.labels`): stats.parquet gains `ppi/<judged
metric>` rows in the experiment's correction, and the report and the analysis keep
working. The judge is the rule-based fake; the closed-book generator is faked (issue 29,
item 1)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.components.judge.fakes import rule_script
from tests.conftest import FIXTURES
from tests.flows.direct import run_judged
from tests.specs import FAST_STATS, experiment, judged_pipeline, vary

SPEC = experiment("judged-corrected", tier="full", split="all", seed=1, stats=FAST_STATS,
                  judge={"metrics": ["addresses_question"], "labels": "labels.jsonl"},
                  baseline=judged_pipeline(), sweeps=[vary("generator.name", "closed_book")])


def _fake_model(self, question, context, system, user):
    from ablate.components.contract.records import Answer
    if question.answers and sum(map(ord, question.qid)) % 2:
        return Answer(question.answers[0], refused=False, tokens_in=len(user))
    return Answer("Something else entirely", refused=False, tokens_in=len(user))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    from ablate.components.data import load_dataset
    from ablate.flows.outputs.write import write_outputs
    tmp = tmp_path_factory.mktemp("judged-corrected")
    (tmp / "exp.yaml").write_text(SPEC)
    ds = load_dataset(FIXTURES / "squad_tiny.json", format="squad")
    answered = [q for q in ds.questions if q.answerable]
    # gold verdicts on every other answerable question, for both variants' answers: the
    # baseline's (extractive) answers labelled relevant, closed book's by its fake rule
    lines = []
    for i, q in enumerate(answered):
        if i % 2:
            continue
        knows = bool(sum(map(ord, q.qid)) % 2)
        lines += [{"qid": q.qid, "metric": "judge/addresses_question", "variant": "baseline",
                   "label": "yes", "annotator": "test"},
                  {"qid": q.qid, "metric": "judge/addresses_question",
                   "variant": "generator.name=closed_book", "label": "yes" if knows else "no"}]
    (tmp / "labels.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    ctx, _ = run_judged(tmp / "exp.yaml", tmp / "cache", rule_script, _fake_model)
    out = write_outputs(ctx, tmp / "runs", ctx.started, dict(ctx.counters))
    return tmp, ctx, out, len(lines) // 2


def test_corrected_rows_in_stats(sweep):
    _, _, out, labelled = sweep
    stats = pl.read_parquet(out / "stats.parquet")
    rows = stats.filter(pl.col("metric") == "ppi/judge/addresses_question")
    assert rows["variant"].to_list() == ["generator.name=closed_book"]
    r = rows.row(0, named=True)
    assert r["raw_metric"] == "judge/addresses_question"
    # labels on answers the judge left undefined are counted, not used
    assert r["n_labelled"] + r["labels_unused"] == labelled and r["n_labelled"] > 5
    assert r["family_size"] == 1 and r["correction"] == "holm"  # its own metric's family
    assert r["ci_low"] <= r["delta"] <= r["ci_high"]
    raw = stats.filter((pl.col("metric") == "judge/addresses_question")).row(0, named=True)
    assert r["raw_delta"] == pytest.approx(raw["delta"], abs=1e-9)
    man = json.loads((out / "manifest.json").read_text())
    assert not man.get("incomplete"), man.get("incomplete")


def test_report_shows_judged_and_corrected_side_by_side(sweep):
    _, _, out, _ = sweep
    report = (out / "report.md").read_text()
    section = report.split("### Judge-corrected estimates", 1)[1].split("\n## ", 1)[0]
    row = next(x for x in section.splitlines() if x.startswith("| generator.name=closed_book"))
    stats = pl.read_parquet(out / "stats.parquet")
    r = stats.filter(pl.col("metric") == "ppi/judge/addresses_question").row(0, named=True)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "judge/addresses_question"
    assert cells[4] == f"{r['raw_delta']:+.3f}" and cells[5].startswith(f"{r['delta']:+.3f}")
    assert cells[8] == f"{r['n_labelled']} / {r['clusters_labelled']}"
    # the ppi metric's own table (in the appendix: not a key metric) shows the corrected
    # means, not "–"
    appendix = (out / "report-appendix.md").read_text()
    own = appendix.split("## ppi/judge/addresses_question", 1)[1]
    base = next(x for x in own.splitlines() if x.startswith("| baseline |"))
    assert f"{r['mean_baseline']:.3f}" in base


def test_bad_labels_are_one_line_at_check_time(sweep, tmp_path):
    from ablate.components.contract.errors import InputError
    from ablate.flows.run.context import RunOptions, build_context
    tmp, *_ = sweep
    spec = tmp_path / "exp.yaml"
    spec.write_text((tmp / "exp.yaml").read_text())
    (tmp_path / "labels.jsonl").write_text('{"qid": "nope", "metric": "judge/addresses_question", '
                                           '"variant": "baseline", "label": 1}\n')
    with pytest.raises(InputError) as err:
        build_context(str(spec), RunOptions(cache_dir=str(tmp_path / "cache")))
    line = err.value.one_line()
    assert "labels.jsonl" in line and ":1" in line and "nope" in line and "\n" not in line


def test_planner_says_how_many_labels_a_half_width_needs(sweep, run_cli, capsys):
    import re
    tmp, _, out, _ = sweep
    args = ["judge", "plan-labels", str(out), "--labels", str(tmp / "labels.jsonl")]
    needed = {}
    for hw in ("0.6", "0.45"):
        assert run_cli(*args, "--half-width", hw) == 0
        line = capsys.readouterr().out.strip()
        assert line.startswith("generator.name=closed_book judge/addresses_question: ~"), line
        assert "at 95.0% (the holm planning level of 1 comparisons" in line
        needed[hw] = int(re.search(r"~(\d+) labelled", line).group(1))
    assert 0 < needed["0.6"] < needed["0.45"]  # a narrower interval needs more labels
    assert run_cli(*args, "--half-width", "0.05") == 0  # on 50 questions, not reachable
    assert "not reachable (even labelling all" in capsys.readouterr().out
    assert run_cli(*args, "--half-width", "0") == 2


def test_the_stats_hint_says_ablate_stats_leaves_out_the_corrected_rows(sweep):
    import polars as pl

    from ablate.flows.outputs.analysis import stats_hint
    _, ctx, out, _ = sweep
    hint = stats_hint(ctx, out, pl.read_parquet(out / "per_query.parquet"))
    assert "without the judge-corrected ppi/ rows" in hint and "ablate run" in hint
