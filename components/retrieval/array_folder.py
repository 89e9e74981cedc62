"""A folder of numpy arrays and JSON values on disk, written whole or not at all and read
back memory-mapped, for the indexes a retrieval path keeps in the cache (BM25's, the
knowledge graph's).

Written into a temporary folder and renamed into place, then marked complete: the
`complete` marker, written last, holds the format and the sha256 of every file, and a
folder is read only when every file matches (read in 4 MB blocks, so the arrays stay
memory-mapped and nothing is copied into the process; once per file, size and mtime in
a process). A folder that is incomplete, of another format or damaged reads as missing
(None), so the caller builds the index again; `write` replaces a damaged folder it finds
in its way instead of keeping it.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, Callable, TypeVar

import numpy as np

from ablate.components.runtime.digest import read_sha256

DONE = "complete"
T = TypeVar("T")

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


def files_of(arrays: tuple[str, ...], values: tuple[str, ...]) -> tuple[str, ...]:
    """The file names of a folder holding these arrays (`.npy`) and JSON values (`.json`)."""
    return tuple(f"{a}.npy" for a in arrays) + tuple(f"{v}.json" for v in values)


def intact(folder: Path, files: tuple[str, ...], fmt: str) -> bool:
    """Whether `folder` is complete, of format `fmt`, and its every file has the checksum
    its marker recorded."""
    folder = Path(folder)
    try:
        marker = json.loads((folder / DONE).read_text())
        if not isinstance(marker, dict) or marker.get("format") != fmt:
            return False
        sums = marker["sha256"]
        return all(_verified_sha256(folder / name) == sums[name] for name in files)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def write(folder: Path, arrays: dict[str, np.ndarray], values: dict[str, Any], fmt: str) -> None:
    """Write the arrays and JSON values to `folder` (atomically: a reader sees all of it or
    nothing)."""
    folder = Path(folder)
    files = files_of(tuple(arrays), tuple(values))
    tmp = folder.with_name(f".tmp-{folder.name}-{uuid.uuid4().hex[:8]}")
    tmp.mkdir(parents=True)
    try:
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(array))
        for name, value in values.items():
            (tmp / f"{name}.json").write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        sums = {name: read_sha256(tmp / name) for name in files}
        (tmp / DONE).write_text(json.dumps({"format": fmt, "sha256": sums}))
        try:
            os.rename(tmp, folder)
        except OSError:  # written meanwhile by another process (the same index), or damaged
            if folder.exists() and not intact(folder, files, fmt):
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


def read(folder: Path, arrays: tuple[str, ...], values: tuple[str, ...], fmt: str
         ) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """(arrays memory-mapped, JSON values) of an intact folder; None otherwise."""
    folder = Path(folder)
    if not intact(folder, files_of(arrays, values), fmt):
        return None
    try:
        arr = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in arrays}
        got = {name: json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
               for name in values}
    except (OSError, ValueError):
        return None
    return arr, got


def kept(where: Path, load: Callable[[Path], T | None], build: Callable[[], T],
         save: Callable[[T, Path], None]) -> T:
    """What the folder `where` holds (`load`); else built, saved there and read back (the
    mapped copy, whose pages the kernel can drop); a read-only or full cache folder
    serves the built one."""
    found = load(where)
    if found is not None:
        return found
    made = build()
    try:
        save(made, where)
    except OSError:  # a read-only or full cache folder: the built one still serves
        return made
    return load(where) or made


def _discard(folder: Path) -> None:
    """Move a damaged folder out of the way (a rename, so a reader sees it whole or not at
    all), then delete it."""
    aside = folder.with_name(f".tmp-{folder.name}-damaged-{uuid.uuid4().hex[:8]}")
    try:
        os.rename(folder, aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)
