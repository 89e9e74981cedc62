"""The judge's JSON schemas as a logits mask per sequence, for the batched torch judge.

A schema is compiled into a GBNF grammar exactly as the `llama_cpp` judge's
`response_format` does (`LlamaGrammar.from_json_schema`), and each sequence of a batch
gets its own llama.cpp grammar sampler over the GGUF file's vocabulary (read alone,
`vocab_only`: no weights): before every token the sampler sets the logits of the tokens
the grammar forbids to -inf (an end-of-generation token only once the JSON object is
complete; any of them stands for the end-of-turn token torch's decoding stops at); as
decoding is greedy, only the best allowed token is kept, found among the best few first, the greedy choice is taken from what is left, and the chosen token advances
that sequence's grammar. Same constraint as the llama_cpp judge, per row, so a verdict
never depends on which requests share a batch. The token ids agree: transformers reads the
tokenizer from the same GGUF file.
"""

from __future__ import annotations

import ctypes
import json
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

_LOCK = threading.Lock()
_VOCABS: dict[str, Any] = {}
TOP = 64  # tokens checked first (SchemaMask.mask)


def _vocab(path: Path) -> Any:
    """The process-wide vocabulary-only llama.cpp model of this GGUF file."""
    key = str(Path(path).resolve())
    with _LOCK:
        if key not in _VOCABS:
            from llama_cpp import Llama
            _VOCABS[key] = Llama(model_path=key, vocab_only=True, verbose=False)
        return _VOCABS[key]


@lru_cache(maxsize=8)
def _end_tokens(path: Path) -> Any:
    """The end-of-generation token ids of the vocabulary (a long tensor)."""
    import torch
    from llama_cpp import llama_cpp as lib
    vocab = _vocab(path)._model.vocab
    n = int(lib.llama_vocab_n_tokens(vocab))
    return torch.tensor([t for t in range(n) if lib.llama_vocab_is_eog(vocab, t)], dtype=torch.long)


@lru_cache(maxsize=64)
def gbnf(schema_json: str) -> str:
    """The GBNF grammar of a JSON schema (the llama_cpp judge's conversion)."""
    from llama_cpp.llama_grammar import LlamaGrammar
    return LlamaGrammar.from_json_schema(schema_json, verbose=False)._grammar


class SchemaMask:
    """One sequence's grammar: `mask(scores)` (a 1-d float tensor over the vocabulary, in
    place) and `accept(token)`."""

    def __init__(self, path: Path, schema: dict[str, Any], eos: int) -> None:
        import numpy as np
        from llama_cpp import llama_cpp as lib
        self._lib, self._np = lib, np
        self._llm = _vocab(path)  # kept alive as long as the sampler
        vocab = self._llm._model.vocab
        self.n_vocab = int(lib.llama_vocab_n_tokens(vocab))
        grammar = gbnf(json.dumps(schema, sort_keys=True))
        self._smpl = lib.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
        if not self._smpl:
            raise ValueError("the judge's schema does not compile to a grammar")
        self._data = np.recarray((self.n_vocab,), dtype=np.dtype(
            [("id", np.intc), ("logit", np.single), ("p", np.single)], align=True))
        self._ids = np.arange(self.n_vocab, dtype=np.intc)
        self._eos = eos
        self._eog_set = set(_end_tokens(path).tolist())
        self._array = lib.llama_token_data_array(
            data=self._data.ctypes.data_as(lib.llama_token_data_p), size=self.n_vocab,
            selected=-1, sorted=False)

    def mask(self, scores: Any) -> None:
        """Greedy decoding takes the best token the grammar allows: the `TOP` best tokens
        are checked first (a few milliseconds; the whole vocabulary takes ~0.1 s inside a
        string, where almost every token is allowed) and the whole vocabulary only when
        none of them is allowed or the best allowed ties with a token left out. `scores`
        keeps that one token (0.0, every other -inf): the same greedy choice as the
        whole mask, ties to the lowest id as torch's argmax."""
        import torch
        n = self.n_vocab
        values = scores[:n].detach().to(torch.float32)
        top = torch.topk(values, min(TOP, n))
        chosen = self._best(top.indices.numpy().astype(self._np.intc),
                            top.values.numpy(), floor=float(top.values[-1]))
        if chosen is None:
            chosen = self._best(self._ids, values.numpy(), floor=None)
        if chosen is None:  # nothing allowed (cannot happen with a JSON schema): end
            chosen = self._eos
        if int(chosen) in self._eog_set:
            # any end-of-generation token ends llama.cpp's reply (SmolLM2: <|endoftext|>
            # and <|im_end|>); torch decoding ends at `eos` only
            chosen = self._eos
        scores.fill_(float("-inf"))
        scores[int(chosen)] = 0.0

    def _best(self, ids: Any, logits: Any, floor: float | None) -> int | None:
        """The allowed token of highest logit among `ids` (lowest id on ties), or None
        when none is allowed or (`floor` given: a partial list) the best ties with it."""
        np, size = self._np, len(ids)
        self._data.id[:size] = ids
        self._data.logit[:size] = logits
        self._data.p[:size] = 0.0
        self._array.size, self._array.sorted, self._array.selected = size, False, -1
        self._lib.llama_sampler_apply(self._smpl, ctypes.byref(self._array))
        kept = np.asarray(self._data.logit[:int(self._array.size)])
        ok = np.isfinite(kept)
        if not ok.any():
            return None
        best = kept[ok].max()
        if floor is not None and best <= floor:
            return None
        tied = np.asarray(self._data.id[:int(self._array.size)])[ok & (kept == best)]
        return int(tied.min())

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self._smpl, int(token))

    def __del__(self) -> None:
        smpl = getattr(self, "_smpl", None)
        if smpl:
            self._lib.llama_sampler_free(smpl)
