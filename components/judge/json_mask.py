"""The judge's JSON schemas as a logits mask per sequence, for the batched torch judge.

Pure Python over the GGUF file's own vocabulary (its metadata alone, no weights): each
token's bytes (byte-level BPE tokens through GPT-2's byte map; SentencePiece pieces with
their byte tokens), control and unused tokens never allowed. Each sequence of a batch has
its own schema automaton (ablate.components.judge.json_automaton); before every token the
mask keeps the best token the automaton allows, so a verdict never depends on which
requests share a batch. As decoding is greedy, only that token matters: the `TOP` best are
tried first, and the whole vocabulary (those whose first byte may come, best first) only
when none of them is allowed or the best allowed ties with a token left out; ties go to
the lowest id, as torch's argmax. Once the JSON object is complete, the end-of-turn token
is the only one allowed. Token ids agree with torch's: transformers reads the tokenizer
from the same GGUF file.

Needs no llama.cpp: the torch judge runs on the default install. Its constraint is not
llama.cpp's grammar sampler (the `llama_cpp` judge's): the torch judge's verdicts are
keyed apart from llama_cpp's (TorchJudge.cache_identity names this module's version).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Optional

from ablate.components.judge import json_automaton as ja
from ablate.components.runtime.gguf_meta import read_metadata

VERSION = "1"  # of the automaton and the vocabulary reading: in the torch judge's identity
TOP = 64  # tokens tried first (SchemaMask.mask)

_LOCK = threading.Lock()
_VOCABS: dict[str, "Vocab"] = {}


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level BPE map, reversed: each printable stand-in to its byte."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    chars, n = list(keep), 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(keep, chars)}


def _token_bytes(model: str, text: str, kind: int, decoder: dict[str, int]) -> Optional[bytes]:
    """A token's bytes, or None for a token a reply never contains (control, unused,
    unknown)."""
    if kind in (2, 3, 5):
        return None
    if kind == 4:  # user-defined: its text as it is
        return text.encode("utf-8")
    if model == "gpt2":
        try:
            return bytes(decoder[c] for c in text)
        except KeyError:
            return None
    if kind == 6:  # a SentencePiece byte token, <0xAB>
        return bytes((int(text[3:-1], 16),))
    return text.replace("\u2581", " ").encode("utf-8")


class Vocab:
    """The GGUF file's tokens as bytes, and each token's first byte (-1: never allowed)."""

    def __init__(self, path: Path) -> None:
        import numpy as np
        meta = read_metadata(path, ("tokenizer.ggml.model", "tokenizer.ggml.tokens",
                                    "tokenizer.ggml.token_type"))
        model, texts = meta.get("tokenizer.ggml.model"), meta.get("tokenizer.ggml.tokens")
        if texts is None or model not in ("gpt2", "llama"):
            raise ValueError(f"{path}: the torch judge reads byte-level BPE (gpt2) and "
                             f"SentencePiece (llama) vocabularies, not {model!r}")
        types = meta.get("tokenizer.ggml.token_type") or [1] * len(texts)
        decoder = _byte_decoder()
        self.tokens = [_token_bytes(model, t, int(k), decoder) for t, k in zip(texts, types)]
        self.first = np.array([t[0] if t else -1 for t in self.tokens], dtype=np.int16)
        self.size = len(self.tokens)


def vocab(path: Path) -> Vocab:
    """The process-wide vocabulary of this GGUF file."""
    key = str(Path(path).resolve())
    with _LOCK:
        if key not in _VOCABS:
            _VOCABS[key] = Vocab(Path(key))
        return _VOCABS[key]


class SchemaMask:
    """One sequence's schema: `mask(scores)` (a 1-d float tensor over the vocabulary, in
    place: the chosen token 0.0, every other -inf) and `accept(token)`."""

    def __init__(self, path: Path, schema: dict[str, Any], eos: int) -> None:
        self._vocab = vocab(path)
        self.n_vocab = self._vocab.size
        self._state = ja.compile_schema(schema)
        self._eos = eos

    def _allowed(self, token: int) -> bool:
        data = self._vocab.tokens[token]
        return bool(data) and ja.feed(self._state, data) is not None  # type: ignore[arg-type]

    def _choose(self, scores: Any) -> int:
        import numpy as np
        import torch
        if ja.done(self._state):
            return self._eos
        n = self.n_vocab
        values = scores[:n].detach().to(torch.float32)
        top = torch.topk(values, min(TOP, n))
        floor = float(top.values[-1])
        order = sorted(zip((-top.values).tolist(), top.indices.tolist()))
        for neg, token in order:
            if -neg <= floor:
                break  # ties with a token left out: decide over the whole vocabulary
            if self._allowed(token):
                return token
        first = np.zeros(257, dtype=bool)
        first[ja.allowed_bytes(self._state)] = True
        ids = np.flatnonzero(first[self._vocab.first.astype(np.int64)])  # -1 reads slot 256
        logits = values.numpy()[ids]
        for token in ids[np.lexsort((ids, -logits))]:
            if self._allowed(int(token)):
                return int(token)
        return self._eos  # nothing allowed (cannot happen with a JSON schema): end

    def mask(self, scores: Any) -> None:
        chosen = self._choose(scores)
        scores.fill_(float("-inf"))
        scores[chosen] = 0.0

    def accept(self, token: int) -> None:
        if token == self._eos:
            return
        data = self._vocab.tokens[token] or b""
        nxt = ja.feed(self._state, data)
        if nxt is None:
            raise ValueError(f"token {token} ({data!r}) does not follow the judge's schema")
        self._state = nxt
