"""The torch backend's own BERT forward (bert_torch.py) against SentenceTransformer.encode:
bitwise the same vectors, without importing sentence-transformers or transformers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from ablate.components.retrieval.dense.bert_torch import BertEncoder, supported
from ablate.components.retrieval.dense.encoder import DenseEncoder
from ablate.components.runtime.models import minilm_path
from tests.components.retrieval.retrieval_helpers import TEXTS
from tests.fresh import imported_after

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[4]
WORDS = (ROOT / "experiments/data/squad2-dev-half/dev-v2.0.json").read_text()[:200_000].split()
ZH = ["台灣的首都是臺北市，位於北部。", "什麼是 BM25 retrieval？請用中文回答。",
      "DRCD 是繁體中文的閱讀理解資料集", "混合 English 與中文的 query"]
# short and long (cut at the model's 256 word pieces), equal lengths, padding, stray spaces
MIXED = TEXTS + ZH + [" ".join(WORDS[i * 41:i * 41 + n]) for i, n in
                      enumerate([3, 400, 60, 250, 7, 120, 400, 1])] + ["  spaced out  ", "x"]


@pytest.fixture(scope="module")
def reference():
    from sentence_transformers import SentenceTransformer
    return SentenceTransformer(str(minilm_path()), device="cpu", local_files_only=True)


@pytest.mark.parametrize("batch_size", [16, 5, 1])
@pytest.mark.parametrize("texts", [MIXED, ["the same length"] * 4, ["one text"]],
                         ids=["mixed", "equal", "one"])
def test_bitwise_same_as_sentence_transformers(reference, texts, batch_size):
    ours = BertEncoder(minilm_path()).encode(texts, batch_size=batch_size,
                                             normalize_embeddings=True)
    ref = reference.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                           convert_to_numpy=True, show_progress_bar=False)
    assert ours.dtype == ref.dtype == np.float32
    np.testing.assert_array_equal(ours, ref)


def test_torch_backend_imports_neither_library():
    code = ("from ablate.components.runtime.models import minilm_path; "
            "from ablate.components.retrieval.dense.encoder import DenseEncoder; "
            "v = DenseEncoder(minilm_path(), None).encode(['hello', '你好']); "
            "assert v.shape == (2, 384), v.shape")
    assert imported_after(code, ("sentence_transformers", "transformers")) == []


def _copy(tmp_path: Path, edit_modules=None, edit_config=None) -> Path:
    src, dst = minilm_path(), tmp_path / "model"
    dst.mkdir(parents=True)
    for p in src.rglob("*"):
        if p.is_file():
            (dst / p.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            (dst / p.relative_to(src)).symlink_to(p)
    for name, edit in (("modules.json", edit_modules), ("config.json", edit_config)):
        if edit is not None:
            data = json.loads((src / name).read_text())
            (dst / name).unlink()
            (dst / name).write_text(json.dumps(edit(data)))
    return dst


def test_other_pipelines_keep_sentence_transformers(tmp_path):
    assert supported(minilm_path())
    dense = _copy(tmp_path / "a", edit_modules=lambda m: m + [
        {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"}])
    assert not supported(dense)
    other = _copy(tmp_path / "b", edit_config=lambda c: {**c, "model_type": "roberta"})
    assert not supported(other)
    no_norm = _copy(tmp_path / "c", edit_modules=lambda m: m[:2])
    assert supported(no_norm) and not BertEncoder(no_norm).normalize_module


def test_unload_then_encode_again(tmp_path):
    enc = DenseEncoder(minilm_path(), None)
    first = enc.encode(TEXTS[:3])
    enc.unload()
    assert enc._model is None
    np.testing.assert_array_equal(DenseEncoder(minilm_path(), None).encode(TEXTS[:3]), first)
    np.testing.assert_array_equal(enc.encode(TEXTS[3:6]), DenseEncoder(minilm_path(), None)
                                  .encode(TEXTS[3:6]))


def test_unload_without_a_loaded_model_does_nothing(monkeypatch):
    """The sweep unloads when its model-bound stages are done and again after every stage:
    the second call must not collect and trim the heap again (~0.5 s on a sweep's heap)."""
    import ablate.components.retrieval.dense.encoder as dense
    trims = []
    monkeypatch.setattr(dense, "release_freed_memory", lambda: trims.append(1))
    enc = DenseEncoder(minilm_path(), None)
    enc.unload()  # never loaded
    assert trims == []
    enc.encode(TEXTS[:2])  # trims after its slice
    before = len(trims)
    enc.unload()
    assert len(trims) == before + 1 and enc._model is None
    enc.unload()  # already unloaded
    assert len(trims) == before + 1
