"""Temporaries left by a killed run (issue 39.9): `runs/.<sweep>.tmp-<pid>/` and
`cache/indexes/.tmp-bm25-*` stayed for ever. The next run removes them (before its first
stage) and `ablate cache prune` removes the cache's."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from ablate.flows.run.stale import remove_stale
from ablate.flows.run.store import STALE_TMP_SECONDS


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _age(folder, seconds):
    t = time.time() - seconds
    for p in [folder, *folder.rglob("*")]:
        os.utime(p, (t, t))


def test_the_next_run_removes_what_a_killed_run_left(tmp_path):
    out, cache = tmp_path / "runs", tmp_path / "cache"
    dead = out / f".exp-0123456789.tmp-{_dead_pid()}"
    old = out / f".exp-0123456789.old-{_dead_pid()}"
    live = out / f".exp-0123456789.tmp-{os.getpid()}"  # a run writing right now
    done = out / "exp-0123456789"
    stale_index = cache / "indexes" / ".tmp-bm25-abc-12345678"
    fresh_index = cache / "indexes" / ".tmp-bm25-def-12345678"
    for folder in (dead, old, live, done, stale_index, fresh_index):
        folder.mkdir(parents=True)
        (folder / "data.npy").write_bytes(b"partial")
    _age(stale_index, STALE_TMP_SECONDS * 2)
    removed = remove_stale(out, cache)
    assert sorted(removed) == sorted([dead, old, stale_index])
    assert sorted(p.name for p in out.iterdir()) == sorted([live.name, done.name])
    assert [p.name for p in (cache / "indexes").iterdir()] == [fresh_index.name]


def test_cache_prune_removes_a_stale_index_temporary_folder(run_cli, capsys, tmp_path):
    cache = tmp_path / "cache"
    stale = cache / "indexes" / ".tmp-bm25-abc-12345678"
    stale.mkdir(parents=True)
    for name in ("data.npy", "indices.npy"):
        (stale / name).write_bytes(b"partial")
    _age(stale, STALE_TMP_SECONDS * 2)
    assert run_cli("cache", "prune", "--cache-dir", str(cache), "--older-than", "30") == 0
    assert "removed indexes: 0 entries, 2 temporary/incomplete" in capsys.readouterr().out
    assert not stale.exists()
