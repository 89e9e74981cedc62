"""docs/bring-your-own-data.md's table of relevant chunks per chunk size and label mode is
what benchmarks/label_modes.py prints (the page names the script; its sentence above the
table gives the fixture's token range the script prints)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("label_modes",
                                                  ROOT / "benchmarks" / "label_modes.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["label_modes"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_squad_tiny_table_is_what_the_script_prints():
    mod = _script()
    result = mod.measure()
    page = (ROOT / "docs" / "bring-your-own-data.md").read_text()
    assert mod.markdown(result) in page
    lo, hi = result["tokens"]
    assert f"({lo} to {hi} tokens)" in page and "benchmarks/label_modes.py" in page
