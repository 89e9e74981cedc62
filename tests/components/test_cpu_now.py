"""The thread rule reads what other processes use now (components/runtime/cpu_now.py),
not the 1-minute load average: their CPU time over the window since the last decision,
or over a short probe when there was none lately."""

from __future__ import annotations

import logging
import time

import pytest

from ablate.components.runtime import cpu_now, threads
from tests.cpu_fakes import others_use

STAT = """cpu  900 0 300 5000 100 0 0 0 0 0
cpu0 400 0 100 2500 50 10 5 5 0 0
cpu1 500 0 200 2500 50 0 0 0 0 0
intr 12345
procs_running 3
"""


def test_proc_stat_busy_counts_user_nice_system_irq_softirq_steal_of_the_allowed_cores():
    assert cpu_now.read_proc_stat(STAT, None, 100.0) == pytest.approx((520 + 700) / 100)
    assert cpu_now.read_proc_stat(STAT, {1}, 100.0) == pytest.approx(7.0)
    assert cpu_now.read_proc_stat(STAT, {5}, 100.0) is None  # none of its cores listed


class Clock:
    """Readings the test scripts: busy and own seconds at each moment the sampler reads."""

    def __init__(self, rows: list[tuple[float, float, float]]) -> None:
        self.rows, self.slept = list(rows), []

    def read(self) -> cpu_now.Reading | None:
        t, busy, own = self.rows.pop(0)
        return cpu_now.Reading(t, busy, own)

    def sleep(self, s: float) -> None:
        self.slept.append(round(s, 3))


def test_first_call_probes_then_each_call_measures_since_the_last():
    c = Clock([(0.0, 0.0, 0.0), (0.2, 0.3, 0.1),  # probe: 0.2 others-seconds in 0.2 s
               (4.2, 4.3, 4.1),  # a batch of 4 s: this process 4 s, others nothing
               (8.2, 11.9, 7.7)])  # next 4 s: this process 3.6 s, others 4.0 s
    s = cpu_now.OthersBusy(c.read, c.sleep)
    assert s.cores() == pytest.approx((1.0, 0.2))
    assert c.slept == [0.2]
    assert s.cores() == pytest.approx((0.0, 4.0))
    assert s.cores() == pytest.approx((1.0, 4.0))
    assert c.slept == [0.2]  # no waiting when a window is there


def test_a_stale_window_is_probed_again_and_a_short_one_repeats_the_last_answer():
    c = Clock([(0.0, 0.0, 0.0), (0.2, 0.0, 0.0),
               (100.0, 50.0, 0.0), (100.2, 50.4, 0.0),  # 100 s later: a probe, 2 cores busy
               (100.25, 50.4, 0.0),  # 0.05 s later: too short to tell, never waits
               (100.5, 50.4, 0.3)])  # 0.3 s after the last reading: measured again
    s = cpu_now.OthersBusy(c.read, c.sleep)
    s.cores()
    assert s.cores() == pytest.approx((2.0, 0.2))
    assert s.cores() == pytest.approx((2.0, 0.2))
    assert s.cores() == pytest.approx((0.0, 0.3))
    assert c.slept == [0.2, 0.2]


def test_nothing_readable_falls_back_to_the_load_average(monkeypatch):
    monkeypatch.delenv(threads.ENV, raising=False)
    monkeypatch.setattr(cpu_now, "SAMPLER", cpu_now.OthersBusy(lambda: None))
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    assert threads.idle_cores(cores=2, running=1) == 1
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert threads.idle_cores(cores=2, running=1) == 2


@pytest.mark.parametrize("others,idle", [(0.0, 2), (0.4, 2), (0.6, 1), (1.0, 1), (1.9, 1)])
def test_the_rule_follows_what_others_use_now_not_the_load_average(monkeypatch, others, idle):
    monkeypatch.delenv(threads.ENV, raising=False)
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (17.0 if idle == 2 else 0.0,) * 3)
    others_use(monkeypatch, others)
    assert threads.idle_cores(cores=2, running=2) == idle


def test_the_choice_is_logged_when_it_changes(monkeypatch, caplog):
    monkeypatch.delenv(threads.ENV, raising=False)
    monkeypatch.setattr(threads, "_LAST_CHOICE", [])
    caplog.set_level(logging.INFO, logger="ablate.progress")
    for others in (0.0, 0.1, 1.2, 1.1, 0.0):
        others_use(monkeypatch, others)
        threads.idle_cores(cores=2)
    lines = [r.getMessage() for r in caplog.records if r.name == "ablate.progress"]
    assert lines == ["threads: 2 of 2 cores (other processes used 0.0 cores over the last 1.0 s)",
                     "threads: 1 of 2 cores (other processes used 1.2 cores over the last 1.0 s)",
                     "threads: 2 of 2 cores (other processes used 0.0 cores over the last 1.0 s)"]


def test_this_process_own_cpu_time_is_inside_the_busy_time_it_reads():
    """On the real /proc/stat (Linux): spinning 0.3 s of CPU here shows in the cores'
    busy seconds, and as this process's own, so it is not counted as others'."""
    first = cpu_now.read_now()
    if first is None:
        pytest.skip("no /proc/stat here")
    while time.process_time() - first.own < 0.3:
        pass
    second = cpu_now.read_now()
    assert second is not None
    assert second.own - first.own >= 0.3
    assert second.busy - first.busy >= (second.own - first.own) - 0.05  # jiffies: 10 ms
