"""The output root checked before any stage runs (issue 39.4): `ablate check` and `ablate
run` (and the sweep flow, for deployments) refuse an `out` that names a file, lies under a
file, has a part longer than a file name may be, or sits in a folder this process cannot
write, with one line naming the spec's line or the `--out` option (exit 2), instead of a
traceback after every stage ran.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ablate.components.contract.errors import InputError

NAME_MAX = 255  # bytes of one path part on Linux, macOS and Windows file systems


def out_problem(out_root: Path) -> str | None:
    """Why the sweep folders cannot be written under `out_root`, or None."""
    p = Path(os.path.expanduser(str(out_root)))
    for part in p.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            return f"'{part[:24]}...' is {len(os.fsencode(part))} bytes; a file name is at most {NAME_MAX}"
    here = p.absolute()
    while True:
        try:
            if here.exists():
                if not here.is_dir():
                    return f"{here} is a file, not a folder"
                if not os.access(here, os.W_OK | os.X_OK):
                    return f"{here} is not writable"
                return None
        except OSError as exc:
            return f"{here}: {exc.strerror or exc}"
        if here.parent == here:
            return None
        here = here.parent


def check_out(loaded: Any, out: str | None) -> None:
    """InputError when the output root (`out`, the --out option, else the spec's `out`)
    cannot hold sweep folders."""
    root = out or loaded.spec.out
    problem = out_problem(Path(root))
    if problem is None:
        return
    message = f"the output root '{root}' cannot hold sweep folders: {problem}"
    if out:
        raise InputError(message, field="--out")
    raise loaded.error(message, ("out",))
