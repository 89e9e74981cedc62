"""The batch KV cache built from single-prompt caches (torch_greedy._stack): the same
left-padded tensors as padding each row and concatenating them, and each single row
released as it is copied, so the batch never holds every row twice."""

from __future__ import annotations

import torch
from transformers import LlamaConfig
from transformers.cache_utils import DynamicCache

from ablate.components.generation.torch_greedy import _stack


class Model:
    config = LlamaConfig(num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                         hidden_size=32, intermediate_size=64, vocab_size=50)


def _single(n: int, seed: int) -> DynamicCache:
    g = torch.Generator().manual_seed(seed)
    c = DynamicCache(config=Model.config)
    for layer in range(3):
        c.update(torch.randn(1, 2, n, 8, generator=g), torch.randn(1, 2, n, 8, generator=g), layer)
    return c


def test_the_stacked_cache_is_the_rows_left_padded_and_each_row_is_released():
    lengths = [5, 9, 2]
    singles = [_single(n, s) for s, n in enumerate(lengths)]
    want = []
    for layer in range(3):
        pad = [(torch.nn.functional.pad(c.layers[layer].keys, (0, 0, 9 - n, 0)),
                torch.nn.functional.pad(c.layers[layer].values, (0, 0, 9 - n, 0)))
               for c, n in zip(singles, lengths)]
        want.append((torch.cat([k for k, _ in pad]), torch.cat([v for _, v in pad])))
    batch, mask = _stack(Model(), singles, lengths)
    for layer in range(3):
        assert torch.equal(batch.layers[layer].keys, want[layer][0])
        assert torch.equal(batch.layers[layer].values, want[layer][1])
        assert all(c.layers[layer].keys is None and c.layers[layer].values is None for c in singles)
    assert mask.tolist() == [[0] * 4 + [1] * 5, [1] * 9, [0] * 7 + [1] * 2]


def test_a_first_conversion_runs_on_the_saved_copy_not_the_converted_one(tmp_path, monkeypatch):
    """The first load converts the GGUF file, saves the copy, then loads that copy: the
    conversion's own tensors (~0.5 GB for SmolLM2) are not kept for the rest of the run,
    and the first run computes with the same weights as every later one."""
    from ablate.components.generation import torch_gguf

    class Model:
        def __init__(self, where: str) -> None:
            self.where = where

        def eval(self) -> None:
            pass

    class Auto:
        @staticmethod
        def from_pretrained(folder: str, dtype=None):  # type: ignore[no-untyped-def]
            return Model(folder)

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"x")
    folder = tmp_path / "converted"
    monkeypatch.setattr(torch_gguf, "converted_dir", lambda p: folder)
    monkeypatch.setattr(torch_gguf, "_from_gguf", lambda p: (Model("conversion"), "tok"))
    monkeypatch.setattr(torch_gguf, "_save", lambda f, m, t: f.mkdir() or True)
    monkeypatch.setattr(torch_gguf, "_transformers", lambda: (Auto, None, None))
    monkeypatch.setattr(torch_gguf, "_MODELS", {})
    model, tok, _ = torch_gguf.load(gguf)
    assert model.where == str(folder) and tok == "tok"
