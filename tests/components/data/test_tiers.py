from collections import Counter

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Question
from ablate.components.data.tiers import frozen_test_qids, select_questions


def _qs(n=1000):
    out = []
    for i in range(n):
        answerable = i % 3 != 0
        typ = ("who", "what", "when", "multi")[i % 4] if answerable else None
        out.append(Question(qid=f"q{i:04d}", question="?", answers=(), answerable=answerable,
                            type=typ))
    return out


def test_deterministic_and_seed_dependent():
    qs = _qs()
    a = select_questions(qs, tier="smoke", split="dev", seed=1)
    b = select_questions(list(reversed(qs)), tier="smoke", split="dev", seed=1)
    assert {q.qid for q in a} == {q.qid for q in b} and len(a) == 50
    c = select_questions(qs, tier="smoke", split="dev", seed=2)
    assert {q.qid for q in a} != {q.qid for q in c}


def test_tiers_are_nested_and_sized():
    qs = _qs()
    smoke = {q.qid for q in select_questions(qs, tier="smoke", split="dev", seed=7)}
    reg = {q.qid for q in select_questions(qs, tier="regression", split="dev", seed=7)}
    full = {q.qid for q in select_questions(qs, tier="full", split="dev", seed=7)}
    assert len(smoke) == 50 and len(reg) == 500 and len(full) == 800
    assert smoke <= reg <= full


def test_test_split_is_disjoint_and_never_in_dev():
    qs = _qs()
    dev = {q.qid for q in select_questions(qs, tier="full", split="dev", seed=3)}
    test = {q.qid for q in select_questions(qs, tier="full", split="test", seed=3)}
    every = {q.qid for q in select_questions(qs, tier="full", split="all", seed=3)}
    assert not dev & test and dev | test == every and len(test) == 200
    assert test == frozen_test_qids(qs, seed=3, test_fraction=0.2)
    for tier in ("smoke", "regression"):
        assert not {q.qid for q in select_questions(qs, tier=tier, split="dev", seed=3)} & test


def test_stratified_by_answerable_and_type():
    qs = _qs()
    base = Counter((q.answerable, q.type) for q in qs)
    for tier, n in (("smoke", 50), ("regression", 500)):
        got = Counter((q.answerable, q.type) for q in select_questions(qs, tier=tier, split="all", seed=5))
        for stratum, count in base.items():
            assert abs(got[stratum] - count * n / len(qs)) <= 1.0, (tier, stratum)


def test_data_given_fields_win():
    qs = _qs(200)
    qs[0] = Question("q0000", "?", (), True, tier="smoke", split="test")
    qs[1] = Question("q0001", "?", (), True, tier="full")
    qs[2] = Question("q0002", "?", (), True, split="dev", tier="regression")
    smoke = {q.qid for q in select_questions(qs, tier="smoke", split="all", seed=0, smoke_size=5)}
    reg = {q.qid for q in select_questions(qs, tier="regression", split="all", seed=0,
                                           smoke_size=5, regression_size=20)}
    assert "q0000" in smoke and len(smoke) == 5
    assert "q0001" not in reg and "q0002" in reg and "q0002" not in smoke
    assert smoke <= reg and len(reg) == 20
    for seed in range(5):
        test = {q.qid for q in select_questions(qs, tier="full", split="test", seed=seed)}
        assert "q0000" in test and "q0002" not in test


def test_bad_arguments():
    with pytest.raises(InputError, match="unknown tier"):
        select_questions(_qs(10), tier="tiny", split="dev", seed=0)
    with pytest.raises(InputError, match="unknown split"):
        select_questions(_qs(10), tier="full", split="train", seed=0)
