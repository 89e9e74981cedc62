"""The manifest's per-chunking record: the embedder-window statistics only where a
variant of that chunking runs the embedder, read from the stored chunk columns."""

from __future__ import annotations

from types import SimpleNamespace

import polars as pl

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.records import Document
from ablate.flows.outputs.manifest import chunking_stats


class _Store:
    def __init__(self, frames: dict[str, pl.DataFrame]) -> None:
        self.frames, self.reads = frames, []

    def read(self, stage: str, key: str) -> pl.DataFrame:
        self.reads.append((stage, key))
        return self.frames[key]


def _ctx(variants: dict[str, tuple[str, PipelineConfig]]) -> SimpleNamespace:
    long = " ".join(["word"] * 400)
    docs = {"d": Document("d", long)}
    frame = pl.DataFrame({"chunk_id": ["d:0-9", "d:10-1999"], "doc_id": ["d", "d"],
                          "start": [0, 10], "end": [9, 1999], "n_tokens": [2, 398]})
    return SimpleNamespace(
        variants=[SimpleNamespace(name=n, config=c) for n, (_, c) in variants.items()],
        plan=SimpleNamespace(by_variant={n: {"chunk": k} for n, (k, _) in variants.items()}),
        store=_Store({k: frame for k, _ in variants.values()}),
        dataset=SimpleNamespace(doc_by_id=lambda: docs))


def test_no_embedder_statistics_for_a_chunking_no_variant_embeds():
    bm25 = PipelineConfig.model_validate({"retrieval": {"paths": ["bm25"]}})
    ctx = _ctx({"baseline": ("k1", bm25)})
    stats = chunking_stats(ctx)
    assert stats == {"k1": {"chunking": bm25.chunking.model_dump(mode="json"), "chunks": 2}}


def test_embedder_statistics_when_any_variant_of_the_chunking_embeds():
    bm25 = PipelineConfig.model_validate({"retrieval": {"paths": ["bm25"]}})
    dense = PipelineConfig.model_validate({"retrieval": {"paths": ["dense"]}})
    semantic = PipelineConfig.model_validate({"retrieval": {"paths": ["bm25"]},
                                              "rerank": {"method": "composite",
                                                         "weights": {"semantic": 1.0}}})
    for later in (dense, semantic):
        ctx = _ctx({"baseline": ("k1", bm25), "other": ("k1", later)})
        entry = chunking_stats(ctx)["k1"]
        assert entry["chunks"] == 2 and entry["embedder_window"] == 256
        words = len(ctx.dataset.doc_by_id()["d"].text[10:1999].split())  # one piece each
        # one of the two chunks (its words + [CLS] and [SEP]) exceeds the window
        assert entry["share_over_embedder_window"] == 0.5
        assert entry["pieces_cut_max"] == words + 2 - 256 > 0
