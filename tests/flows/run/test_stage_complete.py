"""When a stage's result is stored complete (ablate.flows.run.stages._complete): its inputs were
stored complete. Another process rewriting an input at that moment (two sweeps sharing a
cache: its data is replaced before its checksum) does not make the result incomplete."""

from __future__ import annotations

from types import SimpleNamespace

import polars as pl

from ablate.flows.run.stages import _complete
from ablate.flows.run.store import Store


def _ctx(tmp_path):
    store = Store(tmp_path)
    plan = SimpleNamespace(nodes={"dep": SimpleNamespace(stage="assemble")})
    return SimpleNamespace(store=store, plan=plan), SimpleNamespace(deps=("dep",))


def _frame(x: float) -> pl.DataFrame:
    return pl.DataFrame({"qid": ["a", "b"], "latency": [x, x]})


def test_complete_inputs_make_a_complete_result(tmp_path):
    ctx, node = _ctx(tmp_path)
    assert not _complete(ctx, node, _frame(1.0))  # the input is not stored at all
    ctx.store.write("assemble", "dep", _frame(1.0))
    assert _complete(ctx, node, _frame(1.0))


def test_input_rewritten_by_another_process_meanwhile(tmp_path):
    ctx, node = _ctx(tmp_path)
    path = ctx.store.write("assemble", "dep", _frame(1.0))
    other = tmp_path / "other.parquet"
    _frame(2.0).write_parquet(other, statistics=False)  # the other sweep's own latencies
    other.replace(path)  # its data is in place, its checksum not yet
    assert _complete(ctx, node, _frame(1.0))


def test_incomplete_input_makes_an_incomplete_result(tmp_path):
    ctx, node = _ctx(tmp_path)
    ctx.store.write("assemble", "dep", _frame(1.0), complete=False)
    assert not _complete(ctx, node, _frame(1.0))
    assert not _complete(ctx, node, pl.DataFrame({"qid": ["a"], "error": ["timeout"]}))
