"""Temporaries a killed run left behind, removed by the next run (issue 39.9).

A run killed while writing its sweep folder leaves `<out>/.<sweep id>.tmp-<pid>/` (or
`.<sweep id>.old-<pid>/` while it swaps folders); one killed while saving a BM25 index
leaves `<cache>/indexes/.tmp-bm25-*`. Before its first stage, a run removes the output
root's temporaries whose process is gone (on this machine) or that are older than
STALE_TMP_SECONDS, and the index folder's temporaries older than that (the cache may be
shared by other machines' workers, whose processes cannot be seen from here). `ablate
cache prune` removes the cache's stale temporaries too.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

from ablate.flows.run.store import STALE_TMP_SECONDS

OUT_TMP = re.compile(r"^\..+\.(?:tmp|old)-(\d+)$")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _newest(folder: Path) -> float:
    """The latest modification time of a folder or anything in it."""
    times = [folder.stat().st_mtime]
    for p in folder.rglob("*"):
        try:
            times.append(p.stat().st_mtime)
        except OSError:
            pass
    return max(times)


def remove_stale(out_root: Path, cache_root: Path, now: float | None = None) -> list[Path]:
    """Remove the stale temporaries of `out_root` and of `cache_root`'s index folder;
    the folders removed."""
    now = time.time() if now is None else now
    removed: list[Path] = []
    candidates: list[tuple[Path, bool]] = []
    for root, pattern in ((Path(out_root), OUT_TMP), (Path(cache_root) / "indexes", None)):
        try:
            entries = list(root.iterdir())
        except OSError:
            continue
        for p in entries:
            if not p.is_dir():
                continue
            if pattern is not None:
                m = pattern.match(p.name)
                if m:
                    candidates.append((p, not _alive(int(m.group(1)))))
            elif p.name.startswith(".tmp-"):
                candidates.append((p, False))
    for folder, dead in candidates:
        try:
            stale = dead or now - _newest(folder) > STALE_TMP_SECONDS
        except OSError:
            continue
        if stale:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
