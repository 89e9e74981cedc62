"""The cross_encoder signal with a real (tiny, randomly initialised) local CrossEncoder.

The model is built in a temp dir from a small BERT config and the bundled MiniLM
tokenizer: nothing is downloaded, and the rerank path is exercised end to end.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from retrieval_helpers import make_chunks, make_questions

from ablate.components.contract.config import PipelineConfig, RerankConfig
from ablate.components.retrieval.fusion import minmax
from ablate.components.retrieval.resources import Resources
from ablate.components.retrieval.stages import rerank_rankings
from ablate.components.runtime.models import minilm_path


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    out = tmp_path_factory.mktemp("tiny-ce")
    src = minilm_path()
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, out / name)
    vocab = sum(1 for _ in open(src / "vocab.txt", encoding="utf-8"))
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128, num_labels=1)
    BertForSequenceClassification(cfg).eval().save_pretrained(out)
    return out


def test_cross_encoder_signal_drives_the_order(tiny_cross_encoder):
    from sentence_transformers import CrossEncoder

    chunks, q = make_chunks(), make_questions()[0]
    fused = {q.qid: [(c.chunk_id, 1.0 - i / 10) for i, c in enumerate(chunks)]}
    cfg = RerankConfig(method="composite", depth=6, weights={"cross_encoder": 1.0},
                       cross_encoder=str(tiny_cross_encoder))
    out = rerank_rankings([q], chunks, fused, PipelineConfig(rerank=cfg), Resources(), {})[q.qid]
    raw = CrossEncoder(str(tiny_cross_encoder), device="cpu").predict(
        [(q.question, c.text) for c in chunks[:6]])
    exp = minmax(np.asarray(raw, dtype=np.float64))
    got = dict(out[:6])
    for c, e in zip(chunks[:6], exp):
        assert got[c.chunk_id] == pytest.approx(e, abs=1e-5)
    assert out[0][0] == chunks[int(np.argmax(raw))].chunk_id
    assert out[6:] == fused[q.qid][6:]


def test_seed_weighting_with_cross_encoder(tiny_cross_encoder):
    """0.6 model / 0.3 base / 0.1 source, with the model a cross-encoder."""
    chunks, q = make_chunks(), make_questions()[0]
    fused = {q.qid: [(c.chunk_id, float(len(chunks) - i)) for i, c in enumerate(chunks)]}
    cfg = RerankConfig(method="composite", depth=len(chunks),
                       weights={"cross_encoder": 0.6, "fusion": 0.3, "source": 0.1},
                       cross_encoder=str(tiny_cross_encoder), default_credibility=0.5)
    cred = {"d0": 1.0}
    one = rerank_rankings([q], chunks, fused, PipelineConfig(rerank=cfg), Resources(), cred)[q.qid]
    only_ce = RerankConfig(method="composite", depth=len(chunks), weights={"cross_encoder": 1.0},
                           cross_encoder=str(tiny_cross_encoder))
    ce = dict(rerank_rankings([q], chunks, fused, PipelineConfig(rerank=only_ce), Resources(), cred)[q.qid])
    fus = dict(zip([c.chunk_id for c in chunks], minmax(np.arange(len(chunks), 0, -1.0))))
    for d, s in one:
        src = 1.0 if d in ("c000", "c001") else 0.5
        assert s == pytest.approx(0.6 * ce[d] + 0.3 * fus[d] + 0.1 * src, abs=1e-6)
