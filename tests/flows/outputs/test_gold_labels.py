"""`ablate judge gold-labels`: gold verdicts of judge/context_recall from the data's spans
for a seeded share of the sweep's clusters (flows/outputs/gold_labels.py)."""

from __future__ import annotations

import json

from tests.specs import FAST_STATS, experiment, pipeline, vary

SPEC = experiment("gold", tier="full", split="all", seed=3, stats=FAST_STATS,
                  baseline=pipeline(context={"budget": 40}),
                  sweeps=[vary("context.budget", 200)])


def test_gold_verdicts_follow_the_spans(sweep, tmp_path):
    from ablate.components.data.clusters import question_cluster
    from ablate.components.judge.labels import read_labels
    from ablate.flows.outputs.gold_labels import gold_labels
    ctx, folder, _ = sweep
    n = gold_labels(folder, tmp_path / "labels.jsonl", share=0.5, seed=1)
    labels = read_labels(tmp_path / "labels.jsonl", known_qids={q.qid for q in ctx.questions},
                         metrics=["judge/context_recall"])
    assert labels.height == n > 0
    by_qid = {q.qid: q for q in ctx.questions}
    clusters = {question_cluster(by_qid[q]) for q in labels["qid"]}
    every = {question_cluster(q) for q in ctx.questions if q.evidence}
    assert 0 < len(clusters) < len(every)  # a share of the clusters, not all
    # the larger budget holds at least the evidence the smaller one does, and more somewhere
    small = dict(zip(*labels.filter(labels["variant"] == "baseline")
                     .select("qid", "label").to_dict(as_series=False).values()))
    large = dict(zip(*labels.filter(labels["variant"] == "context.budget=200")
                     .select("qid", "label").to_dict(as_series=False).values()))
    assert small.keys() == large.keys()
    assert all(large[q] >= small[q] for q in small) and sum(large.values()) > sum(small.values())
    # each verdict is the spans' containment in the stored context
    keys = ctx.plan.by_variant["baseline"]
    frame = ctx.store.read("assemble", keys["assemble"])
    passages = dict(zip(frame["qid"], frame["passages"]))
    for qid, label in small.items():
        inside = [any(d == s.doc_id and a <= s.start and s.end <= b
                      for d, a, b in json.loads(passages[qid]))
                  for g in by_qid[qid].evidence for s in g]
        assert (label == 1.0) == any(inside), qid
    again = gold_labels(folder, tmp_path / "again.jsonl", share=0.5, seed=1)
    assert again == n and (tmp_path / "again.jsonl").read_text() == (tmp_path / "labels.jsonl").read_text()


def test_cli_writes_the_file_and_refuses_a_bad_share(sweep, tmp_path, run_cli, capsys):
    _, folder, _ = sweep
    assert run_cli("judge", "gold-labels", str(folder), "--out", str(tmp_path / "l.jsonl")) == 0
    assert "gold labels of judge/context_recall written" in capsys.readouterr().out
    assert (tmp_path / "l.jsonl").read_text().count("\n") > 0
    assert run_cli("judge", "gold-labels", str(folder), "--out", str(tmp_path / "m.jsonl"),
                   "--share", "0") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--share" in err and not (tmp_path / "m.jsonl").exists()
