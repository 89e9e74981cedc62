"""Code run in a fresh interpreter, for tests of what a path imports."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from typing import Sequence

from tests.conftest import ROOT


def imported_after(code: str, modules: Sequence[str]) -> list[str]:
    """Run `code` in a new Python process with the project on its path; return which of
    `modules` it imported, sorted. A failing `code` fails the test with its stderr."""
    probe = f"\nimport sys as _s; print(sorted(m for m in {tuple(modules)!r} if m in _s.modules))"
    out = subprocess.run([sys.executable, "-c", code + probe], cwd=ROOT, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])
