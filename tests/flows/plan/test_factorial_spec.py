"""`design: {kind: factorial}` in the experiment file: its cells become variants (names,
levels, sharing with sweeps), and every mistake is one error naming the line and field."""

from __future__ import annotations

import textwrap
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
  rerank: {method: composite, weights: {fusion: 1.0}}
design:
  kind: factorial
  variables:
    chunking.size: [64, 128]
    rerank.weights: [{fusion: 1.0}, {lexical: 1.0}]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "exp.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def variants_of(tmp_path: Path, text: str):
    loaded = load_spec(write(tmp_path, text))
    out = expand(loaded)
    check_variants(loaded, out)
    return out


def error_of(tmp_path: Path, text: str) -> InputError:
    with pytest.raises(InputError) as info:
        variants_of(tmp_path, text)
    return info.value


def test_two_by_two_cells_are_named_variants_with_their_levels(tmp_path):
    vs = variants_of(tmp_path, BASE)
    assert [(v.name, v.cell) for v in vs] == [
        ("baseline", (0, 0)), ("chunking.size=128", (1, 0)),
        ("rerank.weights=lexical:1", (0, 1)),
        ("chunking.size=128 × rerank.weights=lexical:1", (1, 1))]
    both = vs[3]
    assert both.config.chunking.size == 128 and both.config.rerank.weights == {"lexical": 1.0}
    assert both.variable == "chunking.size × rerank.weights"
    assert both.value == {"chunking.size": 128, "rerank.weights": {"lexical": 1.0}}
    assert vs[1].variable == "chunking.size" and vs[1].value == 128
    assert vs[2].config.chunking == vs[0].config.chunking
    assert len({v.config_id for v in vs}) == 4


def test_three_variables_with_three_levels(tmp_path):
    text = BASE.replace("[64, 128]", "[64, 128, 256]") + "    fusion.rrf_k: [60, 10]\n"
    vs = variants_of(tmp_path, text)
    assert len(vs) == 3 * 2 * 2 and vs[0].cell == (0, 0, 0)
    assert sorted(v.cell for v in vs) == sorted(
        (a, b, c) for a in range(3) for b in range(2) for c in range(2))
    assert [sum(map(bool, v.cell)) for v in vs] == sorted(sum(map(bool, v.cell)) for v in vs)
    assert "chunking.size=256 × rerank.weights=lexical:1 × fusion.rrf_k=10" in {v.name for v in vs}


def test_half_fraction_has_eight_cells_with_d_equal_abc(tmp_path):
    text = (BASE + "    fusion.rrf_k: [60, 10]\n    context.budget: [512, 256]\n"
            "  fraction: half\n")
    vs = variants_of(tmp_path, text)
    assert len(vs) == 8
    for v in vs:
        a, b, c, d = v.cell
        assert d == (a + b + c) % 2


def test_a_sweep_value_that_is_a_cell_is_one_variant(tmp_path):
    text = BASE + "sweeps:\n  - variable: chunking.size\n    values: [128, 32]\n"
    vs = variants_of(tmp_path, text)
    names = [v.name for v in vs]
    assert names.count("chunking.size=128") == 1 and len(vs) == 5
    assert next(v for v in vs if v.name == "chunking.size=128").cell == (1, 0)
    assert next(v for v in vs if v.name == "chunking.size=32").cell is None


def test_a_cell_on_a_sweep_with_its_own_sample_is_an_error(tmp_path):
    text = BASE + "sweeps:\n  - variable: chunking.size\n    tier: full\n    values: [128]\n"
    err = error_of(tmp_path, text)
    assert "own sample" in err.message and err.field == "design.variables.chunking.size.1"


@pytest.mark.parametrize("change, line, field, words", [
    (("    rerank.weights: [{fusion: 1.0}, {lexical: 1.0}]\n", ""),
     8, "design.variables", "2 to 4 variables, got 1"),
    (("[64, 128]", "[64]"), 9, "design.variables.chunking.size", "2 or 3 levels"),
    (("[64, 128]", "[64, 128, 256, 512]"), 9, "design.variables.chunking.size", "got 4"),
    (("[64, 128]", "[128, 64]"), 9, "design.variables.chunking.size.0",
     "first level must be the baseline's value (64), got 128"),
    (("[64, 128]", "[64, 128.0, 128]"), 9, "design.variables.chunking.size.2",
     "level 3 (128) gives the same config as level 2 (128)"),
    (("chunking.size: [64", "chunking.sise: [64"), 9, "design.variables.chunking.sise",
     "did you mean chunking.size"),
    (("[64, 128]", "[64, -3]"), 9, "design.variables.chunking.size.1", "chunking.size"),
    (("  kind: factorial\n", "  kind: factorail\n"), 7, "design.kind", "did you mean factorial"),
    (("  kind: factorial\n", "  kind: factorial\n  fraction: third\n"), 8, "design.fraction",
     "'full' or 'half'"),
    (("  kind: factorial\n", "  kind: factorial\n  fraction: half\n"), 8, "design.fraction",
     "4 two-level variables; this design is 2 x 2"),
    (("  kind: factorial\n", "  kind: factorial\n  runs: 4\n"), 8, "design.runs", "unknown field"),
])
def test_design_errors_name_line_and_field(tmp_path, change, line, field, words):
    err = error_of(tmp_path, BASE.replace(*change))
    assert (err.line, err.field) == (line, field), err.one_line()
    assert words in err.message, err.message
    assert "\n" not in err.one_line()


def test_five_variables_are_too_many_with_three_levels(tmp_path):
    text = BASE + "".join(f"    {v}: [{a}, {b}]\n" for v, a, b in [
        ("fusion.rrf_k", 60, 10), ("context.budget", 512, 256)]) + \
        "    retrieval.depth: [50, 20, 30]\n"
    err = error_of(tmp_path, text)
    assert "2 to 4 variables, got 5" in err.message and err.field == "design.variables"


SIX_MORE = [("fusion.rrf_k", 60, 10), ("context.budget", 512, 256), ("retrieval.depth", 50, 20),
            ("chunking.overlap", 8, 4), ("rerank.depth", 20, 10), ("fusion.method", "rrf", "convex")]


def test_six_two_level_variables_fit_the_default_budget(tmp_path):
    text = BASE + "".join(f"    {v}: [{a}, {b}]\n" for v, a, b in SIX_MORE[:4])
    vs = variants_of(tmp_path, text)
    assert sum(v.cell is not None for v in vs) == 64


def test_a_design_over_the_budget_says_what_fraction_would_fit(tmp_path):
    text = BASE + "".join(f"    {v}: [{a}, {b}]\n" for v, a, b in SIX_MORE[:6])
    err = error_of(tmp_path, text)
    assert err.field == "design.variables" and "\n" not in err.one_line()
    assert ("the design has 256 cells, more than design.max_cells (64): a 1/4 fraction "
            "(64 cells) of it would fit") in err.message
    three = error_of(tmp_path, BASE.replace("[64, 128]", "[64, 128, 256]")
                     .replace("  kind: factorial\n", "  kind: factorial\n  max_cells: 4\n"))
    assert "6 cells, more than design.max_cells (4): 67% of it would fit" in three.message
    text = BASE.replace("  kind: factorial\n", "  kind: factorial\n  max_cells: 256\n")
    assert sum(v.cell is not None for v in variants_of(
        tmp_path, text + "".join(f"    {v}: [{a}, {b}]\n" for v, a, b in SIX_MORE))) == 256


def test_nested_variables_are_an_error(tmp_path):
    text = BASE + "    rerank: [{method: composite, weights: {fusion: 1.0}}, {method: none}]\n"
    err = error_of(tmp_path, text)
    assert "'rerank.weights' is part of 'rerank'" in err.message


def test_a_named_variant_equal_to_a_cell_is_an_error(tmp_path):
    text = BASE + "variants:\n  - name: both\n    set: {chunking.size: 128, rerank.weights: {lexical: 1}}\n"
    err = error_of(tmp_path, text)
    assert "same config as chunking.size=128 × rerank.weights=lexical:1" in err.message


def test_factorial_demo_is_valid():
    from tests.conftest import ROOT
    loaded = load_spec(ROOT / "experiments" / "factorial-demo.yaml")
    vs = expand(loaded)
    check_variants(loaded, vs)
    assert [v.cell for v in vs] == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert vs[3].name == "chunking.size=100 × rerank.weights=semantic:1"


def test_levels_that_read_the_same_are_an_error(tmp_path):
    text = (BASE.replace("  rerank: {method: composite, weights: {fusion: 1.0}}\n",
                         "  rerank: {method: composite, weights: {fusion: 1.0}}\n"
                         "  options: {mine: {pair: [1, 2]}}\n")
            + "    options.mine.pair: [[1, 2], '1+2']\n")
    err = error_of(tmp_path, text)
    assert "two levels read the same (1+2, 1+2)" in err.message
    assert err.field == "design.variables.options.mine.pair" and err.line == 12
