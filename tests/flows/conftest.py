"""Fixtures the flows tests share."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests.flows.direct import run_direct


class DirectSweep(NamedTuple):
    ctx: Any  # ablate.flows.run.context.RunContext
    folder: Path  # the sweep folder written under runs/
    spec: Path  # the experiment file


@pytest.fixture(scope="module")
def sweep(request, tmp_path_factory) -> DirectSweep:
    """The test module's `SPEC` (an experiment file's YAML text) run directly, once per
    module (tests.flows.direct.run_direct): (run context, sweep folder, spec path). A module
    whose sweep is built otherwise defines its own `sweep` fixture."""
    spec = getattr(request.module, "SPEC", None)
    if spec is None:
        raise pytest.UsageError(f"{request.module.__name__} uses the shared `sweep` fixture "
                                "but defines no SPEC")
    name = request.module.__name__.rpartition(".")[2].removeprefix("test_")
    return DirectSweep(*run_direct(tmp_path_factory.mktemp(name), spec))
