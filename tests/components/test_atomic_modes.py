"""atomic_write honours the umask (issue 39.8): files were created 0600 by mkstemp, so a
cache shared by several users, or by Dask workers running as another user, could not be
read."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from ablate.components.runtime.atomic import atomic_write, current_umask, file_mode


@pytest.fixture
def umask():
    saved = os.umask(0o022)
    os.umask(saved)

    def set_mask(mask: int) -> None:
        os.umask(mask)
    yield set_mask
    os.umask(saved)


@pytest.mark.parametrize("mask,mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_files_get_the_mode_of_any_new_file(tmp_path, umask, mask, mode):
    umask(mask)
    assert current_umask() == mask and file_mode() == mode
    written = atomic_write(tmp_path / "a" / "entry.parquet", b"data")
    assert stat.S_IMODE(written.stat().st_mode) == mode
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what open() gives: the same
    assert stat.S_IMODE(plain.stat().st_mode) == mode
    again = atomic_write(tmp_path / "a" / "entry.parquet", writer=lambda f: f.write(b"more"))
    assert stat.S_IMODE(again.stat().st_mode) == mode


def test_reading_the_umask_leaves_it_unchanged_for_other_threads(umask):
    umask(0o022)
    seen = []

    def watch():
        for _ in range(2000):
            seen.append(current_umask())
    t = threading.Thread(target=watch)
    t.start()
    for _ in range(2000):
        file_mode()
    t.join()
    assert set(seen) == {0o022}
