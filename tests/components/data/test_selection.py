"""Question selection: split over the whole data set, then an id list, answerable only,
at most N, then the tier; errors name the id file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Question
from ablate.components.data.selection import read_ids, select
from ablate.components.data.tiers import split_pool


def _qs(n=400):
    return [Question(qid=f"q{i:04d}", question="?", answers=("a",) if i % 3 else (),
                     answerable=bool(i % 3), type=("who", "what")[i % 2]) for i in range(n)]


def _ids(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "ids.txt"
    p.write_text(text)
    return p


def _select(qs, **kw):
    args = dict(split="all", split_share=0.2, tier="full", seed=3)
    args.update(kw)
    return select(qs, **args)


def test_ids_file_keeps_listed_questions_in_data_set_order(tmp_path):
    ids = read_ids(_ids(tmp_path, "# my questions\nq0010\n\n  q0002  \nq0007\n"))
    got = _select(_qs(), ids=ids)
    assert [q.qid for q in got.questions] == ["q0002", "q0007", "q0010"]
    assert got.steps == (("data set", 400), ("split all", 400), ("ids_file (3 listed)", 3),
                         ("tier full", 3))


def test_unknown_id_names_the_file_and_line_with_a_suggestion(tmp_path):
    ids = read_ids(_ids(tmp_path, "q0001\n\nq00002\n"))
    with pytest.raises(InputError) as info:
        _select(_qs(), ids=ids)
    err = info.value
    assert (err.path, err.line) == (str(tmp_path / "ids.txt"), 3)
    assert "question id 'q00002' is not in the data set" in err.message and "did you mean" in err.message


def test_repeated_id_and_empty_file_are_errors(tmp_path):
    with pytest.raises(InputError) as info:
        read_ids(_ids(tmp_path, "q1\nq2\nq1\n"))
    assert info.value.line == 3 and "first on line 1" in info.value.message
    with pytest.raises(InputError) as info:
        read_ids(_ids(tmp_path, "# nothing\n\n"))
    assert "no question ids" in info.value.message


def test_answerable_only():
    got = _select(_qs(), answerable_only=True)
    assert got.questions and all(q.answerable for q in got.questions)
    assert len(got.questions) == sum(q.answerable for q in _qs())


def test_max_is_a_seeded_stratified_sample():
    a = _select(_qs(), max_questions=90)
    b = _select(list(reversed(_qs())), max_questions=90)
    assert len(a.questions) == 90 and {q.qid for q in a.questions} == {q.qid for q in b.questions}
    assert sum(q.answerable for q in a.questions) == 60  # two thirds, as in the data
    assert _select(_qs(), max_questions=90, seed=4).questions != a.questions
    assert len(_select(_qs(), max_questions=1000).questions) == 400


def test_tier_is_drawn_within_the_selection(tmp_path):
    ids = read_ids(_ids(tmp_path, "\n".join(f"q{i:04d}" for i in range(0, 400, 2))))
    got = _select(_qs(), ids=ids, tier="smoke", smoke_size=20)
    assert len(got.questions) == 20 and all(int(q.qid[1:]) % 2 == 0 for q in got.questions)


def test_split_is_drawn_over_the_whole_data_set(tmp_path):
    """Whether a question is held back does not depend on the id list."""
    qs = _qs()
    held = {q.qid for q in split_pool(qs, split="test", seed=3, test_fraction=0.2)}
    ids = read_ids(_ids(tmp_path, "\n".join(q.qid for q in qs[:100])))
    dev = _select(qs, split="dev", ids=ids)
    assert {q.qid for q in dev.questions} == {q.qid for q in qs[:100]} - held
    test = _select(qs, split="test", ids=ids)
    assert {q.qid for q in test.questions} == {q.qid for q in qs[:100]} & held


def test_split_share_sets_the_held_back_share():
    qs = _qs()
    assert len(_select(qs, split="test", split_share=0.2).questions) == 80
    assert len(_select(qs, split="test", split_share=0.5).questions) == 200
    assert len(_select(qs, split="dev", split_share=0.0).questions) == 400
