"""An output file named on the command line (`ablate reproduce --run PATH`), checked
before any work: not a folder, its folder there, writable (a probe file created and
removed: permission bits say nothing for root), not one of the run's inputs nor inside an
input folder (writing it would change what it was computed from). Each refusal is one
InputError naming the path and the option."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

from ablate.components.contract.errors import InputError


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output_file(path: Path, inputs: Iterable[Path], option: str) -> None:
    """Refuse `path` as an output file (InputError naming it and `option`)."""
    def refuse(why: str) -> InputError:
        return InputError(why, path=str(path), field=option)
    target = Path(os.path.abspath(path))
    if target.is_dir():
        raise refuse("a folder, not a file")
    if target.exists() and not target.is_file():
        raise refuse("not a regular file")
    folder = target.parent
    if not folder.exists():
        raise refuse(f"its folder {folder} does not exist")
    if not folder.is_dir():
        raise refuse(f"{folder} is not a folder")
    for inp in inputs:
        inp = Path(os.path.abspath(inp))
        if _same(target, inp) or target == inp:
            raise refuse(f"an input of this run ({inp}): writing it would overwrite it")
        if inp.is_dir() and (inp in target.parents or _same(folder, inp)):
            raise refuse(f"inside an input folder ({inp}): write it elsewhere")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise refuse(f"cannot be written ({exc.strerror or exc})") from None
