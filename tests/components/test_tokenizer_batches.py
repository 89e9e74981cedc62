"""The experiment tokenizer's batch calls: extents of short texts agree with their full
offsets, and batches encode in parallel without leaving the process's setting changed."""

from __future__ import annotations

import os
import threading

import pytest

from ablate.components.text.tokenizer import Extent, get_tokenizer, parallel_encoding

TEXTS = ["", "   ", "word", "  Rouen's cathedral, built 1202-1506. ", "北京是中国的首都。 mixed English",
         " ".join(["token"] * 40)]


@pytest.mark.parametrize("size", [1, 3, 8, 64])
def test_extents_agree_with_offsets(size):
    tok = get_tokenizer()
    full = tok.offsets_batch(TEXTS)
    for offsets, got in zip(full, tok.offsets_beyond(TEXTS, size)):
        if len(offsets) > size or not offsets:
            assert got == offsets
        else:
            assert isinstance(got, Extent)
            assert got == (len(offsets), offsets[0][0], offsets[-1][1])


@pytest.mark.parametrize("before", [None, "false", "true"])
def test_parallel_encoding_restores_the_setting(monkeypatch, before):
    if before is None:
        monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    else:
        monkeypatch.setenv("TOKENIZERS_PARALLELISM", before)
    seen = []

    def nested():
        with parallel_encoding():
            seen.append(os.environ["TOKENIZERS_PARALLELISM"])
            with parallel_encoding():
                seen.append(os.environ["TOKENIZERS_PARALLELISM"])

    threads = [threading.Thread(target=nested) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    get_tokenizer().offsets_batch(TEXTS)
    assert seen == ["true"] * 8
    assert os.environ.get("TOKENIZERS_PARALLELISM") == before
