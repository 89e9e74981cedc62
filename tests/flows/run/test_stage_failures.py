"""The one line a failed sweep ends with (flows/run/failures.py, issue 58.8): the first
stage that failed (by the time it failed, else in plan order), and a full device said as
such with the cache folder, whatever words polars or pyarrow put around ENOSPC."""

from __future__ import annotations

import errno
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest
from prefect.exceptions import UpstreamTaskError

from ablate.components.contract.errors import RunFailed, no_space
from ablate.flows.run.failures import stage_failure

PLAN = SimpleNamespace(nodes={"chunk0123456789": SimpleNamespace(label="chunk"),
                              "embed0123456789": SimpleNamespace(label="retrieve:dense"),
                              "score0123456789": SimpleNamespace(label="score")})
CACHE = Path("/mnt/full/cache")


def _full_polars() -> Exception:
    return pl.exceptions.ComputeError(
        "failed to write parquet: No space left on device (os error 28)")


def _full_wrapped() -> Exception:
    """An OSError(ENOSPC) raised inside a library and re-raised as its own error."""
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as inner:
            raise RuntimeError("write failed") from inner
    except RuntimeError as outer:
        return outer


@pytest.mark.parametrize("late", [_full_polars, _full_wrapped,
                                  lambda: OSError(errno.ENOSPC, "No space left on device")])
def test_a_full_device_is_named_with_the_first_stage_that_failed(late):
    failures = [("chunk0123456789", late()), ("embed0123456789", _full_polars()),
                ("score0123456789", UpstreamTaskError("upstream failed"))]
    # the dense stage failed first (t=10), the chunk stage later (t=20): plan order is not time
    exc = stage_failure(PLAN, failures, "exp.yaml", {}, {"chunk0123456789": 20.0,
                                                        "embed0123456789": 10.0}, CACHE)
    assert isinstance(exc, RunFailed)
    line = exc.one_line()
    assert line.startswith(f"no space left on the cache device ({CACHE}): stage "
                           "retrieve:dense embed01234 failed first (2 other stages failed or "
                           "did not run)"), line
    assert "os error" not in line and "ComputeError" not in line
    assert line.endswith("to continue: ablate run exp.yaml")


def test_without_times_the_first_in_plan_order_is_named():
    failures = [("chunk0123456789", OSError(errno.ENOSPC, "No space left on device")),
                ("embed0123456789", _full_polars())]
    line = stage_failure(PLAN, failures, "exp.yaml", {}, cache=CACHE).one_line()
    assert "stage chunk chunk01234 failed first" in line


def test_another_cause_names_the_stage_that_failed_first():
    failures = [("chunk0123456789", ValueError("late")), ("embed0123456789", KeyError("early"))]
    line = stage_failure(PLAN, failures, "exp.yaml", {},
                         {"chunk0123456789": 5.0, "embed0123456789": 1.0}).one_line()
    assert line.startswith("stage retrieve:dense embed01234 failed (KeyError: 'early')"), line


def test_no_space_is_only_a_full_device():
    assert no_space(OSError(errno.ENOSPC, "x")) and no_space(_full_polars())
    assert not no_space(OSError(errno.EACCES, "Permission denied"))
    assert not no_space(pl.exceptions.ComputeError("parquet: File out of specification"))
