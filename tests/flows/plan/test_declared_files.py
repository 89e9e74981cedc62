"""A declared `files` field (the zh analyzer's user dictionary): a relative path is taken
from the experiment file's folder, and the file's contents are part of the stage key,
so editing the dictionary recomputes what depends on it and nothing else."""

from __future__ import annotations

from tests.conftest import FIXTURES
from tests.e2e.test_console import FIELDS as CONSOLE
from tests.specs import pipeline, write_experiment


def test_user_dict_relative_to_spec_and_hashed(tmp_path, monkeypatch):
    from ablate.flows.run.context import RunOptions, build_context
    (tmp_path / "dicts").mkdir()
    terms = tmp_path / "dicts" / "terms.txt"
    terms.write_text("知识图谱 10 n\n", encoding="utf-8")
    spec = write_experiment(tmp_path, "files", file="e.yaml", tier="full", split="all", baseline={
        "retrieval": {"paths": ["bm25"], "analyzer": "zh",
                      "analyzer_options": {"user_dict": "dicts/terms.txt"}}})
    monkeypatch.chdir(FIXTURES)  # not the spec's folder
    first = build_context(spec, RunOptions(cache_dir=str(tmp_path / "c")))
    keys = first.plan.by_variant["baseline"]
    node = first.plan.nodes[keys["retrieve:bm25"]]
    assert node.config.retrieval.analyzer_options["user_dict"] == str(terms.resolve())
    terms.write_text("知识图谱 10 n\n向量检索 10 n\n", encoding="utf-8")
    second = build_context(spec, RunOptions(cache_dir=str(tmp_path / "c"))).plan.by_variant["baseline"]
    assert second["retrieve:bm25"] != keys["retrieve:bm25"]
    assert second["chunk"] == keys["chunk"] and second["label"] == keys["label"]


def _keys(tmp_path, dense, gguf):
    """The console test's tiny spec, with a dense model and a GGUF generator named by path."""
    from ablate.flows.run.context import RunOptions, build_context
    spec = write_experiment(tmp_path, "console-tiny", file="m.yaml", **CONSOLE, baseline=pipeline(
        retrieval={"paths": ["bm25", "dense"], "depth": 10, "dense_model": dense},
        generator={"name": "smollm2", "model": gguf}))
    ctx = build_context(spec, RunOptions(cache_dir=str(tmp_path / "c")))
    return ctx.plan.by_variant["baseline"], ctx


def test_model_weights_rewritten_in_place_are_new_keys(tmp_path):
    """A GGUF file and a dense model folder are keyed by their contents, not their names:
    rewriting the weights under the same name recomputes what reads them, nothing else."""
    import os
    import shutil

    from ablate.components.runtime.models import minilm_path
    folder = tmp_path / "minilm"
    shutil.copytree(minilm_path(), folder)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + bytes(range(256)) * 4096 + b"\x01")
    first, ctx = _keys(tmp_path, "minilm", "model.gguf")  # both relative to the spec's folder
    node = ctx.plan.nodes[first["generate"]]
    assert node.config.generator.model == str(gguf.resolve())

    gguf.write_bytes(b"GGUF" + bytes(range(256)) * 4096 + b"\x02")  # same name and size
    os.utime(gguf, ns=(0, gguf.stat().st_mtime_ns + 1_000_000))
    second, _ = _keys(tmp_path, "minilm", "model.gguf")
    assert second["generate"] != first["generate"]
    assert second["retrieve:dense"] == first["retrieve:dense"]

    weights = next(p for p in sorted(folder.rglob("*")) if p.suffix in (".safetensors", ".bin"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(0, weights.stat().st_mtime_ns + 1_000_000))
    third, _ = _keys(tmp_path, "minilm", "model.gguf")
    assert third["retrieve:dense"] != second["retrieve:dense"]
    assert third["retrieve:bm25"] == second["retrieve:bm25"] and third["chunk"] == second["chunk"]


def test_model_names_are_not_taken_for_paths(tmp_path):
    """The bundled models' names stay names (nothing of that name beside the spec)."""
    keys, ctx = _keys(tmp_path, "all-MiniLM-L6-v2", "smollm2")
    cfg = ctx.plan.nodes[keys["generate"]].config
    assert cfg.generator.model == "smollm2" and cfg.retrieval.dense_model == "all-MiniLM-L6-v2"


def test_a_missing_declared_file_is_one_line_before_any_compute(tmp_path, run_cli, capsys,
                                                                 monkeypatch):
    """`ablate check` (and so `ablate run`, before any stage) names the field and the path."""
    monkeypatch.chdir(tmp_path)
    base = pipeline(retrieval={"paths": ["bm25", "dense"], "dense_model": "./no-such-model"},
                    generator={"name": "extractive"})
    spec = write_experiment(tmp_path, "missing-files", tier="smoke", smoke_size=4, baseline=base)
    assert run_cli("check", str(spec)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "field 'baseline.retrieval.dense_model'" in err
    assert f"no such file or folder: {tmp_path / 'no-such-model'}" in err
    assert not (tmp_path / ".ablate").exists()  # nothing computed, nothing cached
