"""Text files in a declared encoding (TREC data: `encoding:`, UTF-8 unless told), and a
byte that is not of it as one InputError naming the file and line:
`FILE:LINE: not UTF-8 (invalid start byte at byte 1234; set encoding: latin-1 ...)`.

Only encodings that write ASCII as ASCII are accepted (UTF-8, Latin-1, cp1252, ...): files
are read line by line on b"\\n", which UTF-16 or UTF-32 would break."""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Iterator

from ablate.components.contract.errors import InputError

_PROBE = "\n\t <>&\"'azAZ09{}:"


def codec_name(name: object) -> str:
    """The canonical name of an ASCII-compatible encoding ('latin-1' -> 'iso8859-1');
    ValueError for anything else."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"an encoding name (utf-8, latin-1, cp1252, ...), not {name!r}")
    try:
        info = codecs.lookup(name)
    except LookupError:
        raise ValueError(f"unknown encoding '{name}' (utf-8, latin-1, cp1252, ...)") from None
    try:
        ascii_safe = info.encode(_PROBE)[0] == _PROBE.encode("ascii")
    except (UnicodeError, TypeError):
        ascii_safe = False
    if not ascii_safe:
        raise ValueError(f"encoding '{name}' does not write ASCII as ASCII (use utf-8, "
                         "latin-1, cp1252, ...)")
    return info.name


def _error(exc: UnicodeDecodeError, path: Path, line: int, offset: int,
           encoding: str) -> InputError:
    at = f"{exc.reason} at byte {offset + exc.start}"
    if codecs.lookup(encoding).name == "utf-8":
        return InputError(f"not UTF-8 ({at}; set encoding: latin-1 if the source is Latin-1, "
                          "or the encoding it is in)", path=str(path), line=line)
    return InputError(f"not {encoding} ({at}; set encoding: to the one it is in)",
                      path=str(path), line=line)


def read_text(path: Path, encoding: str = "utf-8") -> str:
    """The whole file decoded, line ends as "\n" (as Python's text mode reads them);
    InputError naming the line of the first bad byte."""
    raw = path.read_bytes()
    try:
        return raw.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise _error(exc, path, raw.count(b"\n", 0, exc.start) + 1, 0, encoding) from None


def read_lines(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """(1-based line number, decoded line with its end) of a file, read as it goes."""
    offset = 0
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, start=1):
            try:
                yield n, raw.decode(encoding)
            except UnicodeDecodeError as exc:
                raise _error(exc, path, n, offset, encoding) from None
            offset += len(raw)
