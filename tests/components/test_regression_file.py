"""A regression file (experiments/regressions/*.yaml) is read through the experiment
file's guarded YAML loader (issue 58.3): an alias bomb, a repeated key, a non-string text
field and a non-finite expected figure or tolerance are one line naming the file, the
line and the field, exit 2, in well under a second."""

from __future__ import annotations

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.export import regression

BASE = """\
name: tiny
source: somewhere
collection: {path: corpus, format: json}
topics: {path: topics.tsv, format: tsv}
qrels: qrels.txt
pipeline:
  retrieval: {paths: [bm25], analyzer: lucene_english, bm25: {variant: lucene}}
expected:
  metrics: {map: 0.75}
  index: {documents: 4}
tolerance: 0.0005
"""


def _write(tmp_path, text: str):
    f = tmp_path / "reg.yaml"
    f.write_text(text)
    return f


def _bomb_source() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "source:\n" + "".join(f"  {x}\n" for x in lines)


def test_the_base_file_loads(tmp_path):
    reg = regression.load(_write(tmp_path, BASE))
    assert reg.name == "tiny" and reg.metrics == {"map": 0.75} and reg.tolerance == 0.0005


def test_an_alias_bomb_in_source_is_refused_before_it_expands(tmp_path):
    """Refused by counting the values as they expand (no clock: the old loader hung here,
    growing without bound, and never raised)."""
    text = BASE.replace("source: somewhere\n", _bomb_source())
    f = _write(tmp_path, text)
    with pytest.raises(InputError) as info:
        regression.load(f)
    assert info.value.path == str(f) and info.value.line == 8  # a5: 9^6 values
    assert "expands to more than" in info.value.message


def test_a_repeated_key_is_refused(tmp_path):
    f = _write(tmp_path, BASE + "tolerance: 0.5\n")
    with pytest.raises(InputError) as info:
        regression.load(f)
    assert (info.value.line, info.value.field) == (12, "tolerance")
    assert "duplicate key" in info.value.message
    f = _write(tmp_path, BASE.replace("{map: 0.75}", "{map: 0.75, map: 0.1}"))
    with pytest.raises(InputError, match="duplicate key"):
        regression.load(f)


@pytest.mark.parametrize("old,new,line,field", [
    ("{map: 0.75}", "{map: .nan}", 9, "expected.metrics.map"),
    ("{map: 0.75}", "{map: .inf}", 9, "expected.metrics.map"),
    ("{map: 0.75}", "{map: true}", 9, "expected.metrics.map"),
    ("tolerance: 0.0005", "tolerance: .nan", 11, "tolerance"),
    ("tolerance: 0.0005", "tolerance: .inf", 11, "tolerance"),
    ("tolerance: 0.0005", "tolerance: -1", 11, "tolerance"),
    ("tolerance: 0.0005", "tolerance: true", 11, "tolerance"),
    ("{documents: 4}", "{documents: true}", 10, "expected.index.documents"),
    ("{documents: 4}", "{documents: -4}", 10, "expected.index.documents"),
])
def test_expected_figures_and_tolerance_are_finite(tmp_path, old, new, line, field):
    f = _write(tmp_path, BASE.replace(old, new))
    with pytest.raises(InputError) as info:
        regression.load(f)
    assert (info.value.path, info.value.line, info.value.field) == (str(f), line, field)


@pytest.mark.parametrize("old,new,line,field", [
    ("name: tiny", "name: [a, b]", 1, "name"),
    ("name: tiny", "name: 12", 1, "name"),
    ("name: tiny", "name: ''", 1, "name"),
    ("name: tiny", "name: two words", 1, "name"),
    ("source: somewhere", "source: {a: 1}", 2, "source"),
    ("source: somewhere", "source: 3.5", 2, "source"),
    ("qrels: qrels.txt", "qrels: [qrels.txt]", 5, "qrels"),
    ("format: tsv", "format: [tsv]", 4, "topics.format"),
    ("{path: corpus, format: json}", "{path: 12, format: json}", 3, "collection.path"),
    ("format: json", "format: xml", 3, "collection.format"),
    ("format: tsv", "format: csv", 4, "topics.format"),
])
def test_text_fields_are_strings(tmp_path, old, new, line, field):
    f = _write(tmp_path, BASE.replace(old, new))
    with pytest.raises(InputError) as info:
        regression.load(f)
    assert (info.value.path, info.value.line, info.value.field) == (str(f), line, field)


def test_unknown_keys_and_pipeline_errors_name_the_line(tmp_path):
    f = _write(tmp_path, BASE + "tolerence: 0.1\n")
    with pytest.raises(InputError) as info:
        regression.load(f)
    assert info.value.line == 12 and "tolerence" in info.value.message
    f = _write(tmp_path, BASE.replace("variant: lucene", "variant: tfidf"))
    with pytest.raises(InputError) as info:
        regression.load(f)
    assert (info.value.line, info.value.field) == (7, "pipeline.retrieval.bm25.variant")


def test_reproduce_refuses_a_bomb_with_exit_2(tmp_path, run_cli, capsys):
    f = _write(tmp_path, BASE.replace("source: somewhere\n", _bomb_source()))
    assert run_cli("reproduce", str(f), "--data", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ablate: error: {f}:8: ") and len(err.splitlines()) == 1
