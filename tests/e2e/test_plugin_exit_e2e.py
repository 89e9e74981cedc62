"""A plugin component that calls sys.exit inside a stage (issue 39.9) ended ablate
without a word. Through the real Prefect flow: a RunFailed naming the stage, the plugin
and the exit code, and the command that continues."""

from __future__ import annotations

import textwrap

import pytest

from ablate.components.contract.errors import RunFailed
from tests.conftest import registries_restored
from tests.specs import experiment, pipeline, vary

PLUGIN = """
import sys
from ablate.components.retrieval.stages import PATHS

@PATHS.register("exit_path_39", reads=("retrieval.depth",))
def leave(chunks, questions, cfg, res, latency):
    sys.exit(4)
"""


def test_sys_exit_in_a_plugin_component_is_one_line_naming_it(prefect_server, tmp_path):
    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import run_sweep
    (tmp_path / "exit_plugin.py").write_text(textwrap.dedent(PLUGIN))
    spec = tmp_path / "exp.yaml"
    spec.write_text(experiment("plugin-exit", plugins=["./exit_plugin.py"], tier="smoke",
                               smoke_size=6, baseline=pipeline(retrieval={
                                   "paths": ["exit_path_39"], "depth": 5}),
                               sweeps=[vary("context.budget", 64)]))
    forget_contexts()
    with registries_restored(), pytest.raises(RunFailed) as info:
        run_sweep(str(spec), out=str(tmp_path / "runs"), cache_dir=str(tmp_path / "cache"),
                  mlflow=False)
    text = info.value.one_line()
    assert text.startswith("stage ") and "\n" not in text
    assert f"plugin '{tmp_path / 'exit_plugin.py'}' called sys.exit(4) inside the stage" in text
    assert info.value.hint == f"ablate run {spec} --cache-dir {tmp_path / 'cache'}"
