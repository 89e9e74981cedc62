"""A GGUF file's metadata (its key-value header), read without its tensors.

`gguf.GGUFReader` maps every tensor and field of the file before answering (about 10 s
for the bundled 135M model, most of it for fields nobody asked for); this reader walks
the header once and keeps only the keys asked for (the tokenizer's 49,152 tokens in well
under a second). Little-endian GGUF versions 2 and 3 (what llama.cpp writes).
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import Any, Iterable

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class _Cursor:
    def __init__(self, buf: Any, path: Path) -> None:
        self.buf, self.at, self.path = buf, 0, path

    def unpack(self, fmt: str) -> Any:
        value = struct.unpack_from(fmt, self.buf, self.at)[0]
        self.at += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        n = self.unpack("<Q")
        text = bytes(self.buf[self.at:self.at + n]).decode("utf-8", errors="replace")
        self.at += n
        return text

    def value(self, kind: int, keep: bool) -> Any:
        if kind == _STRING:
            if keep:
                return self.string()
            n = self.unpack("<Q")  # read before the cursor moves on
            self.at += n
            return None
        if kind == _ARRAY:
            inner, n = self.unpack("<I"), self.unpack("<Q")
            if inner in _SCALARS and inner != 7:
                size = struct.calcsize(_SCALARS[inner])
                out = (list(struct.unpack_from(f"<{n}{_SCALARS[inner][1]}", self.buf, self.at))
                       if keep else None)
                self.at += size * n
                return out
            items = [self.value(inner, keep) for _ in range(n)]
            return items if keep else None
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        raise ValueError(f"{self.path}: unknown GGUF value type {kind} at byte {self.at}")


def read_metadata(path: Path, keys: Iterable[str]) -> dict[str, Any]:
    """The values of these metadata keys that the file has (a key it lacks is absent)."""
    want = set(keys)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        cur = _Cursor(buf, Path(path))
        if bytes(buf[:4]) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        cur.at = 4
        version = cur.unpack("<I")
        if version not in (2, 3):
            raise ValueError(f"{path}: GGUF version {version} is not read here (2 and 3 are)")
        cur.unpack("<Q")  # tensors
        n_kv = cur.unpack("<Q")
        out: dict[str, Any] = {}
        for _ in range(n_kv):
            key = cur.string()
            kind = cur.unpack("<I")
            value = cur.value(kind, key in want)
            if key in want:
                out[key] = value
                if len(out) == len(want):
                    break
        return out
