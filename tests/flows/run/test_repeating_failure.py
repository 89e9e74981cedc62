"""A stage failure that repeats on every rerun (an arithmetic or value error from the data
or the configuration, e.g. the OverflowError of issue 58.6) is reported without a "to
continue: ablate run ..." command: that command failed the same way for ever. A failure
of the machine (a full disk, a lost connection, memory) keeps it."""

from __future__ import annotations

import errno
from types import SimpleNamespace

import pytest

from ablate.components.contract.errors import RunFailed
from ablate.flows.run.failures import stage_failure

PLAN = SimpleNamespace(nodes={"k" * 64: SimpleNamespace(label="score[baseline]")})


@pytest.mark.parametrize("exc", [OverflowError("(34, 'Numerical result out of range')"),
                                 ZeroDivisionError("float division by zero"),
                                 ValueError("math domain error"), TypeError("bad operand"),
                                 KeyError("q7")])
def test_a_failure_that_repeats_offers_no_command(exc):
    out = stage_failure(PLAN, [("k" * 64, exc)], "exp.yaml", {})
    assert isinstance(out, RunFailed) and out.hint is None
    line = out.one_line()
    assert "stage score[baseline] kkkkkkkkkk failed" in line and type(exc).__name__ in line
    assert "to continue" not in line and "fails the same way" in line


@pytest.mark.parametrize("exc", [OSError(errno.ENOSPC, "No space left on device"),
                                 MemoryError(), ConnectionError("reset"),
                                 RuntimeError("CUDA out of memory")])
def test_a_failure_of_the_machine_offers_the_command(exc):
    out = stage_failure(PLAN, [("k" * 64, exc)], "exp.yaml", {"tier": "smoke"})
    assert isinstance(out, RunFailed) and out.hint == "ablate run exp.yaml --tier smoke"
