"""scripts/check_report_html.py as a module, for the tests of the pages CI checks in a
real browser (the report, the trend page)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def check_html() -> ModuleType:
    """scripts/check_report_html.py, the check CI runs on the report's page."""
    spec = importlib.util.spec_from_file_location("check_report_html",
                                                  ROOT / "scripts" / "check_report_html.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
