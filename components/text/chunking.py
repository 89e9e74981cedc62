"""Chunkers with exact character offsets: chunk.text == doc.text[start:end], always.

Sizes are tokens of the one experiment tokenizer (special tokens excluded). Each document
is encoded once with offsets; windows are cut at token boundaries that start a new word
(a whitespace gap or punctuation), so re-tokenising a chunk's text gives the same tokens
and a chunk never exceeds `size` (chunks cut elsewhere than at whitespace are re-counted
to check it). chunk_id is
"{doc_id}:{start}-{end}", stable and content-based; chunks come by document, then start.

- token_window: windows of at most `size` tokens; consecutive windows share at most
  `overlap` tokens (the nearest word boundary at or after end - overlap).
- sentence: whole sentences (ablate.components.text.sentences: Latin and Chinese sentence ends)
  packed greedily up to `size`; the next chunk repeats the
  trailing whole sentences of the previous one that fit in `overlap`. A sentence longer
  than `size` is cut into token windows.
- document: each document whole, one chunk (its first to its last token), whatever its
  length: no budget (`size` and `overlap` are not read), for retrieval-only studies of
  a test collection whose judgments are per document (TREC, BEIR).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, Callable, Sequence

from ablate.components.contract.config import ChunkingConfig
from ablate.components.contract.dotted import get_dotted
from ablate.components.contract.records import Chunk, Document
from ablate.components.contract.registry import Registry
from ablate.components.text.sentences import sentence_spans
from ablate.components.text.tokenizer import Extent

Offsets = list[tuple[int, int]]
Splitter = Callable[[str, Offsets, ChunkingConfig], list[tuple[int, int]]]  # token ranges

CHUNKERS: Registry[Splitter] = Registry("chunker", config_field="chunking.method")
_READS = ("chunking.size", "chunking.overlap")


def chunk_token_limit(config: dict[str, Any]) -> int | None:
    """The most tokens one chunk of a stored pipeline config (a variant's config as a
    manifest or variants.json records it) holds: its `chunking.size` when its chunker reads
    that field, None when it does not (the `document` method: a chunk is its whole document)
    or the size is unknown. The one reading of `chunking.size` for code outside chunking
    (budget findings, the comparability note); `chunk_limit` reads a typed config."""
    return _limit(get_dotted(config, "chunking.method", ChunkingConfig().method),
                  get_dotted(config, "chunking.size", ChunkingConfig().size))


def chunk_limit(chunking: ChunkingConfig) -> int | None:
    """`chunk_token_limit` of a typed `chunking:` section (the judge's cost estimate)."""
    return _limit(chunking.method, chunking.size)


def _limit(method: object, size: object) -> int | None:
    if not isinstance(method, str) or method not in CHUNKERS:
        return None
    if "chunking.size" not in CHUNKERS.declaration(method).reads:
        return None
    return size if isinstance(size, int) and size > 0 else None


def word_boundaries(text: str, offsets: Offsets) -> list[int]:
    """Token indices where a cut keeps re-tokenisation identical (0 and len included)."""
    out = [0]
    for k in range(1, len(offsets)):
        s, prev_end = offsets[k][0], offsets[k - 1][1]
        if s > prev_end or not text[s].isalnum() or not text[prev_end - 1].isalnum():
            out.append(k)
    if offsets:
        out.append(len(offsets))
    return out


def _windows(bounds: list[int], lo: int, hi: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Token ranges [i, j) covering tokens lo..hi, cut at `bounds` where possible."""
    out: list[tuple[int, int]] = []
    i = lo
    while i < hi:
        limit = min(i + size, hi)
        j = bounds[bisect_right(bounds, limit) - 1]
        if j <= i:  # one word longer than size: cut inside it
            j = limit
        out.append((i, j))
        if j >= hi:
            break
        nxt = j
        if overlap:
            b = bounds[bisect_left(bounds, j - overlap)]
            nxt = b if i < b < j else j
        i = nxt
    return out


@CHUNKERS.register("token_window", reads=_READS)
def token_window(text: str, offsets: Offsets, cfg: ChunkingConfig) -> list[tuple[int, int]]:
    bounds = word_boundaries(text, offsets)
    return _windows(bounds, 0, len(offsets), cfg.size, cfg.overlap)


@CHUNKERS.register("sentence", reads=_READS)
def sentence(text: str, offsets: Offsets, cfg: ChunkingConfig) -> list[tuple[int, int]]:
    bounds = word_boundaries(text, offsets)
    starts = [s for s, _ in offsets]
    units: list[tuple[int, int]] = []  # token ranges of sentences (long ones pre-cut)
    for s, e in sentence_spans(text):
        i, j = bisect_left(starts, s), bisect_left(starts, e)
        if j <= i:
            continue
        i, j = bounds[bisect_right(bounds, i) - 1], bounds[bisect_left(bounds, j)]
        if units and i < units[-1][1]:  # a cut inside a word: join with the previous unit
            i = units.pop()[0]
        units.extend(_windows(bounds, i, j, cfg.size, 0) if j - i > cfg.size else [(i, j)])
    out: list[tuple[int, int]] = []
    u = 0
    while u < len(units):
        v = u + 1
        while v < len(units) and units[v][1] - units[u][0] <= cfg.size:
            v += 1
        out.append((units[u][0], units[v - 1][1]))
        if v >= len(units):
            break
        back = v
        while back - 1 > u and units[v - 1][1] - units[back - 1][0] <= cfg.overlap:
            back -= 1
        u = back
    return out


@CHUNKERS.register("document")
def document(text: str, offsets: Offsets, cfg: ChunkingConfig) -> list[tuple[int, int]]:
    return [(0, len(offsets))] if offsets else []


DOC_BLOCK = 4096  # documents tokenised together (their offsets are held for one block only)


def chunk_documents(documents: Sequence[Document], cfg: ChunkingConfig, tokenizer) -> list[Chunk]:
    """Chunk every document with the registered method `cfg.method` (see module doc)."""
    splitter = CHUNKERS.get(cfg.method)
    docs = list(documents)
    chunks: list[Chunk] = []
    for a in range(0, len(docs), DOC_BLOCK):
        chunks.extend(_chunk_block(docs[a:a + DOC_BLOCK], splitter, cfg, tokenizer))
    return chunks


def _chunk_block(docs: Sequence[Document], splitter: Splitter, cfg: ChunkingConfig,
                 tokenizer) -> list[Chunk]:
    pieces: list[tuple[Document, int, int, int]] = []
    texts = [d.text for d in docs]
    # token_window makes a document within one window one chunk: its extent is enough
    found = (tokenizer.offsets_beyond(texts, cfg.size)
             if splitter is token_window and hasattr(tokenizer, "offsets_beyond")
             else tokenizer.offsets_batch(texts))
    for doc, offsets in zip(docs, found):
        if isinstance(offsets, Extent):
            pieces.append((doc, offsets.start, offsets.end, offsets.n_tokens))
            continue
        for i, j in splitter(doc.text, offsets, cfg):
            pieces.append((doc, offsets[i][0], offsets[j - 1][1], j - i))
    # A cut next to whitespace cannot change tokenisation (whitespace always splits words),
    # so only chunks with another kind of cut are re-counted.
    risky = [k for k, (d, s, e, _) in enumerate(pieces)
             if (s > 0 and not d.text[s - 1].isspace())
             or (e < len(d.text) and not d.text[e].isspace())]
    counts = [n for *_, n in pieces]
    for k, c in zip(risky, tokenizer.count_batch([pieces[k][0].text[pieces[k][1]:pieces[k][2]]
                                                  for k in risky])):
        counts[k] = c
    chunks = []
    for (doc, s, e, n), c in zip(pieces, counts):
        # re-tokenisation differs at this cut: shrink until it fits (a document is whole)
        if c > cfg.size and splitter is not document:
            offs = tokenizer.offsets(doc.text[s:e])
            k = min(n, len(offs), cfg.size)
            while k > 1 and tokenizer.count(doc.text[s:s + offs[k - 1][1]]) > cfg.size:
                k -= 1
            e = s + offs[k - 1][1]
            c = tokenizer.count(doc.text[s:e])
        chunks.append(Chunk(f"{doc.doc_id}:{s}-{e}", doc.doc_id, s, e, doc.text[s:e], c))
    return chunks
