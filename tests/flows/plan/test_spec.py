"""Experiment specs: validation errors name file, line and field; one-factor expansion."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import pytest

from ablate.components.contract.errors import InputError
from ablate.flows.plan.preflight import check_variants
from ablate.flows.plan.spec_load import load_spec
from ablate.flows.plan.variants import expand

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


def test_value_equal_to_baseline_is_dropped_with_a_notice_not_a_warning(tmp_path):
    notices: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a Python warning would fail here
        variants = expand(load_spec(write(tmp_path, BASE.replace("[10, 200]", "[10, 60]"))), notices)
    assert [v.name for v in variants] == ["baseline", "fusion.rrf_k=10"]
    assert notices == [f"{tmp_path / 'exp.yaml'}:8: fusion.rrf_k=60 equals the baseline; dropped"]


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


# ---- near-misses get a suggestion ---------------------------------------------------------

def test_unknown_field_suggests_the_nearest(tmp_path):
    err = error_of(tmp_path, BASE.replace("  fusion: {rrf_k: 60}", "  fusion: {rrf_k: 60}\n  fusoin: {}"))
    assert "did you mean fusion?" in err.message


def test_unknown_nested_field_suggests_the_nearest(tmp_path):
    err = error_of(tmp_path, BASE.replace("{rrf_k: 60}", "{rrfk: 60}"))
    assert (err.line, err.field) == (5, "baseline.fusion.rrfk")
    assert err.message == "unknown field; did you mean rrf_k?"


def test_unknown_field_without_near_miss_lists_known(tmp_path):
    err = error_of(tmp_path, BASE + "zzzz: 1\n")
    assert err.field == "zzzz" and "(known: name, description," in err.message


def test_unknown_component_suggests_the_nearest(tmp_path):
    text = BASE + "  - variable: generator.name\n    values: [smolm2]\n"
    err = error_of(tmp_path, text)
    assert "unknown generator 'smolm2'; did you mean smollm2?" in err.message
    assert (err.line, err.field) == (10, "sweeps.1.values.0")


def test_unknown_metric_key_suggests_the_nearest(tmp_path):
    err = error_of(tmp_path, BASE + "metrics: {key: [final/ndgc_at_10]}\n")
    assert err.field == "metrics.key" and "did you mean final/ndcg_at_10?" in err.message


def test_unknown_option_value_suggests_the_nearest(tmp_path):
    err = error_of(tmp_path, BASE + "tier: smoek\n")
    assert (err.line, err.field) == (9, "tier") and "did you mean smoke?" in err.message


def test_unknown_statistical_test_suggests_the_nearest(tmp_path):
    err = error_of(tmp_path, BASE + "stats: {test: permutaton}\n")
    assert err.field == "stats.test" and "did you mean permutation?" in err.message
    assert not err.message.startswith("Value error")


def test_unknown_correction_suggests_the_nearest(tmp_path):
    err = error_of(tmp_path, BASE + "stats: {correction: hlom}\n")
    assert err.field == "stats.correction" and "did you mean holm?" in err.message


def test_unknown_sweep_variable_suggests_the_nearest(tmp_path):
    err = error_of(tmp_path, BASE.replace("variable: fusion.rrf_k", "variable: fusion.rrfk"))
    assert "did you mean fusion.rrf_k?" in err.message and err.line == 7


def test_unknown_variable_in_named_variant_suggests_the_nearest(tmp_path):
    err = error_of(tmp_path, BASE + "variants:\n  - name: big\n    set: {chunking.sise: 128}\n")
    assert "unknown variable 'chunking.sise'; did you mean chunking.size?" in err.message


def test_bad_value_in_named_variant_has_a_clean_message(tmp_path):
    err = error_of(tmp_path, BASE + "variants:\n  - name: big\n    set: {context.policy: skp}\n")
    assert err.message.startswith("context.policy: Input should be") and "did you mean skip?" in err.message


def test_questions_and_split_share_validated(tmp_path):
    err = error_of(tmp_path, BASE + "split_share: 1.0\n")
    assert (err.line, err.field) == (9, "split_share")
    err = error_of(tmp_path, BASE + "questions: {max: 0}\n")
    assert (err.line, err.field) == (9, "questions.max")
    err = error_of(tmp_path, BASE + "questions: {answerable: true}\n")
    assert err.field == "questions.answerable" and "did you mean answerable_only?" in err.message


def test_bm25_variant_and_delta_sweep_from_a_default_baseline(tmp_path):
    """docs/bm25-variants.md says to sweep retrieval.bm25.variant; the baseline's okapi
    (the default, left out of the dump that keeps old stage keys) must still be a field."""
    text = BASE.replace("variable: fusion.rrf_k\n    values: [10, 200]",
                        "variable: retrieval.bm25.variant\n    values: [lucene, bm25plus]\n"
                        "  - variable: retrieval.bm25.delta\n    values: [0.5]")
    loaded = load_spec(write(tmp_path, text))
    variants = expand(loaded)
    check_variants(loaded, variants)
    assert [v.name for v in variants] == ["baseline", "retrieval.bm25.variant=lucene",
                                          "retrieval.bm25.variant=bm25plus",
                                          "retrieval.bm25.delta=0.5"]
    assert variants[1].config.retrieval.bm25.variant == "lucene"
    assert variants[0].config.retrieval.bm25.variant == "okapi"
    assert "variant" not in variants[0].config.model_dump()["retrieval"]["bm25"]
    assert len({v.config_id for v in variants}) == 4
