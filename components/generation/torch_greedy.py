"""Greedy decoding of one batch on the `torch` backend, without transformers' `generate()`.

The answers are those `model.generate(..., do_sample=False, stop_strings=stop)` gives one
prompt at a time, token for token (tests/components/generation/test_torch_greedy.py), with
less work per batch:

- a row ends when it emits the end-of-turn token or when a stop text appears in its text
  (transformers' StopStringCriteria rule: the stop text overlaps the token just chosen,
  the prompt's last tokens included). The check decodes the row's few new tokens per step
  instead of preprocessing the whole vocabulary on every `generate()` call, as
  StopStringCriteria does (0.2-0.4 s per call measured for SmolLM2's 49k tokens);
- a row that ended leaves the batch (its rows of the KV cache are dropped), so a batch no
  longer runs every row until its longest one ends;
- the prompt's logits are computed for its last position only.

Positions, masks and the float32 arithmetic are `generate()`'s: left padding, the
attention mask extended by one per step, position ids counted over the mask, the argmax of
the float32 logits (ties to the lowest id). A row's tokens never depend on the other rows
of its batch, as with `generate()`: masked positions contribute nothing to a row.
"""

from __future__ import annotations

from typing import Any


class StopTexts:
    """Whether a row's new tokens have produced one of the stop texts: an occurrence that
    reaches past the prompt, in the text of the prompt's last tokens (as many as the
    longest stop text has bytes) followed by the new tokens. Asked after every token, so
    the first occurrence found is the one the newest token completed (transformers'
    StopStringCriteria rule)."""

    def __init__(self, tok: Any, stop: list[str]) -> None:
        self.tok, self.stop = tok, [s for s in stop if s]
        self.k = max((len(s.encode()) for s in self.stop), default=0)

    def _text(self, ids: list[int]) -> str:
        return str(self.tok.decode(ids, skip_special_tokens=False,
                                   clean_up_tokenization_spaces=False))

    def ended(self, prompt: list[int], new: list[int]) -> bool:
        if not self.stop:
            return False
        tail = prompt[-self.k:]
        head = len(self._text(tail))
        text = self._text(tail + new)
        return any(text.find(s, max(0, head - len(s) + 1)) >= 0 for s in self.stop)


def _prefill(model: Any, prompt: list[int]) -> tuple[Any, Any]:
    """(float32 logits of the last position, KV cache) of one prompt read alone: no
    padding and no mask, exactly as generate() reads a prompt one at a time."""
    import torch
    from transformers.cache_utils import DynamicCache
    cache = DynamicCache(config=model.config)
    n = len(prompt)
    out = model(input_ids=torch.tensor([prompt]), attention_mask=torch.ones((1, n), dtype=torch.long),
                position_ids=torch.arange(n)[None], cache=cache, use_cache=True, logits_to_keep=1)
    return out.logits[0, -1].to(copy=True, dtype=torch.float32), cache


def _stack(model: Any, caches: list[Any], lengths: list[int]) -> tuple[Any, Any]:
    """One left-padded batch KV cache (pad positions zero, masked) from single-row caches,
    and its attention mask. Each row is copied into its place in one zeroed tensor per
    layer, and each single-row layer is dropped once copied, so the batch never holds the
    rows twice (at 8 prompts of ~940 tokens that was 0.34 GB more at the peak)."""
    import torch
    from transformers.cache_utils import DynamicCache
    width = max(lengths)
    batch = DynamicCache(config=model.config)
    for layer in range(len(caches[0].layers)):
        first = caches[0].layers[layer].keys
        keys = first.new_zeros((len(caches), first.shape[1], width, first.shape[3]))
        values = caches[0].layers[layer].values.new_zeros(keys.shape)
        for r, c in enumerate(caches):
            row = c.layers[layer]
            n = row.keys.shape[2]
            keys[r, :, width - n:] = row.keys[0]
            values[r, :, width - n:] = row.values[0]
            row.keys = row.values = None  # copied: the single row's memory goes back now
        batch.update(keys, values, layer)
        del keys, values
    mask = torch.tensor([[0] * (width - n) + [1] * n for n in lengths])
    return batch, mask


def greedy(model: Any, prompts: list[list[int]], eos: int, max_new_tokens: int,
           stop: StopTexts | None = None, rows: list[Any] | None = None) -> list[list[int]]:
    """Each prompt's new tokens, up to and including the end-of-turn token `eos` or the
    token that completed a stop text, at most `max_new_tokens`. `rows[i]`, when given, is
    prompt i's constraint: `mask(scores)` before each choice, `accept(token)` after a
    choice that does not end the row (ablate.components.judge.json_mask).

    Each prompt is read alone (prompt reading is compute-bound: batching it saves nothing,
    and padding would cost both arithmetic and a materialised attention mask); the rows
    then decode together, one token per step, from their caches stacked left-padded."""
    import torch
    new: list[list[int]] = [[] for _ in prompts]

    def choose(i: int, scores: Any) -> bool:
        """Row i's next token; whether the row goes on."""
        if rows is not None:
            if new[i]:
                rows[i].accept(new[i][-1])
            rows[i].mask(scores)
        t = int(scores.argmax())
        new[i].append(t)
        return not (t == eos or len(new[i]) >= max_new_tokens
                    or (stop is not None and stop.ended(prompts[i], new[i])))

    live, caches = [], []
    for i, p in enumerate(prompts):
        scores, cache = _prefill(model, p)
        if choose(i, scores):
            live.append(i)
            caches.append(cache)
    if not live:
        return new
    cache, mask = _stack(model, caches, [len(prompts[i]) for i in live])
    del caches
    nxt = torch.tensor([[len(prompts[i])] for i in live])
    while live:
        mask = torch.cat([mask, mask.new_ones((len(live), 1))], dim=1)
        chosen = torch.tensor([[new[i][-1]] for i in live])
        out = model(input_ids=chosen, attention_mask=mask, position_ids=nxt, cache=cache,
                    use_cache=True, logits_to_keep=1)
        scores = out.logits[:, -1].to(copy=True, dtype=torch.float32)
        del out
        keep = [r for r, i in enumerate(live) if choose(i, scores[r])]
        if len(keep) < len(live):  # finished rows leave the batch and its cache
            if not keep:
                break
            idx = torch.tensor(keep)
            cache.batch_select_indices(idx)
            mask, nxt = mask[idx], nxt[idx]
            live = [live[r] for r in keep]
        nxt = nxt + 1
    return new
