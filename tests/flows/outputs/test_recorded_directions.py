"""A plugin's metric keeps its direction where the plugin is not loaded: the sweep's
manifest records every metric column's direction, and reading the sweep folder (`ablate
report`, `gate`, `stats`) takes them, so a lower-is-better plugin metric is never read as
higher-is-better."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT, registries_restored
from tests.flows.direct import run_direct
from tests.specs import experiment, pipeline, vary

PLUGIN = '''
from ablate.components.metrics.registry import metric


@metric("wrong_words", stages=("answer",), direction="lower", low=0.0, high=100.0)
def wrong_words(view):
    return {"answer/wrong_words": float(len(view.answer.text.split()))}
'''
SPEC = experiment("recorded-directions", tier="smoke", smoke_size=6, plugins=["./lowplug.py"],
                  baseline=pipeline(rerank=None), sweeps=[vary("context.budget", 64)])
# In a fresh interpreter (the plugin never imported): the direction read from the folder.
CHILD = ("import sys\n"
         "from ablate.components import catalogue\n"
         "catalogue.load()  # what every ablate command does first\n"
         "from ablate.components.metrics.registry import direction\n"
         "before = direction('answer/wrong_words')\n"
         "from ablate.components.report.sweep_data import load_sweep\n"
         "load_sweep(sys.argv[1])\n"
         "print(before, direction('answer/wrong_words'))\n")


def test_plugin_metric_direction_survives_without_the_plugin(tmp_path):
    (tmp_path / "lowplug.py").write_text(PLUGIN)
    with registries_restored():  # the plugin's metric is gone for the tests after this one
        _, folder, _ = run_direct(tmp_path, SPEC)
    man = json.loads((folder / "manifest.json").read_text())
    assert man["metric_directions"]["answer/wrong_words"] == "lower"
    assert man["metric_directions"]["final/recall_at_5"] == "higher"
    out = subprocess.run([sys.executable, "-c", CHILD, str(folder)], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out == ["higher", "lower"]  # unknown before the folder is read, then recorded
