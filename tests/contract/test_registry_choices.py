"""`retrieval.dense_backend`, `retrieval.dense_index` and `fusion.normalization` are closed
choices whose one list is their registry (issue 43.2): a plugin registering a new one is
accepted without editing config.py, a typo is one line with the registry's did-you-mean,
and the reference page lists the registry's names."""

from __future__ import annotations

import pytest

from tests.conftest import registries_restored
from tests.specs import pipeline, write_experiment

PLUGIN = """\
import numpy as np

from ablate.components.retrieval.dense.ann import DENSE_INDEXES, flat
from ablate.components.retrieval.dense.backends import BACKENDS
from ablate.components.retrieval.fusion import NORMALIZERS

DENSE_INDEXES.register("flat_again_43")(flat)
BACKENDS.register("torch_again_43")(BACKENDS.get("torch"))
NORMALIZERS.register("unit_43")(lambda s: s / (np.abs(s).max() or 1.0))
"""


@pytest.fixture(autouse=True)
def _restore():
    with registries_restored():
        yield


def test_a_plugin_adds_a_dense_index_backend_and_normalization(run_cli, tmp_path, capsys):
    (tmp_path / "choices43.py").write_text(PLUGIN)
    spec = write_experiment(
        tmp_path, "plugin-choices", smoke_size=6, plugins=["./choices43.py"],
        baseline=pipeline(retrieval={"paths": ["bm25", "dense"], "depth": 10,
                                     "dense_index": "flat_again_43",
                                     "dense_backend": "torch_again_43"},
                          fusion={"method": "convex", "normalization": "unit_43"},
                          generator=None))
    assert run_cli("check", str(spec)) == 0, capsys.readouterr().err


@pytest.mark.parametrize("field, typo, near, kind", [
    ("dense_index", "hnws", "hnsw", "dense index"),
    ("dense_backend", "onnx-int", "onnx-int8", "dense backend"),
    ("normalization", "zscor", "zscore", "score normalization"),
])
def test_a_typo_is_one_line_with_the_registry_s_names(run_cli, tmp_path, capsys, field, typo,
                                                      near, kind):
    section = "fusion" if field == "normalization" else "retrieval"
    fields = {"retrieval": {"paths": ["bm25", "dense"], "depth": 10}, "generator": None}
    fields[section] = {**fields.get(section, {}), field: typo}
    spec = write_experiment(tmp_path, "typo", smoke_size=6, baseline=pipeline(**fields))
    assert run_cli("check", str(spec)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"ablate: error: {spec}:")
    assert f"unknown {kind} '{typo}'; did you mean {near}?" in err
    assert f"field 'baseline.{section}.{field}'" in err


def test_the_reference_lists_the_registry_s_names():
    from ablate.components.contract.registry import registry
    text = (__import__("tests.conftest", fromlist=["ROOT"]).ROOT / "docs" /
            "experiment-file.md").read_text()
    for field, kind in (("retrieval.dense_index", "dense index"),
                        ("retrieval.dense_backend", "dense backend"),
                        ("fusion.normalization", "score normalization")):
        row = next(ln for ln in text.splitlines() if ln.startswith(f"| `baseline.{field}`"))
        names = ", ".join(f"`{n}`" for n in registry(kind).names())
        assert "| choice |" in row and f"{kind}: {names}" in row
