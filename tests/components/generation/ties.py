"""Greedy answers compared across batchings: identical, or first differing at a near-tie
of the float32 logits, which summation order (batching, another BLAS or CPU) may break the
other way. A test of batched generation that demanded identity everywhere would depend on
the machine's BLAS."""

from __future__ import annotations

import torch

TIE = 1e-3  # logits this close are a tie another BLAS or CPU may break the other way


def agree(model, prompts, got, want, tie: float = TIE) -> list[int]:  # type: ignore[no-untyped-def]
    """Each row of `got` (new token ids) is `want`'s, or first differs where `want`'s two
    choices were a near-tie of the float32 logits (within `tie`) given the prompt and
    `want`'s tokens before it; both choices allowed there (a constrained row's mask is the
    same for both), so the logits alone decide. Returns the rows that differ."""
    differ = []
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g == w:
            continue
        k = next((j for j, (a, b) in enumerate(zip(g, w)) if a != b), None)
        assert k is not None, (i, g, w)  # one is a prefix of the other: not a tie
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([prompts[i] + w[:k]])).logits[0, -1].float()
        gap = abs(float(logits[g[k]]) - float(logits[w[k]]))
        assert gap <= tie, (i, k, g[k], w[k], gap)
        differ.append(i)
    return differ
