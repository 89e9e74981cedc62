"""BM25 indexes on disk, memory-mapped when read back.

An index is a folder of .npy arrays (the CSR weight matrix's data, indices and indptr,
the frequent terms' dense rows, idf, document lengths) and two JSON lists (the document
ids in id order, the terms by row), written into a temporary folder and renamed into
place, then marked complete. Reading maps the arrays (np.load(mmap_mode="r")): a search
pages in the postings of its query terms, the kernel may drop clean pages under memory
pressure, and every process that reads the same folder (a sweep's stages, a Dask worker,
the next run) shares one copy in the page cache. A folder that is incomplete or damaged
reads as missing (None), so the caller builds the index again.

Integrity: the `complete` marker, written last, holds the sha256 of every file of the
folder; `load` checks them before mapping anything (read in 4 MB blocks, so the arrays
stay memory-mapped and nothing is copied into the process; once per file, size and
mtime in a process). A flipped byte reads as missing, and `save` replaces a damaged
folder it finds in its way instead of keeping it. The cost at 1M chunks is measured by
benchmarks/bm25_disk.py.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import numpy as np

from ablate.components.retrieval.bm25 import BM25Index
from ablate.components.runtime.digest import read_sha256

FORMAT = "2"  # 2: the marker holds every file's sha256
ARRAYS = ("data", "indices", "indptr", "dense", "dense_slot", "idf", "doc_len")
DONE = "complete"
FILES = tuple(f"{name}.npy" for name in ARRAYS) + ("ids.json", "terms.json", "meta.json")


_VERIFIED: dict[tuple[str, int, int, int], str] = {}


def _verified_sha256(path: Path) -> str:
    """sha256 of `path`, remembered per (path, inode, size, mtime) in this process."""
    st = path.stat()
    key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _VERIFIED:
        if len(_VERIFIED) > 4096:
            _VERIFIED.clear()
        _VERIFIED[key] = read_sha256(path)
    return _VERIFIED[key]


def intact(folder: Path) -> bool:
    """Whether `folder` is a complete index whose every file has the checksum its marker
    recorded."""
    folder = Path(folder)
    try:
        marker = json.loads((folder / DONE).read_text())
        if not isinstance(marker, dict) or marker.get("format") != FORMAT:
            return False
        sums = marker["sha256"]
        return all(_verified_sha256(folder / name) == sums[name] for name in FILES)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def save(index: BM25Index, folder: Path) -> None:
    """Write `index` to `folder` (atomically: a reader sees all of it or nothing)."""
    folder = Path(folder)
    tmp = folder.with_name(f".tmp-{folder.name}-{uuid.uuid4().hex[:8]}")
    tmp.mkdir(parents=True)
    try:
        m = index.matrix
        arrays = {"data": m.data, "indices": m.indices, "indptr": m.indptr,
                  "dense": index._dense, "dense_slot": index._dense_slot, "idf": index.idf,
                  "doc_len": index.doc_len}
        for name in ARRAYS:
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(arrays[name]))
        terms = sorted(index.vocab, key=index.vocab.__getitem__)
        (tmp / "ids.json").write_text(json.dumps(index.ids))
        (tmp / "terms.json").write_text(json.dumps(terms, ensure_ascii=False), encoding="utf-8")
        (tmp / "meta.json").write_text(json.dumps({
            "format": FORMAT, "k1": index.k1, "b": index.b, "epsilon": index.epsilon,
            "variant": index.variant, "delta": index.delta,
            "avgdl": index.avgdl, "n_docs": index.n_docs, "shape": list(m.shape)}))
        sums = {name: read_sha256(tmp / name) for name in FILES}
        (tmp / DONE).write_text(json.dumps({"format": FORMAT, "sha256": sums}))
        try:
            os.rename(tmp, folder)
        except OSError:  # written meanwhile by another process (the same index), or damaged
            if folder.exists() and not intact(folder):
                _discard(folder)
                try:
                    os.rename(tmp, folder)
                    return
                except OSError:
                    pass
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _discard(folder: Path) -> None:
    """Move a damaged index out of the way (a rename, so a reader sees it whole or not at
    all), then delete it."""
    aside = folder.with_name(f".tmp-{folder.name}-damaged-{uuid.uuid4().hex[:8]}")
    try:
        os.rename(folder, aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def load(folder: Path) -> BM25Index | None:
    """The index saved in `folder`, its arrays memory-mapped; None when there is no
    complete index there whose files match their checksums."""
    folder = Path(folder)
    if not intact(folder):
        return None
    try:
        meta = json.loads((folder / "meta.json").read_text())
        arr = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in ARRAYS}
        ids = json.loads((folder / "ids.json").read_text())
        terms = json.loads((folder / "terms.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError):
        return None
    n_terms, n = meta["shape"]
    if len(ids) != n or len(terms) != n_terms or arr["indptr"].shape != (n_terms + 1,):
        return None
    index = BM25Index.__new__(BM25Index)
    index.k1, index.b, index.epsilon = meta["k1"], meta["b"], meta["epsilon"]
    index.variant, index.delta = meta.get("variant", "okapi"), meta.get("delta", 0.0)
    index.avgdl, index.n_docs = meta["avgdl"], meta["n_docs"]
    index.ids = ids
    index.vocab = {t: i for i, t in enumerate(terms)}
    index.idf, index.doc_len = arr["idf"], arr["doc_len"]
    from scipy import sparse  # here: a run whose stages are all cached reads no index
    index.matrix = sparse.csr_matrix((arr["data"], arr["indices"], arr["indptr"]),
                                     shape=(n_terms, n), copy=False)
    index._dense = arr["dense"]
    index._dense_rows = list(index._dense)
    index._dense_slot = arr["dense_slot"]
    index._ids = np.array(ids, dtype=object)
    return index
