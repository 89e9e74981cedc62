"""The ONNX Runtime dense backends (retrieval.dense_backend: onnx | onnx-int8) on the real
bundled MiniLM: fp32 reproduces torch, int8 is close but different, every vector is a
function of its text alone, exports are cached atomically, the embedding cache is kept
per backend, the field changes the stage keys of the components that embed, and a
missing package is one line naming the extra. One export per backend for the module."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.errors import InputError
from ablate.components.retrieval.dense.embed_cache import text_key
from ablate.components.retrieval.dense.encoder import DenseEncoder
from ablate.components.runtime.models import minilm_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("onnxruntime")

# English, Chinese, mixed, surrounding blanks, and one longer than the 256-piece window
TEXTS = [
    "The Normans were a people in Normandy, a region in France.",
    "什么是机器学习？",
    "北京是中国的首都，也是政治和文化中心。",
    "Transformer 模型在 NLP 任务中表现很好, for example BERT and GPT.",
    "  Paris is the capital and largest city of France.  ",
    "a",
    "Chlorophyll gives plants their green colour. " * 40,
]


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx-exports")


@pytest.fixture(scope="module")
def torch_vecs():
    return DenseEncoder(minilm_path(), None, batch_size=4).encode(TEXTS)


@pytest.fixture(scope="module")
def onnx_enc(export_dir):
    return DenseEncoder(minilm_path(), None, batch_size=4, backend="onnx", export_dir=export_dir)


@pytest.fixture(scope="module")
def int8_enc(export_dir):
    return DenseEncoder(minilm_path(), None, batch_size=4, backend="onnx-int8",
                        export_dir=export_dir)


def test_onnx_fp32_matches_torch(onnx_enc, torch_vecs):
    got = onnx_enc.encode(TEXTS)
    assert got.dtype == np.float32 and got.shape == torch_vecs.shape
    assert _cos(got, torch_vecs).min() > 0.9999
    np.testing.assert_allclose(got, torch_vecs, atol=1e-4)


def test_onnx_int8_is_close_but_not_the_float_model(int8_enc, onnx_enc, torch_vecs):
    got = int8_enc.encode(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert _cos(got, torch_vecs).min() > 0.98
    assert float(np.abs(got - onnx_enc.encode(TEXTS)).max()) > 1e-3  # quantised for real


@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_a_vector_depends_on_its_text_alone(backend, onnx_enc, int8_enc):
    """int8 quantises activations per session call: texts run alone, so the batch a text
    arrives in (what the embedding cache cannot know) never changes its vector."""
    model = {"onnx": onnx_enc, "onnx-int8": int8_enc}[backend].model
    together = model.encode(TEXTS, batch_size=8)
    alone = np.stack([model.encode([t])[0] for t in TEXTS])
    np.testing.assert_array_equal(together, alone)


def test_export_is_cached_and_reused(export_dir, onnx_enc, int8_enc, monkeypatch):
    onnx_enc.encode(TEXTS[:1]), int8_enc.encode(TEXTS[:1])  # both exported by now
    from ablate.components.retrieval.dense import onnx_encoder
    names = {onnx_encoder.export_name(onnx_enc.fingerprint, b) for b in ("onnx", "onnx-int8")}
    assert {p.name for p in export_dir.iterdir()} == names  # model + backend + versions
    assert all(v in n for n in names for v in ("ort1.", "onnx1.", "torch2.", "-tf"))
    files = sorted(str(p.relative_to(export_dir)) for p in export_dir.rglob("*") if p.is_file())
    assert files == sorted(f"{n}/model.onnx" for n in names)  # no temporary file left behind

    def no_export(*a, **k):
        raise AssertionError("exported again")
    monkeypatch.setattr(onnx_encoder, "export_fp32", no_export)
    monkeypatch.setattr(onnx_encoder, "quantize_int8", no_export)
    again = DenseEncoder(minilm_path(), None, backend="onnx-int8", export_dir=export_dir)
    np.testing.assert_array_equal(again.encode(TEXTS), int8_enc.encode(TEXTS))


def test_embedding_cache_is_kept_per_backend(tmp_path, export_dir, torch_vecs, onnx_enc):
    torch_enc = DenseEncoder(minilm_path(), tmp_path)
    torch_enc.cache.store([text_key(t) for t in TEXTS], torch_vecs)
    enc = DenseEncoder(minilm_path(), tmp_path, backend="onnx-int8", export_dir=export_dir)
    assert enc.model_id != torch_enc.model_id and enc.cache.dir != torch_enc.cache.dir
    assert "onnx-int8" in enc.model_id
    assert torch_enc.model_id == onnx_enc.fingerprint  # torch keeps the cache it had
    first = enc.encode(TEXTS)
    assert enc.counters == {"embedded": len(TEXTS), "reused": 0}  # torch's vectors not used
    later = DenseEncoder(minilm_path(), tmp_path, backend="onnx-int8", export_dir=export_dir)
    np.testing.assert_array_equal(later.encode(TEXTS), first)
    assert later.counters["embedded"] == 0 and later._model is None


def test_the_field_changes_the_keys_of_the_stages_that_embed():
    from ablate.flows.plan.graph import Plan, add_variant
    exp = {"data": "d", "questions": "q", "tokenizer": "t", "metrics": {"ks": [5]},
           "labels": "span"}

    def plan(backend: str, weights: dict) -> tuple[Plan, dict[str, str]]:
        cfg = PipelineConfig.model_validate({
            "retrieval": {"paths": ["bm25", "dense"], "dense_backend": backend},
            "rerank": {"method": "composite", "weights": weights}})
        p = Plan()
        return p, add_variant(p, "v", cfg, exp)

    semantic = {"semantic": 0.5, "fusion": 0.5}
    torch_, onnx_, int8 = (plan(b, semantic)[1] for b in ("torch", "onnx", "onnx-int8"))
    for k in ("retrieve:dense", "rerank"):
        assert len({torch_[k], onnx_[k], int8[k]}) == 3, k
    for k in ("chunk", "retrieve:bm25"):
        assert torch_[k] == onnx_[k] == int8[k], k
    # the rerank stage reads the field itself only when its semantic signal embeds
    p, keys = plan("onnx", semantic)
    assert "retrieval.dense_backend" in p.nodes[keys["rerank"]].resolved.reads
    p, keys = plan("onnx", {"fusion": 1.0})
    assert "retrieval.dense_backend" not in p.nodes[keys["rerank"]].resolved.reads


def test_missing_package_is_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` now fails
    enc = DenseEncoder(minilm_path(), None, backend="onnx")
    with pytest.raises(InputError) as info:
        enc.encode(["x"])
    line = info.value.one_line()
    assert "ablate[onnx]" in line and "onnxruntime" in line and "\n" not in line
    assert info.value.field == "retrieval.dense_backend"


def test_unknown_backend_is_an_input_error():
    with pytest.raises(InputError, match="dense backend 'tensorrt'"):
        DenseEncoder(minilm_path(), None, backend="tensorrt")


def test_a_pipeline_the_onnx_backends_cannot_reproduce_says_so(tmp_path):
    from ablate.components.retrieval.dense.onnx_encoder import read_pipeline
    st = "sentence_transformers.models."
    (tmp_path / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": st + "Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": st + "Pooling"},
        {"idx": 2, "name": "2", "path": "2_Dense", "type": st + "Dense"}]))
    with pytest.raises(InputError, match="Dense"):
        read_pipeline(tmp_path)
    (tmp_path / "modules.json").write_text(json.dumps([
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": st + "Pooling"}]))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(
        {"pooling_mode_max_tokens": True, "pooling_mode_mean_tokens": False}))
    with pytest.raises(InputError, match="max_tokens"):
        read_pipeline(tmp_path)
    assert read_pipeline(minilm_path()) == {"pooling": "mean", "max_seq_length": 256,
                                            "lower_case": False}


def test_a_failed_export_leaves_no_model_file(tmp_path, monkeypatch):
    """Killed or failing mid-way, an export leaves neither a partial model.onnx nor a
    temporary file; the next run exports again."""
    from ablate.components.retrieval.dense import onnx_encoder
    fp32 = tmp_path / onnx_encoder.export_name("m-123", "onnx") / "model.onnx"
    fp32.parent.mkdir()
    fp32.write_bytes(b"fp32 stand-in")  # taken as already exported

    def half_written(src, out):
        out.write_bytes(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(onnx_encoder, "quantize_int8", half_written)
    with pytest.raises(KeyboardInterrupt):
        onnx_encoder.exported_model(minilm_path(), "m-123", "onnx-int8", tmp_path)
    int8_dir = tmp_path / onnx_encoder.export_name("m-123", "onnx-int8")
    assert list(int8_dir.iterdir()) == []

    # the fp32 export runs in a child process: one that dies is one line, and no
    # model.onnx appears, neither in the machine's exports nor in the cache folder
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(onnx_encoder, "export_command", lambda model, target: [
        sys.executable, "-c", "import sys; sys.exit('exporter: out of memory')"])
    with pytest.raises(RuntimeError, match=r"^exporting .* to ONNX failed \(exit 1\): "
                                           r"exporter: out of memory$"):
        onnx_encoder.exported_model(minilm_path(), "m-456", "onnx", tmp_path)
    assert not (tmp_path / onnx_encoder.export_name("m-456", "onnx")).exists()
    assert not list((tmp_path / "state").rglob("model.onnx"))


def test_the_export_runs_outside_the_calling_process(tmp_path):
    """The exporter (torch, transformers, a traced model) runs in a child process made
    once per machine: the caller never imports torch for it, and a second cache folder
    links the machine's file instead of exporting again."""
    import subprocess
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from ablate.components.retrieval.dense.onnx_encoder import exported_model\n"
        "from ablate.components.runtime.models import minilm_path\n"
        "a = exported_model(minilm_path(), 'fp', 'onnx', Path(sys.argv[1]) / 'a')\n"
        "b = exported_model(minilm_path(), 'fp', 'onnx', Path(sys.argv[1]) / 'b')\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules\n"
        "assert a.stat().st_size > 10**7 and a.read_bytes() == b.read_bytes()\n")
    env = dict(os.environ, ABLATE_STATE_HOME=str(tmp_path / "state"))
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    made = list((tmp_path / "state" / "onnx").rglob("model.onnx"))
    assert len(made) == 1  # exported once
    if _links_work(tmp_path):  # else each cache folder holds a copy (_link_or_copy)
        assert made[0].stat().st_nlink == 3  # the machine's, a, b: one file on disk


def _links_work(folder) -> bool:
    """Whether this file system takes hard links (some refuse them)."""
    probe = folder / "link-probe"
    probe.write_bytes(b"")
    try:
        os.link(probe, folder / "link-probe-2")
    except OSError:
        return False
    return True
