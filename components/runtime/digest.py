"""Content digests of files and folders, each file hashed once per (path, size, mtime) in a
process: model weights of hundreds of MB are read once, a file rewritten in place is read
again. Stage keys (declared `files` fields) hash `content_digest`; a model's identity in
the generation, judge and embedding caches and in MLflow's provenance is
`model_identity`, built on the same digest: one recipe, so a key, a cache and a record
can never disagree about which weights ran."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path


def read_sha256(path: str | Path) -> str:
    """sha256 of a whole file, read now (no memo: for checksums of files that may have
    been damaged in place since this process last read them)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=256)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    return read_sha256(path)


def file_sha256(path: Path) -> str:
    """sha256 of a whole file, computed once per (path, size, mtime) in this process."""
    st = Path(path).stat()
    return _sha256(str(path), st.st_size, st.st_mtime_ns)


def content_digest(path: str | Path) -> str:
    """sha256 of a file; of a folder, over every file's relative path and sha256 (sorted);
    "missing" when there is neither (a name, such as a bundled model's, is not a path)."""
    p = Path(path)
    if p.is_file():
        return file_sha256(p)
    if p.is_dir():
        h = hashlib.sha256()
        for f in sorted(q for q in p.rglob("*") if q.is_file()):
            h.update(f"{f.relative_to(p)}\0{file_sha256(f)}\n".encode())
        return h.hexdigest()
    return "missing"


def model_identity(path: str | Path) -> str:
    """`<name>-<first 16 hex of content_digest>` of a model file or folder (a folder named
    `model` takes its parent's name): what caches key a model by and MLflow records."""
    p = Path(path)
    name = p.parent.name if p.name == "model" else p.name
    return f"{name}-{content_digest(p)[:16]}"
