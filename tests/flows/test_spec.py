"""Experiment specs: validation errors name file, line and field; one-factor expansion."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import pytest

from components.errors import InputError
from flows.preflight import check_variants
from flows.spec import load_spec
from flows.variants import expand

BASE = """\
name: t
dataset: {path: data.json, format: squad}
baseline:
  chunking: {size: 64, overlap: 8}
  fusion: {rrf_k: 60}
sweeps:
  - variable: fusion.rrf_k
    values: [10, 200]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "exp.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def error_of(tmp_path: Path, text: str) -> InputError:
    with pytest.raises(InputError) as info:
        loaded = load_spec(write(tmp_path, text))
        check_variants(loaded, expand(loaded))
    return info.value


def test_expansion_names_and_overrides(tmp_path):
    variants = expand(load_spec(write(tmp_path, BASE)))
    assert [v.name for v in variants] == ["baseline", "fusion.rrf_k=10", "fusion.rrf_k=200"]
    assert variants[1].config.fusion.rrf_k == 10
    assert variants[1].config.chunking == variants[0].config.chunking
    assert len({v.config_id for v in variants}) == 3


def test_unknown_field_points_at_its_line(tmp_path):
    err = error_of(tmp_path, BASE.replace("  fusion: {rrf_k: 60}", "  fusion: {rrf_k: 60}\n  fusoin: {}"))
    assert err.line == 6 and err.field == "baseline.fusoin" and "unknown field" in err.message
    assert err.one_line().startswith(str(tmp_path / "exp.yaml") + ":6:")


def test_wrong_type_names_field_and_line(tmp_path):
    err = error_of(tmp_path, BASE.replace("size: 64", "size: big"))
    assert (err.line, err.field) == (4, "baseline.chunking.size")


def test_missing_required_field(tmp_path):
    err = error_of(tmp_path, BASE.replace("dataset: {path: data.json, format: squad}\n", ""))
    assert err.field == "dataset" and "missing" in err.message


def test_unknown_sweep_variable(tmp_path):
    err = error_of(tmp_path, BASE.replace("variable: fusion.rrf_k", "variable: fusion.rrf_kk"))
    assert err.line == 7 and "unknown variable 'fusion.rrf_kk'" in err.message


def test_bad_sweep_value_points_at_the_value(tmp_path):
    err = error_of(tmp_path, BASE.replace("values: [10, 200]", "values:\n      - 10\n      - -5"))
    assert err.line == 10 and err.field == "sweeps.0.values.1"


def test_value_equal_to_baseline_is_dropped_with_warning(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        variants = expand(load_spec(write(tmp_path, BASE.replace("[10, 200]", "[10, 60]"))))
    assert [v.name for v in variants] == ["baseline", "fusion.rrf_k=10"]
    assert any("equals the baseline" in str(w.message) for w in caught)


def test_identical_variants_rejected(tmp_path):
    text = BASE + "variants:\n  - name: same-as-10\n    set: {fusion.rrf_k: 10}\n"
    err = error_of(tmp_path, text)
    assert "same config as fusion.rrf_k=10" in err.message and err.line == 11


def test_unknown_component_in_sweep_value(tmp_path):
    text = BASE + "  - variable: generator.name\n    values: [extractive, gpt-banana]\n"
    err = error_of(tmp_path, text)
    assert "unknown generator 'gpt-banana'" in err.message and err.field == "sweeps.1.values.1"


def test_unknown_component_in_baseline(tmp_path):
    err = error_of(tmp_path, BASE.replace("chunking: {size: 64, overlap: 8}",
                                          "chunking: {size: 64, overlap: 8, method: paragraphs}"))
    assert err.field == "baseline.chunking.method" and err.line == 4


def test_negative_rerank_weight(tmp_path):
    err = error_of(tmp_path, BASE.replace("  fusion: {rrf_k: 60}",
                                          "  rerank: {method: composite, weights: {semantic: -1}}"))
    assert err.field.startswith("baseline.rerank.weights") and "negative" in err.message


def test_yaml_is_loaded_safely(tmp_path):
    err = error_of(tmp_path, "name: !!python/object/apply:os.system ['echo pwned']\n")
    assert "invalid YAML" in err.message and err.line == 1


def test_invalid_yaml_syntax_has_line(tmp_path):
    err = error_of(tmp_path, BASE.replace("values: [10, 200]", "values: [10, 200"))
    assert "invalid YAML" in err.message and err.line is not None


def test_not_a_mapping(tmp_path):
    err = error_of(tmp_path, "- a\n- b\n")
    assert "mapping" in err.message


def test_demo_spec_is_valid():
    from tests.conftest import ROOT
    loaded = load_spec(ROOT / "experiments" / "demo.yaml")
    variants = expand(loaded)
    check_variants(loaded, variants)
    assert {v.variable for v in variants[1:]} == {
        "retrieval.paths", "fusion.rrf_k", "rerank.weights", "chunking.size", "generator.name"}
