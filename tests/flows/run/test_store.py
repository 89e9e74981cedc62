"""The content-addressed store: atomic entries, checksums, damaged entries never used."""

from __future__ import annotations

import polars as pl

from ablate.flows.run.store import Store, stage_key


def frame() -> pl.DataFrame:
    return pl.DataFrame({"qid": ["a", "b"], "score": [0.5, 0.25]})


def test_roundtrip_and_counts(tmp_path):
    store = Store(tmp_path)
    assert not store.has("fuse", "k1")
    store.write("fuse", "k1", frame())
    assert store.has("fuse", "k1")
    assert store.read("fuse", "k1").equals(frame())
    store.note("fuse", computed=True)
    store.note("fuse", computed=False)
    assert store.counts()["fuse"] == {"computed": 1, "reused": 1, "damaged": 0}


def test_truncated_entry_is_detected(tmp_path):
    store = Store(tmp_path)
    path = store.write("score", "k2", frame())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert not store.has("score", "k2")
    assert store.counts()["score"]["damaged"] == 1
    store.write("score", "k2", frame())  # recomputed entry replaces it
    assert store.has("score", "k2")


def test_flipped_byte_is_detected(tmp_path):
    store = Store(tmp_path)
    path = store.write("score", "k3", frame())
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    assert not store.has("score", "k3")


def test_entry_without_checksum_is_incomplete(tmp_path):
    store = Store(tmp_path)
    path = store.write("chunk", "k4", frame())
    path.with_suffix(".sha256").unlink()  # a writer killed between data and checksum
    assert not store.has("chunk", "k4")


def test_no_temporary_files_left(tmp_path):
    store = Store(tmp_path)
    store.write("chunk", "k5", frame())
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_stage_key_depends_on_everything_it_reads():
    a = stage_key("fuse", "1", fusion={"rrf_k": 60}, inputs={"bm25": "x"})
    assert a == stage_key("fuse", "1", inputs={"bm25": "x"}, fusion={"rrf_k": 60})
    assert a != stage_key("fuse", "1", fusion={"rrf_k": 10}, inputs={"bm25": "x"})
    assert a != stage_key("fuse", "2", fusion={"rrf_k": 60}, inputs={"bm25": "x"})
    assert a != stage_key("fuse", "1", fusion={"rrf_k": 60}, inputs={"bm25": "y"})


def test_write_holds_the_entry_folders_lock(tmp_path):
    """Data and checksum are written under a lock on the entry's folder, so two processes
    writing the same entry cannot leave one's data with the other's checksum."""
    import threading

    from ablate.flows.env import file_lock
    store = Store(tmp_path)
    path = store.write("fuse", "k9", frame())
    before = path.read_bytes()
    done = threading.Event()
    other = pl.DataFrame({"qid": ["a", "b"], "score": [0.75, 0.5]})
    with file_lock(path.parent):  # another writer holds it
        writer = threading.Thread(target=lambda: (store.write("fuse", "k9", other), done.set()))
        writer.start()
        assert not done.wait(0.5)
        assert path.read_bytes() == before
    writer.join(30)
    assert done.is_set() and store.has("fuse", "k9") and store.read("fuse", "k9").equals(other)
    assert sorted(p.name for p in path.parent.iterdir()) == ["k9.parquet", "k9.sha256"]


def test_read_sees_one_version_while_another_sweep_replaces_the_entry(tmp_path, monkeypatch):
    """Two sweeps sharing the cache: a read that the other sweep's write (an atomic
    replace) overtakes still returns one whole version, the one it opened (CI saw polars
    read the pages of one version under the footer of the other)."""
    import os

    store = Store(tmp_path)
    store.write("generate", "ab" * 12, frame())
    path = store.path("generate", "ab" * 12)
    newer = pl.DataFrame({"qid": ["z"] * 50, "score": [9.0] * 50})
    real = pl.read_parquet

    def overtaken(source, *args, **kwargs):  # the other sweep's write lands mid-read
        newer.write_parquet(tmp_path / "other.parquet")
        os.replace(tmp_path / "other.parquet", path)
        return real(source, *args, **kwargs)
    monkeypatch.setattr(pl, "read_parquet", overtaken)
    assert store.read("generate", "ab" * 12).equals(frame())
