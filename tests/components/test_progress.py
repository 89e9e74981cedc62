"""Per-question progress: count, rate, ETA, a few lines per stage, never one per item."""

import itertools

from ablate.components.runtime.progress import Progress


def _run(total, step_s, **kw):
    t = [0.0]
    lines = []
    p = Progress("generate X", total, clock=lambda: t[0], log=lines.append, **kw)
    for _ in range(total):
        t[0] += step_s
        p.step()
    return lines


def test_a_long_stage_logs_quarters_with_rate_and_eta():
    lines = _run(200, 1.0)  # 200 questions at 1 s each
    assert len(lines) <= 8 and lines[-1].endswith("done")
    assert lines[0] == "generate X: 50/200 (25%), 1.00/s, 50s elapsed, ETA 150s"
    assert "200/200 (100%)" in lines[-1]


def test_slow_items_log_by_time_but_throttled():
    lines = _run(20, 100.0)  # very slow items: a line per minute at most, not per item
    assert 5 <= len(lines) <= 20
    fast = _run(10_000, 0.001)  # 10 s in all: quarters, at least 5 s apart, and the end
    assert [line.split(":")[1].split(",")[0].strip() for line in fast] == [
        "5000/10000 (50%)", "10000/10000 (100%)"]


def test_short_stages_stay_quiet():
    assert _run(3, 1.0) == []


def test_a_fast_stage_says_nothing_at_its_end():
    assert _run(40, 0.01) == []  # 0.4 s in all: the stage line is enough


def test_quiet_console_prints_progress_lines_indented(capsys):
    from ablate.flows.run import console
    with console.quiet():
        p = Progress("encode model", 10, clock=itertools.count(0, 10).__next__)
        for _ in range(10):
            p.step()
    out = capsys.readouterr().out.splitlines()
    assert out and all(line.startswith("        encode model: ") for line in out)
    assert out[-1].endswith("done")
    Progress("encode model", 10, clock=itertools.count(0, 10).__next__).step(10)
    assert capsys.readouterr().out == ""  # outside a quiet run: Prefect's console shows them
