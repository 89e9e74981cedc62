"""`ablate cache info|prune` on a cache written by the real store, embedding cache and
generation cache."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ablate.components.contract.records import Answer
from ablate.components.generation.cache import GenerationCache
from ablate.components.retrieval.dense.embed_cache import EmbeddingCache
from ablate.flows.run.store import STALE_TMP_SECONDS, Store, cache_files, remove_file

DAY = 86400


def _age(path: Path, days: float) -> None:
    t = time.time() - days * DAY
    os.utime(path, (t, t))


@pytest.fixture
def cache(tmp_path) -> Path:
    root = tmp_path / "cache"
    store = Store(root)
    frame = pl.DataFrame({"x": list(range(50))})
    for i in range(3):
        store.write("chunk", f"c{i:023d}", frame)
    for i in range(2):
        store.write("score", f"s{i:023d}", frame)
    EmbeddingCache(root / "embeddings", "model-x").store(["k1", "k2"], np.ones((2, 4)))
    GenerationCache(root / "generations").put("ab" * 32, Answer("yes", False, 3, 1, 0.1))
    return root


def _info(run_cli, capsys, root: Path) -> dict:
    assert run_cli("cache", "info", "--cache-dir", str(root), "--json") == 0
    return json.loads(capsys.readouterr().out)["areas"]


def test_info_counts_entries_and_bytes(run_cli, capsys, cache):
    areas = _info(run_cli, capsys, cache)
    assert {a: int(r["entries"]) for a, r in areas.items()} == {
        "chunk": 3, "score": 2, "embeddings": 1, "generations": 1}
    on_disk = sum(p.stat().st_size for p in (cache / "chunk").rglob("*") if p.is_file())
    assert areas["chunk"]["bytes"] == on_disk  # data and checksum files
    assert run_cli("cache", "info", "--cache-dir", str(cache)) == 0
    table = capsys.readouterr().out
    assert "chunk" in table and "embeddings" in table and "total" in table


def test_prune_one_stage(run_cli, capsys, cache):
    assert run_cli("cache", "prune", "--cache-dir", str(cache), "--stage", "score") == 0
    assert "removed score: 2 entries" in capsys.readouterr().out
    store = Store(cache)
    assert not any(store.has("score", f"s{i:023d}") for i in range(2))
    assert not list((cache / "score").rglob("*.sha256"))
    assert all(store.has("chunk", f"c{i:023d}") for i in range(3))
    assert _info(run_cli, capsys, cache).keys() == {"chunk", "embeddings", "generations"}


def test_dry_run_deletes_nothing(run_cli, capsys, cache):
    before = sorted(p for p in cache.rglob("*") if p.is_file())
    assert run_cli("cache", "prune", "--cache-dir", str(cache), "--all", "--dry-run") == 0
    assert "would remove 7 files" in capsys.readouterr().out
    assert sorted(p for p in cache.rglob("*") if p.is_file()) == before


def test_older_than_uses_last_use(run_cli, capsys, cache):
    store = Store(cache)
    for i in range(3):
        _age(store.path("chunk", f"c{i:023d}").with_suffix(".sha256"), 10)
    assert store.has("chunk", f"c{0:023d}")  # a reuse refreshes the entry's last use
    assert run_cli("cache", "prune", "--cache-dir", str(cache), "--older-than", "7") == 0
    assert [store.has("chunk", f"c{i:023d}") for i in range(3)] == [True, False, False]
    assert all(store.has("score", f"s{i:023d}") for i in range(2))


def test_all_spares_fresh_temporary_files(run_cli, capsys, cache):
    fresh = cache / "chunk" / "c0" / ".x.parquet.abc.tmp"
    stale = cache / "score" / "s0" / ".y.parquet.def.tmp"
    orphan = cache / "score" / "s0" / "orphan.parquet"  # data without a checksum
    for p in (fresh, stale, orphan):
        p.write_bytes(b"partial")
    _age(stale, STALE_TMP_SECONDS / DAY * 2)
    _age(orphan, STALE_TMP_SECONDS / DAY * 2)
    assert run_cli("cache", "prune", "--cache-dir", str(cache), "--all") == 0
    assert "kept 1 recent temporary/incomplete files" in capsys.readouterr().out
    assert [p for p in cache.rglob("*") if p.is_file()] == [fresh]


def test_interrupted_delete_leaves_a_missing_entry(cache, monkeypatch):
    store = Store(cache)
    item = next(it for it in cache_files(cache, ["score"]))
    real_unlink = Path.unlink

    def unlink(self, missing_ok=False):
        if self.suffix == ".parquet":
            raise KeyboardInterrupt  # killed between the two deletes
        return real_unlink(self, missing_ok=missing_ok)
    monkeypatch.setattr(Path, "unlink", unlink)
    with pytest.raises(KeyboardInterrupt):
        remove_file(item)
    monkeypatch.setattr(Path, "unlink", real_unlink)
    key = item.path.stem
    assert item.path.exists() and not store.has("score", key)  # treated as missing
    assert [it.kind for it in cache_files(cache, ["score"]) if it.path == item.path] == ["incomplete"]


@pytest.mark.parametrize("argv, message", [
    ((), "say what to prune"),
    (("--stage", "nope"), "no stage 'nope'"),
])
def test_bad_prune_is_one_line_exit_2(run_cli, capsys, cache, argv, message):
    before = sorted(p for p in cache.rglob("*") if p.is_file())
    assert run_cli("cache", "prune", "--cache-dir", str(cache), *argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert sorted(p for p in cache.rglob("*") if p.is_file()) == before
