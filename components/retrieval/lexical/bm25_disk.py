"""BM25 indexes on disk, memory-mapped when read back.

An index is a folder of .npy arrays (the CSR weight matrix's data, indices and indptr,
the frequent terms' dense rows, idf, document lengths) and JSON values (the document ids
in id order, the terms by row, the parameters), written and checked by array_folder:
renamed into place whole, marked complete with every file's sha256, read only when every
file matches. Reading maps the arrays (np.load(mmap_mode="r")): a search pages in the
postings of its query terms, the kernel may drop clean pages under memory pressure, and
every process that reads the same folder (a sweep's stages, a Dask worker, the next run)
shares one copy in the page cache. A folder that is incomplete or damaged reads as
missing (None), so the caller builds the index again; `save` replaces a damaged folder
it finds in its way. The cost at 1M chunks is measured by benchmarks/bm25_disk.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ablate.components.retrieval import array_folder
from ablate.components.retrieval.array_folder import DONE  # noqa: F401 - the marker's name
from ablate.components.retrieval.lexical.bm25 import BM25Index

FORMAT = "2"  # 2: the marker holds every file's sha256
ARRAYS = ("data", "indices", "indptr", "dense", "dense_slot", "idf", "doc_len")
VALUES = ("ids", "terms", "meta")
FILES = array_folder.files_of(ARRAYS, VALUES)


def intact(folder: Path) -> bool:
    """Whether `folder` is a complete index whose every file has the checksum its marker
    recorded."""
    return array_folder.intact(folder, FILES, FORMAT)


def save(index: BM25Index, folder: Path) -> None:
    """Write `index` to `folder` (atomically: a reader sees all of it or nothing)."""
    m = index.matrix
    arrays = {"data": m.data, "indices": m.indices, "indptr": m.indptr,
              "dense": index._dense, "dense_slot": index._dense_slot, "idf": index.idf,
              "doc_len": index.doc_len}
    terms = sorted(index.vocab, key=index.vocab.__getitem__)
    meta = {"format": FORMAT, "k1": index.k1, "b": index.b, "epsilon": index.epsilon,
            "variant": index.variant, "delta": index.delta,
            "avgdl": index.avgdl, "n_docs": index.n_docs, "shape": list(m.shape)}
    array_folder.write(folder, arrays, {"ids": index.ids, "terms": terms, "meta": meta}, FORMAT)


def load(folder: Path) -> BM25Index | None:
    """The index saved in `folder`, its arrays memory-mapped; None when there is no
    complete index there whose files match their checksums."""
    got = array_folder.read(folder, ARRAYS, VALUES, FORMAT)
    if got is None:
        return None
    arr, values = got
    meta, ids, terms = values["meta"], values["ids"], values["terms"]
    try:
        n_terms, n = meta["shape"]
    except (KeyError, TypeError, ValueError):
        return None
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
