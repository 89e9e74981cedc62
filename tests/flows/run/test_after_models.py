"""The sweep's trigger for unloading the models and opening MLflow early (AfterModels):
once, right after the last model-bound stage, while the light stages still run."""

from __future__ import annotations

from types import SimpleNamespace

from ablate.flows.run.stage_progress import AfterModels


def _plan(bound: dict[str, bool]) -> SimpleNamespace:
    return SimpleNamespace(nodes={k: SimpleNamespace(model_bound=b) for k, b in bound.items()})


def test_fires_once_after_the_last_model_bound_stage():
    plan = _plan({"chunk": False, "dense1": True, "dense2": True, "fuse": False, "score": False})
    calls = []
    after = AfterModels(plan, list(plan.nodes), calls.append)
    after.finished("chunk", True)
    after.finished("dense2", False)
    assert calls == []  # dense1 still runs a model
    after.finished("dense1", False)
    assert calls == [True]  # the chunk stage computed: the run will analyse and log
    after.finished("fuse", True)
    after.finished("score", True)
    assert calls == [True]


def test_nothing_computed_by_then_is_said():
    plan = _plan({"dense": True, "score": False})
    calls = []
    after = AfterModels(plan, list(plan.nodes), calls.append)
    after.finished("dense", False)
    assert calls == [False]


def test_no_model_bound_stage_fires_at_once():
    plan = _plan({"chunk": False, "bm25": False})
    calls = []
    AfterModels(plan, list(plan.nodes), calls.append)
    assert calls == [False]
    AfterModels(plan, list(plan.nodes), None)  # no callback: nothing to do
