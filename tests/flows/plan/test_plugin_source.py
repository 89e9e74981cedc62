"""A plugin's components are keyed by the plugin's source: editing the plugin file makes
new keys for the stages that run its components (its old results are not served), and
leaves every other stage's key alone."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT
from tests.flows.direct import write_spec
from tests.flows.outputs.test_recorded_directions import PLUGIN, SPEC

# A fresh interpreter per run, as a user's next `ablate run` (plugins load once per process).
CHILD = ("import json, sys\n"
         "from ablate.flows.run.context import RunOptions, build_context\n"
         "ctx = build_context(sys.argv[1], RunOptions(cache_dir=sys.argv[2]))\n"
         "print(json.dumps(ctx.plan.by_variant['baseline']))\n")


def _keys(spec, cache) -> dict[str, str]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(spec), str(cache)], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_editing_a_plugin_changes_the_keys_of_its_stages_only(tmp_path):
    plugin = tmp_path / "lowplug.py"
    plugin.write_text(PLUGIN)
    spec = write_spec(tmp_path, SPEC)
    first = _keys(spec, tmp_path / "c")
    assert _keys(spec, tmp_path / "c") == first  # the same source: the same keys
    plugin.write_text(PLUGIN.replace("len(view.answer.text.split())",
                                     "len(view.answer.text.split()) + 1"))
    second = _keys(spec, tmp_path / "c")
    changed = {stage for stage in first if first[stage] != second[stage]}
    assert changed == {"score"}, changed


def test_builtin_components_carry_no_source_digest():
    from ablate.components import catalogue
    from ablate.components.contract.registry import all_declarations
    catalogue.load()
    assert all(d.source == "" for d in all_declarations() if d.origin.startswith("ablate.components."))
