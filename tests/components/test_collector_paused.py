"""Python's cyclic garbage collector paused while the report is built
(ablate.components.runtime.memory.collector_paused): off meanwhile, on again after, the
cyclic garbage collected once."""

from __future__ import annotations

import gc
import weakref

import pytest

from ablate.components.report import build
from ablate.components.report.sweep_data import load_sweep
from ablate.components.runtime.memory import collector_paused
from tests.components.report.synthetic import make_sweep


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_paused_in_the_block_then_on_with_the_cycles_collected():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        left = weakref.ref(_Cycle())  # cyclic garbage: only the collector frees it
        assert left() is not None
    assert gc.isenabled() and left() is None


def test_on_again_when_the_block_raises_and_left_off_when_it_was_off():
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("a plot failed")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_report_is_built_with_the_collector_paused(tmp_path, monkeypatch):
    states: list[tuple[str, bool]] = []
    for name in ("all_plots", "render_html"):
        def spy(*args, _name=name, _real=getattr(build, name), **kwargs):
            states.append((_name, gc.isenabled()))
            return _real(*args, **kwargs)
        monkeypatch.setattr(build, name, spy)
    files = build.build_report(load_sweep(make_sweep(tmp_path / "sweep")))
    assert states == [("all_plots", False), ("render_html", False), ("render_html", False)]
    assert gc.isenabled() and "plots/cost.svg" in files


def test_the_figures_are_not_pyplot_s_so_closing_them_collects_nothing(tmp_path, monkeypatch):
    """pyplot's close runs gc.collect(1) for every figure, paused collector or not."""
    import matplotlib.pyplot as plt
    calls: list[tuple] = []
    real = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or real(*a))
    res = load_sweep(make_sweep(tmp_path / "sweep"))
    before = plt.get_fignums()
    build.build_report(res)
    assert calls == [(0,)] and plt.get_fignums() == before
