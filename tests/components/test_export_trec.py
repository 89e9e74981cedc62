"""Our retrieval metrics against ranx, an independent implementation, via TREC files."""

import random

import pytest
from ranx import Qrels, Run, evaluate

from components.export_trec import write_trec_qrels, write_trec_run
from components.metrics.retrieval import retrieval_metrics

KS = (1, 3, 5, 10)


def _random_case(rng: random.Random, n_queries: int, graded: bool):
    runs, labels = {}, {}
    for qi in range(n_queries):
        pool = [f"d{qi}:{j}-{j + 1}" for j in range(30)]
        n_ret = rng.randint(1, 15)  # sometimes fewer than K come back
        ranked = rng.sample(pool, n_ret)
        scores = sorted(rng.sample(range(1, 10_000), n_ret), reverse=True)
        runs[f"q{qi}"] = [(c, s / 100) for c, s in zip(ranked, scores)]
        relevant = rng.sample(pool, rng.randint(1, 6))
        # one group per relevant chunk, so recall over groups = recall over relevant chunks;
        # a below-threshold label is added too, which must be ignored by both sides
        groups = [{c: float(rng.randint(1, 3)) if graded else 1.0} for c in relevant]
        groups[0][rng.choice([c for c in pool if c not in relevant])] = 0.25
        labels[f"q{qi}"] = tuple(groups)
    return runs, labels


@pytest.mark.parametrize("seed,graded", [(0, False), (1, False), (2, True), (3, True)])
def test_metrics_match_ranx_on_randomised_runs(tmp_path, seed, graded):
    rng = random.Random(seed)
    runs, labels = _random_case(rng, 40, graded)
    run_path = write_trec_run(tmp_path / "run.trec", runs)
    qrels_path = write_trec_qrels(tmp_path / "qrels.trec", labels, threshold=0.5,
                                  grade_scale=1 if graded else None)
    qrels, run = Qrels.from_file(str(qrels_path)), Run.from_file(str(run_path))
    names = [f"{m}@{k}" for k in KS for m in ("precision", "recall", "mrr", "ndcg")]
    theirs = evaluate(qrels, run, names, make_comparable=True, return_mean=False)
    for i, qid in enumerate(sorted(runs)):
        ours = retrieval_metrics([c for c, _ in runs[qid]], labels[qid], KS, threshold=0.5)
        for k in KS:
            for m in ("precision", "recall", "mrr", "ndcg"):
                assert ours[f"{m}_at_{k}"] == pytest.approx(float(theirs[f"{m}@{k}"][i]),
                                                            abs=1e-9), (qid, m, k)


def test_exponential_gain_matches_ranx_burges(tmp_path):
    runs, labels = _random_case(random.Random(9), 30, graded=True)
    write_trec_run(tmp_path / "run.trec", runs)
    write_trec_qrels(tmp_path / "qrels.trec", labels, threshold=0.5, grade_scale=1)
    qrels, run = Qrels.from_file(str(tmp_path / "qrels.trec")), Run.from_file(str(tmp_path / "run.trec"))
    theirs = evaluate(qrels, run, ["ndcg_burges@5"], make_comparable=True, return_mean=False)
    for i, qid in enumerate(sorted(runs)):
        ours = retrieval_metrics([c for c, _ in runs[qid]], labels[qid], [5], 0.5, "exponential")
        assert ours["ndcg_at_5"] == pytest.approx(float(theirs[i]), abs=1e-9)


def test_file_formats(tmp_path):
    write_trec_run(tmp_path / "r", {"q2": [("b", 2.0)], "q1": [("a", 3.5), ("c", 1.0)]}, tag="t")
    assert (tmp_path / "r").read_text().splitlines() == [
        "q1 Q0 a 1 3.5 t", "q1 Q0 c 2 1 t", "q2 Q0 b 1 2 t"]
    write_trec_qrels(tmp_path / "q", {"q1": ({"b": 0.6, "a": 0.2}, {"b": 0.9, "c": 1.0}),
                                      "q0": ()}, threshold=0.5, grade_scale=10)
    assert (tmp_path / "q").read_text().splitlines() == ["q1 0 b 9", "q1 0 c 10"]
    with pytest.raises(ValueError, match="whitespace"):
        write_trec_run(tmp_path / "x", {"q 1": [("a", 1.0)]})
