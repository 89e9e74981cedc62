"""BERT sentence encoders (all-MiniLM-L6-v2 and its kin) on plain torch.

The `torch` dense backend runs a sentence-transformers folder whose pipeline is a BERT
Transformer + mean Pooling (+ Normalize) with this module instead of importing
sentence-transformers and transformers, which cost ~170 MB resident and ~4 s of import
here (benchmarks/memory.py). It computes what `SentenceTransformer.encode` computes with
the same torch operations in the same order, on the same batches, so the vectors are
bitwise the same (tests/components/retrieval/dense/test_bert_torch.py checks it against
`SentenceTransformer.encode`, and benchmarks/dense.py prints the difference):

- texts sorted by descending character length (numpy argsort, as encode does), cut into
  batches of `batch_size`, each tokenised by the folder's tokenizer.json, truncated at
  `max_seq_length` and padded to its longest text;
- BertModel's forward with the SDPA attention transformers uses on CPU (no mask when a
  batch has no padding, else a boolean key-padding mask), exact GELU, LayerNorm;
- masked mean pooling, then the Normalize module and encode's own
  normalisation (sentence-transformers applies both).

Any other folder (other architectures, Dense layers, ...) keeps sentence-transformers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np

from ablate.components.retrieval.dense.onnx_encoder import FolderEmbedder, read_pipeline


def supported(model_path: Path) -> bool:
    """Whether this module reproduces the folder: BERT weights in model.safetensors,
    tokenizer.json, and a Transformer + mean Pooling (+ Normalize) pipeline."""
    model_path = Path(model_path)
    try:
        cfg = json.loads((model_path / "config.json").read_text())
        pooling = read_pipeline(model_path)["pooling"]
    except Exception:  # noqa: BLE001 - any doubt: sentence-transformers runs it
        return False
    return (pooling == "mean" and cfg.get("model_type") == "bert"
            and cfg.get("architectures") == ["BertModel"]
            and cfg.get("hidden_act") == "gelu"
            and cfg.get("position_embedding_type", "absolute") == "absolute"
            and not cfg.get("is_decoder", False)
            and (model_path / "model.safetensors").is_file()
            and (model_path / "tokenizer.json").is_file()
            and _normalises(model_path) is not None)


def _normalises(model_path: Path) -> bool | None:
    """True/False: the pipeline ends with/without Normalize; None: modules.json is missing."""
    modules_file = model_path / "modules.json"
    if not modules_file.is_file():
        return None
    types = [m.get("type", "") for m in json.loads(modules_file.read_text())]
    return types[-1].endswith(".Normalize")


class BertEncoder(FolderEmbedder):
    """SentenceTransformer's `encode` for a BERT folder (see the module doc), on CPU."""

    def __init__(self, model_path: Path) -> None:
        import torch
        from safetensors.torch import load_file
        super().__init__(model_path)
        cfg = json.loads((self.model_path / "config.json").read_text())
        self.normalize_module = bool(_normalises(self.model_path))
        self.tokenizer.enable_padding(pad_id=int(cfg.get("pad_token_id", 0)))  # to the longest
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.hidden = self.dim = int(cfg["hidden_size"])
        self.eps = float(cfg["layer_norm_eps"])
        self.w = {k: v.contiguous() for k, v in load_file(str(self.model_path / "model.safetensors")).items()}
        self.torch = torch

    def encode(self, texts: Sequence[str], batch_size: int = 32, normalize_embeddings: bool = False,
               convert_to_numpy: bool = True, show_progress_bar: bool = False) -> np.ndarray:
        """float32 (len(texts), dim) in input order (numpy only)."""
        torch = self.torch
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.hidden), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts])
        ordered = [texts[i] for i in order]
        if self.pipeline["lower_case"]:
            ordered = [t.lower() for t in ordered]
        out: list[np.ndarray] = []
        with torch.inference_mode():
            for a in range(0, len(ordered), batch_size):
                encs = self.tokenizer.encode_batch([t.strip() for t in ordered[a:a + batch_size]])
                ids = torch.tensor([e.ids for e in encs], dtype=torch.long)
                mask = torch.tensor([e.attention_mask for e in encs], dtype=torch.long)
                types = torch.tensor([e.type_ids for e in encs], dtype=torch.long)
                vec = self._pool(self._forward(ids, mask, types), mask)
                if self.normalize_module:
                    vec = torch.nn.functional.normalize(vec, p=2, dim=1)
                if normalize_embeddings:
                    vec = torch.nn.functional.normalize(vec, p=2, dim=1)
                out.append(vec.numpy())
        rows = np.concatenate(out)
        back = np.empty_like(order)
        back[order] = np.arange(order.size)
        return rows[back]

    def _forward(self, ids, mask, types):  # type: ignore[no-untyped-def]
        """BertModel's last hidden state (eval mode: no dropout)."""
        F = self.torch.nn.functional
        w, eps, hid = self.w, self.eps, (self.hidden,)
        b, n = ids.shape
        x = F.embedding(ids, w["embeddings.word_embeddings.weight"])
        x = x + F.embedding(types, w["embeddings.token_type_embeddings.weight"])
        pos = self.torch.arange(n, dtype=self.torch.long)[None, :]
        x = x + F.embedding(pos, w["embeddings.position_embeddings.weight"])
        x = F.layer_norm(x, hid, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        keys = None if bool(mask.all()) else \
            mask.bool()[:, None, None, :].expand(b, 1, n, n).contiguous()
        d = self.hidden // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(h, name):  # type: ignore[no-untyped-def]
                return F.linear(h, w[p + name + ".weight"], w[p + name + ".bias"])
            q, k, v = (lin(x, f"attention.self.{m}").view(b, n, -1, d).transpose(1, 2)
                       for m in ("query", "key", "value"))
            att = F.scaled_dot_product_attention(q, k, v, attn_mask=keys, dropout_p=0.0,
                                                 scale=d ** -0.5, is_causal=False)
            att = att.reshape(att.shape[0], -1, n, d).transpose(1, 2).contiguous()
            att = att.reshape(b, n, -1).contiguous()
            x = F.layer_norm(lin(att, "attention.output.dense") + x, hid,
                             w[p + "attention.output.LayerNorm.weight"],
                             w[p + "attention.output.LayerNorm.bias"], eps)
            inner = F.gelu(lin(x, "intermediate.dense"))
            x = F.layer_norm(lin(inner, "output.dense") + x, hid, w[p + "output.LayerNorm.weight"],
                             w[p + "output.LayerNorm.bias"], eps)
        return x

    def _pool(self, tokens, mask):  # type: ignore[no-untyped-def]
        """sentence-transformers' mean Pooling over the unmasked tokens."""
        m = mask.unsqueeze(-1).to(tokens.dtype)
        total = (tokens * m).sum(dim=1, dtype=tokens.dtype)
        return total / self.torch.clamp(m.sum(dim=1, dtype=tokens.dtype), min=1e-9)
