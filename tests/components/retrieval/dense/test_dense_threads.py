"""The torch dense backend's threads follow the cores the machine leaves idle
(components/runtime/threads.py): on a busy machine, threads beyond the idle cores wait on
each other at every operation. The count never changes what a ranking selects."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from ablate.components.retrieval.dense.encoder import DenseEncoder, DenseIndex
from ablate.components.runtime import threads
from ablate.components.runtime.models import minilm_path
from tests.components.retrieval.retrieval_helpers import TEXTS
from tests.cpu_fakes import others_use

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def two_threads(monkeypatch):
    """torch at 2 threads on a 2-core machine, whatever this machine is; restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.delenv(threads.ENV, raising=False)
    yield
    torch.set_num_threads(before)


class Recording:
    """A runtime that records the torch threads each encode call ran with."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def encode(self, texts, batch_size=16, **_):  # type: ignore[no-untyped-def]
        self.threads.append(torch.get_num_threads())
        return np.eye(len(texts), 4, dtype=np.float32)

    def get_embedding_dimension(self) -> int:
        return 4


def _encoder(backend: str = "torch") -> tuple[DenseEncoder, Recording]:
    enc = DenseEncoder(minilm_path(), None, backend=backend)
    enc._model = runtime = Recording()
    return enc, runtime


def test_busy_machine_encodes_on_the_idle_core_and_restores(two_threads, monkeypatch):
    others_use(monkeypatch, 1.8)  # 2 cores, another process on most of both
    enc, runtime = _encoder()
    enc.progress_slice = 2  # three calls: the rule is applied before each
    enc.encode(["a", "b", "c", "d", "e"])
    assert runtime.threads == [1, 1, 1]
    assert torch.get_num_threads() == 2  # torch's setting as it was


def test_quiet_machine_keeps_every_thread(two_threads, monkeypatch):
    others_use(monkeypatch, 0.3)
    enc, runtime = _encoder()
    enc.encode(["a", "b"])
    assert runtime.threads == [2]


def test_the_environment_fixes_the_count(two_threads, monkeypatch):
    others_use(monkeypatch, 0.0)
    monkeypatch.setenv(threads.ENV, "1")
    enc, runtime = _encoder()
    enc.encode(["a"])
    assert runtime.threads == [1]


def test_other_backends_leave_torch_alone(two_threads, monkeypatch):
    others_use(monkeypatch, 1.8)
    enc, runtime = _encoder("onnx")
    enc.encode(["a"])
    assert runtime.threads == [2]


@pytest.mark.parametrize("load,running,idle", [(0.0, 0, 2), (1.0, 0, 1), (2.4, 2, 2),
                                               (3.0, 2, 1), (9.0, 1, 1), (1.4, 0, 1)])
def test_idle_cores(monkeypatch, load, running, idle):
    monkeypatch.delenv(threads.ENV, raising=False)
    assert threads.idle_cores(cores=2, load=load, running=running) == idle
    assert threads.idle_cores(most=1, cores=2, load=0.0) == 1  # never above torch's setting


def test_thread_count_does_not_change_rankings(two_threads, monkeypatch):
    """Real MiniLM on 1 and on 2 threads: the rankings of every text against every other
    are the same (the count may change a last bit of a vector, not what ranks first)."""
    got = {}
    for n in ("1", "2"):
        monkeypatch.setenv(threads.ENV, n)
        enc = DenseEncoder(minilm_path(), None)
        got[n] = enc.encode(TEXTS)
    ids = [f"t{i:03d}" for i in range(len(TEXTS))]
    rank = {n: [[c for c, _ in r] for r in DenseIndex(ids, v).search(v, len(ids))]
            for n, v in got.items()}
    # the same order, but where two texts score within float32 noise of each other (the
    # summation order of another BLAS or CPU may swap such a tie; none here has one)
    score = got["1"] @ got["1"].T
    for q, (one, two) in enumerate(zip(rank["1"], rank["2"])):
        for a, b in zip(one, two):
            assert a == b or abs(score[q, ids.index(a)] - score[q, ids.index(b)]) < 1e-6, (q, one, two)
    assert np.abs(got["1"] - got["2"]).max() < 1e-5
