"""Pack ranked chunks into the fixed context token budget (docs/pipeline.md, "Context packing").

The top `depth` ranked chunks are considered in rank order. Chunks of one document that
overlap or touch (only whitespace between them) are merged into one Passage, so overlap
never counts twice, neither as tokens nor as evidence; the token count of a merged
passage (experiment tokenizer) is what counts against the budget. Separators and
numbering added by the prompt are not counted. Passages appear in the rank order of
their best chunk, each as a document range. Chunk.n_tokens is trusted for a chunk that
merges with nothing, so chunks must come from chunk_documents with the same tokenizer.

Policy for the chunk that does not fit:
- skip: leave it out (listed in cut_chunk_ids) and try the next one;
- stop: stop there; it and every later chunk within depth are cut;
- truncate: keep its longest token prefix that fits, then stop (a chunk left with no
  token is cut).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ablate.components.contract.records import Chunk, Document, PackedContext, Passage

POLICIES = ("skip", "stop", "truncate")


def _merge(ranges: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Union of character ranges, joining ranges separated only by whitespace."""
    out: list[list[int]] = []
    for s, e in sorted(ranges):
        if out and (s <= out[-1][1] or not text[out[-1][1]:s].strip()):
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


class _Packer:
    """Selected ranges per document, with cached token counts of merged passages."""

    def __init__(self, documents: Mapping[str, Document], tokenizer) -> None:
        self.documents = documents
        self.tokenizer = tokenizer
        self.ranges: dict[str, list[tuple[int, int]]] = {}
        self._counts: dict[tuple[str, int, int], int] = {}
        self.first_rank: dict[str, list[tuple[tuple[int, int], int]]] = {}

    def known(self, chunk: Chunk) -> None:
        self._counts[(chunk.doc_id, chunk.start, chunk.end)] = chunk.n_tokens

    def _count(self, doc_id: str, s: int, e: int) -> int:
        key = (doc_id, s, e)
        if key not in self._counts:
            self._counts[key] = self.tokenizer.count(self.documents[doc_id].text[s:e])
        return self._counts[key]

    def doc_tokens(self, doc_id: str, ranges: list[tuple[int, int]]) -> int:
        text = self.documents[doc_id].text
        return sum(self._count(doc_id, s, e) for s, e in _merge(ranges, text))

    def total_with(self, doc_id: str, rng: tuple[int, int]) -> int:
        total = sum(self.doc_tokens(d, r) for d, r in self.ranges.items() if d != doc_id)
        return total + self.doc_tokens(doc_id, self.ranges.get(doc_id, []) + [rng])

    def add(self, doc_id: str, rng: tuple[int, int], rank: int) -> None:
        self.ranges.setdefault(doc_id, []).append(rng)
        self.first_rank.setdefault(doc_id, []).append((rng, rank))

    def passages(self) -> list[Passage]:
        out = []
        for doc_id, ranges in self.ranges.items():
            text = self.documents[doc_id].text
            for s, e in _merge(ranges, text):
                rank = min(r for (a, b), r in self.first_rank[doc_id] if s <= a and b <= e)
                out.append((rank, doc_id, s, Passage(doc_id, s, e, text[s:e])))
        return [p for *_, p in sorted(out, key=lambda t: t[:3])]


def _truncated(packer: _Packer, chunk: Chunk, budget: int) -> tuple[int, int] | None:
    """The longest token prefix of `chunk` that keeps the total within budget, or None."""
    offsets = packer.tokenizer.offsets(chunk.text)
    lo, hi, best = 1, len(offsets), None
    while lo <= hi:  # totals grow with the prefix length, so bisect on it
        mid = (lo + hi) // 2
        rng = (chunk.start, chunk.start + offsets[mid - 1][1])
        if packer.total_with(chunk.doc_id, rng) <= budget:
            best, lo = rng, mid + 1
        else:
            hi = mid - 1
    return best


def pack_context(ranking: Sequence[tuple[str, float]], chunks_by_id: Mapping[str, Chunk],
                 documents: Mapping[str, Document], budget: int, policy: str, tokenizer,
                 depth: int) -> PackedContext:
    """Pack the top `depth` ranked chunks into `budget` tokens under `policy` (module doc)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown context policy '{policy}' (known: {', '.join(POLICIES)})")
    packer = _Packer(documents, tokenizer)
    included: list[str] = []
    cut: list[str] = []
    total = 0
    considered: list[Chunk] = []
    seen: set[str] = set()
    for cid, _score in ranking:
        if len(considered) >= depth:
            break
        if cid in seen:
            continue
        seen.add(cid)
        if cid not in chunks_by_id:
            raise ValueError(f"ranked chunk '{cid}' is not among the chunks")
        considered.append(chunks_by_id[cid])
    for chunk in considered:  # a lone chunk's count is known: no re-tokenising
        packer.known(chunk)
    for rank, chunk in enumerate(considered):
        rng = (chunk.start, chunk.end)
        new_total = packer.total_with(chunk.doc_id, rng)
        if new_total <= budget:
            packer.add(chunk.doc_id, rng, rank)
            included.append(chunk.chunk_id)
            total = new_total
            continue
        if policy == "skip":
            cut.append(chunk.chunk_id)
            continue
        rest = [c.chunk_id for c in considered[rank + 1:]]
        part = _truncated(packer, chunk, budget) if policy == "truncate" else None
        if part is not None:
            packer.add(chunk.doc_id, part, rank)
            included.append(chunk.chunk_id)
            total = packer.total_with(chunk.doc_id, part)
            cut.extend(rest)
        else:
            cut.extend([chunk.chunk_id] + rest)
        break
    return PackedContext(chunk_ids=tuple(included), passages=tuple(packer.passages()),
                         n_tokens=total, budget=budget, cut_chunk_ids=tuple(cut))
