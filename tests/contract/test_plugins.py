"""Plugins: a spec's `plugins:` modules and `ablate.components` entry points register
components with the same declarations; failures are one-line errors naming the plugin."""

from __future__ import annotations

import sys
import textwrap

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.contract.registry import registry
from ablate.flows.plan.spec_load import load_spec
from tests.conftest import registries_restored


@pytest.fixture(autouse=True)
def _restore():
    with registries_restored():
        yield

SPEC = """\
name: p
plugins: [{plugin}]
dataset: {{path: d.json}}
"""


def _spec(tmp_path, plugin_code: str, name: str = "plug.py"):
    (tmp_path / name).write_text(textwrap.dedent(plugin_code))
    spec = tmp_path / "e.yaml"
    spec.write_text(SPEC.format(plugin=f"./{name}"))
    return spec


def test_plugin_registers_a_path_with_its_declaration(tmp_path):
    spec = _spec(tmp_path, """
        from ablate.components.retrieval.stages import PATHS

        @PATHS.register("plugin_first_chunk", reads=("retrieval.depth",))
        def first(chunks, questions, cfg, res, latency):
            return {q.qid: [(chunks[0].chunk_id, 1.0)] for q in questions}
    """, "plug_ok.py")
    load_spec(spec)
    d = registry("retrieval path").declaration("plugin_first_chunk")
    assert d.reads == ("retrieval.depth",) and d.origin.startswith("ablate_plugin_plug_ok")
    load_spec(spec)  # loading the same plugin again is a no-op, not a "taken name"


@pytest.mark.parametrize("code, message", [
    ("import no_such_module_xyz\n", "failed to import (ModuleNotFoundError"),
    ("raise RuntimeError('boom')\n", "failed to import (RuntimeError: boom)"),
    ("from ablate.components.retrieval.stages import PATHS\n"
     "PATHS.register('bm25')(lambda *a: {})\n", "retrieval path 'bm25' is registered already"),
    ("X = 1\n", "registers no component"),
    ("import sys\nsys.exit(3)\n", "called sys.exit(3) while importing"),  # issue 39.9: silent
])
def test_bad_plugin_is_one_line_naming_it(tmp_path, code, message):
    spec = _spec(tmp_path, code, f"bad_{abs(hash(code)) % 10**6}.py")
    with pytest.raises(InputError) as info:
        load_spec(spec)
    text = str(info.value)
    assert message in text and "plugins.0" in text and ":2:" in text and "\n" not in text


def test_missing_plugin_file(tmp_path):
    spec = tmp_path / "e.yaml"
    spec.write_text(SPEC.format(plugin="./nowhere.py"))
    with pytest.raises(InputError, match="plugin file not found"):
        load_spec(spec)


def test_entry_point_plugin(tmp_path, monkeypatch):
    """An installed package registers through the `ablate.components` entry-point group."""
    pkg = tmp_path / "ep_plugin_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        import math
        from ablate.components.metrics.registry import metric

        @metric("ep_always_one", stages=("answer",), direction="higher")
        def always_one(view):
            return {"answer/ep_always_one": 1.0}
    """))
    dist = tmp_path / "ep_plugin_pkg-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-plugin-pkg\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[ablate.components]\nmine = ep_plugin_pkg\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from ablate.components.contract.plugins import load_entry_points
    loaded = load_entry_points()
    assert any("ep_plugin_pkg" in k for k in loaded)
    assert "answer/ep_always_one" in registry("metric")
    assert "ep_plugin_pkg" in sys.modules
