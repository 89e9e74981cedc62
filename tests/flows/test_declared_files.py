"""A declared `files` field (the zh analyzer's user dictionary): a relative path is taken
from the experiment file's folder, and the file's contents are part of the stage key,
so editing the dictionary recomputes what depends on it and nothing else."""

from __future__ import annotations

import textwrap

from tests.conftest import FIXTURES

SPEC = """
name: files
dataset: {{path: {data}, format: squad}}
tier: full
split: all
baseline:
  retrieval:
    paths: [bm25]
    analyzer: zh
    analyzer_options: {{user_dict: dicts/terms.txt}}
"""


def test_user_dict_relative_to_spec_and_hashed(tmp_path, monkeypatch):
    from flows.context import RunOptions, build_context
    (tmp_path / "dicts").mkdir()
    terms = tmp_path / "dicts" / "terms.txt"
    terms.write_text("知识图谱 10 n\n", encoding="utf-8")
    spec = tmp_path / "e.yaml"
    spec.write_text(textwrap.dedent(SPEC.format(data=FIXTURES / "squad_tiny.json")))
    monkeypatch.chdir(FIXTURES)  # not the spec's folder
    first = build_context(spec, RunOptions(cache_dir=str(tmp_path / "c")))
    keys = first.plan.by_variant["baseline"]
    node = first.plan.nodes[keys["retrieve:bm25"]]
    assert node.config.retrieval.analyzer_options["user_dict"] == str(terms.resolve())
    terms.write_text("知识图谱 10 n\n向量检索 10 n\n", encoding="utf-8")
    second = build_context(spec, RunOptions(cache_dir=str(tmp_path / "c"))).plan.by_variant["baseline"]
    assert second["retrieve:bm25"] != keys["retrieve:bm25"]
    assert second["chunk"] == keys["chunk"] and second["label"] == keys["label"]
