"""Our retrieval metrics against ranx, an independent implementation, via TREC files."""

import math
import random

import pytest
from ranx import Qrels, Run, evaluate

from ablate.components.export.export_trec import write_trec_qrels, write_trec_run
from ablate.components.metrics.retrieval import retrieval_metrics

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
                                  grades=1 if graded else "binary")
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
    write_trec_qrels(tmp_path / "qrels.trec", labels, threshold=0.5, grades=1)
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
                                      "q0": ()}, threshold=0.5, grades=10)
    assert (tmp_path / "q").read_text().splitlines() == ["q1 0 b 9", "q1 0 c 10"]
    write_trec_qrels(tmp_path / "e", {"q1": ({"b": 0.6, "a": 0.2}, {"b": 0.9, "c": 1.0})},
                     threshold=0.5, grades="exact")
    assert (tmp_path / "e").read_text().splitlines() == ["q1 0 b 9", "q1 0 c 10"]
    with pytest.raises(ValueError, match="whitespace"):
        write_trec_run(tmp_path / "x", {"q1": [("a", 1.0)]}, tag="a b")


def test_unsafe_ids_are_percent_encoded_reversibly(tmp_path):
    from urllib.parse import unquote

    from ablate.components.export.export_trec import encode_id, write_id_map
    ids = ["Time off for family and dependants:0-688", "tab\there", "100%", "a~b#c",
           "Zürich:1-2", "line\nbreak", "safe-id_1.2:3/4+=@,"]
    id_map: dict[str, str] = {}
    encoded = [encode_id(i, id_map) for i in ids]
    assert encoded[0] == "Time%20off%20for%20family%20and%20dependants:0-688"
    assert encoded[-1] == ids[-1] and ids[-1] not in id_map.values()  # safe ids unchanged
    for e, i in zip(encoded, ids):
        assert unquote(e) == i and not any(ch.isspace() for ch in e)
    assert len(set(encoded)) == len(ids)
    write_trec_run(tmp_path / "r", {ids[0]: [(ids[1], 2.0), (ids[3], 1.0)]}, id_map=id_map)
    assert (tmp_path / "r").read_text().split() == [encoded[0], "Q0", encoded[1], "1", "2",
                                                    "ablate", encoded[0], "Q0", encoded[3],
                                                    "2", "1", "ablate"]
    write_id_map(tmp_path / "m.tsv", id_map)
    lines = (tmp_path / "m.tsv").read_text().splitlines()
    assert lines[0] == "encoded\toriginal" and len(lines) == 1 + len(id_map) == 1 + 6
    assert "tab%09here\ttab\\there" in lines and "line%0Abreak\tline\\nbreak" in lines
    with pytest.raises(ValueError):
        encode_id("")


def test_exact_grades_are_the_labels_times_one_scale_per_question():
    from fractions import Fraction

    from ablate.components.export.export_trec import exact_integer_grades
    rng = random.Random(4)
    for _ in range(200):
        lengths = [rng.randint(1, 200) for _ in range(rng.randint(1, 3))]
        labels = {f"c{i}": rng.randint(1, n) / n * rng.choice([1.0, 2.0, 3.0])
                  for i, n in enumerate(lengths)}
        ints, scale = exact_integer_grades(labels)
        for c, v in labels.items():
            assert ints[c] == pytest.approx(v * scale, rel=1e-12) and ints[c] >= 1
        assert math.gcd(*ints.values()) == 1
    assert exact_integer_grades({"a": 1.0, "b": 1.0}) == ({"a": 1, "b": 1}, Fraction(1))
    assert exact_integer_grades({"a": 2 / 3, "b": 0.5}) == ({"a": 4, "b": 3}, Fraction(6))
    # no integer scale below 2^31 (co-prime denominators): None, and the writer falls back
    # to label / max label x 1e6, rounded, and says so (scale None)
    awkward = {f"c{p}": (p - 1) / p for p in (9973, 9967, 9949)}
    assert exact_integer_grades(awkward) is None
    from ablate.components.export.export_trec import qrels_grades
    ints, scale = qrels_grades([awkward], 0.0, "exact")
    assert scale is None and max(ints.values()) == 10**6


@pytest.mark.parametrize("seed", [0, 1])
def test_ablate_metrics_on_the_exported_integers_are_unchanged(seed):
    """Hit, precision, MRR and linear NDCG from the integer qrels (one group, any positive
    grade relevant) equal ablate's from the span labels: the export loses nothing."""
    from ablate.components.export.export_trec import qrels_grades
    rng = random.Random(seed)
    for _ in range(100):
        pool = [f"c{j}" for j in range(25)]
        groups = [{c: rng.randint(1, n) / n for c in rng.sample(pool, rng.randint(1, 5))}
                  for n in (rng.randint(2, 60) for _ in range(rng.randint(1, 3)))]
        ranked = rng.sample(pool, rng.randint(1, 20))
        ints, _ = qrels_grades(groups, 0.5, "exact")
        ours = retrieval_metrics(ranked, groups, KS, threshold=0.5)
        again = retrieval_metrics(ranked, [ints] if ints else [{}], KS, threshold=1)
        for k in KS:
            for m in ("hit", "precision", "mrr", "ndcg"):
                assert again[f"{m}_at_{k}"] == pytest.approx(ours[f"{m}_at_{k}"], abs=1e-12)
