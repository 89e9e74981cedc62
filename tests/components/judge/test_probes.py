"""Probe cases: built from the sweep's questions first, then from the rest of the data set."""

from __future__ import annotations

from ablate.components.data import load_dataset
from ablate.components.judge.calibset import anchors_of
from ablate.components.judge.probes import probe_cases
from tests.conftest import FIXTURES


def _ds():
    return load_dataset(FIXTURES / "squad_tiny.json", format="squad")


def test_sweep_questions_come_first():
    ds = _ds()
    anchors, _ = anchors_of(ds)
    cases = probe_cases(ds, ds.questions, 3, seed=5)
    assert len(cases) == 3 and all(c["qid"] in anchors for c in cases)
    picked = [q for q in ds.questions if q.qid == cases[0]["qid"]]
    assert probe_cases(ds, picked, 1, seed=5)[0]["qid"] == cases[0]["qid"]


def test_a_small_sample_still_gives_cases():
    """A smoke sample of unanswerable questions has no anchor of its own: the probe builds
    its cases from the data set's other questions rather than probing nothing."""
    ds = _ds()
    unanswerable = [q for q in ds.questions if not q.answerable][:4]
    assert unanswerable
    cases = probe_cases(ds, unanswerable, 2, seed=5)
    assert len(cases) == 2
    assert len({c["qid"] for c in cases}) == 2
