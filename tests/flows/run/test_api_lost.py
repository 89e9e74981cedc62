"""flows/run/api_lost.Watch.recover: only a lost API turns the flow call's error into the
flow's kept result (or RunFailed with the resume command); any other error is re-raised."""

from __future__ import annotations

import pytest

from ablate.components.contract.errors import RunFailed
from ablate.flows.run import api_lost


def test_an_error_without_a_lost_api_is_raised_as_is():
    watch = api_lost.Watch(None, "ablate run exp.yaml")
    api_lost.keep({"sweep_dir": "runs/x"})
    with pytest.raises(ConnectionError):
        watch.recover(ConnectionError("refused"))


def test_a_lost_api_gives_the_kept_result_or_the_resume_command():
    watch = api_lost.Watch(None, "ablate run exp.yaml")
    watch.lost = True
    with pytest.raises(RunFailed) as info:  # the flow did not return
        watch.recover(ConnectionError("refused"))
    assert info.value.hint == "ablate run exp.yaml"
    api_lost.keep({"sweep_dir": "runs/x"})
    assert watch.recover(ConnectionError("refused")) == {"sweep_dir": "runs/x"}
    with pytest.raises(RunFailed, match="a stage"):  # the run's own failure stays its own
        watch.recover(RunFailed("a stage crashed"))
