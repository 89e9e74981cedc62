"""BM25 indexes kept on disk: read back memory-mapped, the same rankings, rebuilt when
damaged or when an analyzer's dictionary file changes."""

from __future__ import annotations

import random

import numpy as np

from ablate.components.contract.config import RetrievalConfig
from ablate.components.contract.records import Chunk
from ablate.components.retrieval import indexes
from ablate.components.retrieval.lexical import bm25_disk, resources
from ablate.components.retrieval.lexical.bm25 import BM25Index
from tests.components.retrieval.retrieval_helpers import random_corpus


def _mapped(a) -> bool:
    while a is not None:
        if isinstance(a, np.memmap):
            return True
        a = getattr(a, "base", None)
    return False


def test_saved_index_reads_back_mapped_with_the_same_rankings(tmp_path):
    words, docs = random_corpus(4, 600)
    ids = [f"c{(i * 7919) % 600:04d}" for i in range(600)]
    index = BM25Index(ids, docs, k1=1.2, b=0.6, epsilon=0.1)
    bm25_disk.save(index, tmp_path / "ix")
    back = bm25_disk.load(tmp_path / "ix")
    assert back is not None and back.ids == index.ids and back.vocab == index.vocab
    assert all(_mapped(a) for a in (back.matrix.data, back.matrix.indices, back._dense))
    rng = random.Random(4)
    queries = [[rng.choice(words + ["unknown"]) for _ in range(rng.randint(1, 6))] for _ in range(60)]
    assert back.search_many(queries, 10) == index.search_many(queries, 10)
    assert [back.search(q, 5) for q in queries] == [index.search(q, 5) for q in queries]
    np.testing.assert_array_equal(back.scores(queries[0]), index.scores(queries[0]))


def test_damaged_or_partial_folders_read_as_missing(tmp_path):
    _, docs = random_corpus(5, 50)
    bm25_disk.save(BM25Index([str(i) for i in range(50)], docs), tmp_path / "ix")
    assert bm25_disk.load(tmp_path / "nothing") is None
    (tmp_path / "ix" / "indptr.npy").write_bytes(b"not an array")
    assert bm25_disk.load(tmp_path / "ix") is None
    bm25_disk.save(BM25Index([str(i) for i in range(50)], docs), tmp_path / "iy")
    (tmp_path / "iy" / bm25_disk.DONE).unlink()  # killed before it was marked complete
    assert bm25_disk.load(tmp_path / "iy") is None


def test_lexical_keeps_the_index_in_the_folder_and_reuses_it(tmp_path):
    chunks = [Chunk(f"d:{i}", "d", i, i + 1, t, 2) for i, t in
              enumerate(["alpha beta", "beta gamma", "gamma delta", "delta alpha"])]
    cfg = RetrievalConfig(paths=("bm25",), analyzer="default")
    resources.clear_lexical()
    first, _ = resources.lexical(chunks, cfg, tmp_path)
    folders = list(tmp_path.iterdir())
    assert len(folders) == 1 and (folders[0] / bm25_disk.DONE).exists()
    assert _mapped(first.matrix.data)  # the caller gets the mapped copy
    resources.clear_lexical()  # a new process, in effect: read back, not built
    calls = []
    real = bm25_disk.save
    bm25_disk.save = lambda *a: calls.append(a)  # type: ignore[assignment]
    try:
        again, _ = resources.lexical(chunks, cfg, tmp_path)
    finally:
        bm25_disk.save = real  # type: ignore[assignment]
    assert calls == [] and again.search(["beta"], 4) == first.search(["beta"], 4)
    other = RetrievalConfig(paths=("bm25",), analyzer="default", bm25={"b": 0.3})
    resources.lexical(chunks, other, tmp_path)
    assert len(list(tmp_path.iterdir())) == 2  # parameters are part of the name
    resources.clear_lexical()


def test_a_changed_dictionary_file_names_another_index(tmp_path):
    words = tmp_path / "dict.txt"
    words.write_text("北京 10\n")
    key = ("fp", "zh", (("user_dict", str(words)),), 1.5, 0.75, 0.25)
    one = indexes.disk_key(bm25_disk.FORMAT, key, {"user_dict": str(words)})
    words.write_text("北京大学 10\n")
    assert indexes.disk_key(bm25_disk.FORMAT, key, {"user_dict": str(words)}) != one


def test_flipped_bytes_in_any_array_read_as_missing_and_are_rebuilt(tmp_path):
    """Issue 39.1: a damaged data.npy loaded as valid and gave recall 0 with exit 0."""
    words, docs = random_corpus(6, 300)
    index = BM25Index([f"c{i:03d}" for i in range(300)], docs)
    for name in ("data.npy", "indices.npy", "idf.npy", "ids.json"):
        folder = tmp_path / name
        bm25_disk.save(index, folder)
        f = folder / name
        raw = bytearray(f.read_bytes())
        at = len(raw) - 9  # inside the payload, past any header
        raw[at] ^= 0xFF
        f.write_bytes(bytes(raw))
        assert bm25_disk.load(folder) is None, name
        bm25_disk.save(index, folder)  # the damaged folder is replaced, not kept
        back = bm25_disk.load(folder)
        assert back is not None, name
        assert back.search_many([docs[0][:4]], 5) == index.search_many([docs[0][:4]], 5)


def test_two_kilobytes_overwritten_read_as_missing(tmp_path):
    _, docs = random_corpus(7, 2000)
    index = BM25Index([f"c{i:04d}" for i in range(2000)], docs)
    bm25_disk.save(index, tmp_path / "ix")
    f = tmp_path / "ix" / "data.npy"
    raw = bytearray(f.read_bytes())
    assert len(raw) > 4096
    raw[1024:3072] = bytes(2048)
    f.write_bytes(bytes(raw))
    assert bm25_disk.load(tmp_path / "ix") is None
